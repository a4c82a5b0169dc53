//! `weft run --max-memory MIB` on the built binary, whose counting
//! allocator makes what a program already holds count (in-process tests,
//! `crates/interp/tests/interp_memlimit.rs`, see only single allocations
//! past the ceiling). Each program here grows without end, most of them in
//! small steps; each must end, in time, with exit code 2 and the panic
//! `out of memory: the program uses more than MIB MiB (--max-memory)`
//! (issue 26: strings, timers, task stacks and tensors were not counted,
//! and a spawning bomb sat over its ceiling for 40 s).

use std::fs;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Generous for a debug build on a loaded machine; a run that hangs over
/// its ceiling fails here instead of holding the test suite.
const DEADLINE: Duration = Duration::from_secs(120);

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-memlimit-test-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs `src` with `--max-memory mib` and `extra` flags; returns (stdout,
/// stderr, exit code, how long it took). Fails the test if the run does not
/// end before `DEADLINE`.
fn run(name: &str, src: &str, mib: u32, extra: &[&str]) -> (String, String, i32, Duration) {
    let file = tmp(&format!("{name}.weft"));
    fs::write(&file, src).unwrap();
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .arg("run")
        .arg(&file)
        .args(["--max-memory", &mib.to_string()])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drain both pipes on threads, so a chatty run cannot block on a full
    // pipe while we wait for it.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name}: still running after {DEADLINE:?} with --max-memory {mib}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = start.elapsed();
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    (out, err, status.code().unwrap_or(-1), took)
}

/// `src` ends with the ceiling's panic at `at` (`LINE:COL`, or a prefix of
/// it where the growth that trips the ceiling varies).
fn assert_out_of_memory(name: &str, src: &str, mib: u32, extra: &[&str], at: &str) -> String {
    let (out, err, code, took) = run(name, src, mib, extra);
    let want =
        format!("panic: out of memory: the program uses more than {mib} MiB (--max-memory)\n");
    assert!(
        err.starts_with(&want),
        "{name}: stderr {err:?}, stdout {out:?}"
    );
    let loc = err.lines().nth(1).unwrap_or_default();
    assert!(
        loc.starts_with("    at ") && loc.contains(&format!("{name}.weft:{at}")),
        "{name}: {err}"
    );
    assert_eq!(code, 2, "{name}: {err}");
    eprintln!("{name}: panicked in {took:?}");
    out
}

/// Issue 26, row 3: `s = s + s` forty times aborted the process
/// ("memory allocation of 2147483648 bytes failed", exit 134) or took the
/// machine's memory.
#[test]
fn string_doubling() {
    let src = "func main() {\n\ts := \"x\"\n\tfor i := 0; i < 40; i++ {\n\t\ts = s + s\n\t}\n\tprint(len(s))\n}\n";
    assert_out_of_memory("strings", src, 100, &[], "4:7");
}

/// Many strings, each small: what the program holds counts.
#[test]
fn many_small_strings() {
    let src = "func main() {\n\tvar l []string\n\tfor i := 0; ; i++ {\n\t\tl = append(l, str(i) + \"...............................\")\n\t}\n}\n";
    assert_out_of_memory("small-strings", src, 64, &[], "");
}

/// Issue 26, row 2: each task starts two more, then blocks. With 1000 MiB
/// the run sat at 1.18 GB for 40 s, printing nothing.
#[test]
fn spawning_bomb() {
    let src = "func bomb(c chan int) {\n\tgo bomb(c)\n\tgo bomb(c)\n\t<-c\n}\n\nfunc main() {\n\tc := make(chan int)\n\tbomb(c)\n}\n";
    assert_out_of_memory("bomb", src, 64, &[], "");
    assert_out_of_memory("bomb1", src, 64, &["--workers", "1"], "");
}

/// Issue 26, row 3: two million pending `after` timers reached 1.66 GB
/// under `--max-memory 500`.
#[test]
fn pending_timers() {
    let src = "func main() {\n\tfor i := 0; i < 2000000; i++ {\n\t\tafter(1000000)\n\t}\n\tprint(\"done\")\n}\n";
    let out = assert_out_of_memory("timers", src, 64, &[], "3:3");
    assert_eq!(out, "");
}

/// Issue 26, row 3: 100 tasks recursing 190k deep reached 3.7 GB under
/// `--max-memory 500`.
#[test]
fn deep_recursion_in_many_tasks() {
    let src = "func down(n int) int {\n\tif n == 0 {\n\t\treturn 0\n\t}\n\treturn down(n-1) + 1\n}\n\nfunc main() {\n\tdone := make(chan int)\n\tfor i := 0; i < 100; i++ {\n\t\tgo {\n\t\t\tdone <- down(190000)\n\t\t}\n\t}\n\tfor i := 0; i < 100; i++ {\n\t\t<-done\n\t}\n\tprint(\"done\")\n}\n";
    let out = assert_out_of_memory("deep", src, 100, &[], "5:9");
    assert_eq!(out, "");
}

/// Copies of shared lists: each copy is as big as its list, so only what
/// the program holds can stop them.
#[test]
fn copies_of_shared_lists() {
    let src = "func main() {\n\tl := perm(100000)\n\tvar keep [][]int\n\tfor {\n\t\tm := l\n\t\tm[0] = 1\n\t\tkeep = append(keep, m)\n\t}\n}\n";
    assert_out_of_memory("copies", src, 64, &[], "6:3");
}

/// Issue 26, row 3: a 3.6 GB tensor passed `--max-memory 2000`.
#[test]
fn a_huge_tensor() {
    let src = "func main() {\n\tt := zeros([]int{30000, 30000})\n\tprint(numel(t))\n}\n";
    assert_out_of_memory("tensor", src, 2000, &[], "2:7");
    // Many tensors, each small.
    let many = "func main() {\n\tvar l []tensor\n\tfor {\n\t\tl = append(l, ones([]int{100, 100}))\n\t}\n}\n";
    assert_out_of_memory("tensors", many, 64, &[], "");
}

/// A program within its ceiling runs as it would without one.
#[test]
fn a_program_within_the_ceiling_runs() {
    let src = "func main() {\n\ts := \"\"\n\tfor i := 0; i < 1000; i++ {\n\t\ts = s + \"x\"\n\t}\n\tl := perm(1000)\n\tgo {\n\t\tprint(len(s), len(l), <-after(-5))\n\t}\n\tsleep(50)\n}\n";
    let (out, err, code, _) = run("fits", src, 64, &[]);
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("1000 1000 -5\n", "", 0)
    );
}
