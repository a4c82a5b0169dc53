//! Collectives through the interpreter (docs/language.md, "Collectives"):
//! the panic of every error of the contract, the deadlock report's
//! `[collective]`, `comm` values (printing, identity, channels, structs),
//! results that wrap and keep their type, and a program of N members
//! reducing many times whose output is the same for every worker count
//! and seed, and equal to a reference computed here.

use proptest::prelude::*;
use weft_interp::{format_float, render_outcome, run_program, RunConfig};

/// Runs `src`; returns (stdout, stderr, exit code).
fn run(src: &str, workers: usize, seed: u64, args: &[String]) -> (String, String, i32) {
    let prog = weft_lang::compile("t.weft", src).unwrap_or_else(|d| panic!("{}", d.render(src)));
    let r = run_program(
        &prog,
        RunConfig {
            workers,
            seed,
            args: args.to_vec(),
            capture: true,
            ..RunConfig::default()
        },
    )
    .expect("loads");
    let rep = render_outcome(&r.outcome);
    (String::from_utf8(r.output).unwrap(), rep.stderr, rep.code)
}

/// `src` panics with `msg` under every worker count and a few seeds, at
/// one of the `lines` (the member that sees the error depends on the
/// schedule: the last to arrive).
#[track_caller]
fn assert_panics(src: &str, msg: &str, lines: &[u32]) {
    for workers in [1, 2, 4] {
        for seed in 0..4 {
            let (_, stderr, code) = run(src, workers, seed, &[]);
            assert_eq!(code, 2, "{stderr}");
            let mut l = stderr.lines();
            assert_eq!(l.next(), Some(format!("panic: {msg}").as_str()), "{stderr}");
            let at = l.next().unwrap_or_default();
            assert!(
                lines
                    .iter()
                    .any(|n| at.starts_with(&format!("    at t.weft:{n}:"))),
                "{msg}: {at:?} is not at one of lines {lines:?}"
            );
        }
    }
}

#[test]
fn values_of_different_types_at_one_step_panic() {
    let src = "func main() {
	cs := group(2)
	go {
		allreduce_sum(cs[1], 1.5)
	}
	allreduce_sum(cs[0], 1)
}
";
    assert_panics(
        src,
        "allreduce_sum: type mismatch: int (rank 0) vs float (rank 1)",
        &[4, 6],
    );
    let src = "func main() {
	cs := group(3)
	go {
		allgather(cs[2], []int{1})
	}
	go {
		allgather(cs[1], \"b\")
	}
	allgather(cs[0], \"a\")
}
";
    assert_panics(
        src,
        "allgather: type mismatch: string (rank 0) vs []int (rank 2)",
        &[4, 7, 9],
    );
}

#[test]
fn tensors_of_different_shapes_panic() {
    let src = "func main() {
	cs := group(3)
	go {
		allreduce_sum(cs[1], zeros([]int{2, 3}))
	}
	go {
		allreduce_sum(cs[2], zeros([]int{3, 2}))
	}
	allreduce_sum(cs[0], zeros([]int{2, 3}))
}
";
    assert_panics(
        src,
        "allreduce_sum: shape mismatch: [2 3] (rank 0) vs [3 2] (rank 2)",
        &[4, 7, 9],
    );
    let src = "func main() {
	cs := group(2)
	go {
		broadcast(cs[1], ones([]int{4}), 0)
	}
	broadcast(cs[0], ones([]int{2, 2}), 0)
}
";
    assert_panics(
        src,
        "broadcast: shape mismatch: [2 2] (rank 0) vs [4] (rank 1)",
        &[4, 6],
    );
}

