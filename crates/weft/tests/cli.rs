//! The `weft` command line, run as a user runs it (the built binary):
//! - `weft build` then `weft run` of the compiled file prints exactly what
//!   running the source prints (stdout, stderr, exit code), for every example
//!   and Go port, and both match the golden files;
//! - `--workers 1 --seed S` runs are identical across runs;
//! - `weft dump` of the source and of the compiled file agree;
//! - `weft check` reports every error with exit code 1; unreadable, corrupt
//!   and truncated inputs get a clear message, never a panic;
//! - `--help` and `--version` exit 0 on stdout; usage errors (`--workers 0`,
//!   an unknown flag, a missing file, a bad number) exit 64;
//! - `weft run --trace` writes a trace that `weft trace` draws, and a trace
//!   path that cannot be written is an error before the program runs;
//! - a source file that is not UTF-8 is a compile error at its first
//!   invalid byte;
//! - printed lines reach a pipe or a file as they are printed, a run killed
//!   by SIGKILL loses none, and a panic or deadlock report follows the last
//!   line;
//! - `sum` of an empty tensor prints `0.0`;
//! - a string's bytes are printed as they are, UTF-8 or not.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

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
        assert!(out.stderr.is_empty(), "{sub}");
    }
    for help in [&["--help"][..], &["help"], &["help", "run"]] {
        let out = weft().args(help).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{help:?}");
        assert!(text(&out.stdout).contains("Usage: weft"), "{help:?}");
    }
    let out = weft().arg("--version").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout).starts_with("weft "),
        "{}",
        text(&out.stdout)
    );
}

/// A usage error exits 64 (`EX_USAGE`), apart from a program's panic (2),
/// with clap's message on stderr and nothing on stdout; the program does
/// not run.
#[test]
fn usage_errors_exit_64() {
    let file = tmp("usage.weft");
    fs::write(&file, "func main() { print(\"ran\") }\n").unwrap();
    let f = file.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["run", f, "--workers", "0"], "--workers"),
        (&["run", f, "--workers", "many"], "--workers"),
        (&["run", f, "--seed", "-1"], "-1"),
        (&["run", f, "--max-memory", "0"], "--max-memory"),
        (&["run", f, "--bogus"], "--bogus"),
        (&["run"], "<FILE>"),
        (&["build", f], "--output"),
        (&["frobnicate", f], "frobnicate"),
        (&[], "Usage: weft"),
    ];
    for (args, names) in cases {
        let out = weft().args(*args).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{args:?}: {err}");
        assert!(err.contains(names), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
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

/// `weft run --trace PATH` with a PATH that cannot be created fails at
/// once, naming it, with the file-error code 1, and the program does not
/// run (it used to run, exit 0 and leave no trace and no message).
#[test]
fn a_trace_that_cannot_be_written_is_an_error_before_the_run() {
    let file = tmp("trace-target.weft");
    fs::write(&file, "func main() { print(\"ran\") }\n").unwrap();
    let missing_dir = tmp("no-such-dir").join("x.json");
    let a_dir = tmp("");
    for path in [&missing_dir, &a_dir] {
        let out = weft()
            .arg("run")
            .arg("--trace")
            .arg(path)
            .arg(&file)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.starts_with(&format!("weft: cannot write trace {}: ", path.display())),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            out.stdout.is_empty(),
            "the program ran: {}",
            text(&out.stdout)
        );
    }
}

/// A source file that is not UTF-8 is a compile error at its first invalid
/// byte, in the form of every compile error.
#[test]
fn source_that_is_not_utf8_is_reported_at_its_first_invalid_byte() {
    let file = tmp("latin1.weft");
    fs::write(&file, b"func main() {\n\tprint(\"caf\xe9 \xff\")\n}\n").unwrap();
    let shown = file.display();
    for cmd in ["check", "run", "build", "dump"] {
        let mut c = weft();
        c.arg(cmd).arg(&file);
        if cmd == "build" {
            c.arg("-o").arg(tmp("latin1.pb"));
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "{shown}:2:12: error: source is not valid UTF-8 (byte 0xe9)\n\
                 \tprint(\"caf\u{FFFD} \u{FFFD}\")\n\
                 \t          ^\n"
            ),
            "{cmd}"
        );
        assert!(out.stdout.is_empty(), "{cmd}");
    }
    // A sequence cut short at the very end of the file.
    let cut = tmp("cut.weft");
    fs::write(&cut, b"// \xe2\x82").unwrap();
    let out = weft().arg("check").arg(&cut).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with(&format!(
            "{}:1:4: error: source is not valid UTF-8 (byte 0xe2)\n",
            cut.display()
        )),
        "{}",
        text(&out.stderr)
    );
}

/// The sum of no values is 0.0, not -0.0.
#[test]
fn sum_of_an_empty_tensor_prints_zero() {
    let file = tmp("empty-sum.weft");
    fs::write(
        &file,
        "func main() {\n\te := zeros([]int{0})\n\tprint(sum(e), mean(e), sum(zeros([]int{2, 0})))\n\
         \tprint(sum_rows(zeros([]int{0, 2})))\n\tprint(get(sum_rows(zeros([]int{0, 2})), 1))\n}\n",
    )
    .unwrap();
    let out = weft().arg("run").arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "0.0 NaN 0.0\ntensor[2]@cpu\n0.0\n");
}

