//! Sequential behaviour of the interpreter: values, printing, arithmetic,
//! control flow, calls and recursion, value semantics of lists and structs.

mod interp_util;

use interp_util::{run_source, P};
use weft_interp::RunConfig;
use weft_ir::pb::{attr, Type};

#[test]
fn prints_scalars_per_spec() {
    let mut p = P::new();
    let m = p.main();
    let a = p.int(m, -7);
    let b = p.float(m, 2.0);
    let c = p.float(m, 2.5e-7);
    let d = p.boolean(m, true);
    let e = p.string(m, "hi there");
    p.print(m, &[&a, &b, &c, &d, &e]);
    p.print(m, &[]);
    let f = p.float(m, 1e21);
    let g = p.bin(m, "div", &b, &b, Type::float());
    p.print(m, &[&f, &g]);
    let (out, rep) = p.run();
    assert_eq!(out, "-7 2.0 2.5e-07 true hi there\n\n1e+21 1.0\n");
    assert_eq!((rep.code, rep.stderr.as_str()), (0, ""));
}

#[test]
fn integer_arithmetic_and_comparison() {
    let mut p = P::new();
    let m = p.main();
    let x = p.int(m, -7);
    let y = p.int(m, 2);
    let mut outs = vec![];
    for op in [
        "add", "sub", "mul", "div", "mod", "and", "or", "xor", "shl", "shr",
    ] {
        outs.push(p.bin(m, op, &x, &y, Type::int()));
    }
    for op in ["eq", "ne", "lt", "le", "gt", "ge"] {
        outs.push(p.bin(m, op, &x, &y, Type::bool()));
    }
    let refs: Vec<&str> = outs.iter().map(String::as_str).collect();
    p.print(m, &refs);
    let (out, _) = p.run();
    assert_eq!(
        out,
        "-5 -9 -14 -3 -1 0 -5 -5 -28 -2 false true true true false false\n"
    );
}

#[test]
fn strings_concatenate_compare_index_and_slice() {
    let mut p = P::new();
    let m = p.main();
    let a = p.string(m, "abc");
    let b = p.string(m, "abd");
    let c = p.bin(m, "add", &a, &b, Type::string());
    let lt = p.bin(m, "lt", &a, &b, Type::bool());
    let one = p.int(m, 1);
    let four = p.int(m, 4);
    let s = p.var(m, "s", Type::string());
    p.op(
        m,
        "slice",
        &[("X", &[&c]), ("Lo", &[&one]), ("Hi", &[&four])],
        &[("Out", &[&s])],
        vec![],
    );
    let byte = p.var(m, "byte", Type::int());
    p.op(
        m,
        "index",
        &[("X", &[&a]), ("Index", &[&one])],
        &[("Out", &[&byte])],
        vec![],
    );
    let n = p.var(m, "n", Type::int());
    p.op(m, "len", &[("X", &[&c])], &[("Out", &[&n])], vec![]);
    p.print(m, &[&c, &lt, &s, &byte, &n]);
    let (out, _) = p.run();
    assert_eq!(out, "abcabd true bca 98 6\n");
}

#[test]
fn conversions_and_str() {
    let mut p = P::new();
    let m = p.main();
    let f = p.float(m, -3.75);
    let i = p.var(m, "i", Type::int());
    p.op(m, "to_int", &[("X", &[&f])], &[("Out", &[&i])], vec![]);
    let g = p.var(m, "g", Type::float());
    p.op(m, "to_float", &[("X", &[&i])], &[("Out", &[&g])], vec![]);
    let s = p.var(m, "s", Type::string());
    p.op(m, "to_str", &[("X", &[&g])], &[("Out", &[&s])], vec![]);
    let num = p.string(m, "123");
    let k = p.var(m, "k", Type::int());
    p.op(m, "to_int", &[("X", &[&num])], &[("Out", &[&k])], vec![]);
    let cat = p.bin(m, "add", &s, &s, Type::string());
    p.print(m, &[&i, &g, &cat, &k]);
    let (out, _) = p.run();
    assert_eq!(out, "-3 -3.0 -3.0-3.0 123\n");
}

