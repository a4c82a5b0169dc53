//! Golden tests: every `examples/*.weft`, `crates/weft/tests/go_ports/*.weft` and
//! `crates/weft/tests/programs/*.weft` program
//! is compiled and run through the library (one worker, seed 1, output
//! captured) and its stdout, stderr report and exit code are compared with
//! `NAME.out`, `NAME.err` (absent: empty) and the `// exit: N` header line
//! (absent: 0). Header lines `// seed: S` and `// args: a b` change the run;
//! `// one worker` marks a program whose output depends on the schedule, run
//! only with one worker.
//! Regenerate the golden files with `WEFT_BLESS=1 cargo test -p weft --test examples`
//! (then read the diff: blessing accepts whatever the engine printed).

use std::fs;
use std::path::{Path, PathBuf};

use weft_interp::{render_outcome, run_program, RunConfig};

fn header(src: &str, key: &str) -> Option<String> {
    src.lines()
        .filter_map(|l| l.strip_prefix("// "))
        .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()))
}

fn run_one(path: &Path, workers: usize) -> Result<(), String> {
    let src = fs::read_to_string(path).map_err(|e| e.to_string())?;
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let file = format!(
        "{}/{}",
        path.parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy(),
        name
    );
    let prog = weft_lang::compile(&file, &src).map_err(|d| d.render(&src))?;
    let seed = header(&src, "seed:").map_or(1, |s| s.parse().unwrap());
    let args = header(&src, "args:").map_or(Vec::new(), |a| {
        a.split_whitespace().map(String::from).collect()
    });
    let want_code: i32 = header(&src, "exit:").map_or(0, |s| s.parse().unwrap());
    let r = run_program(
        &prog,
        RunConfig {
            workers,
            seed,
            args,
            capture: true,
            ..RunConfig::default()
        },
    )
    .map_err(|e| e.to_string())?;
    let rep = render_outcome(&r.outcome);
    // Bytes: a string's bytes are printed as they are, UTF-8 or not.
    let out = r.output;
    let out_path = path.with_extension("out");
    let err_path = path.with_extension("err");
    if workers == 1 && std::env::var_os("WEFT_BLESS").is_some() {
        fs::write(&out_path, &out).map_err(|e| e.to_string())?;
        if rep.stderr.is_empty() {
            let _ = fs::remove_file(&err_path);
        } else {
            fs::write(&err_path, &rep.stderr).map_err(|e| e.to_string())?;
        }
    }
    let want_out = fs::read(&out_path).map_err(|e| format!("{}: {e}", out_path.display()))?;
    let want_err = fs::read_to_string(&err_path).unwrap_or_default();
    if out != want_out {
        return Err(format!(
            "stdout differs:\n--- want\n{}--- got\n{}",
            String::from_utf8_lossy(&want_out),
            String::from_utf8_lossy(&out)
        ));
    }
    if rep.stderr != want_err {
        return Err(format!(
            "stderr differs:\n--- want\n{want_err}--- got\n{}",
            rep.stderr
        ));
    }
    if rep.code != want_code {
        return Err(format!("exit code {} (want {want_code})", rep.code));
    }
    Ok(())
}

fn run_dir(dir: &str, workers: usize) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(dir);
    let mut paths: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "weft"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no programs in {dir}");
    let mut failures = Vec::new();
    for p in &paths {
        if workers > 1 && header(&fs::read_to_string(p).unwrap_or_default(), "one worker").is_some()
        {
            continue;
        }
        if let Err(e) = run_one(p, workers) {
            failures.push(format!("{}: {e}", p.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn examples() {
    run_dir("examples", 1);
}

/// The same golden outputs with four workers: these programs print the same
/// whatever the interleaving (except those marked `// one worker`).
#[test]
fn examples_with_four_workers() {
    run_dir("examples", 4);
}

/// Programs whose expected output is Go's output for the same program
/// written in Go.
#[test]
fn programs() {
    run_dir("crates/weft/tests/programs", 1);
    run_dir("crates/weft/tests/programs", 4);
}

#[test]
fn go_ports() {
    run_dir("crates/weft/tests/go_ports", 1);
}

#[test]
fn go_ports_with_four_workers() {
    run_dir("crates/weft/tests/go_ports", 4);
}
