//! Property: random *well-typed* programs built with `ProgramBuilder` (nested
//! `if`, `loop`, `go` blocks; arithmetic, comparisons, lists, channels) pass
//! the verifier and round-trip; and deleting the declaration of a variable
//! they use makes the verifier reject them naming that variable. This checks
//! the verifier neither over-rejects valid programs nor misses a scope error.

use proptest::prelude::*;
use weft_ir::builder::{BlockId, ProgramBuilder};
use weft_ir::pb::{ProgramDesc, Type};
use weft_ir::{decode, dump, encode, verify};

/// One statement; `usize` fields pick a visible variable of the right type.
#[derive(Clone, Debug)]
enum Stmt {
    ConstInt(i64),
    ConstStr(String),
    Arith(u8, usize, usize),
    Less(usize, usize),
    Not(usize),
    ListOf(usize, usize),
    Append(usize, usize),
    MakeChan,
    Send(usize, usize),
    Recv(usize),
    Print(Vec<usize>),
    If(usize, Vec<Stmt>, Vec<Stmt>),
    Loop(Vec<Stmt>),
    Go(Vec<Stmt>),
}

fn stmts() -> impl Strategy<Value = Vec<Stmt>> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(Stmt::ConstInt),
        "[a-z ]{0,6}".prop_map(Stmt::ConstStr),
        (0u8..3, any::<usize>(), any::<usize>()).prop_map(|(o, a, b)| Stmt::Arith(o, a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Stmt::Less(a, b)),
        any::<usize>().prop_map(Stmt::Not),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Stmt::ListOf(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Stmt::Append(a, b)),
        Just(Stmt::MakeChan),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Stmt::Send(a, b)),
        any::<usize>().prop_map(Stmt::Recv),
        prop::collection::vec(any::<usize>(), 0..3).prop_map(Stmt::Print),
    ];
    let stmt = leaf.prop_recursive(3, 24, 4, |inner| {
        let body = prop::collection::vec(inner, 0..4);
        prop_oneof![
            (any::<usize>(), body.clone(), body.clone()).prop_map(|(c, t, e)| Stmt::If(c, t, e)),
            body.clone().prop_map(Stmt::Loop),
            body.prop_map(Stmt::Go),
        ]
    });
    prop::collection::vec(stmt, 0..12)
}

struct Gen {
    b: ProgramBuilder,
}

/// Variables visible in a block, with their types.
type Scope = Vec<(String, Type)>;

impl Gen {
    /// A visible variable of type `t` (declaring and initialising a fresh
    /// one if there is none).
    fn pick(&mut self, blk: BlockId, scope: &mut Scope, t: &Type, i: usize) -> String {
        let of_type: Vec<&String> = scope
            .iter()
            .filter(|(_, vt)| vt == t)
            .map(|(n, _)| n)
            .collect();
        if !of_type.is_empty() {
            return of_type[i % of_type.len()].clone();
        }
        let n = self.b.temp(blk, t.clone());
        self.b.op(blk, "zero").output("Out", [n.clone()]).finish();
        scope.push((n.clone(), t.clone()));
        n
    }

    fn fresh(&mut self, blk: BlockId, scope: &mut Scope, t: Type) -> String {
        let n = self.b.temp(blk, t.clone());
        scope.push((n.clone(), t));
        n
    }