#[test]
fn loops_with_break_and_continue() {
    // for i := 0; i < 10; i++ { if i == 2 { continue }; if i == 5 { break }; print(i) }
    let mut p = P::new();
    let m = p.main();
    let ten = p.int(m, 10);
    p.for_n(m, "i", &ten, |p, body| {
        let two = p.int(body, 2);
        let c1 = p.bin(body, "eq", "i", &two, Type::bool());
        let t1 = p.b.block(body);
        p.op(t1, "continue", &[], &[], vec![]);
        p.op(
            body,
            "if",
            &[("Cond", &[&c1])],
            &[],
            vec![("then_block", t1.into())],
        );
        let five = p.int(body, 5);
        let c2 = p.bin(body, "eq", "i", &five, Type::bool());
        let t2 = p.b.block(body);
        p.op(t2, "break", &[], &[], vec![]);
        p.op(
            body,
            "if",
            &[("Cond", &[&c2])],
            &[],
            vec![("then_block", t2.into())],
        );
        p.print(body, &["i"]);
    });
    let (out, _) = p.run();
    assert_eq!(out, "0\n1\n3\n4\n");
}

#[test]
fn labelled_break_leaves_outer_loop_and_region_breaks() {
    // outer: for i < 3 { for j < 3 { if j == 1 && i == 1 { break outer }; print(i, j) } }
    let mut p = P::new();
    let m = p.main();
    let three = p.int(m, 3);
    // Build the outer loop by hand to give it a label.
    p.var(m, "i", Type::int());
    let cb = p.b.block(m);
    let c = p.b.temp(m, Type::bool());
    p.op(
        cb,
        "lt",
        &[("X", &["i"]), ("Y", &[&three])],
        &[("Out", &[&c])],
        vec![],
    );
    let body = p.b.block(m);
    p.for_n(body, "j", &three, |p, inner| {
        let one = p.int(inner, 1);
        let a = p.bin(inner, "eq", "j", &one, Type::bool());
        let b = p.bin(inner, "eq", "i", &one, Type::bool());
        // `&&` lowers to nested ifs.
        let t1 = p.b.block(inner);
        let t2 = p.b.block(t1);
        p.op(
            t2,
            "break",
            &[],
            &[],
            vec![("label", attr::Value::S("outer".into()))],
        );
        p.op(
            t1,
            "if",
            &[("Cond", &[&b])],
            &[],
            vec![("then_block", t2.into())],
        );
        p.op(
            inner,
            "if",
            &[("Cond", &[&a])],
            &[],
            vec![("then_block", t1.into())],
        );
        p.print(inner, &["i", "j"]);
    });
    let post = p.b.block(m);
    let one = p.int(post, 1);
    p.upd(post, "add", "i", &one);
    p.op(
        m,
        "loop",
        &[("Cond", &[&c])],
        &[],
        vec![
            ("cond_block", cb.into()),
            ("body_block", body.into()),
            ("post_block", post.into()),
            ("label", attr::Value::S("outer".into())),
        ],
    );
    // region { print("in"); break; print("never") }; print("after")
    let r = p.b.block(m);
    let s_in = p.string(r, "in");
    p.print(r, &[&s_in]);
    p.op(r, "break", &[], &[], vec![]);
    let s_never = p.string(r, "never");
    p.print(r, &[&s_never]);
    p.op(m, "region", &[], &[], vec![("block", r.into())]);
    let after = p.string(m, "after");
    p.print(m, &[&after]);
    let (out, rep) = p.run();
    assert_eq!(out, "0 0\n0 1\n0 2\n1 0\nin\nafter\n");
    assert_eq!(rep.code, 0);
}

#[test]
fn recursion_fib() {
    let mut p = P::new();
    let f = p.b.function("fib", [("n", Type::int())], Some(Type::int()));
    let two = p.int(f, 2);
    let small = p.bin(f, "lt", "n", &two, Type::bool());
    let t = p.b.block(f);
    p.op(t, "return", &[("Value", &["n"])], &[], vec![]);
    p.op(
        f,
        "if",
        &[("Cond", &[&small])],
        &[],
        vec![("then_block", t.into())],
    );
    let one = p.int(f, 1);
    let a = p.bin(f, "sub", "n", &one, Type::int());
    let b = p.bin(f, "sub", "n", &two, Type::int());
    let fa = p.var(f, "fa", Type::int());
    let fb = p.var(f, "fb", Type::int());
    let attr_fib = || ("func", attr::Value::S("fib".into()));
    p.op(
        f,
        "call",
        &[("Args", &[&a])],
        &[("Out", &[&fa])],
        vec![attr_fib()],
    );
    p.op(
        f,
        "call",
        &[("Args", &[&b])],
        &[("Out", &[&fb])],
        vec![attr_fib()],
    );
    let s = p.bin(f, "add", &fa, &fb, Type::int());
    p.op(f, "return", &[("Value", &[&s])], &[], vec![]);
    let m = p.main();
    let n = p.int(m, 20);
    let r = p.var(m, "r", Type::int());
    p.op(
        m,
        "call",
        &[("Args", &[&n])],
        &[("Out", &[&r])],
        vec![attr_fib()],
    );
    p.print(m, &[&r]);
    let (out, _) = p.run();
    assert_eq!(out, "6765\n");
}

