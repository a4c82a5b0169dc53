//! Placement (docs/language.md, "Placement"), rule by rule, through
//! programs compiled from source and run with one and with four workers:
//! `go CALL on DEV` and `go { } on DEV` place a task; without `on` a task
//! runs on its parent's device and `main` on "cpu"; `on "auto"` takes a
//! GPU in turn, or "cpu"; `here()` says where a task runs; the creating
//! builtins make their tensors there and `to(t)` copies there; a device
//! that is not present panics at the `go`; the device is evaluated at the
//! `go`, after the arguments; `on` is not a reserved word.

use weft_interp::{render_outcome, run_program, RunConfig};

/// Compiles and runs `src`; returns stdout, stderr and the exit code.
fn run(src: &str, workers: usize) -> (String, String, i32) {
    let prog = weft_lang::compile("p.weft", src).unwrap_or_else(|d| panic!("{}", d.render(src)));
    let cfg = RunConfig {
        workers,
        seed: 1,
        capture: true,
        ..RunConfig::default()
    };
    let r = run_program(&prog, cfg).expect("loads");
    let rep = render_outcome(&r.outcome);
    (String::from_utf8(r.output).unwrap(), rep.stderr, rep.code)
}

/// Runs with one worker and with four: the same output, exit code 0.
#[track_caller]
fn runs_to(src: &str, want: &str) {
    for workers in [1, 4] {
        let (out, err, code) = run(src, workers);
        assert_eq!(
            (out.as_str(), err.as_str(), code),
            (want, "", 0),
            "{workers} workers"
        );
    }
}

/// The device "auto" gives the k-th task so placed on this machine.
fn auto(k: usize) -> String {
    weft_tensor::auto_device(&weft_tensor::devices(), k).to_string()
}

#[test]
fn go_on_places_a_call_or_a_block_and_here_says_where() {
    runs_to(
        r#"
func where(out chan string) {
	out <- here()
}

func main() {
	out := make(chan string)
	go where(out) on "cpu"
	print(<-out)
	go {
		out <- "block " + here()
	} on "cpu"
	print(<-out)
	print("main", here())
}
"#,
        "cpu\nblock cpu\nmain cpu\n",
    );
}

#[test]
fn a_task_without_on_runs_on_its_parents_device() {
    // Two generations below a placed task, and below main.
    let src = r#"
func child(out chan string) {
	go {
		out <- "grandchild " + here()
	}
	out <- "child " + here()
}

func main() {
	out := make(chan string)
	go child(out) on "auto"
	a, b := <-out, <-out
	if a > b {
		a, b = b, a
	}
	print(a)
	print(b)
	go child(out)
	c, d := <-out, <-out
	if c > d {
		c, d = d, c
	}
	print(c)
	print(d)
}
"#;
    let first = auto(0);
    runs_to(
        src,
        &format!("child {first}\ngrandchild {first}\nchild cpu\ngrandchild cpu\n"),
    );
}

#[test]
fn auto_spreads_over_the_gpus_in_turn_or_takes_the_cpu() {
    let src = r#"
func where(k int, out chan string) {
	out <- str(k) + " " + here()
}

func main() {
	out := make(chan string)
	for k := range 4 {
		go where(k, out) on "auto"
		print(<-out)
	}
	go {
		out <- "block " + here()
	} on "auto"
	print(<-out)
}
"#;
    let want: String = (0..4).map(|k| format!("{k} {}\n", auto(k))).collect();
    runs_to(src, &format!("{want}block {}\n", auto(4)));
}

#[test]
fn tensors_are_made_on_here_and_to_with_one_argument_copies_there() {
    let src = r#"
func made(out chan string) {
	ds := load_dataset("digits")
	ts := []tensor{zeros([]int{2}), ones([]int{2}), full([]int{2}, 1.5), randn([]int{2}, 1),
		tensor_from([]float{1, 2}, []int{2}), ds.x, to(ones([]int{1}), "cpu")}
	s := here()
	for _, t := range ts {
		s += " " + device(t) + "/" + device(to(t))
	}
	out <- s
}

func main() {
	out := make(chan string)
	go made(out) on "cpu"
	print(<-out)
	go made(out) on "auto"
	print(<-out)
	t := to(randn([]int{3}, 4))
	print(t, get(t, 2) == get(randn([]int{3}, 4), 2))
}
"#;
    let line = |d: &str| {
        format!(
            "{d}{}",
            format!(" {d}/{d}").repeat(6) + &format!(" cpu/{d}")
        )
    };
    runs_to(
        src,
        &format!("{}\n{}\ntensor[3]@cpu true\n", line("cpu"), line(&auto(0))),
    );
}

#[test]
fn a_device_that_is_not_present_panics_at_the_go() {
    // No machine has 65 GPUs: the message names the device, the location
    // is the `go` statement, nothing of the task ran.
    for (stmt, col) in [
        ("go worker(out) on dev", 2),
        ("go {\n\t\tout <- 1\n\t} on dev", 2),
    ] {
        let src = format!(
            "func worker(out chan int) {{\n\tout <- 1\n}}\n\nfunc main() {{\n\tout := make(chan int, 1)\n\tdev := \"cuda:64\"\n\tprint(\"before\")\n\t{stmt}\n\tprint(\"after\")\n}}\n"
        );
        for workers in [1, 4] {
            let (out, err, code) = run(&src, workers);
            assert_eq!(out, "before\n");
            assert_eq!(
                err,
                format!(
                    "panic: go: device \"cuda:64\" not present\n    at p.weft:9:{col} (task 1)\n"
                )
            );
            assert_eq!(code, 2);
        }
    }
}

#[test]
fn the_device_is_evaluated_at_the_go_after_the_arguments() {
    runs_to(
        r#"
func arg(s string) string {
	print("arg", s)
	return s
}

func dev() string {
	print("device")
	return "cpu"
}

func worker(s string, out chan string) {
	out <- s + " " + here()
}

func main() {
	out := make(chan string)
	d := "cpu"
	go worker(arg("x"), out) on dev()
	print(<-out)
	go {
		out <- "block " + here()
	} on d
	d = "cuda:64"
	print(<-out)
}
"#,
        "arg x\ndevice\nx cpu\nblock cpu\n",
    );
}

#[test]
fn on_is_not_a_reserved_word() {
    runs_to(
        r#"
type T struct {
	on string
}

func on(on string) string {
	return on + "!"
}

func main() {
	on := T{on: "cpu"}
	out := make(chan string)
	go {
		out <- here()
	} on on.on
	print(<-out, on.on)
}
"#,
        "cpu cpu\n",
    );
}
