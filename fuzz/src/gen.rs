//! Random well-typed Weft programs, built through `weft_ir`'s builder and
//! driven by `arbitrary::Unstructured` bytes (so libFuzzer's mutations steer
//! the program's shape).
//!
//! Two generators:
//! - [`random_program`]: ints, bools and `chan int`, arithmetic (division and
//!   shifts included, so runtime panics happen), `make_chan` (a negative
//!   capacity now and then), send, receive, close, `select` with and without
//!   `default`, `if`, counted loops, `break`/`continue`, `go`, `print`,
//!   `sleep(0)`, `len`/`cap`, `return`. Anything may deadlock or panic: that
//!   is a value the run returns, never a Rust panic.
//! - [`kahn_program`]: a Kahn process network whose output does not depend
//!   on scheduling: every channel has one writing task and one reading task,
//!   only `main` prints and spawns, no `select` with more than one case, no
//!   `default`, no `len`, no timers, no operation that can panic, and a
//!   channel is closed only by its writer as its last act. Kahn's theorem
//!   (with bounded channels modelled as a credit channel back) makes the
//!   printed output, the exit and even the set of blocked tasks at a
//!   deadlock the same for every schedule, so one worker and several must
//!   agree (the `differential` target).
//!
//! Invariants: every generated program passes `weft_ir::verify` (a failure
//! is a generator or verifier bug, and the targets report it), and every
//! run terminates: loops are counted with a constant bound whose counter no
//! statement can write, drain loops end when their channel is closed or
//! block (deadlock detection then ends the run), and there are no calls.

use arbitrary::{Result, Unstructured};
use weft_ir::builder::{BlockId, ProgramBuilder};
use weft_ir::pb::{attr, Ints, ProgramDesc, Type};

/// Size limits for generated programs.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Ops in the whole program (a soft cap: a statement in progress finishes).
    pub max_ops: usize,
    /// Nesting of blocks (`if`, loops, `select` cases, `go`).
    pub max_depth: usize,
    /// The largest constant bound of a counted loop.
    pub max_iters: i64,
    /// Statements per block.
    pub max_block_stmts: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_ops: 300,
            max_depth: 3,
            max_iters: 4,
            max_block_stmts: 6,
        }
    }
}

/// The source file name generated ops point at.
pub const GEN_FILE: &str = "gen.weft";

/// The most tasks a generated program may have at once when run
/// (`go` inside nested loops multiplies).
pub const MAX_TASKS: usize = 2_000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum K {
    Int,
    Bool,
    Chan,
}

impl K {
    fn ty(self) -> Type {
        match self {
            K::Int => Type::int(),
            K::Bool => Type::bool(),
            K::Chan => Type::chan(Type::int()),
        }
    }
}

/// Variables visible in a block (writable ones only: loop counters stay out).
type Scope = Vec<(String, K)>;

/// Where a statement sits, for `break`, `continue` and `return`.
#[derive(Clone, Copy)]
struct Place {
    depth: usize,
    in_loop: bool,
    breakable: bool,
}

/// The builder plus bookkeeping shared by both generators.
struct Gen {
    b: ProgramBuilder,
    lim: Limits,
    ops: usize,
    line: u32,
}

impl Gen {
    fn new(lim: Limits) -> Gen {
        Gen {
            b: ProgramBuilder::new(),
            lim,
            ops: 0,
            line: 1,
        }
    }

    /// Appends an op with the next source line.
    fn op(
        &mut self,
        blk: BlockId,
        ty: &str,
        ins: &[(&str, Vec<String>)],
        outs: &[(&str, Vec<String>)],
        attrs: Vec<(&str, attr::Value)>,
    ) {
        self.ops += 1;
        self.line += 1;
        let mut o = self.b.op(blk, ty).loc(GEN_FILE, self.line, 2);
        for (slot, args) in ins {
            o = o.input(slot, args.iter().cloned());
        }
        for (slot, args) in outs {
            o = o.output(slot, args.iter().cloned());
        }
        for (n, v) in attrs {
            o = o.attr(n, v);
        }
        o.finish();
    }

    fn fresh(&mut self, blk: BlockId, scope: &mut Scope, k: K) -> String {
        let n = self.b.temp(blk, k.ty());
        scope.push((n.clone(), k));
        n
    }

