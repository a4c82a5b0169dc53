//! The CUDA backend's kernel source compiles, checked without a GPU: NVRTC
//! needs no driver and no device, only libnvrtc. The test compiles the
//! whole source for explicit architectures and checks that the PTX defines
//! every entry point the backend loads.
//!
//! It runs where libnvrtc loads (cudarc looks for `libnvrtc.so.13` and
//! similar names through the dynamic loader, i.e. `LD_LIBRARY_PATH`);
//! otherwise, and in builds without the `cuda` feature, it prints why it
//! skipped and passes. `scripts/nvrtc-check.sh` installs libnvrtc from the
//! `nvidia-cuda-nvrtc` wheel and runs this test with the right path.
//!
//! Also here, because it needs a process that has not probed its devices
//! yet: without a GPU, a CUDA build hands its "running on cpu only" note to
//! the note sink (the command line prints it), a build without the feature
//! does not.

use std::sync::Mutex;

use weft_tensor::device::{backend_notes, check_kernels, devices, set_note_sink, KernelCheck};

/// Turing (the oldest architecture CUDA 13 supports), Ampere, Hopper.
const ARCHES: &[&str] = &["compute_75", "compute_80", "compute_90"];

/// Whether the PTX text defines a kernel entry point of this name.
fn defines_entry(ptx: &str, name: &str) -> bool {
    ptx.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with(".visible .entry") && l.contains(&format!(" {name}("))
    })
}

#[test]
fn kernel_source_compiles_with_nvrtc() {
    for arch in ARCHES {
        match check_kernels(arch) {
            KernelCheck::Skipped(why) => {
                println!("skipping kernel_source_compiles_with_nvrtc: {why}");
                return;
            }
            KernelCheck::Failed(log) => panic!("nvrtc rejected the kernels for {arch}:\n{log}"),
            KernelCheck::Compiled { ptx, entry_points } => {
                assert!(entry_points.len() >= 10, "{entry_points:?}");
                let target = arch.replace("compute_", "sm_");
                assert!(
                    ptx.lines().any(|l| l.trim() == format!(".target {target}")),
                    "{arch}: PTX for another target"
                );
                for name in entry_points {
                    assert!(
                        defines_entry(&ptx, name),
                        "{arch}: no entry {name} in the PTX"
                    );
                }
                println!(
                    "{arch}: {} entry points, {} bytes of PTX",
                    entry_points.len(),
                    ptx.len()
                );
            }
        }
    }
}

#[test]
fn an_unknown_architecture_is_an_error_not_a_panic() {
    match check_kernels("compute_1") {
        KernelCheck::Skipped(why) => println!("skipping: {why}"),
        KernelCheck::Failed(log) => assert!(log.starts_with("nvrtc"), "{log}"),
        KernelCheck::Compiled { .. } => panic!("nvrtc accepted compute_1"),
    }
}

#[test]
fn without_a_gpu_a_cuda_build_reports_why_once() {
    static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());
    set_note_sink(|note| SEEN.lock().unwrap().push(note.to_string()));
    let devs = devices();
    devices();
    if devs.len() > 1 {
        println!("skipping without_a_gpu_a_cuda_build_reports_why_once: devices {devs:?}");
        return;
    }
    let notes = backend_notes();
    let seen = SEEN.lock().unwrap().clone();
    assert_eq!(notes.len(), 1, "{notes:?}");
    if notes[0].contains("without the `cuda` feature") {
        assert!(seen.is_empty(), "{seen:?}");
    } else {
        assert!(notes[0].ends_with("running on cpu only") || notes[0].contains("no devices"));
        assert_eq!(seen, notes);
    }
}