    fn block(&mut self, blk: BlockId, mut scope: Scope, body: &[Stmt], in_loop: bool) {
        let (int, boolean, s) = (Type::int(), Type::bool(), Type::string());
        let (li, ch) = (Type::list(Type::int()), Type::chan(Type::int()));
        for st in body {
            match st {
                Stmt::ConstInt(v) => {
                    let o = self.fresh(blk, &mut scope, int.clone());
                    self.b
                        .op(blk, "const")
                        .output("Out", [o])
                        .attr("value", *v)
                        .finish();
                }
                Stmt::ConstStr(v) => {
                    let o = self.fresh(blk, &mut scope, s.clone());
                    self.b
                        .op(blk, "const")
                        .output("Out", [o])
                        .attr("value", v.as_str())
                        .finish();
                }
                Stmt::Arith(op, a, c) => {
                    let (x, y) = (
                        self.pick(blk, &mut scope, &int, *a),
                        self.pick(blk, &mut scope, &int, *c),
                    );
                    let ty = ["add", "sub", "mul"][*op as usize];
                    self.b
                        .op(blk, ty)
                        .input("X", [x.clone()])
                        .input("Y", [y])
                        .output("Out", [x])
                        .finish();
                }
                Stmt::Less(a, c) => {
                    let (x, y) = (
                        self.pick(blk, &mut scope, &int, *a),
                        self.pick(blk, &mut scope, &int, *c),
                    );
                    let o = self.fresh(blk, &mut scope, boolean.clone());
                    self.b
                        .op(blk, "lt")
                        .input("X", [x])
                        .input("Y", [y])
                        .output("Out", [o])
                        .finish();
                }
                Stmt::Not(a) => {
                    let x = self.pick(blk, &mut scope, &boolean, *a);
                    self.b
                        .op(blk, "not")
                        .input("X", [x.clone()])
                        .output("Out", [x])
                        .finish();
                }
                Stmt::ListOf(a, c) => {
                    let (x, y) = (
                        self.pick(blk, &mut scope, &int, *a),
                        self.pick(blk, &mut scope, &int, *c),
                    );
                    let o = self.fresh(blk, &mut scope, li.clone());
                    self.b
                        .op(blk, "list_new")
                        .input("Elems", [x, y])
                        .output("Out", [o])
                        .finish();
                }
                Stmt::Append(a, c) => {
                    let (l, y) = (
                        self.pick(blk, &mut scope, &li, *a),
                        self.pick(blk, &mut scope, &int, *c),
                    );
                    self.b
                        .op(blk, "append")
                        .input("X", [l.clone()])
                        .input("Elems", [y])
                        .output("Out", [l])
                        .finish();
                }
                Stmt::MakeChan => {
                    let o = self.fresh(blk, &mut scope, ch.clone());
                    self.b.op(blk, "make_chan").output("Out", [o]).finish();
                }
                Stmt::Send(a, c) => {
                    let (k, v) = (
                        self.pick(blk, &mut scope, &ch, *a),
                        self.pick(blk, &mut scope, &int, *c),
                    );
                    self.b
                        .op(blk, "send")
                        .input("Chan", [k])
                        .input("Value", [v])
                        .finish();
                }
                Stmt::Recv(a) => {
                    let k = self.pick(blk, &mut scope, &ch, *a);
                    let (o, ok) = (
                        self.fresh(blk, &mut scope, int.clone()),
                        self.fresh(blk, &mut scope, boolean.clone()),
                    );
                    self.b
                        .op(blk, "recv")
                        .input("Chan", [k])
                        .output("Out", [o])
                        .output("Ok", [ok])
                        .finish();
                }
                Stmt::Print(picks) => {
                    let args: Vec<String> = picks
                        .iter()
                        .filter_map(|i| scope.get(i % scope.len().max(1)).map(|v| v.0.clone()))
                        .collect();
                    self.b.op(blk, "print").input("Args", args).finish();
                }
                Stmt::If(c, then, els) => {
                    let cond = self.pick(blk, &mut scope, &boolean, *c);
                    let (t, e) = (self.b.block(blk), self.b.block(blk));
                    self.block(t, scope.clone(), then, in_loop);
                    self.block(e, scope.clone(), els, in_loop);
                    self.b
                        .op(blk, "if")
                        .input("Cond", [cond])
                        .attr("then_block", t)
                        .attr("else_block", e)
                        .finish();
                }
                Stmt::Loop(body) => {
                    let l = self.b.block(blk);
                    self.block(l, scope.clone(), body, true);
                    self.b.op(l, "break").finish();
                    self.b.op(blk, "loop").attr("body_block", l).finish();
                }
                Stmt::Go(body) => {
                    let g = self.b.block(blk);
                    self.block(g, scope.clone(), body, false);
                    let captures: Vec<String> = scope.iter().map(|v| v.0.clone()).collect();
                    self.b
                        .op(blk, "go")
                        .input("Captures", captures)
                        .attr("block", g)
                        .finish();
                }
            }
        }
        if in_loop && !body.is_empty() {
            self.b.op(blk, "continue").finish();
        }
    }
}

fn build(body: &[Stmt]) -> ProgramDesc {
    let mut g = Gen {
        b: ProgramBuilder::new(),
    };
    let main = g.b.func("main").loc("gen.weft", 1, 1).finish();
    g.block(main, Vec::new(), body, false);
    g.b.build()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    #[test]
    fn well_typed_programs_verify_and_round_trip(body in stmts()) {
        let p = build(&body);
        if let Err(e) = verify(&p) {
            return Err(TestCaseError::fail(format!("{e}\n\n{}", dump(&p))));
        }
        prop_assert_eq!(&decode(&encode(&p)).unwrap(), &p);
    }

    #[test]
    fn removing_a_used_declaration_is_caught(body in stmts(), pick in any::<prop::sample::Index>()) {
        let mut p = build(&body);
        let used: Vec<(usize, usize)> = p.blocks.iter().enumerate().flat_map(|(b, blk)| {
            (0..blk.vars.len()).map(move |v| (b, v))
        }).filter(|&(b, v)| {
            let name = &p.blocks[b].vars[v].name;
            p.blocks.iter().flat_map(|blk| &blk.ops).any(|op| op.inputs.iter().chain(&op.outputs).any(|s| s.args.contains(name)))
        }).collect();
        prop_assume!(!used.is_empty());
        let (b, v) = used[pick.index(used.len())];
        let name = p.blocks[b].vars.remove(v).name;
        let err = verify(&p).expect_err("a use without a declaration");
        let want = format!("variable {name:?} is not declared in this block or an ancestor");
        prop_assert!(err.issues.iter().any(|i| i.kind.to_string() == want), "{}", err);
    }
}