/// A list all-reduce is checked element by element: a shape that
/// differs, a list of another length, and a list against a tensor.
#[test]
fn lists_of_tensors_of_different_shapes_panic() {
    let src = "func main() {
	cs := group(3)
	go {
		allreduce_sum(cs[1], []tensor{zeros([]int{2, 3}), ones([]int{4})})
	}
	go {
		allreduce_sum(cs[2], []tensor{zeros([]int{3, 2}), ones([]int{4})})
	}
	allreduce_sum(cs[0], []tensor{zeros([]int{2, 3}), ones([]int{4})})
}
";
    assert_panics(
        src,
        "allreduce_sum: shape mismatch: [[2 3] [4]] (rank 0) vs [[3 2] [4]] (rank 2)",
        &[4, 7, 9],
    );
    let src = "func main() {
	cs := group(2)
	go {
		allreduce_max(cs[1], []tensor{ones([]int{4}), zeros([]int{0})})
	}
	allreduce_max(cs[0], []tensor{ones([]int{4})})
}
";
    assert_panics(
        src,
        "allreduce_max: shape mismatch: [[4]] (rank 0) vs [[4] [0]] (rank 1)",
        &[4, 6],
    );
    let src = "func main() {
	cs := group(2)
	go {
		allreduce_sum(cs[1], zeros([]int{6}))
	}
	allreduce_sum(cs[0], []tensor{zeros([]int{6})})
}
";
    assert_panics(
        src,
        "allreduce_sum: type mismatch: []tensor (rank 0) vs tensor (rank 1)",
        &[4, 6],
    );
}

/// Every element of a list all-reduce is bitwise the all-reduce of the
/// members' elements alone, for every reduction, with tensors of several
/// shapes (an empty one, a lazy transpose among them), values that do not
/// associate, any worker count and seed; the result has the list's
/// shapes, and a group of one gives its own list.
#[test]
fn a_list_of_tensors_reduces_each_like_a_tensor_alone() {
    let src = "func member(c comm, done chan bool) {
	r := float(rank(c))
	if rank(c) % 2 == 0 {
		sleep(0)
	}
	a := tensor_from([]float{1.0 / (r + 3.0), r, -r, 1.0 / (r + 7.0), 0.1 * r, 2.0}, []int{2, 3})
	b := transpose(a) * (r + 0.5)
	e := zeros([]int{0})
	d := full([]int{1}, 1.0 / (r + 1.0))
	l := []tensor{a, b, e, d}
	same := true
	for k := range 4 {
		var got []tensor
		var want []tensor
		if k == 0 {
			got = allreduce_sum(c, l)
			want = []tensor{allreduce_sum(c, a), allreduce_sum(c, b), allreduce_sum(c, e), allreduce_sum(c, d)}
		} else if k == 1 {
			got = allreduce_max(c, l)
			want = []tensor{allreduce_max(c, a), allreduce_max(c, b), allreduce_max(c, e), allreduce_max(c, d)}
		} else if k == 2 {
			got = allreduce_min(c, l)
			want = []tensor{allreduce_min(c, a), allreduce_min(c, b), allreduce_min(c, e), allreduce_min(c, d)}
		} else {
			got = allreduce_prod(c, l)
			want = []tensor{allreduce_prod(c, a), allreduce_prod(c, b), allreduce_prod(c, e), allreduce_prod(c, d)}
		}
		for i := range 4 {
			if str(shape(got[i])) != str(shape(want[i])) || str(values(got[i])) != str(values(want[i])) {
				same = false
			}
		}
		if rank(c) == 0 && k == 0 {
			print(len(got), shape(got[0]), shape(got[1]), shape(got[2]), shape(got[3]), values(got[3]))
		}
	}
	print(rank(c), same, len(allreduce_sum(c, []tensor{})))
	done <- true
}