/// A string holding bytes that are not UTF-8 (here half of `é`, `\xc3`)
/// is written as it is, as Go writes it: by `print`, inside a list, struct
/// or map, by `str(x)`, `+` and `sprintf`'s `%s` and `%v` (`%q` and `%x`
/// show the byte).
#[test]
fn print_writes_the_bytes_of_a_string_as_they_are() {
    let file = tmp("raw-bytes.weft");
    fs::write(
        &file,
        "type P struct {\n\ts string\n}\n\nfunc main() {\n\te := \"\u{e9}\"\n\tb := e[0:1]\n\ts := \"a\" + b + \"b\"\n\
         \tprint(s, len(s))\n\tprint([]string{s, b}, P{s}, map[string]int{s: 1})\n\
         \tprint(str([]string{s}) + str(1))\n\tprint(b + e[1:2])\n\
         \tprint(sprintf(\"%s|%v|%5s|%q|%x\", s, []string{s}, b, s, s))\n}\n",
    )
    .unwrap();
    let out = weft().arg("run").arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let want: &[u8] = b"a\xc3b 3\n[a\xc3b \xc3] {a\xc3b} map[a\xc3b:1]\n[a\xc3b]1\n\xc3\xa9\n\
        a\xc3b|[a\xc3b]|    \xc3|\"a\\xc3b\"|61c362\n";
    assert_eq!(out.stdout, want, "{:?}", text(&out.stdout));
}

/// A `weft run` child that is killed when dropped, so a failing test
/// leaves no sleeping program behind.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Long enough for any loaded machine; the tests wait this long only when
/// they fail.
const PATIENCE: Duration = Duration::from_secs(60);

/// Prints three lines, then sleeps for ten minutes (it is killed first).
const TICKS: &str = "func main() {\n\tfor i := 0; i < 3; i++ {\n\t\tprint(\"tick\", i)\n\t\tsleep(50)\n\t}\n\tsleep(600000)\n}\n";

const TICKS_OUT: &str = "tick 0\ntick 1\ntick 2\n";

/// Output to a pipe is not held back: the lines arrive while the program
/// still sleeps, and a SIGKILL loses none (issue 26: `timeout 1 weft run
/// p.weft | ...` showed nothing).
#[test]
fn printed_lines_reach_a_pipe_while_the_program_runs() {
    let file = tmp("ticks-pipe.weft");
    fs::write(&file, TICKS).unwrap();
    let mut child = Killed(
        weft()
            .arg("run")
            .arg(&file)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + PATIENCE;
    let mut got = String::new();
    while got != TICKS_OUT {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                got.push_str(&line);
                got.push('\n');
            }
            Err(e) => panic!("{e:?} after {got:?}: the lines were held back"),
        }
    }
    assert!(
        child.0.try_wait().unwrap().is_none(),
        "the program should still be sleeping"
    );
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    reader.join().unwrap();
    // Nothing more, nothing split.
    let rest: Vec<String> = rx.try_iter().collect();
    assert!(rest.is_empty(), "{rest:?}");
}

/// The same with stdout redirected to a file (`weft run p.weft > f`): the
/// file holds every line printed before the kill.
#[test]
fn printed_lines_reach_a_file_and_survive_a_kill() {
    let file = tmp("ticks-file.weft");
    fs::write(&file, TICKS).unwrap();
    let out_path = tmp("ticks.out");
    let out_file = fs::File::create(&out_path).unwrap();
    let mut child = Killed(
        weft()
            .arg("run")
            .arg(&file)
            .stdout(out_file)
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + PATIENCE;
    loop {
        let got = fs::read_to_string(&out_path).unwrap();
        if got == TICKS_OUT {
            break;
        }
        assert!(TICKS_OUT.starts_with(&got), "{got:?}");
        assert!(
            Instant::now() < deadline,
            "after {PATIENCE:?} the file holds {got:?}: the lines were held back"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        child.0.try_wait().unwrap().is_none(),
        "the program should still be sleeping"
    );
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    assert_eq!(fs::read_to_string(&out_path).unwrap(), TICKS_OUT);
}

/// With stdout and stderr on one file, a panic's or a deadlock's report
/// comes after every line the program printed (from any task).
#[test]
fn the_end_report_follows_every_printed_line() {
    let cases = [
        (
            "panic",
            "func main() {\n\tdone := make(chan int)\n\tgo {\n\t\tfor i := 0; i < 1000; i++ {\n\t\t\tprint(\"w\", i)\n\t\t}\n\t\tdone <- 1\n\t}\n\t<-done\n\tprint(\"main\")\n\tz := 0\n\tprint(1 / z)\n}\n",
            "panic: integer divide by zero\n",
        ),
        (
            "deadlock",
            "func main() {\n\tfor i := 0; i < 1000; i++ {\n\t\tprint(\"w\", i)\n\t}\n\tprint(\"main\")\n\tc := make(chan int)\n\t<-c\n}\n",
            "fatal error: all tasks are asleep - deadlock!\n",
        ),
    ];
    for (name, src, report) in cases {
        let file = tmp(&format!("report-{name}.weft"));
        fs::write(&file, src).unwrap();
        let both = tmp(&format!("report-{name}.txt"));
        let f = fs::File::create(&both).unwrap();
        let st = weft()
            .arg("run")
            .arg(&file)
            .stdout(f.try_clone().unwrap())
            .stderr(f)
            .status()
            .unwrap();
        assert_eq!(st.code(), Some(2), "{name}");
        let got = fs::read_to_string(&both).unwrap();
        let mut want: String = (0..1000).map(|i| format!("w {i}\n")).collect();
        want.push_str("main\n");
        want.push_str(report);
        assert!(got.starts_with(&want), "{name}: {got}");
    }
}
