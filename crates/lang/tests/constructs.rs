//! Every construct of docs/language.md parses, checks and lowers: `programs/all_constructs.weft`
//! must use every statement and expression form, operator and builtin (checked
//! by walking its syntax tree), and it, like every other test program and
//! every golden file that compiles, lowers to an IR program that passes
//! `weft_ir::verify` and survives an encode/decode round trip.

use std::collections::BTreeSet;
use std::path::Path;

use weft_lang::ast::*;
use weft_lang::check::{Builtin, Res};

#[derive(Default)]
struct Seen {
    kinds: BTreeSet<String>,
}

impl Seen {
    fn add(&mut self, k: impl Into<String>) {
        self.kinds.insert(k.into());
    }

    fn stmts(&mut self, ss: &[Stmt]) {
        for s in ss {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        let name = format!("{:?}", s.kind);
        self.add(format!(
            "stmt:{}",
            name.split([' ', '(', '{']).next().unwrap_or("")
        ));
        match &s.kind {
            StmtKind::Var { values, .. } | StmtKind::Define { values, .. } => {
                values.iter().for_each(|e| self.expr(e))
            }
            StmtKind::Const(specs) => specs.iter().for_each(|c| self.expr(&c.value)),
            StmtKind::Assign { lhs, op, rhs } => {
                if let Some(op) = op {
                    self.add(format!("assign:{}", op.symbol()));
                }
                lhs.iter().chain(rhs).for_each(|e| self.expr(e));
            }
            StmtKind::IncDec { target, inc } => {
                self.add(format!("incdec:{inc}"));
                self.expr(target);
            }
            StmtKind::Expr(e) | StmtKind::GoCall(e, None) | StmtKind::Defer(e) => self.expr(e),
            StmtKind::GoCall(e, Some(on)) => {
                self.add("go:on");
                self.expr(e);
                self.expr(on);
            }
            StmtKind::Send { chan, value } => {
                self.expr(chan);
                self.expr(value);
            }
            StmtKind::GoBlock(b, on) => {
                if let Some(on) = on {
                    self.add("goblock:on");
                    self.expr(on);
                }
                self.stmts(&b.stmts)
            }
            StmtKind::Block(b) => self.stmts(&b.stmts),
            StmtKind::Return(v) => {
                self.add(format!("return:{}", !v.is_empty()));
                v.iter().for_each(|e| self.expr(e));
            }
            StmtKind::Break(l) => self.add(format!("break:{}", l.is_some())),
            StmtKind::Continue(l) => self.add(format!("continue:{}", l.is_some())),
            StmtKind::If {
                init,
                cond,
                then,
                els,
            } => {
                self.add(format!("if:init={}:else={}", init.is_some(), els.is_some()));
                init.iter().for_each(|s| self.stmt(s));
                self.expr(cond);
                self.stmts(&then.stmts);
                els.iter().for_each(|s| self.stmt(s));
            }
            StmtKind::Switch { init, tag, cases } => {
                self.add(format!(
                    "switch:init={}:tag={}",
                    init.is_some(),
                    tag.is_some()
                ));
                init.iter().for_each(|s| self.stmt(s));
                tag.iter().for_each(|e| self.expr(e));
                for c in cases {
                    self.add(format!(
                        "case:default={}:n={}",
                        c.is_default,
                        c.exprs.len().min(2)
                    ));
                    c.exprs.iter().for_each(|e| self.expr(e));
                    self.stmts(&c.body);
                }
            }
            StmtKind::Select(cases) => {
                self.add(format!("select:empty={}", cases.is_empty()));
                for c in cases {
                    let k = match &c.comm {
                        Comm::Default => "default".to_string(),
                        Comm::Send { .. } => "send".into(),
                        Comm::Recv {
                            lhs: RecvLhs::None, ..
                        } => "recv".into(),
                        Comm::Recv {
                            lhs: RecvLhs::Define(n),
                            ..
                        } => format!("define{}", n.len()),
                        Comm::Recv {
                            lhs: RecvLhs::Assign(t),
                            ..
                        } => {
                            let kinds: Vec<String> = t
                                .iter()
                                .map(|e| {
                                    format!("{:?}", e.kind)
                                        .split(['(', ' '])
                                        .next()
                                        .unwrap_or("")
                                        .to_string()
                                })
                                .collect();
                            format!("assign{}:{}", t.len(), kinds.join(","))
                        }
                    };
                    self.add(format!("selectcase:{k}"));
                    self.stmts(&c.body);
                }
            }
            StmtKind::For {
                init,
                cond,
                post,
                body,
            } => {
                self.add(format!(
                    "for:{}:{}:{}",
                    init.is_some(),
                    cond.is_some(),
                    post.is_some()
                ));
                self.stmts(&body.stmts);
            }
            StmtKind::ForRange {
                key,
                value,
                expr,
                body,
            } => {
                self.add(format!("range:{}:{}", key.is_some(), value.is_some()));
                self.expr(expr);
                self.stmts(&body.stmts);
            }
            StmtKind::Labeled { stmt, .. } => {
                let inner = format!("{:?}", stmt.kind);
                self.add(format!(
                    "label:{}",
                    inner.split([' ', '(', '{']).next().unwrap_or("")
                ));
                self.stmt(stmt);
            }
            StmtKind::Empty => {}
        }
    }

    fn expr(&mut self, e: &Expr) {
        let name = format!("{:?}", e.kind);
        self.add(format!(
            "expr:{}",
            name.split([' ', '(', '{']).next().unwrap_or("")
        ));
        match &e.kind {
            ExprKind::Paren(x) => self.expr(x),
            ExprKind::Unary(op, x) => {
                self.add(format!("unary:{op:?}"));
                self.expr(x);
            }
            ExprKind::Binary(op, x, y) => {
                self.add(format!("binary:{}", op.symbol()));
                self.expr(x);
                self.expr(y);
            }
            ExprKind::Call { func, args, spread } => {
                if let ExprKind::Ident(n) = &func.kind {
                    self.add(format!("call:{n}"));
                }
                if *spread {
                    self.add("spread");
                }
                args.iter().for_each(|a| self.expr(a));
            }
            ExprKind::Index(x, i) => {
                self.expr(x);
                self.expr(i);
            }
            ExprKind::Slice { x, lo, hi } => {
                self.add(format!("slice:{}:{}", lo.is_some(), hi.is_some()));
                self.expr(x);
            }
            ExprKind::Field(x, _) => self.expr(x),
            ExprKind::StructLit { elems, .. }
            | ExprKind::ListLit { elems, .. }
            | ExprKind::Elided(elems) => {
                if let Some(first) = elems.first() {
                    self.add(format!("elems:keyed={}", first.key.is_some()));
                }
                elems.iter().for_each(|el| self.expr(&el.value));
            }
            ExprKind::MapLit { entries, .. } => {
                for (k, v) in entries {
                    self.expr(k);
                    self.expr(v);
                }
            }
            ExprKind::FuncLit(f) => self.stmts(&f.body.stmts),
            _ => {}
        }
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).expect("read test program")
}

#[test]
fn all_constructs_uses_every_form() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/all_constructs.weft");
    let src = read(&path);
    let (tree, info) = weft_lang::analyze("all_constructs.weft", &src)
        .unwrap_or_else(|d| panic!("{}", d.render(&src)));
    let mut seen = Seen::default();
    for d in &tree.decls {
        match d {
            Decl::Func(f) => seen.stmts(&f.body.stmts),
            Decl::Const(c) => seen.expr(&c.value),
            Decl::Type(_) => seen.add("decl:type"),
        }
    }
    let mut want: Vec<String> = vec![];
    for s in [
        "Var", "Const", "Define", "Assign", "IncDec", "Expr", "Send", "GoCall", "GoBlock",
        "Return", "Break", "Continue", "Block", "If", "Switch", "Select", "For", "ForRange",
        "Labeled", "Defer",
    ] {
        want.push(format!("stmt:{s}"));
    }
    for e in [
        "Ident",
        "Int",
        "Float",
        "Str",
        "Bool",
        "Nil",
        "Paren",
        "Unary",
        "Binary",
        "Call",
        "Index",
        "Slice",
        "Field",
        "StructLit",
        "ListLit",
        "Elided",
        "Type",
        "MapLit",
        "FuncLit",
    ] {
        want.push(format!("expr:{e}"));
    }
    for op in [
        "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "&&", "||", "==", "!=", "<", "<=", ">",
        ">=",
    ] {
        want.push(format!("binary:{op}"));
    }
    for op in ["Neg", "Pos", "Not", "BitNot", "Recv"] {
        want.push(format!("unary:{op}"));
    }
    for op in ["+", "-", "*", "/", "%"] {
        want.push(format!("assign:{op}"));
    }
    want.extend(
        [
            "incdec:true",
            "incdec:false",
            "return:true",
            "return:false",
            "break:true",
            "break:false",
            "continue:true",
            "continue:false",
            "if:init=true:else=true",
            "if:init=false:else=false",
            "switch:init=true:tag=true",
            "switch:init=false:tag=false",
            "switch:init=false:tag=true",
            "case:default=true:n=0",
            "case:default=false:n=2",
            "select:empty=true",
            "selectcase:default",
            "selectcase:send",
            "selectcase:recv",
            "selectcase:define1",
            "selectcase:define2",
            "selectcase:assign1:Ident",
            "selectcase:assign2:Ident,Ident",
            "selectcase:assign1:Field",
            "selectcase:assign1:Index",
            "for:false:false:false",
            "for:false:true:false",
            "for:true:true:true",
            "range:true:true",
            "range:true:false",
            "range:false:false",
            "label:For",
            "label:Switch",
            "label:Select",
            "slice:true:true",
            "slice:false:true",
            "slice:true:false",
            "slice:false:false",
            "elems:keyed=true",
            "elems:keyed=false",
            "spread",
            "decl:type",
            "go:on",
            "goblock:on",
        ]
        .map(String::from),
    );
    for b in Builtin::ALL {
        want.push(format!("call:{}", b.name()));
    }
    let missing: Vec<&String> = want.iter().filter(|w| !seen.kinds.contains(*w)).collect();
    assert!(missing.is_empty(), "all_constructs.weft lacks {missing:?}");
    // every builtin call resolved to the builtin (none shadowed here)
    let builtins: BTreeSet<&str> = info
        .uses
        .values()
        .filter_map(|r| match r {
            Res::Builtin(b) => Some(b.name()),
            _ => None,
        })
        .collect();
    assert_eq!(builtins.len(), Builtin::ALL.len());
}

/// Every test program and every golden file that compiles lowers to a verified program.
#[test]
fn every_program_lowers_and_verifies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = Vec::new();
    let mut dirs = vec![root.join("programs"), root.join("golden")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "weft") {
                files.push(p);
            }
        }
    }
    let mut lowered = 0;
    for path in &files {
        let text = read(path);
        let src = text.split("/* expected output:\n").next().unwrap_or("");
        let in_programs = path.parent().is_some_and(|p| p.ends_with("programs"));
        match weft_lang::compile(&path.display().to_string(), src) {
            Ok(program) => {
                weft_ir::verify(&program).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let back = weft_ir::decode(&weft_ir::encode(&program)).expect("decode");
                assert_eq!(back, program);
                assert!(
                    program
                        .blocks
                        .iter()
                        .flat_map(|b| &b.ops)
                        .all(|op| op.loc.as_ref().is_some_and(|l| l.line > 0 && l.col > 0)),
                    "{}: an op without a location",
                    path.display()
                );
                lowered += 1;
            }
            Err(d) => assert!(!in_programs, "{}", d.render(src)),
        }
    }
    assert!(lowered >= 12, "only {lowered} programs lowered");
}
