//! The loop JIT against the interpreter (docs/interpreter.md, "The loop
//! JIT"): every program runs with the JIT on and off and must print the
//! same and end the same way (panic message, place and exit code
//! included).
//!
//! - hand-written edge cases: division and modulo by zero in a loop that
//!   is already compiled, `MinInt / -1` and `MinInt % -1` (wrapping),
//!   division by `MinInt`, by powers of two and by negative constants,
//!   shifts by 63, 64 and more and by negative counts, `break`,
//!   `continue` and `return` out of compiled loops, bools, nested loops,
//!   and a task spinning in a compiled loop that still yields to others
//!   on one worker;
//! - channel operations in compiled loops: buffered and unbuffered
//!   channels of ints and bools, `range`, `v, ok := <-ch` on a closed
//!   channel, a send on a closed channel (the panic and its place), a nil
//!   channel handed to a loop compiled for a real one (the deadlock
//!   report), receives whose value is dropped;
//! - selects in compiled loops: receives on buffered channels of ints and
//!   bools in an order that depends on every random choice (the JIT draws
//!   what the interpreter draws), cases on closed channels set to nil, a
//!   default case, selects that park (unbuffered channels), and selects
//!   the JIT leaves to the interpreter (a send case, a string channel);
//! - property tests: random fan-ins over selects (channels of ints and
//!   bools, capacities 0 to 16, with or without a default), and random
//!   integer loop programs
//!   (`fuzz/src/gen/loops.rs`, the `jit` fuzz target's generator).

#[path = "../../../fuzz/src/gen/mod.rs"]
#[allow(dead_code, unused_imports)]
mod gen;
mod interp_util;

use arbitrary::Unstructured;
use proptest::prelude::*;
use weft_interp::RunConfig;

/// What a run printed (stdout, then the report on stderr), its exit code,
/// and how many loops it compiled.
struct Ran {
    text: String,
    code: i32,
    regions: usize,
}

fn run(src: &str, jit: bool) -> Ran {
    let r = interp_util::run_source(
        src,
        RunConfig {
            jit,
            ..RunConfig::default()
        },
    );
    Ran {
        text: r.stdout + &r.stderr,
        code: r.code,
        regions: r.jit_regions,
    }
}

/// Runs `src` with the JIT on and off, checks that both agree, and
/// returns what it printed and how many loops were compiled.
fn both(src: &str) -> (String, usize) {
    let on = run(src, true);
    let off = run(src, false);
    assert_eq!(off.regions, 0);
    assert_eq!(
        (&on.text, on.code),
        (&off.text, off.code),
        "JIT on (left) and off (right) disagree on\n{src}"
    );
    (on.text, on.regions)
}

/// `both`, and the JIT compiled at least one loop.
fn compiled(src: &str) -> String {
    let (text, regions) = both(src);
    assert!(regions > 0, "no loop compiled in\n{src}");
    text
}

#[test]
fn arith_loop_compiles_and_computes_what_the_interpreter_does() {
    let src = "func main() {\n\tx := 0\n\tfor i := 0; i < 100000; i++ {\n\t\tx = (x*31 + i) % 1000003\n\t}\n\tprint(x)\n}\n";
    let mut x: i64 = 0;
    for i in 0..100000i64 {
        x = (x.wrapping_mul(31) + i) % 1000003;
    }
    assert_eq!(compiled(src), format!("{x}\n"));
}

#[test]
fn division_by_zero_in_a_compiled_loop_panics_where_the_interpreter_does() {
    for op in ["/", "%"] {
        let src = format!(
            "func main() {{\n\tx := 0\n\tfor i := 0; i < 10000; i++ {{\n\t\tx += 100 {op} (6000 - i)\n\t}}\n\tprint(x)\n}}\n"
        );
        let out = compiled(&src);
        assert!(
            out.contains("panic: integer divide by zero\n    at t.weft:4:"),
            "{out}"
        );
        // A constant zero divisor: the region leaves before it.
        let src = format!(
            "func main() {{\n\tx := 0\n\tz := 0\n\tfor i := 0; i < 10000; i++ {{\n\t\tif i == 5000 {{\n\t\t\tx = x {op} z\n\t\t}}\n\t\tx += i\n\t}}\n\tprint(x)\n}}\n"
        );
        let out = compiled(&src);
        assert!(out.contains("integer divide by zero"), "{out}");
    }
}

