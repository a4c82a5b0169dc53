//! The `weft` command line, run as a user runs it (the built binary):
//! - `weft build` then `weft run` of the compiled file prints exactly what
//!   running the source prints (stdout, stderr, exit code), for every example
//!   and Go port, and both match the golden files;
//! - `--workers 1 --seed S` runs are identical across runs;
//! - `weft dump` of the source and of the compiled file agree;
//! - `weft check` reports every error with exit code 1; unreadable, corrupt
//!   and truncated inputs get a clear message, never a panic;
//! - `--help` works on every subcommand; `--workers 0` is a usage error;
//! - `weft run --trace` writes a trace that `weft trace` draws.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn weft() -> Command {
    Command::new(env!("CARGO_BIN_EXE_weft"))
}

/// The repository root: examples and their paths in messages are relative to it.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-cli-test-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn header(src: &str, key: &str) -> Option<String> {
    src.lines()
        .filter_map(|l| l.strip_prefix("// "))
        .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `weft run FILE --workers 1 --seed S -- ARGS` in `dir`.
fn run_in(dir: &Path, file: &Path, seed: &str, args: &[String]) -> Output {
    weft()
        .current_dir(dir)
        .arg("run")
        .arg(file)
        .args(["--workers", "1", "--seed", seed])
        .arg("--")
        .args(args)
        .output()
        .unwrap()
}

/// Runs `weft run FILE --workers 1 --seed S -- ARGS` from the repository root.
fn run(file: &Path, seed: &str, args: &[String]) -> Output {
    run_in(&root(), file, seed, args)
}

