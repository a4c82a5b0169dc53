//! Control-flow checks that need the block tree: `break` and `continue` find
//! their target op, and `return` matches its function's result. Both walk up
//! from the op's block through the owners of blocks: `if` and `select` are
//! passed through (a select case is also a `break` target), a `go` op or a
//! function body ends the walk (a task boundary).

use super::ops::Bound;
use super::{Ctx, IssueKind, Owner, Site};
use crate::pb::{attr, OpDesc};

/// What a walk up from a block reached.
enum Reached<'p> {
    /// The op owning a block on the way up.
    Op(&'p OpDesc),
    /// The function whose body the walk ended in.
    Func(usize),
}

pub(super) fn check(cx: &mut Ctx<'_>, site: &Site, b: usize, op: &str, bd: &Bound<'_>) {
    match op {
        "break" => jump(cx, site, b, "break", bd.attr_str("label")),
        "continue" => jump(cx, site, b, "continue", bd.attr_str("label")),
        "return" => ret(cx, site, b, bd),
        _ => {}
    }
}

/// Where the walk up from each block ends and what it passes, for every
/// block at once (each block's answer is its owner op's plus its owner
/// block's), so the checks cost O(1) per op however deep blocks nest: the
/// last stop of `walk`, and whether an op on the way is an unlabelled
/// `break` target (a loop, region or select) or `continue` target (a loop).
/// A labelled jump still walks (labels are rare).
#[derive(Default)]
pub(super) struct Up {
    end: Vec<End>,
    brk: Vec<bool>,
    cont: Vec<bool>,
}

/// The last stop of a walk: a function body, a `go` op, or neither.
#[derive(Clone, Copy, Default)]
enum End {
    #[default]
    Other,
    Func(usize),
    Go,
}

impl Up {
    pub(super) fn new(cx: &Ctx<'_>) -> Up {
        let n = cx.p.blocks.len();
        let mut up = Up {
            end: vec![End::Other; n],
            brk: vec![false; n],
            cont: vec![false; n],
        };
        let mut done = vec![false; n];
        let mut on_path = vec![false; n];
        let mut path = Vec::new();
        for b in 0..n {
            let mut cur = b;
            // Walk up to a block already done or to the end of the walk.
            loop {
                if done[cur] {
                    break;
                }
                if on_path[cur] {
                    // A cycle of owners (a malformed program): walk each
                    // block of this path on its own, as `walk` bounds it.
                    for p in path.drain(..) {
                        up.set_from_walk(cx, p);
                        done[p] = true;
                    }
                    break;
                }
                on_path[cur] = true;
                path.push(cur);
                match cx.owner.get(cur).copied().flatten() {
                    None => {}
                    Some(Owner::Func(i)) => up.end[cur] = End::Func(i),
                    Some(Owner::Op { block, op }) => {
                        if cx.p.blocks[block].ops[op].r#type == "go" {
                            up.end[cur] = End::Go;
                        } else {
                            cur = block;
                            continue;
                        }
                    }
                }
                done[cur] = true;
                path.pop();
                break;
            }
            // Then down the path, each block from its owner block.
            while let Some(p) = path.pop() {
                if let Some(Owner::Op { block, op }) = cx.owner[p] {
                    let t = cx.p.blocks[block].ops[op].r#type.as_str();
                    up.end[p] = up.end[block];
                    up.brk[p] = matches!(t, "loop" | "region" | "select") || up.brk[block];
                    up.cont[p] = t == "loop" || up.cont[block];
                }
                done[p] = true;
            }
        }
        up
    }

    fn set_from_walk(&mut self, cx: &Ctx<'_>, b: usize) {
        let w = walk(cx, b);
        self.brk[b] = w.iter().any(|r| {
            matches!(r, Reached::Op(o) if matches!(o.r#type.as_str(), "loop" | "region" | "select"))
        });
        self.cont[b] = w
            .iter()
            .any(|r| matches!(r, Reached::Op(o) if o.r#type == "loop"));
        self.end[b] = match w.last() {
            Some(Reached::Func(i)) => End::Func(*i),
            Some(Reached::Op(o)) if o.r#type == "go" => End::Go,
            _ => End::Other,
        };
    }
}

/// The owners met walking up from block `b`, nearest first, ending at a
/// function body; stops early at a `go` op (included).
fn walk<'p>(cx: &Ctx<'p>, b: usize) -> Vec<Reached<'p>> {
    let mut out = Vec::new();
    let mut cur = b;
    for _ in 0..=cx.p.blocks.len() {
        match cx.owner.get(cur).copied().flatten() {
            None => break,
            Some(Owner::Func(i)) => {
                out.push(Reached::Func(i));
                break;
            }
            Some(Owner::Op { block, op }) => {
                let o = &cx.p.blocks[block].ops[op];
                out.push(Reached::Op(o));
                if o.r#type == "go" {
                    break;
                }
                cur = block;
            }
        }
    }
    out
}

fn label(op: &OpDesc) -> Option<&str> {
    op.attrs
        .iter()
        .find(|a| a.name == "label")
        .and_then(|a| match &a.value {
            Some(attr::Value::S(s)) => Some(s.as_str()),
            _ => None,
        })
}

fn jump(cx: &mut Ctx<'_>, site: &Site, b: usize, op: &'static str, want: Option<&str>) {
    let targets: &[&str] = if op == "break" {
        &["loop", "region", "select"]
    } else {
        &["loop"]
    };
    let found = match want {
        None if op == "break" => cx.up.brk[b],
        None => cx.up.cont[b],
        Some(l) => walk(cx, b).into_iter().any(|r| match r {
            Reached::Op(o) if targets.contains(&o.r#type.as_str()) => {
                o.r#type != "select" && label(o) == Some(l)
            }
            _ => false,
        }),
    };
    if found {
        return;
    }
    let what = if op == "break" {
        "loop, region or select case"
    } else {
        "loop"
    };
    let kind = match want {
        None => IssueKind::NoTarget(op, what),
        Some(l) => {
            let labelled = if op == "break" {
                "loop or region"
            } else {
                "loop"
            };
            IssueKind::UnknownLabel(op, l.into(), labelled)
        }
    };
    cx.push(site.clone(), kind);
}

fn ret(cx: &mut Ctx<'_>, site: &Site, b: usize, bd: &Bound<'_>) {
    let value = bd.ins("Value").first();
    let msg = match cx.up.end[b] {
        End::Go => {
            value.map(|v| format!("return in a go block carries no value, got {:?}", v.name))
        }
        End::Func(i) => {
            let f = &cx.p.functions[i];
            match (&f.result, value) {
                (None, Some(v)) => Some(format!(
                    "function {:?} returns nothing but return has Value {:?}",
                    f.name, v.name
                )),
                (Some(rt), None) => Some(format!(
                    "function {:?} returns {rt} but return has no Value",
                    f.name
                )),
                (Some(rt), Some(v)) => v.ty.filter(|t| !t.same(rt)).map(|t| {
                    format!(
                        "Value {:?} is {t} but function {:?} returns {rt}",
                        v.name, f.name
                    )
                }),
                (None, None) => None,
            }
        }
        _ => None,
    };
    if let Some(m) = msg {
        cx.push(site.clone(), IssueKind::Mismatch(m));
    }
}
