//! Valid programs that use every op of the registry pass the verifier: the
//! registry, the slot types and the type rules admit every documented use.

use weft_ir::builder::{BlockId, ProgramBuilder};
use weft_ir::pb::{ProgramDesc, Type};
use weft_ir::registry::OPS;
use weft_ir::{decode, dump, encode, verify};

struct P {
    b: ProgramBuilder,
    m: BlockId,
    used: Vec<String>,
}

impl P {
    /// Appends `ty` with single-variable slots given as `("Slot", "var")`.
    fn op(&mut self, ty: &str, ins: &[(&str, &str)], outs: &[(&str, &str)]) {
        let mut o = self.b.op(self.m, ty);
        for (s, v) in ins {
            o = o.input(s, [*v]);
        }
        for (s, v) in outs {
            o = o.output(s, [*v]);
        }
        o.finish();
        self.used.push(ty.into());
    }
}

fn every_op_program() -> (ProgramDesc, Vec<String>) {
    let mut b = ProgramBuilder::new();
    b.struct_decl(
        "Dataset",
        [("x", Type::tensor()), ("y", Type::list(Type::int()))],
    );
    b.struct_decl("Pt", [("x", Type::int()), ("c", Type::chan(Type::int()))]);
    let sq = b.function("sq", [("n", Type::int())], Some(Type::int()));
    b.var(sq, "n2", Type::int());
    b.op(sq, "mul")
        .input("X", ["n"])
        .input("Y", ["n"])
        .output("Out", ["n2"])
        .finish();
    b.op(sq, "return").input("Value", ["n2"]).finish();
    let m = b.func("main").loc("all.weft", 1, 1).finish();
    let vars = [
        ("i", Type::int()),
        ("j", Type::int()),
        ("f", Type::float()),
        ("s", Type::string()),
        ("ok", Type::bool()),
        ("c", Type::chan(Type::int())),
        ("li", Type::list(Type::int())),
        ("lf", Type::list(Type::float())),
        ("ls", Type::list(Type::string())),
        ("t", Type::tensor()),
        ("u", Type::tensor_shaped(vec![2, 2])),
        ("pt", Type::struct_named("Pt")),
        ("ds", Type::struct_named("Dataset")),
        ("tick", Type::chan(Type::int())),
        ("mp", Type::map(Type::string(), Type::int())),
        ("sqf", Type::func(vec![Type::int()], Some(Type::int()))),
        ("addf", Type::func(vec![], Some(Type::int()))),
        ("cm", Type::comm()),
        ("cms", Type::list(Type::comm())),
        ("cs", Type::chan(Type::string())),
    ];
    for (n, t) in vars {
        b.var(m, n, t);
    }
    let mut p = P {
        b,
        m,
        used: Vec::new(),
    };
    p.b.op(m, "const")
        .output("Out", ["i"])
        .attr("value", 3)
        .finish();
    p.b.op(m, "const")
        .output("Out", ["f"])
        .attr("value", 1.5)
        .finish();
    p.b.op(m, "const")
        .output("Out", ["s"])
        .attr("value", "cpu")
        .finish();
    p.b.op(m, "const")
        .output("Out", ["ok"])
        .attr("value", true)
        .finish();
    p.used.push("const".into());
    p.op("zero", &[], &[("Out", "pt")]);
    p.op("copy", &[("X", "i")], &[("Out", "j")]);
    for ty in [
        "add", "sub", "mul", "div", "mod", "and", "or", "xor", "shl", "shr",
    ] {
        p.op(ty, &[("X", "i"), ("Y", "j")], &[("Out", "j")]);
    }
    p.op("add", &[("X", "s"), ("Y", "s")], &[("Out", "s")]);
    p.op("mul", &[("X", "t"), ("Y", "f")], &[("Out", "t")]);
    p.op("sub", &[("X", "f"), ("Y", "u")], &[("Out", "t")]);
    p.op("div", &[("X", "t"), ("Y", "u")], &[("Out", "u")]);
    p.op("neg", &[("X", "f")], &[("Out", "f")]);
    p.op("not", &[("X", "ok")], &[("Out", "ok")]);
    for ty in ["eq", "ne", "lt", "le", "gt", "ge"] {
        p.op(ty, &[("X", "s"), ("Y", "s")], &[("Out", "ok")]);
    }
    p.op("eq", &[("X", "pt"), ("Y", "pt")], &[("Out", "ok")]);
    p.op("to_int", &[("X", "s")], &[("Out", "i")]);
    p.op("to_float", &[("X", "i")], &[("Out", "f")]);
    p.op("to_str", &[("X", "pt")], &[("Out", "s")]);
    p.b.op(m, "list_new")
        .input("Elems", ["i", "j"])
        .output("Out", ["li"])
        .finish();
    p.used.push("list_new".into());
    p.op("index", &[("X", "li"), ("Index", "i")], &[("Out", "j")]);
    p.op("index", &[("X", "s"), ("Index", "i")], &[("Out", "s")]);
    p.op(
        "set_index",
        &[("X", "li"), ("Index", "i"), ("Value", "j")],
        &[("Out", "li")],
    );
    p.op("slice", &[("X", "li"), ("Hi", "i")], &[("Out", "li")]);
    p.op("append", &[("X", "li"), ("Elems", "i")], &[("Out", "li")]);
    p.op("len", &[("X", "c")], &[("Out", "i")]);
    p.op("cap", &[("X", "c")], &[("Out", "i")]);
    p.b.op(m, "struct_new")
        .input("Fields", ["i", "c"])
        .output("Out", ["pt"])
        .finish();
    p.used.push("struct_new".into());
    p.b.op(m, "field")
        .input("X", ["pt"])
        .output("Out", ["c"])
        .attr("name", "c")
        .finish();
    p.b.op(m, "set_field")
        .input("X", ["pt"])
        .input("Value", ["i"])
        .output("Out", ["pt"])
        .attr("name", "x")
        .finish();
    p.used.extend(["field".into(), "set_field".into()]);
    p.op("make_chan", &[("Cap", "i")], &[("Out", "c")]);
    p.op("send", &[("Chan", "c"), ("Value", "i")], &[]);
    p.op("recv", &[("Chan", "c")], &[("Out", "_"), ("Ok", "ok")]);
    p.op("after", &[("Ms", "f")], &[("Out", "tick")]);
    let (recv_case, send_case, default) = (p.b.block(m), p.b.block(m), p.b.block(m));
    p.b.op(recv_case, "break").finish();
    p.b.op(m, "select")
        .input("Chans", ["tick", "c"])
        .input("Values", ["j"])
        .output("Recv", ["i", "_"])
        .output("Oks", ["ok", "_"])
        .attr("kinds", vec![0i64, 1])
        .attr("cases", vec![recv_case, send_case])
        .attr("default_block", default)
        .loc("all.weft", 9, 2)
        .finish();
    p.used.push("select".into());
    p.op("close", &[("Chan", "c")], &[]);
    p.op("sleep", &[("Ms", "i")], &[]);
    let task = p.b.block(m);
    p.b.var(task, "k", Type::int());
    p.b.op(task, "recv")
        .input("Chan", ["c"])
        .output("Out", ["k"])
        .finish();
    p.b.op(task, "return").finish();
    p.b.op(m, "go")
        .input("Captures", ["c"])
        .attr("block", task)
        .finish();
    let placed = p.b.block(m);
    p.b.op(placed, "return").finish();
    p.b.op(m, "go")
        .input("Captures", ["c"])
        .input("Device", ["s"])
        .attr("block", placed)
        .finish();
    p.b.op(m, "go_call")
        .input("Args", ["i"])
        .attr("func", "sq")
        .finish();
    p.b.op(m, "go_call")
        .input("Args", ["i"])
        .input("Device", ["s"])
        .attr("func", "sq")
        .finish();
    p.b.op(m, "call")
        .input("Args", ["i"])
        .output("Out", ["j"])
        .attr("func", "sq")
        .finish();
    p.used
        .extend(["go".into(), "go_call".into(), "call".into()]);
    let (cond, body, post, region) = (p.b.block(m), p.b.block(m), p.b.block(m), p.b.block(m));
    let (then, els) = (p.b.block(body), p.b.block(body));
    p.b.op(cond, "lt")
        .input("X", ["i"])
        .input("Y", ["j"])
        .output("Out", ["ok"])
        .finish();
    p.b.op(then, "continue").attr("label", "l").finish();
    p.b.op(els, "break").finish();
    p.b.op(body, "if")
        .input("Cond", ["ok"])
        .attr("then_block", then)
        .attr("else_block", els)
        .finish();
    p.b.op(post, "add")
        .input("X", ["i"])
        .input("Y", ["j"])
        .output("Out", ["i"])
        .finish();
    p.b.op(m, "loop")
        .input("Cond", ["ok"])
        .attr("cond_block", cond)
        .attr("body_block", body)
        .attr("post_block", post)
        .attr("label", "l")
        .finish();
    p.b.op(region, "break").attr("label", "sw").finish();
    p.b.op(m, "region")
        .attr("block", region)
        .attr("label", "sw")
        .finish();
    p.used
        .extend(["if", "loop", "region", "break", "continue"].map(String::from));
    p.b.op(m, "print").input("Args", ["i", "s", "pt"]).finish();
    p.used.push("print".into());
    p.op("assert", &[("Cond", "ok"), ("Msg", "s")], &[]);
    p.op("panic", &[("Msg", "s")], &[]);
    p.op("exit", &[("Code", "i")], &[]);
    p.op("now", &[], &[("Out", "f")]);
    p.op("args", &[], &[("Out", "ls")]);
    p.op("rand", &[("N", "i")], &[("Out", "j")]);
    p.op("perm", &[("N", "i")], &[("Out", "li")]);
    p.op("zeros", &[("Shape", "li")], &[("Out", "t")]);
    p.op("ones", &[("Shape", "li")], &[("Out", "t")]);
    p.op("full", &[("Shape", "li"), ("Value", "f")], &[("Out", "t")]);
    p.op("randn", &[("Shape", "li"), ("Seed", "i")], &[("Out", "t")]);
    p.op(
        "tensor_from",
        &[("List", "lf"), ("Shape", "li")],
        &[("Out", "t")],
    );
    p.op("shape", &[("X", "t")], &[("Out", "li")]);
    p.op("numel", &[("X", "t")], &[("Out", "i")]);
    p.op("matmul", &[("X", "t"), ("Y", "u")], &[("Out", "t")]);
    for ty in [
        "transpose",
        "relu",
        "relu_mask",
        "exp",
        "log",
        "softmax",
        "sum_rows",
    ] {
        p.op(ty, &[("X", "t")], &[("Out", "t")]);
    }
    p.op("sum", &[("X", "t")], &[("Out", "f")]);
    p.op("mean", &[("X", "t")], &[("Out", "f")]);
    p.op("argmax_rows", &[("X", "t")], &[("Out", "li")]);
    p.op("onehot", &[("Labels", "li"), ("N", "i")], &[("Out", "t")]);
    p.op(
        "rows",
        &[("X", "t"), ("Start", "i"), ("End", "j")],
        &[("Out", "t")],
    );
    p.op("gather", &[("X", "t"), ("Idx", "li")], &[("Out", "t")]);
    p.b.op(m, "get")
        .input("X", ["t"])
        .input("Indices", ["i", "j"])
        .output("Out", ["f"])
        .finish();
    p.used.push("get".into());
    p.op("devices", &[], &[("Out", "ls")]);
    p.op("device", &[("X", "t")], &[("Out", "s")]);
    p.b.op(m, "to")
        .input("X", ["t"])
        .input("Device", ["s"])
        .output("Out", ["u"])
        .device("cuda:0")
        .finish();
    p.b.op(m, "to")
        .input("X", ["t"])
        .output("Out", ["u"])
        .finish();
    p.used.push("to".into());
    p.op("here", &[], &[("Out", "s")]);
    p.op("load_dataset", &[("Name", "s")], &[("Out", "ds")]);
    p.b.op(m, "map_new")
        .input("Keys", ["s"])
        .input("Values", ["i"])
        .output("Out", ["mp"])
        .finish();
    p.used.push("map_new".into());
    p.op(
        "map_get",
        &[("X", "mp"), ("Key", "s")],
        &[("Out", "j"), ("Ok", "ok")],
    );
    p.op(
        "map_set",
        &[("X", "mp"), ("Key", "s"), ("Value", "i")],
        &[("Out", "mp")],
    );
    p.op("map_delete", &[("X", "mp"), ("Key", "s")], &[("Out", "mp")]);
    p.op(
        "map_entry",
        &[("X", "mp"), ("Index", "i")],
        &[("Key", "s"), ("Value", "j")],
    );
    p.op("len", &[("X", "mp")], &[("Out", "i")]);
    p.b.op(m, "func_ref")
        .output("Out", ["sqf"])
        .attr("func", "sq")
        .finish();
    p.b.op(m, "closure")
        .input("Captures", ["i"])
        .output("Out", ["addf"])
        .attr("func", "sq")
        .finish();
    p.used.extend(["func_ref", "closure"].map(String::from));
    p.op(
        "call_value",
        &[("F", "sqf"), ("Args", "i")],
        &[("Out", "j")],
    );
    p.op("call_value", &[("F", "addf")], &[("Out", "j")]);
    p.op("go_value", &[("F", "sqf"), ("Args", "i")], &[]);
    p.op("eq", &[("X", "sqf"), ("Y", "sqf")], &[("Out", "ok")]);
    p.b.op(m, "c_group")
        .input("N", ["i"])
        .output("Out", ["cms"])
        .attr("rings", 2i64)
        .finish();
    p.used.push("c_group".into());
    p.op("c_world", &[], &[("Out", "cm")]);
    p.op("c_rank", &[("Comm", "cm")], &[("Out", "i")]);
    p.op("c_size", &[("Comm", "cm")], &[("Out", "j")]);
    p.op(
        "c_allreduce_sum",
        &[("Comm", "cm"), ("X", "i")],
        &[("Out", "i")],
    );
    p.op(
        "c_allreduce_max",
        &[("Comm", "cm"), ("X", "f")],
        &[("Out", "f")],
    );
    p.op(
        "c_allreduce_min",
        &[("Comm", "cm"), ("X", "t")],
        &[("Out", "t")],
    );
    p.op(
        "c_allreduce_prod",
        &[("Comm", "cm"), ("X", "j")],
        &[("Out", "_")],
    );
    p.op(
        "c_broadcast",
        &[("Comm", "cm"), ("X", "pt"), ("Root", "i")],
        &[("Out", "pt")],
    );
    p.op(
        "c_allgather",
        &[("Comm", "cm"), ("X", "s")],
        &[("Out", "ls")],
    );
    p.op("c_barrier", &[("Comm", "cm")], &[]);
    // numbers, strings, lists, time and files
    p.op("exp", &[("X", "f")], &[("Out", "f")]);
    p.op("abs", &[("X", "i")], &[("Out", "j")]);
    for ty in ["min", "max"] {
        p.b.op(m, ty)
            .input("Args", ["f", "f"])
            .output("Out", ["f"])
            .finish();
        p.used.push(ty.into());
    }
    for ty in ["sqrt", "floor", "ceil"] {
        p.op(ty, &[("X", "f")], &[("Out", "f")]);
    }
    p.op("pow", &[("X", "f"), ("Y", "f")], &[("Out", "f")]);
    p.op("inf", &[], &[("Out", "f")]);
    p.op("nan", &[], &[("Out", "f")]);
    p.op("is_nan", &[("X", "f")], &[("Out", "ok")]);
    p.op(
        "decode_rune",
        &[("X", "s"), ("Index", "i")],
        &[("Out", "j"), ("Width", "i")],
    );
    p.op("split", &[("X", "s"), ("Sep", "s")], &[("Out", "ls")]);
    p.op("fields", &[("X", "s")], &[("Out", "ls")]);
    p.op("join", &[("List", "ls"), ("Sep", "s")], &[("Out", "s")]);
    p.op("contains", &[("X", "li"), ("Y", "i")], &[("Out", "ok")]);
    p.op("str_index", &[("X", "s"), ("Y", "s")], &[("Out", "i")]);
    p.op("has_prefix", &[("X", "s"), ("Y", "s")], &[("Out", "ok")]);
    p.op("has_suffix", &[("X", "s"), ("Y", "s")], &[("Out", "ok")]);
    p.op(
        "replace",
        &[("X", "s"), ("Old", "s"), ("New", "s")],
        &[("Out", "s")],
    );
    for ty in ["trim", "lower", "upper"] {
        p.op(ty, &[("X", "s")], &[("Out", "s")]);
    }
    p.op("repeat", &[("X", "s"), ("N", "i")], &[("Out", "s")]);
    p.op("chr", &[("X", "i")], &[("Out", "s")]);
    p.b.op(m, "sprintf")
        .input("Format", ["s"])
        .input("Args", ["i", "f", "ls"])
        .output("Out", ["s"])
        .finish();
    p.used.push("sprintf".into());
    p.op("make_list", &[("N", "i")], &[("Out", "lf")]);
    p.op("sort", &[("X", "ls")], &[("Out", "ls")]);
    p.op("reverse", &[("X", "li")], &[("Out", "li")]);
    p.op("tick", &[("Ms", "f")], &[("Out", "tick")]);
    p.op("lines", &[("Path", "s")], &[("Out", "cs")]);
    p.op("read_file", &[("Path", "s")], &[("Out", "s")]);
    p.op("write_file", &[("Path", "s"), ("Data", "s")], &[]);
    p.op("append_file", &[("Path", "s"), ("Data", "s")], &[]);
    p.op("exists", &[("Path", "s")], &[("Out", "ok")]);
    p.op("env", &[("Name", "s")], &[("Out", "s")]);
    p.op("load_csv", &[("Path", "s")], &[("Out", "t")]);
    p.op("load_npy", &[("Path", "s")], &[("Out", "t")]);
    p.op("save_npy", &[("Path", "s"), ("X", "t")], &[]);
    p.op("values", &[("X", "t")], &[("Out", "lf")]);
    p.op("return", &[], &[]);
    (p.b.build(), p.used)
}

#[test]
fn a_program_using_every_op_verifies() {
    let (prog, used) = every_op_program();
    if let Err(e) = verify(&prog) {
        panic!("{e}\n\n{}", dump(&prog));
    }
    for op in OPS {
        assert!(
            used.iter().any(|u| u == op.name),
            "op {} is not exercised",
            op.name
        );
    }
}

#[test]
fn every_op_program_round_trips() {
    let (prog, _) = every_op_program();
    let back = decode(&encode(&prog)).unwrap();
    assert_eq!(back, prog);
    assert_eq!(dump(&back), dump(&prog));
}