#[test]
fn min_int_divided_by_minus_one_wraps() {
    let src = "func main() {
	m := -9223372036854775807 - 1
	d := -1
	q := 0
	r := 1
	s := 0
	t := 1
	for i := 0; i < 5000; i++ {
		q = m / d
		r = m % d
		s = m / -1
		t = m % -1
		if i > 100 {
			d = -1
		}
	}
	print(q, r, s, t)
}
";
    assert_eq!(
        compiled(src),
        "-9223372036854775808 0 -9223372036854775808 0\n"
    );
}

#[test]
fn division_by_special_divisors_matches() {
    // Variable and constant divisors: MinInt, powers of two (either sign),
    // -1, 1, 7, -7, on dividends around the edges.
    let src = "func main() {
	m := -9223372036854775807 - 1
	ds := []int{m, 1, -1, 2, -2, 4096, -4096, 7, -7, 1000003, 9223372036854775807}
	xs := []int{m, m + 1, -7, -1, 0, 1, 7, 9223372036854775807, 12345678901}
	for _, x := range xs {
		for _, d := range ds {
			a := 0
			b := 0
			c := 0
			e := 0
			for i := 0; i < 600; i++ {
				a = x / d
				b = x % d
				c = x / m + x % m
				e = x/2 + x%2 + x/-2 + x%-2 + x/4096 + x%-4096 + x/7 + x%7 + x/-7 + x%-7 + x/1 + x%1
			}
			print(x, d, a, b, c, e)
		}
	}
}
";
    compiled(src);
}

#[test]
fn shifts_match_at_every_edge() {
    let src = "func main() {
	xs := []int{1, -1, 5, -5, 9223372036854775807, -9223372036854775807 - 1}
	ss := []int{0, 1, 62, 63, 64, 65, 100, 1000000}
	for _, x := range xs {
		for _, s := range ss {
			a := 0
			b := 0
			c := 0
			for i := 0; i < 600; i++ {
				a = x << s
				b = x >> s
				c = (x << 63) + (x >> 63) + (x << 64) + (x >> 64) + (x >> 70) + (x << 100)
			}
			print(x, s, a, b, c)
		}
	}
}
";
    compiled(src);
    // A negative count in a compiled loop panics as interpreted.
    for op in ["<<", ">>"] {
        let src = format!(
            "func main() {{\n\tx := 1\n\tfor i := 0; i < 10000; i++ {{\n\t\tx = x {op} (7000 - i)\n\t\tx = x | 1\n\t}}\n\tprint(x)\n}}\n"
        );
        let out = compiled(&src);
        assert!(
            out.contains("panic: negative shift amount\n    at t.weft:4:"),
            "{out}"
        );
    }
}

#[test]
fn overflow_wraps() {
    let src = "func main() {
	x := 9223372036854775807
	y := 1
	z := -9223372036854775807 - 1
	for i := 0; i < 100000; i++ {
		x = x + i
		y = y * 3
		z = z - i
		x = -x
		y = ^y
	}
	print(x, y, z)
}
";
    compiled(src);
}

#[test]
fn early_exits_leave_compiled_loops() {
    let src = "func f(n int) int {
	s := 0
	for i := 0; i < 100000; i++ {
		s += i % 7
		if s > n {
			return s * 2
		}
	}
	return -1
}

func main() {
	s := 0
	for i := 0; i < 50000; i++ {
		if i % 3 == 0 {
			continue
		}
		s += i
		if s > 300000000 {
			break
		}
	}
	print(s, f(40000), f(1000000000))
	x := 0
	for i := 0; ; i++ {
		x = x ^ i
		if i == 20000 {
			exit(3)
		}
	}
}
";
    let (out, regions) = both(src);
    assert_eq!(regions, 3, "{out}");
    assert_eq!(run(src, true).code, 3);
}

#[test]
fn bools_and_nested_loops() {
    let src = "func main() {
	p := false
	q := true
	n := 0
	for i := 0; i < 3000; i++ {
		for j := 0; j < 7; j++ {
			p = (i+j)%3 == 0 || (p && !q)
			q = p == (j < 4)
			if p != q {
				n++
			}
		}
		if !(p && q) {
			n += 2
		}
	}
	print(p, q, n)
}
";
    compiled(src);
}

