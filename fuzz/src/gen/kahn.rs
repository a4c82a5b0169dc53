//! [`kahn_program`]: Kahn process networks, whose output and end do not
//! depend on scheduling (see the parent module for the rules that keep it so).

use arbitrary::{Result, Unstructured};
use weft_ir::builder::BlockId;
use weft_ir::pb::{attr, Ints, ProgramDesc, Type};

use super::{Gen, Limits, Scope, GEN_FILE, K};

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
            // for i := 0; i < n; i++ { v, ok := <-c; if !ok { break }; fold; body }
            // Bounded too: two drain loops feeding each other would otherwise
            // ping-pong forever.
            let c = p.reads[u.choose_index(p.reads.len())?].clone();
            let s = scope.clone();
            let max = 2 * g.lim.max_iters + 2;
            g.counted_loop(u, blk, scope, max, |g, u, lb| {
                let mut ls = s;
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
                kahn_block(g, u, lb, &mut ls, p, acc, depth + 1)
            })?;
        }
        7 if deeper => {
            let s = scope.clone();
            let max = g.lim.max_iters;
            g.counted_loop(u, blk, scope, max, |g, u, bb| {
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