    fn konst(&mut self, blk: BlockId, scope: &mut Scope, v: i64) -> String {
        let o = self.fresh(blk, scope, K::Int);
        self.op(
            blk,
            "const",
            &[],
            &[("Out", vec![o.clone()])],
            vec![("value", v.into())],
        );
        o
    }

    /// A visible variable of kind `k`, or a fresh zero one (a nil channel
    /// for `K::Chan`) when there is none.
    fn pick(
        &mut self,
        u: &mut Unstructured,
        blk: BlockId,
        scope: &mut Scope,
        k: K,
    ) -> Result<String> {
        let of: Vec<&String> = scope.iter().filter(|v| v.1 == k).map(|v| &v.0).collect();
        if !of.is_empty() {
            return Ok(of[u.choose_index(of.len())?].clone());
        }
        let n = self.fresh(blk, scope, k);
        self.op(blk, "zero", &[], &[("Out", vec![n.clone()])], vec![]);
        Ok(n)
    }

    /// An int to write: an existing variable or a fresh one.
    fn dest(
        &mut self,
        u: &mut Unstructured,
        blk: BlockId,
        scope: &mut Scope,
        k: K,
    ) -> Result<String> {
        if u.ratio(1, 3)? && scope.iter().any(|v| v.1 == k) {
            self.pick(u, blk, scope, k)
        } else {
            Ok(self.fresh(blk, scope, k))
        }
    }

    fn room(&self, u: &Unstructured, depth: usize) -> bool {
        self.ops < self.lim.max_ops && depth < self.lim.max_depth && !u.is_empty()
    }

    /// A counted loop `for i := 0; i < n; i++ { body }` with a fresh counter
    /// that `body` cannot see (so it cannot change it). `body` fills the
    /// body block.
    fn counted_loop(
        &mut self,
        u: &mut Unstructured,
        blk: BlockId,
        scope: &mut Scope,
        body: impl FnOnce(&mut Gen, &mut Unstructured, BlockId) -> Result<()>,
    ) -> Result<()> {
        let iters = u.int_in_range(0..=self.lim.max_iters)?;
        let n = self.konst(blk, scope, iters);
        let i = self.b.temp(blk, Type::int());
        self.op(blk, "zero", &[], &[("Out", vec![i.clone()])], vec![]);
        let c = self.b.temp(blk, Type::bool());
        let cb = self.b.block(blk);
        self.op(
            cb,
            "lt",
            &[("X", vec![i.clone()]), ("Y", vec![n])],
            &[("Out", vec![c.clone()])],
            vec![],
        );
        let bb = self.b.block(blk);
        body(self, u, bb)?;
        let pb = self.b.block(blk);
        let one = self.b.temp(pb, Type::int());
        self.op(
            pb,
            "const",
            &[],
            &[("Out", vec![one.clone()])],
            vec![("value", 1i64.into())],
        );
        self.op(
            pb,
            "add",
            &[("X", vec![i.clone()]), ("Y", vec![one])],
            &[("Out", vec![i])],
            vec![],
        );
        self.op(
            blk,
            "loop",
            &[("Cond", vec![c])],
            &[],
            vec![
                ("cond_block", cb.into()),
                ("body_block", bb.into()),
                ("post_block", pb.into()),
            ],
        );
        Ok(())
    }
}

/// A random program with channels, tasks and select that may deadlock or
/// panic; it always passes `weft_ir::verify` and always terminates.
pub fn random_program(u: &mut Unstructured, lim: Limits) -> Result<ProgramDesc> {
    let mut g = Gen::new(lim);
    let main = g.b.func("main").loc(GEN_FILE, 1, 1).finish();
    let top = Place {
        depth: 0,
        in_loop: false,
        breakable: false,
    };
    // The top level gets twice a block's statements.
    let mut scope = Scope::new();
    for _ in 0..2 {
        random_block_into(&mut g, u, main, &mut scope, top)?;
    }
    Ok(g.b.build())
}

fn random_block(
    g: &mut Gen,
    u: &mut Unstructured,
    blk: BlockId,
    mut scope: Scope,
    at: Place,
) -> Result<()> {
    random_block_into(g, u, blk, &mut scope, at)
}

fn random_block_into(
    g: &mut Gen,
    u: &mut Unstructured,
    blk: BlockId,
    scope: &mut Scope,
    at: Place,
) -> Result<()> {
    let n = u.int_in_range(0..=g.lim.max_block_stmts)?;
    for _ in 0..n {
        if g.ops >= g.lim.max_ops || u.is_empty() {
            break;
        }
        random_stmt(g, u, blk, scope, at)?;
    }
    Ok(())
}

