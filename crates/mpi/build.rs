//! With the `mpi` feature, checks before rsmpi's own build that this
//! machine has what that build needs (docs/distributed.md, "Install,
//! build, launch"): an MPI library (found as rsmpi's `build-probe-mpi`
//! looks for one: `$MPI_PKG_CONFIG`, `$CRAY_MPICH_DIR`, `mpicc` or
//! `$MPICC`, pkg-config's `mpich` or `ompi`) and libclang (rsmpi generates
//! its bindings from the MPI headers with it). Where one is missing the
//! build stops here with a message that names the packages to install,
//! instead of in `mpi-sys`'s build script, whose panic says neither.
//! Without the feature this does nothing.

use std::env;
use std::path::Path;
use std::process::{Command, Stdio};

const INSTALL: &str = "install MPICH (Debian, Ubuntu: `apt-get install mpich libmpich-dev \
     libclang-dev`) or Open MPI (`apt-get install openmpi-bin libopenmpi-dev libclang-dev`), \
     or build without `--features mpi` (a program then runs as one process); \
     see docs/distributed.md";

fn main() {
    // Only this file: a failed run is run again by the next build anyway,
    // and a passed one need not be (rerunning would rebuild every crate
    // above this one).
    println!("cargo:rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_MPI").is_none() {
        return;
    }
    let target = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target != "linux" {
        // The probes below know Linux's layout; elsewhere rsmpi's own
        // build speaks for itself.
        return;
    }
    let mut missing = Vec::new();
    if !has_mpi() {
        missing.push(
            "no MPI library: no `mpicc` on PATH (nor `$MPICC`), and pkg-config knows neither \
             `mpich` nor `ompi`",
        );
    }
    if !has_libclang() {
        missing.push(
            "no libclang (rsmpi generates its bindings from the MPI headers with it): none in \
             the usual directories and no `llvm-config` on PATH (set `LIBCLANG_PATH` to the \
             directory of libclang.so if it is installed elsewhere)",
        );
    }
    if !missing.is_empty() {
        eprintln!();
        for m in &missing {
            eprintln!("error: weft-mpi: the `mpi` feature needs MPI and libclang, and found {m}");
        }
        eprintln!("help: {INSTALL}");
        eprintln!();
        // A build script fails by exiting non-zero; cargo shows its stderr.
        std::process::exit(1);
    }
}

/// Runs `cmd args`; true if it ran and succeeded.
fn succeeds(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn has_mpi() -> bool {
    if env::var_os("MPI_PKG_CONFIG").is_some() || env::var_os("CRAY_MPICH_DIR").is_some() {
        // rsmpi reads these itself; its messages about them are clear.
        return true;
    }
    let mpicc = env::var("MPICC").unwrap_or_else(|_| "mpicc".into());
    // `build-probe-mpi` accepts `mpicc` when `mpicc -show` runs at all.
    Command::new(&mpicc)
        .arg("-show")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
        || succeeds("pkg-config", &["--exists", "mpich"])
        || succeeds("pkg-config", &["--exists", "ompi"])
}

/// Where clang-sys (bindgen's loader of libclang) looks on Linux, less
/// its deepest patterns: `LIBCLANG_PATH`, `llvm-config`, then these.
fn has_libclang() -> bool {
    if env::var_os("LIBCLANG_PATH").is_some() || succeeds("llvm-config", &["--libdir"]) {
        return true;
    }
    let is_libclang = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("libclang") && n.contains(".so"))
    };
    let has = |dir: &Path| {
        std::fs::read_dir(dir).is_ok_and(|rd| rd.flatten().any(|e| is_libclang(&e.path())))
    };
    // /usr/lib, /usr/lib64, /usr/local/lib..., one and two levels down
    // (/usr/lib/x86_64-linux-gnu, /usr/lib/llvm-14/lib, ...).
    let mut dirs = Vec::new();
    for root in ["/usr", "/usr/local"] {
        let Ok(rd) = std::fs::read_dir(root) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("lib") || name.starts_with("llvm") {
                dirs.push(e.path());
            }
        }
    }
    let mut i = 0;
    let mut depth = vec![0; dirs.len()];
    while i < dirs.len() {
        if has(&dirs[i]) {
            return true;
        }
        if depth[i] < 2 {
            if let Ok(rd) = std::fs::read_dir(&dirs[i]) {
                for e in rd.flatten() {
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        dirs.push(e.path());
                        depth.push(depth[i] + 1);
                    }
                }
            }
        }
        i += 1;
    }
    false
}
