//! [`random_program`]: programs with ints, bools and `chan int` that may
//! block, deadlock or panic (see the parent module for the promises).

use arbitrary::{Result, Unstructured};
use weft_ir::builder::BlockId;
use weft_ir::pb::{attr, Ints, ProgramDesc, Type};

use super::{Gen, Limits, Place, Scope, GEN_FILE, K};

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
            let max = g.lim.max_iters;
            g.counted_loop(u, blk, scope, max, |g, u, bb| {
                random_block(g, u, bb, s, place)
            })?;
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