#[test]
fn a_task_spinning_in_a_compiled_loop_yields_to_others() {
    // One worker: `main` runs again only if the spinning task yields, which
    // it does from inside the compiled loop (the budget at its back edge).
    let src = "func main() {
	done := make(chan int)
	go func() {
		x := 0
		for i := 0; i < 4000000000000000000; i++ {
			x = (x + i) % 1000
		}
		print(x)
	}()
	go func() {
		done <- 1
	}()
	<-done
	print(\"main goes on\")
}
";
    let (out, regions) = both(src);
    assert_eq!(out, "main goes on\n");
    assert_eq!(regions, 1);
}

#[test]
fn unsupported_instructions_are_run_by_the_interpreter() {
    // A string concatenation now and then: the region stops before it and
    // the interpreter runs it; the other iterations run compiled.
    let src = "func main() {
	s := \"\"
	n := 0
	for i := 0; i < 5000; i++ {
		n += i % 7
		if i % 1000 == 0 {
			s = s + \"a\"
		}
	}
	print(s, n)
}
";
    compiled(src);
    // A float operation in every iteration: no iteration could run
    // compiled, so the loop is not compiled; nor is one whose header the
    // JIT does not compile (a float condition).
    for src in [
        "func main() {
	x := 0.5
	n := 0
	for i := 0; i < 5000; i++ {
		x = x * 1.0001
		n += i % 7
	}
	print(x, n)
}
",
        "func main() {
	x := 1.0
	n := 0
	for x < 2.0 {
		x = x * 1.0001
		n++
	}
	print(x, n)
}
",
    ] {
        let (_, regions) = both(src);
        assert_eq!(regions, 0, "{src}");
    }
}

#[test]
fn channel_loops_compile_and_keep_order() {
    // A producer, a consumer and a counter of the consumer's answers, on a
    // channel of ints and one of bools: the three loops compile.
    let src = "func produce(out chan int, n int) {
	for i := 0; i < n; i++ {
		out <- i * 3
	}
	close(out)
}

func count(acks chan bool, done chan int) {
	seen := 0
	for b := range acks {
		if b {
			seen++
		}
	}
	done <- seen
}

func main() {
	ch := make(chan int, 64)
	acks := make(chan bool, 16)
	done := make(chan int)
	go produce(ch, 20000)
	go count(acks, done)
	sum := 0
	n := 0
	last := -3
	ordered := true
	for v := range ch {
		if v != last + 3 {
			ordered = false
		}
		last = v
		sum += v
		n++
		acks <- v % 2 == 0
	}
	close(acks)
	print(n, sum, ordered, <-done)
}
";
    let (out, regions) = both(src);
    assert_eq!(out, "20000 599970000 true 10000\n");
    assert!(regions >= 3, "{regions} regions");
}

#[test]
fn unbuffered_channel_loops_park_and_agree() {
    // Every operation parks now and then: the region leaves before it and
    // the interpreter parks, many times over. On one worker and on two.
    let src = "func pong(in chan int, out chan int) {
	for v := range in {
		out <- v + 1
	}
	close(out)
}

func main() {
	ping := make(chan int)
	back := make(chan int)
	go pong(ping, back)
	v := 0
	for i := 0; i < 30000; i++ {
		ping <- v
		v = <-back
	}
	close(ping)
	_, ok := <-back
	print(v, ok)
}
";
    // A task that parks every few iterations starts each time slice with
    // a fresh budget, so its loop is seldom sampled and may stay
    // interpreted: only the agreement is checked.
    let (out, _) = both(src);
    assert_eq!(out, "30000 false\n");
}