func main() {
	n := int(args()[0])
	cs := group(n)
	done := make(chan bool)
	for i := range n {
		go member(cs[i], done)
	}
	for range n {
		<-done
	}
}
";
    for n in [1usize, 2, 3] {
        // d's sum: f32 additions in rank order.
        let d = (1..n).fold(1.0f32, |s, r| s + (1.0 / (r as f64 + 1.0)) as f32) as f64;
        for workers in [1, 2, 4] {
            for seed in 0..3 {
                let (out, stderr, code) = run(src, workers, seed, &[n.to_string()]);
                assert_eq!((stderr.as_str(), code), ("", 0));
                let mut lines: Vec<&str> = out.lines().collect();
                let head = lines
                    .iter()
                    .position(|l| l.starts_with("4 "))
                    .expect("rank 0's line");
                assert_eq!(
                    lines.remove(head),
                    format!("4 [2 3] [3 2] [0] [1] [{}]", format_float(d)),
                );
                lines.sort();
                let want: Vec<String> = (0..n).map(|r| format!("{r} true 0")).collect();
                assert_eq!(lines, want, "{out}");
            }
        }
    }
}

/// A list too large for the small path (elements times members at least
/// the group's 4M-element boundary) goes to the backend as one buffer and
/// takes the sliced path; its results are bitwise those of the tensors
/// reduced alone, as on the small path, where the tensors go as they are.
#[test]
fn a_large_list_takes_the_sliced_path_and_reduces_like_its_tensors() {
    let src = "func member(c comm, done chan bool) {
	r := rank(c)
	big := randn([]int{2100, 1000}, 10 + r)
	small := randn([]int{3}, 20 + r)
	for _, l := range [][]tensor{{big, small}, {small, small}} {
		got := allreduce_sum(c, l)
		d0 := got[0] - allreduce_sum(c, l[0])
		d1 := got[1] - allreduce_sum(c, l[1])
		print(r, len(got), shape(got[0]), sum(d0 * d0) == 0.0, sum(d1 * d1) == 0.0)
	}
	done <- true
}

func main() {
	cs := group(2)
	done := make(chan bool)
	for i := range 2 {
		go member(cs[i], done)
	}
	for range 2 {
		<-done
	}
}
";
    for workers in [1, 2] {
        let (out, stderr, code) = run(src, workers, 1, &[]);
        assert_eq!((stderr.as_str(), code), ("", 0));
        let mut lines: Vec<&str> = out.lines().collect();
        lines.sort();
        assert_eq!(
            lines,
            [
                "0 2 [2100 1000] true true",
                "0 2 [3] true true",
                "1 2 [2100 1000] true true",
                "1 2 [3] true true"
            ],
            "--workers {workers}"
        );
    }
}

#[test]
fn different_collectives_at_one_step_panic() {
    let src = "func main() {
	cs := group(2)
	go {
		broadcast(cs[1], 1, 0)
	}
	allreduce_sum(cs[0], 1)
}
";
    assert_panics(
        src,
        "collective mismatch: rank 0 called allreduce_sum, rank 1 called broadcast",
        &[4, 6],
    );
    let src = "func main() {
	cs := group(3)
	go {
		barrier(cs[2])
	}
	go {
		allreduce_max(cs[1], 1)
	}
	allreduce_max(cs[0], 2)
}
";
    assert_panics(
        src,
        "collective mismatch: rank 0 called allreduce_max, rank 2 called barrier",
        &[4, 7, 9],
    );
}

#[test]
fn a_root_outside_the_group_panics_on_its_caller() {
    for (root, msg) in [
        ("5", "broadcast: root 5 out of range for group of size 4"),
        ("-1", "broadcast: root -1 out of range for group of size 4"),
        ("4", "broadcast: root 4 out of range for group of size 4"),
    ] {
        let src = format!(
            "func main() {{
	cs := group(4)
	r := {root}
	print(broadcast(cs[0], \"x\", r))
}}
"
        );
        assert_panics(&src, msg, &[4]);
    }
}

#[test]
fn a_nil_comm_panics() {
    for call in [
        "allreduce_sum(c, 1)",
        "broadcast(c, 1, 0)",
        "allgather(c, 1)",
        "barrier(c)",
        "print(rank(c))",
        "print(size(c))",
    ] {
        let src = format!(
            "func main() {{
	var c comm
	{call}
}}
"
        );
        assert_panics(&src, "collective on nil comm", &[3]);
    }
}