#[test]
fn lists_and_structs_have_value_semantics() {
    let mut p = P::new();
    p.b.struct_decl(
        "P",
        [
            ("a", Type::int()),
            ("s", Type::string()),
            ("l", Type::list(Type::int())),
        ],
    );
    let m = p.main();
    let one = p.int(m, 1);
    let two = p.int(m, 2);
    let nine = p.int(m, 9);
    let zero = p.int(m, 0);
    let l = p.var(m, "l", Type::list(Type::int()));
    p.op(
        m,
        "list_new",
        &[("Elems", &[&one, &two])],
        &[("Out", &[&l])],
        vec![],
    );
    let l2 = p.var(m, "l2", Type::list(Type::int()));
    p.copy(m, &l, &l2);
    p.op(
        m,
        "set_index",
        &[("X", &[&l2]), ("Index", &[&zero]), ("Value", &[&nine])],
        &[("Out", &[&l2])],
        vec![],
    );
    p.op(
        m,
        "append",
        &[("X", &[&l2]), ("Elems", &[&one, &one])],
        &[("Out", &[&l2])],
        vec![],
    );
    let st = p.var(m, "st", Type::struct_named("P"));
    p.op(m, "zero", &[], &[("Out", &[&st])], vec![]);
    p.op(
        m,
        "set_field",
        &[("X", &[&st]), ("Value", &[&l])],
        &[("Out", &[&st])],
        vec![("name", attr::Value::S("l".into()))],
    );
    let st2 = p.var(m, "st2", Type::struct_named("P"));
    let hi = p.string(m, "x");
    p.op(
        m,
        "struct_new",
        &[("Fields", &[&two, &hi, &l2])],
        &[("Out", &[&st2])],
        vec![],
    );
    let fa = p.var(m, "fa", Type::int());
    p.op(
        m,
        "field",
        &[("X", &[&st2])],
        &[("Out", &[&fa])],
        vec![("name", attr::Value::S("a".into()))],
    );
    p.print(m, &[&l, &l2, &st, &st2, &fa]);
    let (out, _) = p.run();
    assert_eq!(out, "[1 2] [9 2 1 1] {0  [1 2]} {2 x [9 2 1 1]} 2\n");
}

#[test]
fn lowering_rejects_unknown_ops_and_variables() {
    let mut p = P::new();
    let m = p.main();
    p.op(m, "frobnicate", &[], &[], vec![]);
    assert!(matches!(
        weft_interp::lower(&p.build()),
        Err(weft_interp::LowerError::UnknownOp(_))
    ));
    let mut p = P::new();
    let m = p.main();
    p.print(m, &["nope"]);
    assert!(matches!(
        weft_interp::lower(&p.build()),
        Err(weft_interp::LowerError::UnknownVar(..))
    ));
}

#[test]
fn constants_are_not_hoisted_past_reads_or_branches() {
    // y declared in main, set to 3 only in a branch not taken; z printed
    // before its only assignment. Neither has a `zero` op.
    let mut p = P::new();
    let m = p.main();
    p.var(m, "y", Type::int());
    p.var(m, "z", Type::int());
    let f = p.boolean(m, false);
    let t = p.b.block(m);
    p.op(
        t,
        "const",
        &[],
        &[("Out", &["y"])],
        vec![("value", attr::Value::I(3))],
    );
    p.op(
        m,
        "if",
        &[("Cond", &[&f])],
        &[],
        vec![("then_block", t.into())],
    );
    p.print(m, &["y", "z"]);
    p.op(
        m,
        "const",
        &[],
        &[("Out", &["z"])],
        vec![("value", attr::Value::I(4))],
    );
    p.print(m, &["y", "z"]);
    let (out, _) = p.run();
    assert_eq!(out, "0 0\n0 4\n");
}