#[test]
fn receives_on_a_closed_channel_in_a_compiled_loop() {
    // `v, ok := <-ch` past the end gets the zero value and false, from
    // the interpreter; dropped receives still take their values.
    let src = "func main() {
	ch := make(chan int, 8)
	go func() {
		for i := 1; i <= 5000; i++ {
			ch <- i
		}
		close(ch)
	}()
	sum := 0
	zeros := 0
	for i := 0; i < 6000; i++ {
		if i % 100 == 99 {
			<-ch
			continue
		}
		v, ok := <-ch
		if !ok {
			zeros++
		}
		sum += v
	}
	print(sum, zeros)
}
";
    let (out, regions) = both(src);
    let (mut sum, mut zeros, mut taken) = (0, 0, 0);
    for i in 0..6000 {
        let got = (taken < 5000).then(|| {
            taken += 1;
            taken
        });
        if i % 100 != 99 {
            match got {
                Some(v) => sum += v,
                None => zeros += 1,
            }
        }
    }
    assert_eq!(out, format!("{sum} {zeros}\n"));
    assert!(regions >= 1);
}

#[test]
fn a_send_on_a_closed_channel_panics_where_the_interpreter_does() {
    // Another task closes the channel while the compiled loop sends.
    let src = "func closer(start chan int, ch chan int) {
	<-start
	close(ch)
}

func main() {
	ch := make(chan int, 1000000)
	start := make(chan int, 1)
	go closer(start, ch)
	for i := 0; i < 1000000; i++ {
		if i == 5000 {
			start <- 1
		}
		ch <- i
	}
	print(\"not reached\")
}
";
    let (out, regions) = both(src);
    assert!(
        out.contains("panic: send on closed channel\n    at t.weft:14:3 (task 1)"),
        "{out}"
    );
    assert!(regions >= 1);
}

#[test]
fn a_nil_channel_given_to_a_compiled_loop_blocks_as_interpreted() {
    // `drain` compiles for a real channel; called again with a nil one,
    // the region is not entered and the interpreter blocks for ever:
    // the deadlock report is the interpreter's.
    let src = "func drain(ch chan int, n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += <-ch
	}
	return s
}

func main() {
	ch := make(chan int, 16)
	go func() {
		for i := 0; i < 10000; i++ {
			ch <- i
		}
	}()
	print(drain(ch, 10000))
	var none chan int
	print(drain(none, 10))
}
";
    let (out, regions) = both(src);
    assert!(out.starts_with("49995000\n"), "{out}");
    assert!(out.contains("deadlock"), "{out}");
    assert!(regions >= 1);
}

#[test]
fn selects_in_compiled_loops_choose_as_the_interpreter_does() {
    // Three producers of ints and one of bools on buffered channels; the
    // consumer folds every value into a hash in the order received, so
    // any other random choice, lost value or duplicate changes the output.
    // A closed channel's case fires once more (handed to the
    // interpreter), and its channel is set to nil (an instruction the
    // region leaves before).
    let src = select_program(
        &[
            (3, 20000, false),
            (3, 20000, false),
            (3, 15000, false),
            (3, 20000, true),
        ],
        false,
        &[28, 34, 38, 40],
    );
    let out = compiled(&src);
    assert!(out.ends_with(" 0\n"), "{out}");
}

#[test]
fn a_select_with_a_default_in_a_compiled_loop() {
    // Polls two channels with a default; which iterations find a value
    // depends on the schedule and the random choices, both the same with
    // the JIT on and off (one worker, one seed).
    let src = "func produce(out chan int, count int) {
	for i := 0; i < count; i++ {
		out <- i
		if i % 100 == 0 {
			sleep(0)
		}
	}
	close(out)
}

func main() {
	a := make(chan int, 8)
	b := make(chan int, 8)
	go produce(a, 30000)
	go produce(b, 30000)
	got := 0
	idle := 0
	sum := 0
	open := 2
	for open > 0 {
		select {
		case v, ok := <-a:
			if !ok {
				a = nil
				open--
			} else {
				got++
				sum += v
			}
		case v, ok := <-b:
			if !ok {
				b = nil
				open--
			} else {
				got++
				sum += v * 2
			}
		default:
			idle++
			if idle % 64 == 0 {
				sleep(0)
			}
		}
	}
	print(got, sum, idle)
}
";
    let out = compiled(src);
    assert!(out.starts_with("60000 1349955000 "), "{out}");
}

#[test]
fn selects_that_park_or_that_the_jit_leaves_agree() {
    // Unbuffered channels: the select often finds nothing ready and the
    // interpreter parks it; a select with a send case and one over
    // strings run interpreted inside compiled loops.
    let src = "func produce(out chan int, count int) {
	for i := 0; i < count; i++ {
		out <- i
	}
	close(out)
}

