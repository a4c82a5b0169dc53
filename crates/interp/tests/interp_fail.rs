//! Runtime failures (docs/language.md, "Errors and exit codes"): each message, its location, exit code
//! 2, output printed before the report; `exit(code)`.

mod interp_util;

use interp_util::P;
use weft_ir::builder::BlockId;
use weft_ir::pb::{attr, Type};

/// Runs `build` in main after printing "first"; returns (stdout, stderr, code).
fn fails(build: impl FnOnce(&mut P, BlockId) -> u32) -> (String, String, i32, u32) {
    let mut p = P::new();
    let m = p.main();
    let s = p.string(m, "first");
    p.print(m, &[&s]);
    let line = build(&mut p, m);
    let (out, rep) = p.run();
    (out, rep.stderr, rep.code, line)
}

fn assert_panics(msg: &str, build: impl FnOnce(&mut P, BlockId) -> u32) {
    let (out, err, code, line) = fails(build);
    assert_eq!(out, "first\n");
    assert_eq!(
        err,
        format!("panic: {msg}\n    at t.weft:{line}:2 (task 1)\n")
    );
    assert_eq!(code, 2);
}

#[test]
fn integer_divide_by_zero() {
    assert_panics("integer divide by zero", |p, m| {
        let a = p.int(m, 1);
        let z = p.int(m, 0);
        let t = p.b.temp(m, Type::int());
        p.op(
            m,
            "mod",
            &[("X", &[&a]), ("Y", &[&z])],
            &[("Out", &[&t])],
            vec![],
        )
    });
}

#[test]
fn index_and_slice_out_of_range() {
    assert_panics("index out of range [5] with length 2", |p, m| {
        let a = p.int(m, 1);
        let l = p.var(m, "l", Type::list(Type::int()));
        p.op(
            m,
            "list_new",
            &[("Elems", &[&a, &a])],
            &[("Out", &[&l])],
            vec![],
        );
        let five = p.int(m, 5);
        let t = p.b.temp(m, Type::int());
        p.op(
            m,
            "index",
            &[("X", &[&l]), ("Index", &[&five])],
            &[("Out", &[&t])],
            vec![],
        )
    });
    assert_panics("slice bounds out of range [3:1] with length 5", |p, m| {
        let s = p.string(m, "hello");
        let (a, b) = (p.int(m, 3), p.int(m, 1));
        let t = p.b.temp(m, Type::string());
        p.op(
            m,
            "slice",
            &[("X", &[&s]), ("Lo", &[&a]), ("Hi", &[&b])],
            &[("Out", &[&t])],
            vec![],
        )
    });
    assert_panics("index out of range [-1] with length 0", |p, m| {
        let l = p.var(m, "l", Type::list(Type::int()));
        let (i, v) = (p.int(m, -1), p.int(m, 0));
        p.op(
            m,
            "set_index",
            &[("X", &[&l]), ("Index", &[&i]), ("Value", &[&v])],
            &[("Out", &[&l])],
            vec![],
        )
    });
}

fn make(p: &mut P, m: BlockId, cap: i64) -> (String, u32) {
    let c = p.b.temp(m, Type::chan(Type::int()));
    let n = p.int(m, cap);
    let line = p.op(m, "make_chan", &[("Cap", &[&n])], &[("Out", &[&c])], vec![]);
    (c, line)
}

#[test]
fn channel_misuse() {
    assert_panics("send on closed channel", |p, m| {
        let (c, _) = make(p, m, 1);
        p.op(m, "close", &[("Chan", &[&c])], &[], vec![]);
        let v = p.int(m, 1);
        p.op(m, "send", &[("Chan", &[&c]), ("Value", &[&v])], &[], vec![])
    });
    assert_panics("close of closed channel", |p, m| {
        let (c, _) = make(p, m, 0);
        p.op(m, "close", &[("Chan", &[&c])], &[], vec![]);
        p.op(m, "close", &[("Chan", &[&c])], &[], vec![])
    });
    assert_panics("close of nil channel", |p, m| {
        let c = p.b.temp(m, Type::chan(Type::int()));
        p.op(m, "zero", &[], &[("Out", &[&c])], vec![]);
        p.op(m, "close", &[("Chan", &[&c])], &[], vec![])
    });
    assert_panics("makechan: size out of range", |p, m| make(p, m, -1).1);
}

#[test]
fn blocked_sender_panics_when_the_channel_closes() {
    // go { close(c) } ; c <- 1   (main blocks in the send, then the close
    // wakes it: send on closed channel at the send)
    assert_panics("send on closed channel", |p, m| {
        let (c, _) = make(p, m, 0);
        p.go(m, &[&c], |p, g| {
            let one = p.int(g, 1);
            p.op(g, "sleep", &[("Ms", &[&one])], &[], vec![]);
            p.op(g, "close", &[("Chan", &[&c])], &[], vec![]);
        });
        let v = p.int(m, 1);
        p.op(m, "send", &[("Chan", &[&c]), ("Value", &[&v])], &[], vec![])
    });
}

