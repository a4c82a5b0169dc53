//! Superinstructions: a pass over a lowered function's code that replaces
//! common instruction shapes with cheaper equivalents, in place.
//!
//! Invariant: every rewrite replaces one instruction by one instruction at
//! the same index and leaves every other instruction as it was, so jump
//! targets, `locs` and the landing points of jumps stay valid; a jump that
//! lands on a rewritten instruction (or just after it) runs code with the
//! same effect as before. An operand is a *constant* when its slot holds a
//! hoisted `const` (see `lower.rs`): its only writer was dropped, so the
//! slot holds the template's value for the whole life of every frame.
//!
//! The rewrites (after Lua's `OP_ADDI`/`OP_FORLOOP` and CPython's
//! specialized instructions):
//! - `Int{Add|Sub}(x, K)` → `AddK(x, ±K)`; other `Int(x, K)` → `IntK`;
//!   `Int{Add}(x, y)` → `AddInt`; commutative ops with the constant on the
//!   left are turned around;
//! - `CmpJump{Int}(x, K)` → `CmpJumpK`;
//! - `AddK(x, K) → out; Jump TOP` where `TOP` is a `CmpJumpK` (a `for`
//!   loop's increment, back edge and condition) → `LoopK` at the `AddK`'s
//!   index, which does all three and jumps to the body or the exit; the
//!   `Jump` stays for jumps that land on it. With an int `CmpJump` at `TOP`
//!   (the bound in a variable) → `LoopN`, the same.
//! - `MapGet(m, k) → g; g op y → n; MapSet(m, k, n)` (what `m[k] op= y`
//!   and `m[k]++` lower to) → `MapUpdate` at the `MapGet`'s index: one
//!   lookup of the key instead of two (three for a new key), and no copy
//!   of a key that is present (docs/performance.md, "Maps: word count").
//!   It writes `g` and `n` as the three did and goes on after the
//!   `MapSet`; the op and the `MapSet` stay for jumps that land on them.

use super::code::{CmpKind, CmpOp, Instr, IntOp, MapUpdate, Slot, UpdateOp};
use super::value::Value;

/// The int constant of each slot of a frame `template` whose slots
/// `consts` hold hoisted constants (`None` elsewhere): the table
/// `optimize` takes, made once per function.
pub(super) fn constants(
    template: &[Value],
    consts: impl Iterator<Item = Slot>,
) -> Vec<Option<i64>> {
    let mut k: Vec<Option<i64>> = vec![None; template.len()];
    for s in consts {
        if let Some(Value::Int(v)) = template.get(s as usize) {
            k[s as usize] = Some(*v);
        }
    }
    k
}

/// Rewrites `code` in place. `k` is the int constant of each slot that
/// holds one (`constants`). One pass, linear in the code.
pub(super) fn optimize(code: &mut [Instr], k: &[Option<i64>]) {
    let konst = |s: Slot| k.get(s as usize).copied().flatten();
    for ins in code.iter_mut() {
        if let Some(new) = specialize(ins, konst) {
            *ins = new;
        }
    }
    for p in 0..code.len().saturating_sub(1) {
        if let Some(new) = fuse_loop(code, p) {
            code[p] = new;
        }
    }
    for p in 0..code.len().saturating_sub(2) {
        if let Some(new) = fuse_map_update(code, p) {
            code[p] = new;
        }
    }
}

/// `MapGet; op; MapSet` on one map and key, as one `MapUpdate`.
fn fuse_map_update(code: &[Instr], p: usize) -> Option<Instr> {
    let Instr::MapGet {
        x,
        k,
        out: Some(got),
        ok: None,
        zero,
    } = &code[p]
    else {
        return None;
    };
    let (x, k, got) = (*x, *k, *got);
    let (op, new) = match code[p + 1] {
        Instr::Int { op, x: a, y, out } if a == got => (UpdateOp::Int(op, y), out),
        Instr::AddInt { x: a, y, out } if a == got => (UpdateOp::Int(IntOp::Add, y), out),
        Instr::AddK { x: a, k, out } if a == got => (UpdateOp::IntK(IntOp::Add, k), out),
        Instr::IntK { op, x: a, k, out } if a == got => (UpdateOp::IntK(op, k), out),
        Instr::Float { op, x: a, y, out } if a == got => (UpdateOp::Float(op, y), out),
        Instr::Concat { x: a, y, out } if a == got => (UpdateOp::Concat(y), out),
        _ => return None,
    };
    let Instr::MapSet {
        x: sx,
        k: sk,
        v,
        out,
    } = code[p + 2]
    else {
        return None;
    };
    // The same map and key, the op's result stored, and no slot of the map
    // or key written before the `MapSet` reads it.
    let operand = match op {
        UpdateOp::Int(_, y) | UpdateOp::Float(_, y) | UpdateOp::Concat(y) => Some(y),
        UpdateOp::IntK(..) => None,
    };
    let clash = [got, new]
        .iter()
        .any(|w| *w == x || *w == k || Some(*w) == operand);
    if sx != x || sk != k || v != new || clash {
        return None;
    }
    Some(Instr::MapUpdate(Box::new(MapUpdate {
        x,
        k,
        out,
        got,
        new,
        zero: zero.clone(),
        op,
    })))
}

