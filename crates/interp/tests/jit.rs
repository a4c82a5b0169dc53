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
//! - a property test: random integer loop programs
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
fn unsupported_loops_run_interpreted() {
    // Floats and strings in the loop: not compiled, still right.
    let src = "func main() {
	x := 0.5
	s := \"\"
	for i := 0; i < 5000; i++ {
		x = x * 1.0001
		if i % 1000 == 0 {
			s = s + \"a\"
		}
	}
	print(x, s)
}
";
    let (_, regions) = both(src);
    assert_eq!(regions, 0);
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