#[test]
fn select_send_case_on_closed_channel_panics_at_the_select() {
    assert_panics("send on closed channel", |p, m| {
        let (c, _) = make(p, m, 1);
        p.op(m, "close", &[("Chan", &[&c])], &[], vec![]);
        let v = p.int(m, 1);
        let case = p.b.block(m);
        let d = p.b.block(m);
        p.op(
            m,
            "select",
            &[("Chans", &[&c]), ("Values", &[&v])],
            &[],
            vec![
                ("kinds", attr::Value::Ints(weft_ir::pb::Ints { v: vec![1] })),
                ("cases", vec![case].into()),
                ("default_block", d.into()),
            ],
        )
    });
}

#[test]
fn panic_assert_and_builtin_messages() {
    assert_panics("boom 42", |p, m| {
        let s = p.string(m, "boom 42");
        p.op(m, "panic", &[("Msg", &[&s])], &[], vec![])
    });
    assert_panics("assertion failed: x must be positive", |p, m| {
        let c = p.boolean(m, false);
        let s = p.string(m, "x must be positive");
        p.op(m, "assert", &[("Cond", &[&c]), ("Msg", &[&s])], &[], vec![])
    });
    assert_panics("rand: n must be positive", |p, m| {
        let n = p.int(m, 0);
        let t = p.b.temp(m, Type::int());
        p.op(m, "rand", &[("N", &[&n])], &[("Out", &[&t])], vec![])
    });
    assert_panics("invalid integer \"abc\"", |p, m| {
        let s = p.string(m, "abc");
        let t = p.b.temp(m, Type::int());
        p.op(m, "to_int", &[("X", &[&s])], &[("Out", &[&t])], vec![])
    });
    assert_panics("float out of int range", |p, m| {
        let s = p.float(m, f64::NAN);
        let t = p.b.temp(m, Type::int());
        p.op(m, "to_int", &[("X", &[&s])], &[("Out", &[&t])], vec![])
    });
}

#[test]
fn panic_in_another_task_names_that_task() {
    let (out, err, code, line) = fails(|p, m| {
        let mut line = 0;
        p.go(m, &[], |p, g| {
            let s = p.string(g, "in task");
            line = p.op(g, "panic", &[("Msg", &[&s])], &[], vec![]);
        });
        let c = p.b.temp(m, Type::chan(Type::int()));
        p.op(m, "make_chan", &[], &[("Out", &[&c])], vec![]);
        let t = p.b.temp(m, Type::int());
        p.op(m, "recv", &[("Chan", &[&c])], &[("Out", &[&t])], vec![]);
        line
    });
    assert_eq!(out, "first\n");
    assert_eq!(
        err,
        format!("panic: in task\n    at t.weft:{line}:2 (task 2)\n")
    );
    assert_eq!(code, 2);
}

#[test]
fn exit_code_and_rand_perm_are_deterministic() {
    let mut p = P::new();
    let m = p.main();
    let n = p.int(m, 10);
    let (r, l) = (
        p.b.temp(m, Type::int()),
        p.b.temp(m, Type::list(Type::int())),
    );
    p.op(m, "rand", &[("N", &[&n])], &[("Out", &[&r])], vec![]);
    p.op(m, "perm", &[("N", &[&n])], &[("Out", &[&l])], vec![]);
    p.print(m, &[&r, &l]);
    let code = p.int(m, 3);
    p.op(m, "exit", &[("Code", &[&code])], &[], vec![]);
    p.print(m, &[&r]);
    let prog = p.build();
    let (a, ra) = interp_util::run_desc(&prog, 1, 9);
    let (b, _) = interp_util::run_desc(&prog, 1, 9);
    assert_eq!(a, b);
    assert_eq!((ra.code, ra.stderr.as_str()), (3, ""));
    let nums: Vec<&str> = a.trim_end().split(' ').collect();
    assert_eq!(nums.len(), 11, "{a}");
    let mut sorted: Vec<i64> = a[a.find('[').unwrap() + 1..a.find(']').unwrap()]
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    sorted.sort();
    assert_eq!(sorted, (0..10).collect::<Vec<i64>>());
}

#[test]
fn runaway_recursion_is_a_stack_overflow_panic() {
    let mut p = P::new();
    let f = p.b.function("down", [("n", Type::int())], None);
    let one = p.int(f, 1);
    let m1 = p.bin(f, "add", "n", &one, Type::int());
    let line = p.op(
        f,
        "call",
        &[("Args", &[&m1])],
        &[],
        vec![("func", attr::Value::S("down".into()))],
    );
    let m = p.main();
    let z = p.int(m, 0);
    p.op(
        m,
        "call",
        &[("Args", &[&z])],
        &[],
        vec![("func", attr::Value::S("down".into()))],
    );
    let (out, rep) = p.run();
    assert_eq!(out, "");
    assert_eq!(
        rep.stderr,
        format!("panic: stack overflow\n    at t.weft:{line}:2 (task 1)\n")
    );
}
