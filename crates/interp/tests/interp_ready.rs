//! A receive waits for every device tensor in the received value whose
//! values are not there yet (docs/tensors.md, "Readiness"): at the top of
//! the value, and nested in a struct, a list, a map, a list of structs or a
//! closure's captures, through a plain receive (the channel ready, or the
//! receiver parked) and a select.
//!
//! Without a GPU: a simulated device (`WEFT_SIM_DEVICES=1`) whose events
//! are held (`weft_tensor::device::sim::hold`) stays "in flight" until the
//! test releases it, and the hold reports each wait for such an event as
//! it begins. Each program sends a tensor made on `sim:0` while the hold
//! lives, and its receiver does nothing with the tensor afterwards (no op
//! that would wait for it on the host), then lets `main` end. So either
//! the receive waits, and the hold reports a wait while the program cannot
//! end, or it does not, and the program ends first: the test takes the
//! first of those two reports, with no clock involved.
//!
//! Alone in its test binary: a hold holds the events of every simulated
//! buffer the process makes.

use std::sync::mpsc;

use weft_interp::{render_outcome, run_program, RunConfig};
use weft_tensor::device::sim;

/// What the test hears first.
enum Heard {
    /// A wait for a held event began.
    Wait,
    /// The program ended: stdout, stderr, exit code.
    End(String, String, i32),
}

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

/// Runs `src` (which receives a held tensor and then prints `want`) with
/// its events held: the receive must wait for the tensor before the
/// program can end.
#[track_caller]
fn receive_waits(name: &str, src: &str, want: &str) {
    for workers in [1, 4] {
        let (tx, heard) = mpsc::channel();
        let waits = tx.clone();
        let hold = sim::hold(move || {
            let _ = waits.send(Heard::Wait);
        });
        let program = src.to_string();
        let runner = std::thread::spawn(move || {
            let (out, err, code) = run(&program, workers);
            let _ = tx.send(Heard::End(out, err, code));
        });
        match heard.recv().unwrap() {
            Heard::Wait => {}
            Heard::End(out, err, code) => panic!(
                "{name}, {workers} workers: the program ended without waiting for the \
                 received tensor (exit {code}, stdout {out:?}, stderr {err:?})"
            ),
        }
        hold.release();
        // Other waits may have begun meanwhile (one per held tensor); the
        // end comes after them.
        let end = loop {
            match heard.recv().unwrap() {
                Heard::Wait => continue,
                Heard::End(out, err, code) => break (out, err, code),
            }
        };
        runner.join().unwrap();
        assert_eq!(
            (end.0.as_str(), end.1.as_str(), end.2),
            (want, "", 0),
            "{name}, {workers} workers"
        );
    }
}

const PRELUDE: &str = r#"
type Pair struct {
	name string
	t tensor
}

// A tensor on the simulated device, its event held by the test.
func held() tensor {
	return to(zeros([]int{2, 3}), "sim:0")
}
"#;

fn program(body: &str) -> String {
    format!("{PRELUDE}\nfunc main() {{\n{body}\n}}\n")
}

#[test]
fn a_receive_waits_for_device_tensors_nested_in_what_it_receives() {
    std::env::set_var(sim::ENV, "1");
    assert!(
        weft_tensor::devices().iter().any(|d| d == "sim:0"),
        "{:?}",
        weft_tensor::devices()
    );

    // The top-level tensor (the case that was already waited for).
    receive_waits(
        "a tensor",
        &program(
            r#"	ch := make(chan tensor, 1)
	ch <- held()
	t := <-ch
	print("got", shape(t))"#,
        ),
        "got [2 3]\n",
    );

    // A struct, the channel ready at the receive (step's fast path).
    receive_waits(
        "a struct",
        &program(
            r#"	ch := make(chan Pair, 1)
	ch <- Pair{"p", held()}
	p := <-ch
	print("got", p.name)"#,
        ),
        "got p\n",
    );

    // A struct, received by a task that may park first.
    receive_waits(
        "a struct, parked",
        &program(
            r#"	ch := make(chan Pair)
	done := make(chan string)
	go {
		p := <-ch
		done <- p.name
	}
	ch <- Pair{"q", held()}
	print("got", <-done)"#,
        ),
        "got q\n",
    );

    // A list whose first element is a host tensor.
    receive_waits(
        "a list",
        &program(
            r#"	ch := make(chan []tensor, 1)
	ch <- []tensor{zeros([]int{1}), held()}
	l := <-ch
	print("got", len(l))"#,
        ),
        "got 2\n",
    );

    // A list of structs, and a map.
    receive_waits(
        "a list of structs",
        &program(
            r#"	ch := make(chan []Pair, 1)
	ch <- []Pair{Pair{"a", zeros([]int{1})}, Pair{"b", held()}}
	l := <-ch
	print("got", l[1].name)"#,
        ),
        "got b\n",
    );
    receive_waits(
        "a map",
        &program(
            r#"	ch := make(chan map[string]tensor, 1)
	ch <- map[string]tensor{"w": held()}
	m := <-ch
	print("got", len(m))"#,
        ),
        "got 1\n",
    );

    // A closure that captured a tensor.
    receive_waits(
        "a closure",
        &program(
            r#"	ch := make(chan func() []int, 1)
	t := held()
	ch <- func() []int { return shape(t) }
	f := <-ch
	print("got", f != nil)"#,
        ),
        "got true\n",
    );

    // A select's receive case.
    receive_waits(
        "a select",
        &program(
            r#"	ch := make(chan Pair, 1)
	quit := make(chan int)
	ch <- Pair{"s", held()}
	select {
	case p := <-ch:
		print("got", p.name)
	case <-quit:
		print("quit")
	}"#,
        ),
        "got s\n",
    );
}