fn random_stmt(
    g: &mut Gen,
    u: &mut Unstructured,
    blk: BlockId,
    scope: &mut Scope,
    at: Place,
) -> Result<()> {
    let inner = Place {
        depth: at.depth + 1,
        ..at
    };
    match u.int_in_range(0..=17u8)? {
        0 => {
            let v = if u.ratio(1, 8)? {
                u.arbitrary()?
            } else {
                u.int_in_range(-3..=70)?
            };
            g.konst(blk, scope, v);
        }
        1 | 2 => {
            let ty = *u.choose(&[
                "add", "sub", "mul", "div", "mod", "and", "or", "xor", "shl", "shr",
            ])?;
            let x = g.pick(u, blk, scope, K::Int)?;
            let y = g.pick(u, blk, scope, K::Int)?;
            let o = g.dest(u, blk, scope, K::Int)?;
            g.op(
                blk,
                ty,
                &[("X", vec![x]), ("Y", vec![y])],
                &[("Out", vec![o])],
                vec![],
            );
        }
        3 => {
            // Channels compare by identity (`==`, `!=` only).
            let (k, ty) = if u.ratio(1, 4)? {
                (K::Chan, *u.choose(&["eq", "ne"])?)
            } else {
                (K::Int, *u.choose(&["eq", "ne", "lt", "le", "gt", "ge"])?)
            };
            let x = g.pick(u, blk, scope, k)?;
            let y = g.pick(u, blk, scope, k)?;
            let o = g.fresh(blk, scope, K::Bool);
            g.op(
                blk,
                ty,
                &[("X", vec![x]), ("Y", vec![y])],
                &[("Out", vec![o])],
                vec![],
            );
        }
        4 => {
            let cap = if u.ratio(1, 16)? {
                -1
            } else {
                u.int_in_range(0..=3)?
            };
            let c = g.konst(blk, scope, cap);
            let o = g.dest(u, blk, scope, K::Chan)?;
            g.op(
                blk,
                "make_chan",
                &[("Cap", vec![c])],
                &[("Out", vec![o])],
                vec![],
            );
        }
        5 | 6 => {
            let c = g.pick(u, blk, scope, K::Chan)?;
            let v = g.pick(u, blk, scope, K::Int)?;
            g.op(
                blk,
                "send",
                &[("Chan", vec![c]), ("Value", vec![v])],
                &[],
                vec![],
            );
        }
        7 | 8 => {
            let c = g.pick(u, blk, scope, K::Chan)?;
            let mut outs = Vec::new();
            if u.arbitrary()? {
                outs.push(("Out", vec![g.dest(u, blk, scope, K::Int)?]));
            }
            if u.arbitrary()? {
                outs.push(("Ok", vec![g.dest(u, blk, scope, K::Bool)?]));
            }
            g.op(blk, "recv", &[("Chan", vec![c])], &outs, vec![]);
        }
        9 => {
            let c = g.pick(u, blk, scope, K::Chan)?;
            g.op(blk, "close", &[("Chan", vec![c])], &[], vec![]);
        }
        10 | 11 if g.room(u, at.depth) => random_select(g, u, blk, scope, at)?,
        12 if g.room(u, at.depth) => {
            let c = g.pick(u, blk, scope, K::Bool)?;
            let t = g.b.block(blk);
            random_block(g, u, t, scope.clone(), inner)?;
            let mut attrs = vec![("then_block", t.into())];
            if u.arbitrary()? {
                let e = g.b.block(blk);
                random_block(g, u, e, scope.clone(), inner)?;
                attrs.push(("else_block", e.into()));
            }
            g.op(blk, "if", &[("Cond", vec![c])], &[], attrs);
        }
        13 if g.room(u, at.depth) => {
            let s = scope.clone();
            let place = Place {
                depth: at.depth + 1,
                in_loop: true,
                breakable: true,
            };
            g.counted_loop(u, blk, scope, |g, u, bb| random_block(g, u, bb, s, place))?;
        }
        14 if g.room(u, at.depth) => {
            let gb = g.b.block(blk);
            let caps: Vec<String> = scope.iter().map(|v| v.0.clone()).collect();
            let place = Place {
                depth: at.depth + 1,
                in_loop: false,
                breakable: false,
            };
            random_block(g, u, gb, scope.clone(), place)?;
            g.op(
                blk,
                "go",
                &[("Captures", caps)],
                &[],
                vec![("block", gb.into())],
            );
        }
        15 => {
            let n = u.int_in_range(0..=3)?;
            let mut args = Vec::new();
            for _ in 0..n {
                if scope.is_empty() {
                    break;
                }
                args.push(scope[u.choose_index(scope.len())?].0.clone());
            }
            g.op(blk, "print", &[("Args", args)], &[], vec![]);
        }
        16 => {
            let c = g.pick(u, blk, scope, K::Chan)?;
            let ty = if u.arbitrary()? { "len" } else { "cap" };
            let o = g.dest(u, blk, scope, K::Int)?;
            g.op(blk, ty, &[("X", vec![c])], &[("Out", vec![o])], vec![]);
        }
        _ => match u.int_in_range(0..=9u8)? {
            0..=3 if at.breakable => g.op(blk, "break", &[], &[], vec![]),
            4..=5 if at.in_loop => g.op(blk, "continue", &[], &[], vec![]),
            6 => g.op(blk, "return", &[], &[], vec![]),
            _ => {
                let z = g.konst(blk, scope, 0);
                g.op(blk, "sleep", &[("Ms", vec![z])], &[], vec![]);
            }
        },
    }
    Ok(())
}