fn specialize(ins: &Instr, konst: impl Fn(Slot) -> Option<i64>) -> Option<Instr> {
    match *ins {
        Instr::Int { op, x, y, out } => {
            let (x, k) = match (konst(x), konst(y)) {
                (_, Some(k)) => (x, k),
                (Some(k), None) if commutes(op) => (y, k),
                _ if op == IntOp::Add => return Some(Instr::AddInt { x, y, out }),
                _ => return None,
            };
            Some(match op {
                IntOp::Add => Instr::AddK { x, k, out },
                IntOp::Sub => Instr::AddK {
                    x,
                    k: k.wrapping_neg(),
                    out,
                },
                _ => Instr::IntK { op, x, k, out },
            })
        }
        Instr::CmpJump {
            op,
            kind: CmpKind::Int,
            x,
            y,
            to,
        } => match (konst(x), konst(y)) {
            (_, Some(k)) => Some(Instr::CmpJumpK { op, x, k, to }),
            (Some(k), None) => Some(Instr::CmpJumpK {
                op: flip(op),
                x: y,
                k,
                to,
            }),
            _ => None,
        },
        _ => None,
    }
}

/// `AddK; Jump TOP` with a `CmpJumpK` at `TOP`, as one `LoopK`.
fn fuse_loop(code: &[Instr], p: usize) -> Option<Instr> {
    let Instr::AddK { x, k, out } = code[p] else {
        return None;
    };
    let Instr::Jump { to: top } = code[p + 1] else {
        return None;
    };
    if top as usize > p {
        return None;
    }
    match *code.get(top as usize)? {
        Instr::CmpJumpK {
            op,
            x: cx,
            k: bound,
            to: exit,
        } => Some(Instr::LoopK {
            x,
            k,
            out,
            op,
            cx,
            bound,
            top,
            exit,
        }),
        Instr::CmpJump {
            op,
            kind: CmpKind::Int,
            x: cx,
            y: cy,
            to: exit,
        } => Some(Instr::LoopN {
            x,
            k,
            out,
            op,
            cx,
            cy,
            top,
            exit,
        }),
        _ => None,
    }
}

fn commutes(op: IntOp) -> bool {
    matches!(
        op,
        IntOp::Add | IntOp::Mul | IntOp::And | IntOp::Or | IntOp::Xor
    )
}

