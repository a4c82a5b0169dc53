//! `weft test` as a user runs it (the built binary; docs/language.md,
//! "Testing programs", and docs/testing-programs.md):
//! - the output format (`ok   NAME (N schedules)`, `--- FAIL: ...`,
//!   `replay: ...`, `PASS`/`FAIL`, `no tests`), the failure report on
//!   stderr in `weft run`'s form, and the exit codes (0, 1, 64);
//! - `--run` keeps the matching tests; `-v` shows what they print;
//! - `--replay` of the printed token reproduces the failure step for step
//!   (the same report and listing), and notices a changed program;
//! - `--exhaustive` counts the interleavings of small programs as counted
//!   by hand, fails with `(interleaving K)`, and says when it samples;
//! - leaked tasks, deadlocks and a step budget that ran out are reported;
//! - time is virtual: a test that sleeps ten minutes passes with `now()`
//!   exactly ten minutes later;
//! - every GoBench bug ported to Weft (`tests/gobench/`) is found.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn weft() -> Command {
    Command::new(env!("CARGO_BIN_EXE_weft"))
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("weft-test-cmd-{}", std::process::id()));
    fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `src` as `name` in the test directory; returns its name (the
/// commands run in that directory, so messages show the bare name).
fn file(name: &str, src: &str) -> String {
    fs::write(dir().join(name), src).unwrap();
    name.to_string()
}

fn test(args: &[&str]) -> Output {
    weft()
        .current_dir(dir())
        .arg("test")
        .args(args)
        .output()
        .unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const BASIC: &str = "\
func test_pass() {
	c := make(chan int)
	go { c <- 1 }
	assert(<-c == 1, \"one\")
}

func test_order() {
	c := make(chan int, 2)
	go { c <- 1 }
	go { c <- 2 }
	a := <-c
	b := <-c
	print(a, b)
	assert(a < b, \"in order\")
}

func test_leak() {
	c := make(chan int)
	go { c <- 1 }
}

func helper(x int) int {
	return x
}

func test_with_param(x int) {
}
";

#[test]
fn reports_passes_and_failures_in_the_documented_form() {
    let f = file("basic.weft", BASIC);
    let o = test(&[&f]);
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    let so = out(&o);
    let lines: Vec<&str> = so.lines().collect();
    assert_eq!(lines[0], "ok   test_pass (100 schedules)");
    assert!(
        lines[1].starts_with("--- FAIL: test_order (schedule ") && lines[1].ends_with(" of 100)"),
        "{so}"
    );
    assert!(
        lines[2].starts_with("replay: weft test basic.weft --run '^test_order$' --replay w1"),
        "{so}"
    );
    assert!(
        lines[3].starts_with("--- FAIL: test_leak (schedule 1 of 100)"),
        "{so}"
    );
    assert_eq!(*lines.last().unwrap(), "FAIL");
    // `test_with_param` is not a test; `helper` neither.
    assert!(!so.contains("with_param") && !so.contains("helper"));
    // Output is shown only with -v.
    assert!(!so.contains("1 2") && !so.contains("2 1"));
    let se = err(&o);
    assert!(
        se.contains("panic: assertion failed: in order\n    at basic.weft:14:2 (task 1)\n"),
        "{se}"
    );
    assert!(
        se.contains("leaked: task 2 [chan send]: basic.weft:19:7\n"),
        "{se}"
    );
    // The failing interleaving: the operations that led to it.
    assert!(se.contains("interleaving ("), "{se}");
    assert!(se.contains("send ch1"), "{se}");
    assert!(se.contains("ch1 made at basic.weft:"), "{se}");
}

#[test]
fn run_selects_tests_and_verbose_shows_output() {
    let f = file("select.weft", BASIC);
    let o = test(&[&f, "--run", "^test_pass$"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(out(&o), "ok   test_pass (100 schedules)\nPASS\n");
    assert_eq!(err(&o), "");
    let o = test(&[&f, "--run", "nothing matches"]);
    assert_eq!((o.status.code(), out(&o)), (Some(0), "no tests\n".into()));
    let o = test(&[&f, "--run", "("]);
    assert_eq!(o.status.code(), Some(64));
    assert!(err(&o).contains("invalid --run pattern"), "{}", err(&o));
    let p = file("printing.weft", "func test_p() {\n\tprint(\"hello\")\n}\n");
    let o = test(&[&p, "-v", "--schedules", "3"]);
    assert_eq!(out(&o), "hello\nok   test_p (3 schedules)\nPASS\n");
}

#[test]
fn files_without_tests_and_files_that_do_not_compile() {
    let f = file("none.weft", "func main() {\n\tprint(1)\n}\n");
    let o = test(&[&f]);
    assert_eq!((o.status.code(), out(&o)), (Some(0), "no tests\n".into()));
    let f = file("empty.weft", "");
    assert_eq!(out(&test(&[&f])), "no tests\n");
    // A file for `weft test` needs no main; one that has it still runs.
    let f = file(
        "both.weft",
        "func main() {\n\tprint(\"main\")\n}\n\nfunc test_a() {\n}\n",
    );
    let o = test(&[&f]);
    assert_eq!(out(&o), "ok   test_a (100 schedules)\nPASS\n");
    let r = weft()
        .current_dir(dir())
        .args(["run", &f])
        .output()
        .unwrap();
    assert_eq!(out(&r), "main\n");
    let f = file("bad.weft", "func test_a() {\n\tx := \n}\n");
    let o = test(&[&f]);
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("bad.weft:3:1: error: "), "{}", err(&o));
    assert_eq!(out(&o), "");
    // `weft run` of a file without main still requires one.
    let f = file("nomain.weft", "func test_a() {\n}\n");
    let r = weft()
        .current_dir(dir())
        .args(["run", &f])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
}

/// The token of the first failure in `o`'s output.
fn token(o: &Output) -> String {
    let so = out(o);
    let line = so
        .lines()
        .find(|l| l.starts_with("replay: "))
        .unwrap_or_else(|| panic!("no replay line in {so}"));
    line.rsplit(' ').next().unwrap().to_string()
}

#[test]
fn replay_reproduces_the_failure_step_for_step_and_notices_a_changed_program() {
    let f = file("replay.weft", BASIC);
    let o = test(&[&f, "--run", "^test_order$", "--seed", "7"]);
    let tok = token(&o);
    let first_err = err(&o);
    for _ in 0..3 {
        let r = test(&[&f, "--run", "^test_order$", "--replay", &tok]);
        assert_eq!(r.status.code(), Some(1));
        // Output as with -v, then the result.
        let so = out(&r);
        assert!(
            so.ends_with("--- FAIL: test_order (replay)\nFAIL\n"),
            "{so}"
        );
        assert!(so.starts_with("2 1\n"), "{so}");
        // The same report and the same interleaving, step for step.
        assert_eq!(err(&r), first_err);
    }
    // A trace of the replayed run.
    let trace = dir().join("replay-trace.json");
    let r = test(&[
        &f,
        "--run",
        "^test_order$",
        "--replay",
        &tok,
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(1));
    let t = fs::read_to_string(&trace).unwrap();
    assert!(t.contains("traceEvents"), "{t}");
    // The program changed: the token no longer fits, and replay says so.
    let changed = BASIC.replace("go { c <- 2 }", "go { c <- 2 }\n\tgo { c <- 3 }");
    let f2 = file("replay2.weft", &changed);
    let r = test(&[&f2, "--run", "^test_order$", "--replay", &tok]);
    assert_eq!(r.status.code(), Some(1));
    assert!(
        out(&r).contains("--- FAIL: test_order (replay diverged)"),
        "{}",
        out(&r)
    );
    assert!(
        err(&r).contains("replay divergence at decision"),
        "{}",
        err(&r)
    );
    // A token that is not one: a usage error.
    for bad in ["nonsense", "w1!", "w1AAAA"] {
        let r = test(&[&f, "--replay", bad]);
        assert_eq!(r.status.code(), Some(64), "{bad}: {}", err(&r));
        assert!(err(&r).contains("invalid replay token"), "{}", err(&r));
    }
    // --trace needs --replay.
    assert_eq!(test(&[&f, "--trace", "x.json"]).status.code(), Some(64));
}

#[test]
fn a_passing_schedule_replays_as_ok() {
    // A token recorded from a passing schedule of the same test replays
    // as ok: take the failing one of test_order and replay it against a
    // version whose assertion holds in every order.
    let f = file("okreplay.weft", BASIC);
    let tok = token(&test(&[&f, "--run", "^test_order$"]));
    let fixed = BASIC.replace("assert(a < b, \"in order\")", "assert(a != b, \"differ\")");
    let f2 = file("okreplay2.weft", &fixed);
    let r = test(&[&f2, "--run", "^test_order$", "--replay", &tok]);
    assert_eq!(out(&r), "2 1\nok   test_order (replay)\nPASS\n");
    assert_eq!(r.status.code(), Some(0));
}

const COUNTS: &str = "\
func test_two_senders() {
	c := make(chan int, 2)
	go { c <- 1 }
	go { c <- 2 }
	a := <-c
	b := <-c
	print(a, b)
}

func test_three_printers() {
	go { print(1) }
	go { print(2) }
	go { print(3) }
}
";

#[test]
fn exhaustive_verifies_the_interleavings_counted_by_hand() {
    let f = file("counts.weft", COUNTS);
    // See crates/interp/tests/controlled.rs for the counts: 4 without
    // preemptions, 8 with one, 10 with two or more; 3! prints.
    for (p, two, three) in [("0", 4, 6), ("1", 8, 6), ("2", 10, 6), ("5", 10, 6)] {
        let o = test(&[&f, "--exhaustive", "--max-preemptions", p]);
        let s = if p == "1" { "" } else { "s" };
        assert_eq!(
            out(&o),
            format!(
                "ok   test_two_senders (verified: {two} interleavings, at most {p} preemption{s})\n\
                 ok   test_three_printers (verified: {three} interleavings, at most {p} preemption{s})\n\
                 PASS\n"
            )
        );
        assert_eq!(o.status.code(), Some(0));
    }
    // The default bound is 2.
    let o = test(&[&f, "--exhaustive", "--run", "two"]);
    assert!(out(&o).contains("(verified: 10 interleavings, at most 2 preemptions)"));
}

#[test]
fn exhaustive_failures_and_the_fall_back_to_sampling() {
    let f = file("exfail.weft", BASIC);
    let o = test(&[&f, "--exhaustive", "--run", "order"]);
    assert_eq!(o.status.code(), Some(1));
    let so = out(&o);
    assert!(
        so.starts_with("--- FAIL: test_order (interleaving "),
        "{so}"
    );
    let tok = token(&o);
    let r = test(&[&f, "--run", "^test_order$", "--replay", &tok]);
    assert_eq!(err(&r), err(&o));
    // Too many interleavings for the budget: it says so and samples.
    let many = file(
        "many.weft",
        "func test_many() {\n\tfor i := range 6 {\n\t\tgo { print(i) }\n\t}\n}\n",
    );
    let o = test(&[&many, "--exhaustive", "--schedules", "20"]);
    assert_eq!(
        out(&o),
        "exhaustive: test_many: more than 20 runs to cover every interleaving with at most 2 \
         preemptions; sampled 20 schedules instead\nok   test_many (20 schedules)\nPASS\n"
    );
}

#[test]
fn deadlocks_leaks_and_running_tasks_are_reported() {
    let f = file(
        "fails.weft",
        "\
func test_deadlock() {
	c := make(chan int)
	go { <-c }
	<-c
}

func test_select_leak() {
	a := make(chan int)
	go {
		select {
		case <-a:
		}
	}
}

func test_spins() {
	go {
		for {
			select {
			default:
			}
		}
	}
}

func test_panics_in_a_task() {
	done := make(chan bool)
	go {
		panic(\"boom\")
	}
	<-done
}
",
    );
    let o = test(&[&f]);
    let se = err(&o);
    assert!(
        se.contains(
            "fatal error: all tasks are asleep - deadlock!\ntask 1 [chan receive]: fails.weft:4:2\n\
             task 2 [chan receive]: fails.weft:3:7\n"
        ),
        "{se}"
    );
    assert!(
        se.contains("leaked: task 2 [select]: fails.weft:10:3\n"),
        "{se}"
    );
    assert!(se.contains("leaked: task 2 [running]: fails.weft:"), "{se}");
    assert!(
        se.contains("panic: boom\n    at fails.weft:29:3 (task 2)\n"),
        "{se}"
    );
    let so = out(&o);
    for t in ["deadlock", "select_leak", "spins", "panics_in_a_task"] {
        assert!(
            so.contains(&format!("--- FAIL: test_{t} (schedule 1 of 100)")),
            "{so}"
        );
    }
}

#[test]
fn time_is_virtual() {
    let f = file(
        "sleepy.weft",
        "\
func test_sleeps_ten_minutes() {
	sleep(600000)
	print(now())
	t := after(60000)
	go {
		sleep(1000)
		print(now())
	}
	print(<-t, now())
}
",
    );
    let o = test(&[&f, "-v", "--schedules", "5"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // Ten minutes pass at once; the timers fire in deadline order.
    let so = out(&o);
    assert!(
        so.starts_with("600000.0\n601000.0\n60000 660000.0\n"),
        "{so}"
    );
}

#[test]
fn every_ported_gobench_bug_is_found() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gobench");
    let mut n = 0;
    for e in fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "weft") {
            continue;
        }
        n += 1;
        let o = weft().arg("test").arg(&p).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{}: {}", p.display(), out(&o));
        assert!(out(&o).contains("--- FAIL: test_"), "{}", out(&o));
    }
    assert!(n >= 10, "{n} ported bugs");
}

const NEWER_OPS: &str = "\
func test_func_values() {
	c := make(chan int, 2)
	send := func(v int) { c <- v }
	go send(1)
	go send(2)
	a := <-c
	b := <-c
	print(a, b)
}

func test_collective() {
	comms := group(2)
	done := make(chan int, 2)
	for i := range 2 {
		go func(m comm) {
			done <- allreduce_sum(m, rank(m) + 1)
		}(comms[i])
	}
	assert(<-done + <-done == 6, \"both members get 3\")
}

func test_one_member_missing() {
	comms := group(2)
	allreduce_sum(comms[0], 1)
}

func test_file_order() {
	write_file(\"order.txt\", \"\")
	done := make(chan bool)
	go { append_file(\"order.txt\", \"a\"); done <- true }
	go { append_file(\"order.txt\", \"b\"); done <- true }
	<-done
	<-done
	assert(read_file(\"order.txt\") == \"ab\", \"a before b\")
}

func test_lines() {
	write_file(\"three.txt\", \"x\\ny\\nz\\n\")
	n := 0
	for l := range lines(\"three.txt\") {
		_ = l
		n++
	}
	assert(n == 3, \"three lines\")
}
";

/// A `go` of a func value, a collective's arrival, a file read or write
/// and the reader of `lines` are scheduling points like a channel
/// operation: exhaustive mode counts their interleavings, finds the order
/// of two appends, and a collective one member never joins is a deadlock.
#[test]
fn func_values_collectives_files_and_lines_are_scheduling_points() {
    let f = file("newer.weft", NEWER_OPS);
    let o = test(&[&f, "--exhaustive", "--run", "func_values|collective|lines"]);
    let s = out(&o);
    // The same counts as `go { c <- 1 }` (test_two_senders).
    assert!(
        s.contains("ok   test_func_values (verified: 10 interleavings, at most 2 preemptions)"),
        "{s}"
    );
    assert!(s.contains("ok   test_collective (verified: "), "{s}");
    assert!(s.contains("ok   test_lines (verified: "), "{s}");
    assert_eq!(o.status.code(), Some(0), "{s}{}", err(&o));

    let o = test(&[&f, "--exhaustive", "--run", "file_order"]);
    let s = out(&o) + &err(&o);
    assert!(s.contains("--- FAIL: test_file_order"), "{s}");
    assert!(s.contains("a before b"), "{s}");
    // The listing names the file operations, with their places.
    assert!(s.contains("file                    newer.weft:30:7"), "{s}");
    assert_eq!(o.status.code(), Some(1), "{s}{}", err(&o));
    // The default portfolio finds it too.
    let o = test(&[&f, "--run", "file_order"]);
    assert!(out(&o).contains("--- FAIL: test_file_order"), "{}", out(&o));

    let o = test(&[&f, "--run", "one_member_missing"]);
    let s = out(&o) + &err(&o);
    assert!(s.contains("--- FAIL: test_one_member_missing"), "{s}");
    assert!(s.contains("deadlock"), "{s}");
    assert!(s.contains("[collective]"), "{s}");
}