fn random_select(
    g: &mut Gen,
    u: &mut Unstructured,
    blk: BlockId,
    scope: &mut Scope,
    at: Place,
) -> Result<()> {
    let n = u.int_in_range(0..=3usize)?;
    let (mut chans, mut values, mut recv, mut oks, mut kinds, mut cases) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    let mut case_scopes = Vec::new();
    for _ in 0..n {
        chans.push(g.pick(u, blk, scope, K::Chan)?);
        let mut cs = scope.clone();
        if u.arbitrary()? {
            kinds.push(1i64);
            values.push(g.pick(u, blk, scope, K::Int)?);
            recv.push("_".to_string());
            oks.push("_".to_string());
        } else {
            kinds.push(0);
            let (r, ok) = (g.b.temp(blk, Type::int()), g.b.temp(blk, Type::bool()));
            cs.push((r.clone(), K::Int));
            cs.push((ok.clone(), K::Bool));
            recv.push(r);
            oks.push(ok);
        }
        case_scopes.push(cs);
    }
    let place = Place {
        depth: at.depth + 1,
        in_loop: at.in_loop,
        breakable: true,
    };
    for cs in case_scopes {
        let cb = g.b.block(blk);
        random_block(g, u, cb, cs, place)?;
        cases.push(cb);
    }
    let mut attrs = vec![
        ("kinds", attr::Value::Ints(Ints { v: kinds })),
        ("cases", cases.into()),
    ];
    if u.arbitrary()? {
        let d = g.b.block(blk);
        random_block(g, u, d, scope.clone(), place)?;
        attrs.push(("default_block", d.into()));
    }
    let outs = if recv.iter().all(|r| r == "_") {
        vec![]
    } else {
        vec![("Recv", recv), ("Oks", oks)]
    };
    g.op(
        blk,
        "select",
        &[("Chans", chans), ("Values", values)],
        &outs,
        attrs,
    );
    Ok(())
}

/// One process of a Kahn network: the channels it alone writes and reads.
struct Proc {
    writes: Vec<String>,
    reads: Vec<String>,
    prints: bool,
}