fn check_dir(dir: &str) {
    let mut paths: Vec<PathBuf> = fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "weft"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty());
    let mut failures = Vec::new();
    for path in paths {
        let src = fs::read_to_string(&path).unwrap();
        // Golden files name the program `DIR/NAME.weft`: run it from DIR's
        // parent so that the path given on the command line is that name.
        let base = path.parent().unwrap().parent().unwrap().to_path_buf();
        let rel = path.strip_prefix(&base).unwrap().to_path_buf();
        let seed = header(&src, "seed:").unwrap_or_else(|| "1".into());
        let args: Vec<String> = header(&src, "args:")
            .map(|a| a.split_whitespace().map(String::from).collect())
            .unwrap_or_default();
        let want_code: i32 = header(&src, "exit:").map_or(0, |c| c.parse().unwrap());
        let pb = tmp(&format!(
            "{}.pb",
            rel.file_stem().unwrap().to_string_lossy()
        ));
        let built = weft()
            .current_dir(&base)
            .arg("build")
            .arg(&rel)
            .arg("-o")
            .arg(&pb)
            .output()
            .unwrap();
        if !built.status.success() {
            failures.push(format!(
                "{}: build failed: {}",
                rel.display(),
                text(&built.stderr)
            ));
            continue;
        }
        let from_src = run_in(&base, &rel, &seed, &args);
        let from_pb = run_in(&base, &pb, &seed, &args);
        let want_out = fs::read_to_string(path.with_extension("out")).unwrap();
        let want_err = fs::read_to_string(path.with_extension("err")).unwrap_or_default();
        let got_err = text(&from_src.stderr);
        if text(&from_src.stdout) != want_out
            || got_err != want_err
            || from_src.status.code() != Some(want_code)
        {
            failures.push(format!(
                "{}: source run differs from the golden files (code {:?})\n{}{}",
                rel.display(),
                from_src.status.code(),
                text(&from_src.stdout),
                got_err
            ));
        }
        if from_pb.stdout != from_src.stdout
            || from_pb.stderr != from_src.stderr
            || from_pb.status.code() != from_src.status.code()
        {
            failures.push(format!(
                "{}: compiled run differs from the source run:\n{}{}",
                rel.display(),
                text(&from_pb.stdout),
                text(&from_pb.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn build_then_run_matches_source_for_every_example() {
    check_dir("examples");
}

#[test]
fn build_then_run_matches_source_for_every_go_port() {
    check_dir("crates/weft/tests/go_ports");
}

#[test]
fn one_worker_with_a_seed_is_deterministic() {
    // fibonacci selects between two ready channels, workerpool's output
    // depends on the schedule: both repeat exactly with one worker and a seed.
    for ex in ["examples/fibonacci.weft", "examples/workerpool.weft"] {
        let a = run(Path::new(ex), "7", &[]);
        for _ in 0..3 {
            let b = run(Path::new(ex), "7", &[]);
            assert_eq!(a.stdout, b.stdout, "{ex}");
            assert_eq!(a.status.code(), b.status.code(), "{ex}");
        }
    }
    let src = "func main() { print(rand(1000000), perm(5)) }\n";
    let file = tmp("seeded.weft");
    fs::write(&file, src).unwrap();
    let a = run(&file, "42", &[]);
    let b = run(&file, "42", &[]);
    let c = run(&file, "43", &[]);
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout);
    assert_ne!(a.stdout, c.stdout);
}

#[test]
fn dump_of_source_and_of_compiled_file_agree() {
    let pb = tmp("sieve-dump.pb");
    let st = weft()
        .current_dir(root())
        .args(["build", "examples/sieve.weft", "-o"])
        .arg(&pb)
        .status()
        .unwrap();
    assert!(st.success());
    let a = weft()
        .current_dir(root())
        .args(["dump", "examples/sieve.weft"])
        .output()
        .unwrap();
    let b = weft().arg("dump").arg(&pb).output().unwrap();
    assert!(a.status.success() && b.status.success());
    assert!(text(&a.stdout).contains("func main"), "{}", text(&a.stdout));
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn check_reports_every_error_with_exit_code_1() {
    let file = tmp("bad.weft");
    fs::write(
        &file,
        "func main() {\n\tx := 1 + true\n\tvar y int = \"s\"\n\tprint(z)\n}\n",
    )
    .unwrap();
    let out = weft().arg("check").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let shown = file.display().to_string();
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with(&shown) && l.contains(": error: "))
        .collect();
    assert_eq!(lines.len(), 3, "want every error, got:\n{err}");
    assert!(err.contains('^'), "caret line missing:\n{err}");
    // A good program checks silently.
    let ok = tmp("good.weft");
    fs::write(&ok, "func main() { print(1) }\n").unwrap();
    let out = weft().arg("check").arg(&ok).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
}

#[test]
fn bad_inputs_get_clear_errors_not_panics() {
    // A missing file.
    let out = weft().args(["run", "no/such/file.weft"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("cannot read no/such/file.weft"));
    // Binary garbage and a truncated program.
    let pb = tmp("pingpong.pb");
    let st = weft()
        .current_dir(root())
        .args(["build", "examples/pingpong.weft", "-o"])
        .arg(&pb)
        .status()
        .unwrap();
    assert!(st.success());
    let bytes = fs::read(&pb).unwrap();
    let cut = tmp("cut.pb");
    fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let junk = tmp("junk.pb");
    fs::write(&junk, [0xff, 0xfe, 0x00, 0x13, 0x37, 0x80, 0x80]).unwrap();
    for f in [&cut, &junk] {
        for cmd in ["run", "dump"] {
            let out = weft().arg(cmd).arg(f).output().unwrap();
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{cmd} {}: {err}", f.display());
            assert!(err.starts_with("weft: "), "{err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}

#[test]
fn help_on_every_subcommand_and_usage_errors() {
    for sub in ["run", "check", "build", "dump", "trace"] {
        let out = weft().args([sub, "--help"]).output().unwrap();
        assert!(out.status.success(), "{sub} --help");
        assert!(text(&out.stdout).contains("Usage: weft"), "{sub}");
    }
    let out = weft()
        .args(["run", "examples/sieve.weft", "--workers", "0"])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--workers"));
}

#[test]
fn flags_may_follow_the_file_and_args_follow_the_double_dash() {
    let file = tmp("args.weft");
    fs::write(&file, "func main() { print(args()) }\n").unwrap();
    let out = weft()
        .arg("run")
        .arg(&file)
        .args(["--seed", "3", "--", "a", "--workers", "b"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[a --workers b]\n");
}

#[test]
fn trace_is_written_and_drawn() {
    let json = tmp("pipeline.json");
    let svg = tmp("pipeline.svg");
    let out = weft()
        .current_dir(root())
        .args(["run", "examples/pipeline.weft", "--trace"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let trace: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&json).unwrap()).expect("the trace is JSON");
    assert!(trace.is_object() || trace.is_array());
    let out = weft()
        .arg("trace")
        .arg(&json)
        .arg("-o")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let pic = fs::read_to_string(&svg).unwrap();
    assert!(pic.starts_with("<svg") && pic.contains("<rect"));
}

#[test]
fn resource_limits_stop_runaway_programs_with_a_clear_panic() {
    let tasks = tmp("tasks.weft");
    fs::write(
        &tasks,
        "func main() {\n\tfor {\n\t\tgo { select {} }\n\t}\n}\n",
    )
    .unwrap();
    let out = weft()
        .arg("run")
        .arg(&tasks)
        .args(["--max-tasks", "1000"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with(
            "panic: too many tasks: the limit is 1000 tasks alive at once (--max-tasks)\n"
        ),
        "{err}"
    );
    assert!(err.contains(":3:3 (task 1)"), "{err}");

    let lists = tmp("lists.weft");
    fs::write(
        &lists,
        "func main() {\n\tvar l []int\n\tfor {\n\t\tl = append(l, 1, 2, 3, 4, 5, 6, 7, 8)\n\t}\n}\n",
    )
    .unwrap();
    let out = weft()
        .arg("run")
        .arg(&lists)
        .args(["--max-memory", "64"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("panic: out of memory: the program uses more than 64 MiB (--max-memory)\n"),
        "{err}"
    );
}
