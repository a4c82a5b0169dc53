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
    let found = walk(cx, b).into_iter().any(|r| match r {
        Reached::Op(o) if targets.contains(&o.r#type.as_str()) => match want {
            None => true,
            Some(l) => o.r#type != "select" && label(o) == Some(l),
        },
        _ => false,
    });
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
    let msg = match walk(cx, b).last() {
        Some(Reached::Op(o)) if o.r#type == "go" => {
            value.map(|v| format!("return in a go block carries no value, got {:?}", v.name))
        }
        Some(Reached::Func(i)) => {
            let f = &cx.p.functions[*i];
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