func main() {
	a := make(chan int)
	b := make(chan int)
	go produce(a, 20000)
	go produce(b, 20000)
	open := 2
	h := 1
	for open > 0 {
		select {
		case v, ok := <-a:
			if !ok {
				a = nil
				open--
			} else {
				h = (h * 31 + v) % 1000000007
			}
		case v, ok := <-b:
			if !ok {
				b = nil
				open--
			} else {
				h = (h * 37 + v) % 1000000007
			}
		}
	}
	out := make(chan int, 4)
	words := make(chan string, 4)
	k := 0
	for i := 0; i < 30000; i++ {
		select {
		case out <- i:
			k++
		case v := <-out:
			k += v % 3
		}
		if i % 1000 == 0 {
			words <- \"w\"
			select {
			case w := <-words:
				k += len(w)
			}
		}
	}
	print(h, k)
}
";
    both(src);
}

/// A fan-in program: one producer per channel (capacity, count, and
/// whether it carries bools), and a consumer whose select (with or
/// without a default) folds every value into a hash in receive order,
/// with a per-case multiplier; closed channels are set to nil.
fn select_program(chans: &[(u8, u16, bool)], default: bool, mults: &[u8]) -> String {
    let mut src = String::from(
        "func ints(out chan int, count int, k int) {
	for i := 0; i < count; i++ {
		out <- i * k + 1
	}
	close(out)
}

func bools(out chan bool, count int) {
	for i := 0; i < count; i++ {
		out <- i % 3 != 1
	}
	close(out)
}

func main() {
",
    );
    for (i, &(cap, count, is_bool)) in chans.iter().enumerate() {
        let cap = [0, 1, 4, 16][cap as usize % 4];
        let (ty, producer) = if is_bool {
            ("bool", format!("go bools(c{i}, {count})"))
        } else {
            ("int", format!("go ints(c{i}, {count}, {})", i + 2))
        };
        src += &format!("\tc{i} := make(chan {ty}, {cap})\n\t{producer}\n");
    }
    src += &format!("\topen := {}\n\th := 7\n\tidle := 0\n", chans.len());
    src += "\tfor open > 0 {\n\t\tselect {\n";
    for (i, &(_, _, is_bool)) in chans.iter().enumerate() {
        let m = 3 + u64::from(mults[i % mults.len()]);
        let fold = if is_bool {
            format!(
                "if v {{ h = (h * {m} + 1) % 1000000007 }} else {{ h = (h * {m}) % 1000000007 }}"
            )
        } else {
            format!("h = (h * {m} + v) % 1000000007")
        };
        src += &format!(
            "\t\tcase v, ok := <-c{i}:\n\t\t\tif !ok {{\n\t\t\t\tc{i} = nil\n\t\t\t\topen--\n\t\t\t}} else {{\n\t\t\t\t{fold}\n\t\t\t}}\n"
        );
    }
    if default {
        src += "\t\tdefault:\n\t\t\tidle++\n\t\t\tif idle % 16 == 0 {\n\t\t\t\tsleep(0)\n\t\t\t}\n";
    }
    src += "\t\t}\n\t}\n\tprint(h, idle)\n}\n";
    src
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random fan-ins over selects (1 to 6 channels of ints or bools,
    /// capacities 0 to 16, with or without a default) print the same hash
    /// of the values in the order received with the JIT on and off: the
    /// compiled select makes the interpreter's random choices.
    #[test]
    fn random_select_programs_agree(
        chans in proptest::collection::vec((0u8..4, 0u16..3000, any::<bool>()), 1..=6),
        default in any::<bool>(),
        mults in proptest::collection::vec(0u8..40, 6),
    ) {
        both(&select_program(&chans, default, &mults));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random integer loop programs print the same and end the same way
    /// with the JIT on and off.
    #[test]
    fn random_loop_programs_agree(bytes in proptest::collection::vec(any::<u8>(), 64..2048)) {
        let mut u = Unstructured::new(&bytes);
        let Ok(src) = gen::loop_program(&mut u) else {
            return Ok(());
        };
        if weft_lang::compile("t.weft", &src).is_err() {
            // The generator avoids compile errors (constant overflow,
            // constant division by zero); nothing to compare if one slips.
            return Ok(());
        }
        both(&src);
    }
}