/// The operator `o` with `K o x == x flip(o) K`.
fn flip(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        o => o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(code: &mut [Instr]) {
        let template = vec![Value::Int(0), Value::Int(7), Value::Int(100)];
        optimize(code, &constants(&template, [1, 2].into_iter()));
    }

    #[test]
    fn constant_operands_specialize() {
        let mut code = vec![
            Instr::Int {
                op: IntOp::Sub,
                x: 0,
                y: 1,
                out: 0,
            },
            Instr::Int {
                op: IntOp::Mul,
                x: 1,
                y: 0,
                out: 0,
            },
            Instr::Int {
                op: IntOp::Sub,
                x: 1,
                y: 0,
                out: 0,
            },
            Instr::CmpJump {
                op: CmpOp::Lt,
                kind: CmpKind::Int,
                x: 2,
                y: 0,
                to: 0,
            },
        ];
        run(&mut code);
        assert!(matches!(
            code[0],
            Instr::AddK {
                x: 0,
                k: -7,
                out: 0
            }
        ));
        assert!(matches!(
            code[1],
            Instr::IntK {
                op: IntOp::Mul,
                x: 0,
                k: 7,
                out: 0
            }
        ));
        // `7 - x` does not commute: left alone.
        assert!(matches!(code[2], Instr::Int { .. }));
        assert!(matches!(
            code[3],
            Instr::CmpJumpK {
                op: CmpOp::Gt,
                x: 0,
                k: 100,
                ..
            }
        ));
    }

    #[test]
    fn for_loop_back_edge_fuses() {
        // TOP: if !(i < 100) goto 3; i += 7; goto TOP; END
        let mut code = vec![
            Instr::CmpJump {
                op: CmpOp::Lt,
                kind: CmpKind::Int,
                x: 0,
                y: 2,
                to: 3,
            },
            Instr::Int {
                op: IntOp::Add,
                x: 0,
                y: 1,
                out: 0,
            },
            Instr::Jump { to: 0 },
            Instr::End,
        ];
        run(&mut code);
        assert!(matches!(
            code[1],
            Instr::LoopK {
                x: 0,
                k: 7,
                out: 0,
                op: CmpOp::Lt,
                cx: 0,
                bound: 100,
                top: 0,
                exit: 3
            }
        ));
        assert!(matches!(code[2], Instr::Jump { to: 0 }));
    }

    #[test]
    fn back_edge_to_a_variable_bound_fuses() {
        // TOP: if !(i < n) goto 3; i += 7; goto TOP; END
        let mut code = vec![
            Instr::CmpJump {
                op: CmpOp::Lt,
                kind: CmpKind::Int,
                x: 0,
                y: 3,
                to: 3,
            },
            Instr::Int {
                op: IntOp::Add,
                x: 0,
                y: 1,
                out: 0,
            },
            Instr::Jump { to: 0 },
            Instr::End,
        ];
        let template = vec![Value::Int(0), Value::Int(7), Value::Int(100), Value::Int(0)];
        optimize(&mut code, &constants(&template, [1, 2].into_iter()));
        assert!(matches!(
            code[1],
            Instr::LoopN {
                x: 0,
                k: 7,
                out: 0,
                op: CmpOp::Lt,
                cx: 0,
                cy: 3,
                top: 0,
                exit: 3
            }
        ));
    }
    fn map_get(x: Slot, k: Slot, out: Slot) -> Instr {
        Instr::MapGet {
            x,
            k,
            out: Some(out),
            ok: None,
            zero: Value::Int(0),
        }
    }

    #[test]
    fn map_read_op_write_fuses() {
        // m (3) [k (4)] += 7: get → 5, 5 + 7 → 6, set m[k] = 6 → m
        let mut code = vec![
            map_get(3, 4, 5),
            Instr::Int {
                op: IntOp::Add,
                x: 5,
                y: 1,
                out: 6,
            },
            Instr::MapSet {
                x: 3,
                k: 4,
                v: 6,
                out: 3,
            },
            Instr::End,
        ];
        let template = vec![Value::Int(0), Value::Int(7), Value::Int(100)];
        optimize(&mut code, &constants(&template, [1, 2].into_iter()));
        let Instr::MapUpdate(u) = &code[0] else {
            panic!("not fused: {:?}", code[0]);
        };
        assert_eq!((u.x, u.k, u.out, u.got, u.new), (3, 4, 3, 5, 6));
        assert!(matches!(u.op, UpdateOp::IntK(IntOp::Add, 7)));
        // The op and the set stay for jumps that land on them.
        assert!(matches!(code[1], Instr::AddK { .. }));
        assert!(matches!(code[2], Instr::MapSet { .. }));
    }

    #[test]
    fn map_writes_elsewhere_do_not_fuse() {
        let op = || Instr::Concat { x: 5, y: 7, out: 6 };
        let set = |x, k, v| Instr::MapSet { x, k, v, out: x };
        let cases = [
            // another key, another map, another value stored
            vec![map_get(3, 4, 5), op(), set(3, 8, 6)],
            vec![map_get(3, 4, 5), op(), set(9, 4, 6)],
            vec![map_get(3, 4, 5), op(), set(3, 4, 7)],
            // the op does not read what the get wrote
            vec![
                map_get(3, 4, 5),
                Instr::Concat { x: 7, y: 5, out: 6 },
                set(3, 4, 6),
            ],
            // the op writes the key's slot
            vec![
                map_get(3, 4, 5),
                Instr::Concat { x: 5, y: 7, out: 4 },
                set(3, 4, 4),
            ],
            // `v, ok := m[k]`
            vec![
                Instr::MapGet {
                    x: 3,
                    k: 4,
                    out: Some(5),
                    ok: Some(8),
                    zero: Value::Int(0),
                },
                op(),
                set(3, 4, 6),
            ],
        ];
        for mut code in cases {
            run(&mut code);
            assert!(!matches!(code[0], Instr::MapUpdate(_)), "{code:?}");
        }
    }
}