#[test]
fn a_group_of_fewer_than_one_member_panics() {
    for n in ["0", "-3", "268435457"] {
        let src = format!(
            "func main() {{
	n := {n}
	group(n)
}}
"
        );
        assert_panics(&src, "group: size out of range", &[3]);
    }
}

#[test]
fn members_that_cannot_complete_are_a_deadlock() {
    let src = "func main() {
	cs := group(3)
	go {
		barrier(cs[1])
	}
	never := make(chan int)
	go {
		<-never
		barrier(cs[2])
	}
	barrier(cs[0])
}
";
    for workers in [1, 4] {
        let (out, stderr, code) = run(src, workers, 1, &[]);
        assert_eq!((out.as_str(), code), ("", 2));
        assert_eq!(
            stderr,
            "fatal error: all tasks are asleep - deadlock!\n\
             task 1 [collective]: t.weft:11:2\n\
             task 2 [collective]: t.weft:4:3\n\
             task 3 [chan receive]: t.weft:8:3\n"
        );
    }
    // A member that calls the same group twice in a row waits for the
    // others' second call, which never comes.
    let src = "func main() {
	cs := group(2)
	go {
		allreduce_sum(cs[1], 1)
	}
	allreduce_sum(cs[0], 1)
	allreduce_sum(cs[0], 2)
}
";
    let (_, stderr, code) = run(src, 2, 1, &[]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "fatal error: all tasks are asleep - deadlock!\n\
         task 1 [collective]: t.weft:7:2\n"
    );
}

#[test]
fn comms_are_references_that_print_and_compare_by_identity() {
    let src = "type Slot struct {
	c comm
	id int
}

func main() {
	cs := group(3)
	other := group(3)
	ch := make(chan comm, 2)
	ch <- cs[2]
	ch <- other[2]
	a := <-ch
	b := <-ch
	print(a, b, a == cs[2], b == cs[2], a != b)
	s := Slot{cs[1], 7}
	t := Slot{c: cs[1], id: 7}
	var z Slot
	print(s, s == t, z, z.c == nil, str(cs[0]), len(cs))
	list := []comm{cs[0], nil}
	print(list, list[1] == nil, rank(list[0]), size(list[0]))
	w := world()
	print(w == world(), w != cs[0], allgather(w, w))
}
";
    for workers in [1, 4] {
        let (out, stderr, code) = run(src, workers, 1, &[]);
        assert_eq!((stderr.as_str(), code), ("", 0));
        assert_eq!(
            out,
            "comm(rank 2 of 3) comm(rank 2 of 3) true false true\n\
             {comm(rank 1 of 3) 7} true {nil 0} true comm(rank 0 of 3) 3\n\
             [comm(rank 0 of 3) nil] true 0 3\n\
             true true [comm(rank 0 of 1)]\n"
        );
    }
}

#[test]
fn results_keep_their_type_and_integers_wrap() {
    let src = "func worker(c comm, big int) {
	s := allreduce_sum(c, big)
	p := allreduce_prod(c, big)
	lo := allreduce_min(c, -float(rank(c)))
	t := allreduce_prod(c, full([]int{2}, 2.0))
	g := allgather(c, transpose(tensor_from([]float{1, 2, 3, 4, 5, 6}, []int{2, 3})))
	if rank(c) == 1 {
		print(s, p, lo, get(t, 1), shape(g[0]), get(g[1], 2, 1))
	}
	barrier(c)
}