/// A deterministic program (see the module comment): `main` makes the
/// channels, starts the other processes as `go` blocks, then runs its own
/// process; only `main` prints.
pub fn kahn_program(u: &mut Unstructured, lim: Limits) -> Result<ProgramDesc> {
    let mut g = Gen::new(lim);
    let main = g.b.func("main").loc(GEN_FILE, 1, 1).finish();
    let mut scope = Scope::new();
    let nchan = u.int_in_range(1..=4usize)?;
    let ntask = u.int_in_range(0..=3usize)?;
    let mut procs: Vec<Proc> = (0..=ntask)
        .map(|t| Proc {
            writes: Vec::new(),
            reads: Vec::new(),
            prints: t == 0,
        })
        .collect();
    let mut chans = Vec::new();
    for _ in 0..nchan {
        let cap = u.int_in_range(0..=2)?;
        let c = g.konst(main, &mut scope, cap);
        let ch = g.b.temp(main, K::Chan.ty());
        g.op(
            main,
            "make_chan",
            &[("Cap", vec![c])],
            &[("Out", vec![ch.clone()])],
            vec![],
        );
        procs[u.choose_index(ntask + 1)?].writes.push(ch.clone());
        procs[u.choose_index(ntask + 1)?].reads.push(ch.clone());
        chans.push(ch);
    }
    // Which channels each writer closes at its end.
    let closes: Vec<Vec<String>> = procs
        .iter()
        .map(|p| {
            p.writes
                .iter()
                .filter(|_| u.arbitrary().unwrap_or(false))
                .cloned()
                .collect()
        })
        .collect();
    for (t, p) in procs.iter().enumerate().skip(1) {
        let gb = g.b.block(main);
        kahn_body(&mut g, u, gb, p, &closes[t])?;
        g.op(
            main,
            "go",
            &[("Captures", chans.clone())],
            &[],
            vec![("block", gb.into())],
        );
    }
    let mb = g.b.block(main);
    kahn_body(&mut g, u, mb, &procs[0], &closes[0])?;
    g.op(main, "region", &[], &[], vec![("block", mb.into())]);
    Ok(g.b.build())
}

fn kahn_body(
    g: &mut Gen,
    u: &mut Unstructured,
    blk: BlockId,
    p: &Proc,
    closes: &[String],
) -> Result<()> {
    let mut scope = Scope::new();
    let acc = g.konst(blk, &mut scope, 1);
    kahn_block(g, u, blk, &mut scope, p, &acc, 0)?;
    if p.prints {
        g.op(blk, "print", &[("Args", vec![acc])], &[], vec![]);
    }
    for c in closes {
        g.op(blk, "close", &[("Chan", vec![c.clone()])], &[], vec![]);
    }
    Ok(())
}

fn kahn_block(
    g: &mut Gen,
    u: &mut Unstructured,
    blk: BlockId,
    scope: &mut Scope,
    p: &Proc,
    acc: &str,
    depth: usize,
) -> Result<()> {
    let n = u.int_in_range(0..=g.lim.max_block_stmts)?;
    for _ in 0..n {
        if g.ops >= g.lim.max_ops || u.is_empty() {
            break;
        }
        kahn_stmt(g, u, blk, scope, p, acc, depth)?;
    }
    Ok(())
}

/// `acc = acc * 31 + v`: folds a received value into the accumulator.
fn fold(g: &mut Gen, blk: BlockId, scope: &mut Scope, acc: &str, v: &str) {
    let k = g.konst(blk, scope, 31);
    let a = acc.to_string();
    g.op(
        blk,
        "mul",
        &[("X", vec![a.clone()]), ("Y", vec![k])],
        &[("Out", vec![a.clone()])],
        vec![],
    );
    g.op(
        blk,
        "add",
        &[("X", vec![a.clone()]), ("Y", vec![v.to_string()])],
        &[("Out", vec![a])],
        vec![],
    );
}