/// A tensor op runs in the dispatch loop when its kernel is short and its
/// operands are on the host, and otherwise parks its task on the compute
/// pool (docs/interpreter.md, "Tensor ops"): both give the same values and
/// the same panics at the same place. With one worker the order of the
/// prints shows which path ran: a kernel run in place keeps the worker, so
/// `main` prints before the task it started; one on the pool lets that
/// task run while `main` waits (a 256x256 matmul is 16.8M multiply-adds,
/// milliseconds, against the microseconds the other task takes).
#[test]
fn tensor_ops_run_in_place_or_on_the_pool_alike() {
    let src = "
func other(done chan int) {
	print(\"other\")
	done <- 1
}

func main() {
	a := ones([]int{N, N})
	done := make(chan int)
	go other(done)
	b := matmul(a, a) + 1.0
	print(\"main\", get(b, 0, 0), shape(b))
	<-done
	c := matmul(ones([]int{2 * N, N}), ones([]int{2 * N, N}))
	print(c)
}
";
    let cases = [
        (4, "main 5.0 [4 4]\nother\n", "[8,4] x [8,4]"),
        (
            256,
            "other\nmain 257.0 [256 256]\n",
            "[512,256] x [512,256]",
        ),
    ];
    for (n, out, shapes) in cases {
        let r = run_source(&src.replace('N', &n.to_string()), RunConfig::default());
        let err = format!("panic: matmul: shape mismatch {shapes}\n    at t.weft:14:7 (task 1)\n");
        assert_eq!(
            (r.stdout.as_str(), r.stderr, r.code),
            (out, err, 2),
            "N = {n}"
        );
    }
}

/// A frame starts from its zero values except where no op can read them
/// (`Func::entry`): a variable read before its one write, in straight code
/// or in an earlier iteration of its loop, still reads the zero value or
/// the previous iteration's value; one written first reads what was
/// written.
#[test]
fn variables_read_before_their_write_read_the_zero_value() {
    let mut p = P::new();
    let m = p.main();
    let s = p.var(m, "s", Type::string());
    p.print(m, &[&s]);
    let a = p.string(m, "a");
    p.copy(m, &a, &s);
    p.print(m, &[&s]);
    let n = p.int(m, 3);
    p.for_n(m, "i", &n, |p, body| {
        let l = p.var(body, "l", Type::list(Type::int()));
        let w = p.var(body, "w", Type::list(Type::int()));
        // `l`: read, then written (its value carries to the next pass).
        p.print(body, &[&l]);
        p.op(
            body,
            "list_new",
            &[("Elems", &["i"])],
            &[("Out", &[&l])],
            vec![],
        );
        // `w`: written, then read.
        p.op(
            body,
            "list_new",
            &[("Elems", &["i", "i"])],
            &[("Out", &[&w])],
            vec![],
        );
        p.print(body, &[&w]);
    });
    let (out, rep) = p.run();
    assert_eq!(out, "\na\n[]\n[0 0]\n[0]\n[1 1]\n[1]\n[2 2]\n");
    assert_eq!((rep.code, rep.stderr.as_str()), (0, ""));
}

/// Tensor operands moved into an op (a temporary's last read, or `x = x
/// op y`) keep value semantics: a tensor another variable, a struct or a
/// list still holds is copied, never written in place.
#[test]
fn moved_tensor_operands_keep_value_semantics() {
    let src = "
type S struct {
	t tensor
}

func main() {
	a := ones([]int{3})
	b := a
	b = b * 5.0
	s := S{t: a}
	l := []tensor{a}
	c := ((a + 1.0) * 3.0) - 1.0
	y := s.t * 2.0
	z := l[0] + 1.0
	z = z * 10.0
	for i := 0; i < 3; i++ {
		c = (c + 1.0) * 1.0
	}
	print(get(a, 0), get(b, 0), get(c, 0), get(s.t, 0), get(y, 0), get(l[0], 0), get(z, 0))
}
";
    let r = run_source(src, RunConfig::default());
    assert_eq!(
        (r.stdout.as_str(), r.stderr.as_str()),
        ("1.0 5.0 8.0 1.0 2.0 1.0 20.0\n", "")
    );
}