func main() {
	cs := group(3)
	go worker(cs[1], 9223372036854775807)
	go worker(cs[2], 9223372036854775807)
	worker(cs[0], 9223372036854775807)
}
";
    let max = i64::MAX;
    let want = format!(
        "{} {} -2.0 8.0 [3 2] 6.0\n",
        max.wrapping_add(max).wrapping_add(max),
        max.wrapping_mul(max).wrapping_mul(max)
    );
    for workers in [1, 4] {
        let (out, stderr, code) = run(src, workers, 3, &[]);
        assert_eq!((stderr.as_str(), code), ("", 0));
        assert_eq!(out, want);
    }
}

#[test]
fn a_group_of_one_reduces_to_its_own_values() {
    // The all-reduces take the one-member shortcut (no engine call); the
    // broadcast, gather and barrier go through the engine; both agree.
    let src = "func main() {
	c := group(1)[0]
	x := tensor_from([]float{1, 2, 3, 4}, []int{2, 2})
	for i := 0; i < 3; i++ {
		x = allreduce_sum(c, x) * 2.0
	}
	m := allreduce_max(c, -7)
	p := allreduce_prod(c, 2.5)
	n := allreduce_min(c, 9223372036854775807)
	b := broadcast(c, 4, 0)
	g := allgather(c, 3)
	barrier(c)
	print(get(x, 1, 1), shape(x), m, p, n, b, g)
}
";
    for workers in [1, 2] {
        let (out, stderr, code) = run(src, workers, 0, &[]);
        assert_eq!((stderr.as_str(), code), ("", 0));
        assert_eq!(out, "32.0 [2 2] -7 2.5 9223372036854775807 4 [3]\n");
    }
}

/// N members each reduce floats (which do not associate, so the order of
/// the additions shows), tensors and ints `rounds` times, yielding at
/// random points (the schedule changes with the seed); rank 0 prints what
/// it accumulated and the all-gathered totals.
const MANY: &str = "func member(c comm, rounds int, done chan bool) {
	r := rank(c)
	acc := 0.0
	t := zeros([]int{3})
	for k := range rounds {
		if rand(2) == 0 {
			sleep(0)
		}
		x := 1.0 / float(r*rounds+k+3)
		acc += allreduce_sum(c, x)
		t = t + allreduce_sum(c, full([]int{3}, x))
		acc += float(allreduce_max(c, r*k%5))
	}
	all := allgather(c, acc)
	if r == 0 {
		print(acc, get(t, 2))
		print(all)
	}
	done <- true
}

func main() {
	n := int(args()[0])
	rounds := int(args()[1])
	cs := group(n)
	done := make(chan bool)
	for i := range n {
		go member(cs[i], rounds, done)
	}
	for range n {
		<-done
	}
}
";

/// What `MANY` prints, computed here: every sum adds the members' values
/// in rank order, starting from rank 0's (f64 for floats, f32 for tensors).
fn many_reference(n: usize, rounds: usize) -> String {
    let mut acc = 0.0f64;
    let mut t = 0.0f32;
    for k in 0..rounds {
        let x = |r: usize| 1.0 / (r * rounds + k + 3) as f64;
        let s = (1..n).fold(x(0), |s, r| s + x(r));
        acc += s;
        let st = (1..n).fold(x(0) as f32, |s, r| s + x(r) as f32);
        t += st;
        let m = (0..n).map(|r| (r * k % 5) as i64).max().unwrap_or(0);
        acc += m as f64;
    }
    let a = format_float(acc);
    let all = vec![a.clone(); n].join(" ");
    format!("{a} {}\n[{all}]\n", format_float(t as f64))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn many_reductions_give_the_same_result_under_every_schedule(
        n in 1usize..=6,
        rounds in 1usize..=30,
        workers in prop::sample::select(vec![1usize, 2, 4]),
        seed in any::<u64>(),
    ) {
        let args = vec![n.to_string(), rounds.to_string()];
        let (out, stderr, code) = run(MANY, workers, seed, &args);
        prop_assert_eq!((stderr.as_str(), code), ("", 0));
        prop_assert_eq!(out, many_reference(n, rounds));
    }
}
