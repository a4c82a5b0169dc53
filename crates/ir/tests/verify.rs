//! One test per class of malformed program the verifier rejects, each
//! checking the message; plus valid programs using every kind of op, which
//! must pass.

use weft_ir::builder::{BlockId, ProgramBuilder};
use weft_ir::pb::{attr, r#type::Kind, Attr, OpDesc, ProgramDesc, Type};
use weft_ir::verify;

/// Every issue message of a program (empty when it verifies).
fn issues(p: &ProgramDesc) -> Vec<String> {
    match verify(p) {
        Ok(()) => Vec::new(),
        Err(e) => e.issues.iter().map(|i| i.to_string()).collect(),
    }
}

#[track_caller]
fn rejects(p: &ProgramDesc, want: &str) {
    let got = issues(p);
    assert!(
        got.iter().any(|m| m == want),
        "expected {want:?} among {got:#?}"
    );
}

/// `main` with `c: chan int`, `v: int`, `s: string`, `b: bool`, `c` made.
fn base() -> (ProgramBuilder, BlockId) {
    let mut b = ProgramBuilder::new();
    let main = b.func("main").finish();
    b.var(main, "c", Type::chan(Type::int()));
    b.var(main, "v", Type::int());
    b.var(main, "s", Type::string());
    b.var(main, "b", Type::bool());
    b.op(main, "make_chan").output("Out", ["c"]).finish();
    (b, main)
}

fn op_mut(p: &mut ProgramDesc, block: usize, op: usize) -> &mut OpDesc {
    &mut p.blocks[block].ops[op]
}

#[test]
fn base_program_verifies() {
    assert_eq!(issues(&base().0.build()), Vec::<String>::new());
}

#[test]
fn bad_version() {
    let mut p = base().0.build();
    p.version = 7;
    rejects(&p, "unsupported format version 7 (expected 1)");
    p.version = 0;
    rejects(&p, "unsupported format version 0 (expected 1)");
}

#[test]
fn no_blocks() {
    let p = ProgramDesc {
        version: 1,
        ..Default::default()
    };
    rejects(&p, "program has no blocks");
}

#[test]
fn block_idx_mismatch() {
    let mut p = base().0.build();
    p.blocks[1].idx = 5;
    rejects(&p, "block 1: idx is 5, expected its position 1");
}

#[test]
fn root_block_rules() {
    let mut p = base().0.build();
    p.blocks[0].parent_idx = 3;
    p.blocks[0].vars.push(weft_ir::pb::VarDesc {
        name: "g".into(),
        r#type: Some(Type::int()),
    });
    rejects(&p, "block 0: root block has parent 3, expected -1");
    rejects(&p, "block 0: root block must hold no variables and no ops");
}

#[test]
fn dangling_block_reference() {
    let (mut b, main) = base();
    b.op(main, "if")
        .input("Cond", ["b"])
        .attr("then_block", BlockId::ROOT)
        .finish();
    let mut p = b.build();
    op_mut(&mut p, 1, 1).attrs[0].value = Some(attr::Value::Block(9));
    rejects(
        &p,
        "block 1, op 1 (if): attribute \"then_block\" refers to block 9, past the 2 blocks",
    );
    op_mut(&mut p, 1, 1).attrs[0].value = Some(attr::Value::Block(-1));
    rejects(
        &p,
        "block 1, op 1 (if): attribute \"then_block\" refers to block -1, past the 2 blocks",
    );
}

#[test]
fn cyclic_block_reference() {
    let (mut b, main) = base();
    let inner = b.block(main);
    b.op(inner, "if")
        .input("Cond", ["b"])
        .attr("then_block", main)
        .finish();
    b.op(inner, "loop").attr("body_block", inner).finish();
    b.op(main, "region").attr("block", inner).finish();
    let p = b.build();
    rejects(&p, "block 2, op 0 (if): attribute \"then_block\" refers to block 1, the op's own block or an ancestor of it (cycle)");
    rejects(&p, "block 2, op 1 (loop): attribute \"body_block\" refers to block 2, the op's own block or an ancestor of it (cycle)");
}

#[test]
fn parent_cycle() {
    let (mut b, main) = base();
    let x = b.block(main);
    let y = b.block(x);
    b.op(main, "region").attr("block", x).finish();
    b.op(x, "region").attr("block", y).finish();
    let mut p = b.build();
    p.blocks[2].parent_idx = 3; // 2 -> 3 -> 2
    rejects(&p, "block 2: block is its own ancestor (parent cycle)");
    rejects(&p, "block 3: block is its own ancestor (parent cycle)");
}

#[test]
fn block_owned_twice() {
    let (mut b, main) = base();
    let then = b.block(main);
    b.op(main, "if")
        .input("Cond", ["b"])
        .attr("then_block", then)
        .finish();
    b.op(main, "region").attr("block", then).finish();
    rejects(&b.build(), "block 1, op 2 (region): attribute \"block\" refers to block 2, already owned by block 1, op 1 (if)");
}

#[test]
fn block_parent_is_not_owner_block() {
    let (mut b, main) = base();
    let a = b.block(main);
    let stray = b.block(main); // parent 1, but owned by an op in block 2
    b.op(main, "region").attr("block", a).finish();
    b.op(a, "region").attr("block", stray).finish();
    rejects(
        &b.build(),
        "block 2, op 0 (region): attribute \"block\" refers to block 3, whose parent is 1, not 2",
    );
}

#[test]
fn orphan_block() {
    let (mut b, main) = base();
    b.block(main);
    rejects(
        &b.build(),
        "block 2: block is not owned by any op or function",
    );
}

#[test]
fn unknown_op_type() {
    let (mut b, main) = base();
    b.op(main, "frobnicate").input("X", ["v"]).finish();
    rejects(
        &b.build(),
        "block 1, op 1 (frobnicate): unknown op type \"frobnicate\"",
    );
}

#[test]
fn missing_required_input_output_attribute() {
    let (mut b, main) = base();
    b.op(main, "add")
        .input("X", ["v"])
        .output("Out", ["v"])
        .finish();
    b.op(main, "add")
        .input("X", ["v"])
        .input("Y", ["v"])
        .finish();
    b.op(main, "field")
        .input("X", ["v"])
        .output("Out", ["v"])
        .finish();
    let p = b.build();
    rejects(&p, "block 1, op 1 (add): missing required input \"Y\"");
    rejects(&p, "block 1, op 2 (add): missing required output \"Out\"");
    rejects(
        &p,
        "block 1, op 3 (field): missing required attribute \"name\"",
    );
}

#[test]
fn unknown_and_duplicate_slots_and_arity() {
    let (mut b, main) = base();
    b.op(main, "neg")
        .input("X", ["v"])
        .input("Z", ["v"])
        .output("Out", ["v"])
        .finish();
    b.op(main, "neg")
        .input("X", ["v", "v"])
        .output("Out", ["v"])
        .output("Ok", ["b"])
        .finish();
    let mut p = b.build();
    rejects(&p, "block 1, op 1 (neg): unknown input slot \"Z\"");
    rejects(
        &p,
        "block 1, op 2 (neg): slot \"X\" takes one variable, got 2",
    );
    rejects(&p, "block 1, op 2 (neg): unknown output slot \"Ok\"");
    let dup = op_mut(&mut p, 1, 1).inputs[0].clone();
    op_mut(&mut p, 1, 1).inputs.push(dup);
    rejects(&p, "block 1, op 1 (neg): input slot \"X\" listed twice");
}

#[test]
fn variable_out_of_scope() {
    let (mut b, main) = base();
    let a = b.block(main);
    b.var(a, "inner", Type::int());
    b.op(main, "region").attr("block", a).finish();
    let other = b.block(main);
    b.op(other, "print").input("Args", ["inner"]).finish();
    b.op(main, "region").attr("block", other).finish();
    b.op(main, "print")
        .input("Args", ["inner", "nope"])
        .finish();
    let p = b.build();
    rejects(
        &p,
        "block 3, op 0 (print): variable \"inner\" is not declared in this block or an ancestor",
    );
    rejects(
        &p,
        "block 1, op 3 (print): variable \"inner\" is not declared in this block or an ancestor",
    );
    rejects(
        &p,
        "block 1, op 3 (print): variable \"nope\" is not declared in this block or an ancestor",
    );
}

#[test]
fn discard_is_output_only() {
    let (mut b, main) = base();
    b.op(main, "recv")
        .input("Chan", ["c"])
        .output("Out", ["_"])
        .output("Ok", ["_"])
        .finish();
    b.op(main, "print").input("Args", ["_"]).finish();
    let got = issues(&b.build());
    assert_eq!(
        got,
        vec!["block 1, op 2 (print): slot \"Args\" names \"_\", which is not a variable"]
    );
}

#[test]
fn duplicate_and_shadowed_variables() {
    let (mut b, main) = base();
    b.var(main, "v", Type::float());
    let a = b.block(main);
    b.var(a, "s", Type::string());
    b.op(main, "region").attr("block", a).finish();
    let p = b.build();
    rejects(&p, "block 1: variable \"v\" declared twice");
    rejects(
        &p,
        "block 2: variable \"s\" shadows the one declared in block 1",
    );
}

#[test]
fn reserved_variable_names() {
    let (mut b, main) = base();
    b.var(main, "_", Type::int());
    rejects(
        &b.build(),
        "block 1: variable declared with the reserved name \"_\"",
    );
}

#[test]
fn channel_element_type_mismatches() {
    let (mut b, main) = base();
    b.op(main, "send")
        .input("Chan", ["c"])
        .input("Value", ["s"])
        .finish();
    b.op(main, "recv")
        .input("Chan", ["c"])
        .output("Out", ["s"])
        .finish();
    b.op(main, "send")
        .input("Chan", ["v"])
        .input("Value", ["v"])
        .finish();
    b.op(main, "close").input("Chan", ["s"]).finish();
    b.op(main, "make_chan").output("Out", ["v"]).finish();
    let p = b.build();
    rejects(
        &p,
        "block 1, op 1 (send): channel \"c\" carries int but value \"s\" is string",
    );
    rejects(
        &p,
        "block 1, op 2 (recv): channel \"c\" carries int but \"s\" is string",
    );
    rejects(
        &p,
        "block 1, op 3 (send): operand \"v\" of slot \"Chan\" is int, not a channel",
    );
    rejects(
        &p,
        "block 1, op 4 (close): operand \"s\" of slot \"Chan\" is string, not a channel",
    );
    rejects(
        &p,
        "block 1, op 5 (make_chan): operand \"v\" of slot \"Out\" is int, not a channel",
    );
}

fn select_program(kinds: Vec<i64>, values: &[&str], recv: &[&str]) -> ProgramDesc {
    let (mut b, main) = base();
    let cases: Vec<BlockId> = kinds.iter().map(|_| b.block(main)).collect();
    let n = kinds.len();
    b.op(main, "select")
        .input("Chans", vec!["c"; n])
        .input("Values", values.to_vec())
        .output("Recv", recv.to_vec())
        .attr("kinds", kinds)
        .attr("cases", cases)
        .finish();
    b.build()
}

#[test]
fn select_checks() {
    let ok = select_program(vec![0, 1], &["v"], &["v", "_"]);
    assert_eq!(issues(&ok), Vec::<String>::new());
    rejects(
        &select_program(vec![1], &["s"], &[]),
        "block 1, op 1 (select): channel \"c\" carries int but value \"s\" is string",
    );
    rejects(
        &select_program(vec![0], &[], &["s"]),
        "block 1, op 1 (select): channel \"c\" carries int but \"s\" is string",
    );
    rejects(
        &select_program(vec![1, 1], &["v"], &[]),
        "block 1, op 1 (select): select has 2 send cases but 1 Values",
    );
    rejects(
        &select_program(vec![0, 2], &[], &[]),
        "block 1, op 1 (select): kind 2 of case 1 is neither 0 (recv) nor 1 (send)",
    );
    rejects(
        &select_program(vec![1], &["v"], &["v"]),
        "block 1, op 1 (select): send case 0 binds output \"v\"; use \"_\"",
    );
    let mut p = select_program(vec![0, 0], &[], &[]);
    let Some(attr::Value::Ints(k)) = &mut op_mut(&mut p, 1, 1).attrs[0].value else {
        panic!("kinds attr")
    };
    k.v.pop();
    rejects(
        &p,
        "block 1, op 1 (select): select has 2 cases (Chans) but 1 kinds",
    );
    let mut p = select_program(vec![0, 0], &[], &[]);
    op_mut(&mut p, 1, 1).attrs.push(Attr {
        name: "case_locs".into(),
        value: Some(attr::Value::Ints(weft_ir::pb::Ints { v: vec![3, 5] })),
    });
    rejects(
        &p,
        "block 1, op 1 (select): select has 2 cases but 2 case_locs entries (want line, column per case)",
    );
}

#[test]
fn attribute_kind_unknown_and_duplicate() {
    let (mut b, main) = base();
    b.op(main, "const")
        .output("Out", ["v"])
        .attr("value", vec![1i64])
        .finish();
    b.op(main, "const")
        .output("Out", ["v"])
        .attr("value", 1)
        .attr("value", 2)
        .attr("colour", 3)
        .finish();
    let mut p = b.build();
    op_mut(&mut p, 1, 1).attrs.push(Attr {
        name: "x".into(),
        value: None,
    });
    rejects(
        &p,
        "block 1, op 1 (const): attribute \"value\" must be i/f/s/b/raw, got ints",
    );
    rejects(
        &p,
        "block 1, op 2 (const): attribute \"value\" listed twice",
    );
    rejects(&p, "block 1, op 2 (const): unknown attribute \"colour\"");
    rejects(&p, "block 1, op 1 (const): unknown attribute \"x\"");
}

#[test]
fn const_literal_must_match() {
    let (mut b, main) = base();
    b.op(main, "const")
        .output("Out", ["v"])
        .attr("value", "hi")
        .finish();
    rejects(
        &b.build(),
        "block 1, op 1 (const): value is a string literal but Out \"v\" is int",
    );
}

#[test]
fn unknown_function_and_arg_count() {
    let (mut b, main) = base();
    let f = b.function("f", [("n", Type::int())], Some(Type::int()));
    b.op(f, "return").input("Value", ["n"]).finish();
    b.op(main, "call")
        .input("Args", ["v"])
        .output("Out", ["v"])
        .attr("func", "g")
        .finish();
    b.op(main, "go_call")
        .input("Args", ["v", "v"])
        .attr("func", "f")
        .finish();
    b.op(main, "call")
        .input("Args", ["s"])
        .output("Out", ["s"])
        .attr("func", "f")
        .finish();
    let p = b.build();
    rejects(&p, "block 1, op 1 (call): unknown function \"g\"");
    rejects(
        &p,
        "block 1, op 2 (go_call): function \"f\" takes 1 arguments, got 2",
    );
    rejects(
        &p,
        "block 1, op 3 (call): argument 0 \"s\" is string but parameter \"n\" of \"f\" is int",
    );
    rejects(
        &p,
        "block 1, op 3 (call): Out \"s\" is string but \"f\" returns int",
    );
}

#[test]
fn entry_function_missing_or_wrong() {
    let (mut b, _) = base();
    b.entry("start");
    rejects(&b.build(), "entry function \"start\" is not defined");
    let mut b = ProgramBuilder::new();
    b.function("main", [("x", Type::int())], None);
    rejects(
        &b.build(),
        "entry function \"main\" must take no parameters and return nothing",
    );
}

#[test]
fn struct_rules() {
    let (mut b, main) = base();
    b.var(main, "p", Type::struct_named("Point"));
    b.struct_decl("Node", [("next", Type::chan(Type::struct_named("Node")))]);
    b.struct_decl("Loop", [("inner", Type::struct_named("Wrap"))]);
    b.struct_decl(
        "Wrap",
        [("l", Type::struct_named("Loop")), ("l", Type::int())],
    );
    let p = b.build();
    rejects(
        &p,
        "block 1: variable \"p\": struct \"Point\" is not declared",
    );
    rejects(
        &p,
        "struct \"Loop\": struct contains itself by value through field \"inner\"",
    );
    rejects(&p, "struct \"Wrap\": field \"l\" declared twice");
    assert!(
        !issues(&p).iter().any(|m| m.contains("Node")),
        "a struct may reach itself through a channel"
    );
}

#[test]
fn type_with_no_kind() {
    let (mut b, main) = base();
    b.var(main, "t", Type::default());
    b.var(main, "u", Type::list(Type::of(Kind::Scalar(0))));
    let p = b.build();
    rejects(&p, "block 1: variable \"t\": type has no kind set");
    rejects(&p, "block 1: variable \"u\": invalid scalar kind 0");
}

#[test]
fn cheap_type_checks() {
    let (mut b, main) = base();
    let then = b.block(main);
    b.op(main, "if")
        .input("Cond", ["v"])
        .attr("then_block", then)
        .finish();
    b.op(main, "add")
        .input("X", ["v"])
        .input("Y", ["s"])
        .output("Out", ["v"])
        .finish();
    b.op(main, "eq")
        .input("X", ["v"])
        .input("Y", ["v"])
        .output("Out", ["v"])
        .finish();
    b.op(main, "copy")
        .input("X", ["v"])
        .output("Out", ["s"])
        .finish();
    b.op(main, "sub")
        .input("X", ["s"])
        .input("Y", ["s"])
        .output("Out", ["s"])
        .finish();
    let p = b.build();
    rejects(
        &p,
        "block 1, op 1 (if): slot \"Cond\" needs bool but \"v\" is int",
    );
    rejects(
        &p,
        "block 1, op 2 (add): operands of add differ: X \"v\" is int but Y \"s\" is string",
    );
    rejects(
        &p,
        "block 1, op 3 (eq): slot \"Out\" needs bool but \"v\" is int",
    );
    rejects(
        &p,
        "block 1, op 4 (copy): Out \"s\" is string but X \"v\" is int",
    );
    rejects(
        &p,
        "block 1, op 5 (sub): sub does not apply to \"s\" and \"s\" of type string",
    );
}

#[test]
fn bad_device() {
    let (mut b, main) = base();
    b.op(main, "print").device("gpu0").finish();
    b.op(main, "print").device("cuda:1").finish();
    assert_eq!(
        issues(&b.build()),
        vec![
            "block 1, op 1 (print): invalid device \"gpu0\" (expected \"\", \"cpu\" or \"cuda:N\")"
        ]
    );
}

#[test]
fn break_continue_targets() {
    let (mut b, main) = base();
    b.op(main, "break").finish();
    let body = b.block(main);
    let then = b.block(body);
    b.op(then, "continue").attr("label", "outer").finish();
    b.op(then, "break").finish();
    b.op(body, "if")
        .input("Cond", ["b"])
        .attr("then_block", then)
        .finish();
    b.op(main, "loop")
        .attr("body_block", body)
        .attr("label", "inner")
        .finish();
    let region = b.block(main);
    b.op(region, "continue").finish();
    b.op(main, "region").attr("block", region).finish();
    let p = b.build();
    let got = issues(&p);
    assert_eq!(
        got,
        vec![
            "block 1, op 1 (break): break is not inside a loop, region or select case",
            "block 3, op 0 (continue): continue names label \"outer\", which no enclosing loop has",
            "block 4, op 0 (continue): continue is not inside a loop",
        ]
    );
}

#[test]
fn return_matches_function() {
    let (mut b, main) = base();
    b.op(main, "return").input("Value", ["v"]).finish();
    let f = b.function("f", Vec::<(String, Type)>::new(), Some(Type::int()));
    b.var(f, "fs", Type::string());
    b.op(f, "return").finish();
    b.op(f, "return").input("Value", ["fs"]).finish();
    let task = b.block(f);
    b.op(task, "return").input("Value", ["fs"]).finish();
    b.op(f, "go")
        .input("Captures", ["fs"])
        .attr("block", task)
        .finish();
    let p = b.build();
    rejects(
        &p,
        "block 1, op 1 (return): function \"main\" returns nothing but return has Value \"v\"",
    );
    rejects(
        &p,
        "block 2, op 0 (return): function \"f\" returns int but return has no Value",
    );
    rejects(
        &p,
        "block 2, op 1 (return): Value \"fs\" is string but function \"f\" returns int",
    );
    rejects(
        &p,
        "block 3, op 0 (return): return in a go block carries no value, got \"fs\"",
    );
}

#[test]
fn go_block_must_capture_outer_variables() {
    let (mut b, main) = base();
    let task = b.block(main);
    b.op(task, "send")
        .input("Chan", ["c"])
        .input("Value", ["v"])
        .finish();
    b.op(main, "go")
        .input("Captures", ["c"])
        .attr("block", task)
        .finish();
    rejects(
        &b.build(),
        "block 2, op 0 (send): go block uses \"v\" of an enclosing block but block 1, op 1 (go) does not capture it",
    );
}

/// Placement (docs/language.md, "Placement"): a `go` or `go_call` takes
/// at most one `Device`, a string variable of the parent's scope; `to`
/// may leave its `Device` out (this task's device); `here` gives a string.
#[test]
fn go_placement_is_one_string_operand() {
    let (mut b, main) = base();
    let f = b.function("f", [("n", Type::int())], None);
    b.op(f, "return").finish();
    let task = b.block(main);
    b.op(task, "return").finish();
    b.op(main, "go")
        .input("Captures", Vec::<String>::new())
        .input("Device", ["s"])
        .attr("block", task)
        .finish();
    b.op(main, "go_call")
        .input("Args", ["v"])
        .input("Device", ["s"])
        .attr("func", "f")
        .finish();
    assert_eq!(issues(&b.clone().build()), Vec::<String>::new());
    b.op(main, "go_call")
        .input("Args", ["v"])
        .input("Device", ["v"])
        .attr("func", "f")
        .finish();
    b.op(main, "go_call")
        .input("Args", ["v"])
        .input("Device", ["s", "s"])
        .attr("func", "f")
        .finish();
    b.op(main, "here").output("Out", ["v"]).finish();
    let p = b.build();
    rejects(
        &p,
        "block 1, op 3 (go_call): slot \"Device\" needs string but \"v\" is int",
    );
    rejects(
        &p,
        "block 1, op 4 (go_call): slot \"Device\" takes at most one variable, got 2",
    );
    rejects(
        &p,
        "block 1, op 5 (here): slot \"Out\" needs string but \"v\" is int",
    );
}

#[test]
fn function_body_and_params() {
    let (mut b, _) = base();
    let f = b.function("f", [("n", Type::int())], None);
    let mut p = b.build();
    p.blocks[f.idx() as usize].vars.clear();
    p.functions.push(p.functions[0].clone());
    p.functions[2].body_block = 40;
    rejects(
        &p,
        "function \"f\": parameter \"n\" is not declared in the body block with its type",
    );
    rejects(&p, "function \"main\" declared twice");
    rejects(
        &p,
        "function \"main\": attribute \"body_block\" refers to block 40, past the 3 blocks",
    );
}

#[test]
fn all_errors_are_listed_one_per_line() {
    let (mut b, main) = base();
    b.op(main, "nope").finish();
    b.op(main, "print").input("Args", ["zz"]).finish();
    let err = verify(&b.build()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "block 1, op 1 (nope): unknown op type \"nope\"\n\
         block 1, op 2 (print): variable \"zz\" is not declared in this block or an ancestor"
    );
}

#[test]
fn loop_cond_block_needs_cond() {
    let (mut b, main) = base();
    let (cond, body) = (b.block(main), b.block(main));
    b.op(main, "loop")
        .attr("cond_block", cond)
        .attr("body_block", body)
        .finish();
    rejects(
        &b.build(),
        "block 1, op 1 (loop): cond_block is set but Cond is not",
    );
}

#[test]
fn load_dataset_needs_the_dataset_struct() {
    let (mut b, main) = base();
    let ds = b.dataset_struct();
    assert_eq!(b.dataset_struct(), ds);
    b.var(main, "d", ds);
    b.var(main, "p", Type::struct_named("P"));
    b.struct_decl("P", [("x", Type::tensor())]);
    b.op(main, "load_dataset")
        .input("Name", ["s"])
        .output("Out", ["d"])
        .finish();
    b.op(main, "load_dataset")
        .input("Name", ["s"])
        .output("Out", ["p"])
        .finish();
    let got = issues(&b.build());
    assert_eq!(got, vec!["block 1, op 2 (load_dataset): Out \"p\" is P, which is not a struct {x tensor; y []int}"]);
}

#[test]
fn collectives_verify_and_their_rules_hold() {
    let (mut b, main) = base();
    b.var(main, "cs", Type::list(Type::comm()));
    b.var(main, "k", Type::comm());
    b.var(main, "f", Type::float());
    b.var(main, "fs", Type::list(Type::float()));
    b.var(main, "ts", Type::list(Type::tensor()));
    b.op(main, "c_group")
        .input("N", ["v"])
        .output("Out", ["cs"])
        .attr("rings", 2i64)
        .finish();
    b.op(main, "c_world").output("Out", ["k"]).finish();
    b.op(main, "c_rank")
        .input("Comm", ["k"])
        .output("Out", ["v"])
        .finish();
    b.op(main, "c_allreduce_max")
        .input("Comm", ["k"])
        .input("X", ["f"])
        .output("Out", ["f"])
        .finish();
    b.op(main, "c_allreduce_sum")
        .input("Comm", ["k"])
        .input("X", ["ts"])
        .output("Out", ["ts"])
        .finish();
    b.op(main, "c_broadcast")
        .input("Comm", ["k"])
        .input("X", ["s"])
        .input("Root", ["v"])
        .output("Out", ["_"])
        .finish();
    b.op(main, "c_allgather")
        .input("Comm", ["k"])
        .input("X", ["f"])
        .output("Out", ["fs"])
        .finish();
    b.op(main, "c_barrier").input("Comm", ["k"]).finish();
    b.op(main, "eq")
        .input("X", ["k"])
        .input("Y", ["k"])
        .output("Out", ["b"])
        .finish();
    assert_eq!(issues(&b.build()), Vec::<String>::new());

    let (mut b, main) = base();
    b.var(main, "cs", Type::list(Type::comm()));
    b.var(main, "k", Type::comm());
    b.var(main, "f", Type::float());
    b.op(main, "c_group")
        .input("N", ["v"])
        .output("Out", ["cs"])
        .attr("rings", 0i64)
        .finish();
    b.op(main, "c_group")
        .input("N", ["v"])
        .output("Out", ["cs"])
        .finish();
    b.op(main, "c_rank")
        .input("Comm", ["c"])
        .output("Out", ["v"])
        .finish();
    b.op(main, "c_allreduce_sum")
        .input("Comm", ["k"])
        .input("X", ["s"])
        .output("Out", ["s"])
        .finish();
    b.op(main, "c_allreduce_prod")
        .input("Comm", ["k"])
        .input("X", ["v"])
        .output("Out", ["f"])
        .finish();
    b.op(main, "c_broadcast")
        .input("Comm", ["k"])
        .input("X", ["v"])
        .input("Root", ["v"])
        .output("Out", ["s"])
        .finish();
    b.op(main, "c_allgather")
        .input("Comm", ["k"])
        .input("X", ["v"])
        .output("Out", ["cs"])
        .finish();
    b.op(main, "c_world").output("Out", ["cs"]).finish();
    b.var(main, "fs", Type::list(Type::float()));
    b.op(main, "c_allreduce_min")
        .input("Comm", ["k"])
        .input("X", ["fs"])
        .output("Out", ["fs"])
        .finish();
    let p = b.build();
    rejects(
        &p,
        "block 1, op 1 (c_group): rings is 0 but a group needs at least 1 ring",
    );
    rejects(
        &p,
        "block 1, op 2 (c_group): missing required attribute \"rings\"",
    );
    rejects(
        &p,
        "block 1, op 3 (c_rank): slot \"Comm\" needs comm but \"c\" is chan int",
    );
    rejects(
        &p,
        "block 1, op 4 (c_allreduce_sum): c_allreduce_sum does not apply to \"s\" of type string",
    );
    rejects(
        &p,
        "block 1, op 5 (c_allreduce_prod): Out \"f\" is float but X \"v\" is int",
    );
    rejects(
        &p,
        "block 1, op 6 (c_broadcast): Out \"s\" is string but X \"v\" is int",
    );
    rejects(
        &p,
        "block 1, op 7 (c_allgather): Out \"cs\" is []comm but X \"v\" is int (want []int)",
    );
    rejects(
        &p,
        "block 1, op 8 (c_world): slot \"Out\" needs comm but \"cs\" is []comm",
    );
    rejects(
        &p,
        "block 1, op 9 (c_allreduce_min): c_allreduce_min does not apply to \"fs\" of type []float",
    );
}