fn kahn_stmt(
    g: &mut Gen,
    u: &mut Unstructured,
    blk: BlockId,
    scope: &mut Scope,
    p: &Proc,
    acc: &str,
    depth: usize,
) -> Result<()> {
    let deeper = depth + 1 < g.lim.max_depth && g.ops < g.lim.max_ops;
    match u.int_in_range(0..=9u8)? {
        0 => {
            let v = u.int_in_range(-5..=50)?;
            g.konst(blk, scope, v);
        }
        1 => {
            let ty = *u.choose(&["add", "sub", "mul", "xor", "and", "or"])?;
            let x = if u.arbitrary()? {
                acc.to_string()
            } else {
                g.pick(u, blk, scope, K::Int)?
            };
            let y = g.pick(u, blk, scope, K::Int)?;
            let o = if u.arbitrary()? {
                acc.to_string()
            } else {
                g.fresh(blk, scope, K::Int)
            };
            g.op(
                blk,
                ty,
                &[("X", vec![x]), ("Y", vec![y])],
                &[("Out", vec![o])],
                vec![],
            );
        }
        2 | 3 if !p.writes.is_empty() => {
            let c = p.writes[u.choose_index(p.writes.len())?].clone();
            let v = if u.arbitrary()? {
                acc.to_string()
            } else {
                g.pick(u, blk, scope, K::Int)?
            };
            if u.ratio(1, 4)? {
                // A one-case select is an ordinary blocking send.
                let cb = g.b.block(blk);
                g.op(
                    blk,
                    "select",
                    &[("Chans", vec![c]), ("Values", vec![v])],
                    &[],
                    vec![
                        ("kinds", attr::Value::Ints(Ints { v: vec![1] })),
                        ("cases", vec![cb].into()),
                    ],
                );
            } else {
                g.op(
                    blk,
                    "send",
                    &[("Chan", vec![c]), ("Value", vec![v])],
                    &[],
                    vec![],
                );
            }
        }
        4 | 5 if !p.reads.is_empty() => {
            let c = p.reads[u.choose_index(p.reads.len())?].clone();
            let (v, ok) = (g.fresh(blk, scope, K::Int), g.fresh(blk, scope, K::Bool));
            if u.ratio(1, 4)? {
                let cb = g.b.block(blk);
                g.op(
                    blk,
                    "select",
                    &[("Chans", vec![c]), ("Values", vec![])],
                    &[("Recv", vec![v.clone()]), ("Oks", vec![ok.clone()])],
                    vec![
                        ("kinds", attr::Value::Ints(Ints { v: vec![0] })),
                        ("cases", vec![cb].into()),
                    ],
                );
            } else {
                g.op(
                    blk,
                    "recv",
                    &[("Chan", vec![c])],
                    &[("Out", vec![v.clone()]), ("Ok", vec![ok.clone()])],
                    vec![],
                );
            }
            fold(g, blk, scope, acc, &v);
            if p.prints {
                g.op(blk, "print", &[("Args", vec![v, ok])], &[], vec![]);
            }
        }
        6 if !p.reads.is_empty() && deeper => {
            // for v := range c { fold; body }
            let c = p.reads[u.choose_index(p.reads.len())?].clone();
            let lb = g.b.block(blk);
            let mut ls = scope.clone();
            let (v, ok) = (g.fresh(lb, &mut ls, K::Int), g.fresh(lb, &mut ls, K::Bool));
            g.op(
                lb,
                "recv",
                &[("Chan", vec![c])],
                &[("Out", vec![v.clone()]), ("Ok", vec![ok.clone()])],
                vec![],
            );
            let not_ok = g.b.temp(lb, Type::bool());
            g.op(
                lb,
                "not",
                &[("X", vec![ok])],
                &[("Out", vec![not_ok.clone()])],
                vec![],
            );
            let tb = g.b.block(lb);
            g.op(tb, "break", &[], &[], vec![]);
            g.op(
                lb,
                "if",
                &[("Cond", vec![not_ok])],
                &[],
                vec![("then_block", tb.into())],
            );
            fold(g, lb, &mut ls, acc, &v);
            if p.prints {
                g.op(lb, "print", &[("Args", vec![v])], &[], vec![]);
            }
            kahn_block(g, u, lb, &mut ls, p, acc, depth + 1)?;
            g.op(blk, "loop", &[], &[], vec![("body_block", lb.into())]);
        }
        7 if deeper => {
            let s = scope.clone();
            g.counted_loop(u, blk, scope, |g, u, bb| {
                let mut s = s;
                kahn_block(g, u, bb, &mut s, p, acc, depth + 1)
            })?;
        }
        8 if deeper => {
            let x = g.pick(u, blk, scope, K::Int)?;
            let y = g.pick(u, blk, scope, K::Int)?;
            let c = g.fresh(blk, scope, K::Bool);
            g.op(
                blk,
                "lt",
                &[("X", vec![x]), ("Y", vec![y])],
                &[("Out", vec![c.clone()])],
                vec![],
            );
            let (t, e) = (g.b.block(blk), g.b.block(blk));
            kahn_block(g, u, t, &mut scope.clone(), p, acc, depth + 1)?;
            kahn_block(g, u, e, &mut scope.clone(), p, acc, depth + 1)?;
            g.op(
                blk,
                "if",
                &[("Cond", vec![c])],
                &[],
                vec![("then_block", t.into()), ("else_block", e.into())],
            );
        }
        _ => {
            if p.prints && !scope.is_empty() {
                let v = scope[u.choose_index(scope.len())?].0.clone();
                g.op(blk, "print", &[("Args", vec![v])], &[], vec![]);
            }
        }
    }
    Ok(())
}
