//! Which instructions a loop region holds, and whether the JIT can compile
//! them: the region of a header is the code from the header to the last
//! unconditional back edge to it. Instructions of the supported set run
//! compiled, over slots whose type (the frame template's value) is int or
//! bool, used as that type, or a channel of ints or bools that the region
//! only sends on, receives from and selects over; any other instruction
//! is an exit (the region stops before it and the interpreter runs it).
//! A loop with a scheduling point of `weft test`, or in which every path
//! from the header back to it has an exit, stays interpreted.

use std::collections::HashMap;

use super::super::code::{CmpKind, CmpOp, Func, Instr, IntOp, Pc, SelCase, Slot};
use super::super::value::{Ty, Value};

/// The most slots a region may use (the entry buffer is on the stack).
pub(crate) const MAX_SLOTS: usize = 64;
/// The most instructions a region may hold.
const MAX_LEN: usize = 2000;
/// The most cases of a compiled `select`.
pub(crate) const MAX_CASES: usize = 8;

/// A slot's type, as the frame template says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Int,
    Bool,
    /// A channel of ints or bools (`elem`), read only: the buffer holds a
    /// pointer to its `Chan` (checked on entry to be a local channel),
    /// never stored back.
    Chan {
        elem: Scalar,
    },
}

/// The type of what a compiled channel operation carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scalar {
    Int,
    Bool,
}

impl Scalar {
    pub(crate) fn kind(self) -> Kind {
        match self {
            Scalar::Int => Kind::Int,
            Scalar::Bool => Kind::Bool,
        }
    }
}

/// A region the JIT can compile.
pub(crate) struct Plan {
    /// The header: the region's first instruction.
    pub start: usize,
    /// The last instruction (an unconditional back edge to `start`).
    pub end: usize,
    /// The slots used, in buffer order, with their types.
    pub slots: Vec<(Slot, Kind)>,
    /// Where the code may be entered: the header, then every target of a
    /// back edge inside the region (the driver re-enters there after a
    /// `release_lifo`).
    pub entries: Vec<usize>,
    /// The region's instructions as ops, each with its instruction's
    /// index, in order (a `LoopK` or `LoopN` is two: its add, then its
    /// back edge).
    pub ops: Vec<(usize, Op)>,
    /// The cases of the region's selects (`Op::Select` holds an index).
    pub selects: Vec<SelectPlan>,
}

/// A compiled `select`: receives only, on channels of ints or bools.
#[derive(Debug)]
pub(crate) struct SelectPlan {
    pub cases: Vec<RecvCase>,
    /// The `default` case's first instruction, if there is one.
    pub default: Option<usize>,
}

/// A receive case of a compiled `select`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RecvCase {
    pub ch: usize,
    pub out: Option<usize>,
    pub ok: Option<usize>,
    pub elem: Scalar,
    /// The first instruction of the case's block.
    pub target: usize,
}

/// One instruction as the code generator sees it (slots as buffer indices).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    /// `out = k` (a bool as 0 or 1).
    Const {
        out: usize,
        k: i64,
    },
    Copy {
        x: usize,
        out: usize,
    },
    Int {
        op: IntOp,
        x: usize,
        y: usize,
        out: usize,
    },
    IntK {
        op: IntOp,
        x: usize,
        k: i64,
        out: usize,
    },
    Neg {
        x: usize,
        out: usize,
    },
    /// `out = !x` on a bool.
    Not {
        x: usize,
        out: usize,
    },
    /// `out = x op y` (ints, or bools by `==`/`!=`).
    Cmp {
        op: CmpOp,
        x: usize,
        y: usize,
        out: usize,
    },
    /// Go to `to` (spending budget when backward).
    Jump {
        to: usize,
    },
    /// Go to `to` unless the bool `cond`.
    JumpIfNot {
        cond: usize,
        to: usize,
    },
    /// Go to `to` unless `x op y`.
    CmpJump {
        op: CmpOp,
        x: usize,
        y: usize,
        to: usize,
    },
    /// Go to `to` unless `x op k`.
    CmpJumpK {
        op: CmpOp,
        x: usize,
        k: i64,
        to: usize,
    },
    /// `ch <- v`, when it completes without waiting; otherwise the region
    /// leaves before it and the interpreter runs it (and parks).
    Send {
        ch: usize,
        v: usize,
        elem: Scalar,
    },
    /// `out, ok = <-ch`, when a value is there; otherwise (empty, or
    /// closed and drained) the region leaves before it.
    Recv {
        ch: usize,
        out: Option<usize>,
        ok: Option<usize>,
        elem: Scalar,
    },
    /// `Plan::selects[sel]`: a case that fires now goes on at its block;
    /// none ready goes to `default`, or, without one, leaves the region
    /// for the interpreter to park the select.
    Select {
        sel: usize,
    },
    /// Leave the region here: the instruction ends the function or the
    /// task (`return`, `panic`, `exit`), or the JIT does not compile it;
    /// the interpreter runs it.
    Leave,
}

/// Collects slots and their types while a region is checked.
struct Slots<'a> {
    template: &'a [Value],
    /// The frame's junk slot, if it has one (`Func::junk`).
    junk: Option<Slot>,
    slots: Vec<(Slot, Kind)>,
    index: HashMap<Slot, usize>,
}

impl Slots<'_> {
    /// The buffer index of `s`, which must be of type `want`.
    fn get(&mut self, s: Slot, want: Kind) -> Option<usize> {
        let kind = self.kind(s)?;
        if kind != want {
            return None;
        }
        if let Some(&i) = self.index.get(&s) {
            return Some(i);
        }
        if self.slots.len() == MAX_SLOTS {
            return None;
        }
        self.slots.push((s, kind));
        self.index.insert(s, self.slots.len() - 1);
        Some(self.slots.len() - 1)
    }

    /// The type of `s` (none: not int, bool or a channel of either, or the
    /// junk slot, whose values have any type).
    fn kind(&self, s: Slot) -> Option<Kind> {
        if Some(s) == self.junk {
            return None;
        }
        match self.template.get(s as usize)? {
            Value::Int(_) => Some(Kind::Int),
            Value::Bool(_) => Some(Kind::Bool),
            Value::Chan(c) => match &*c.elem {
                Ty::Int => Some(Kind::Chan { elem: Scalar::Int }),
                Ty::Bool => Some(Kind::Chan { elem: Scalar::Bool }),
                _ => None,
            },
            _ => None,
        }
    }

    /// The buffer index of the channel slot `s` and what it carries.
    fn chan(&mut self, s: Slot) -> Option<(usize, Scalar)> {
        match self.kind(s)? {
            k @ Kind::Chan { elem } => Some((self.get(s, k)?, elem)),
            _ => None,
        }
    }
}

/// The type of a comparison's operands the JIT compiles: ints, or bools
/// compared by `==` or `!=` (as 0 and 1).
fn cmp_kind(op: CmpOp, kind: CmpKind) -> Option<Kind> {
    match kind {
        CmpKind::Int => Some(Kind::Int),
        CmpKind::Other if matches!(op, CmpOp::Eq | CmpOp::Ne) => Some(Kind::Bool),
        _ => None,
    }
}

/// Whether instruction `i` is an unconditional back edge to `h`.
fn back_edge_to(code: &[Instr], i: usize, h: usize) -> bool {
    let to = match &code[i] {
        Instr::Jump { to } => *to,
        Instr::LoopK { top, .. } | Instr::LoopN { top, .. } => *top,
        _ => return false,
    };
    to as usize == h
}

/// The region of the loop whose header is instruction `h` of `f`, if the
/// JIT can compile it: its header is in the supported set, no
/// instruction in it is a scheduling point, and some iteration can run
/// compiled from start to end.
pub(crate) fn plan(f: &Func, h: usize) -> Option<Plan> {
    let code = &f.code;
    let end = (h..code.len()).rev().find(|&i| back_edge_to(code, i, h))?;
    if end - h >= MAX_LEN {
        return None;
    }
    let mut p = Planner {
        h,
        s: Slots {
            template: &f.template,
            junk: f.junk,
            slots: Vec::new(),
            index: HashMap::new(),
        },
        ops: Vec::with_capacity(end + 1 - h),
        selects: Vec::new(),
        entries: vec![h],
    };
    for (at, instr) in code.iter().enumerate().take(end + 1).skip(h) {
        let before = p.mark();
        let op = match p.op(at, instr) {
            Some(op) => op,
            // A scheduling point of a controlled run: no region holds one
            // (its operations must run where the executor sees them). A
            // header the JIT does not compile: the region would stop at
            // once, so the loop is not compiled at all.
            None if at == h || matches!(instr, Instr::Point) => return None,
            // Not compiled: the region stops before it and the
            // interpreter runs it, then goes on interpreting to the next
            // back edge. What the attempt noted is forgotten.
            None => {
                p.forget_since(before);
                Op::Leave
            }
        };
        p.ops.push((at, op));
    }
    if !completes_an_iteration(h, &p.ops, &p.selects) {
        return None;
    }
    Some(Plan {
        start: h,
        end,
        slots: p.s.slots,
        entries: p.entries,
        ops: p.ops,
        selects: p.selects,
    })
}

/// A region being planned (`plan`): what its instructions noted so far.
struct Planner<'a> {
    /// The header.
    h: usize,
    s: Slots<'a>,
    ops: Vec<(usize, Op)>,
    selects: Vec<SelectPlan>,
    entries: Vec<usize>,
}

/// How much a `Planner` had noted (`Planner::mark`).
type Mark = (usize, usize, usize, usize);

impl Planner<'_> {
    fn mark(&self) -> Mark {
        (
            self.s.slots.len(),
            self.ops.len(),
            self.entries.len(),
            self.selects.len(),
        )
    }

    /// Forgets what was noted after `m` (an instruction that turned out
    /// not to compile).
    fn forget_since(&mut self, m: Mark) {
        let (n_slots, n_ops, n_entries, n_selects) = m;
        for (slot, _) in self.s.slots.drain(n_slots..) {
            self.s.index.remove(&slot);
        }
        self.ops.truncate(n_ops);
        self.entries.truncate(n_entries);
        self.selects.truncate(n_selects);
    }

    /// A backward jump from `at` to `to`: inside the region, `to` is an
    /// entry (the driver re-enters there).
    fn back(&mut self, at: usize, to: Pc) -> usize {
        let to = to as usize;
        if (self.h..=at).contains(&to) && !self.entries.contains(&to) {
            self.entries.push(to);
        }
        to
    }

    /// Instruction `at` as an op, or `None` when the JIT does not compile
    /// it (it may have noted slots, ops or entries meanwhile).
    fn op(&mut self, at: usize, instr: &Instr) -> Option<Op> {
        use Kind::{Bool, Int};
        Some(match instr {
            Instr::Const { out, val } => match val {
                Value::Int(k) => Op::Const {
                    out: self.s.get(*out, Int)?,
                    k: *k,
                },
                Value::Bool(b) => Op::Const {
                    out: self.s.get(*out, Bool)?,
                    k: *b as i64,
                },
                _ => return None,
            },
            Instr::Copy { x, out } => {
                // A channel slot is never written (nor stored back).
                let kind = self.s.kind(*x).filter(|k| matches!(k, Int | Bool))?;
                Op::Copy {
                    x: self.s.get(*x, kind)?,
                    out: self.s.get(*out, kind)?,
                }
            }
            Instr::Int { op, x, y, out } => Op::Int {
                op: *op,
                x: self.s.get(*x, Int)?,
                y: self.s.get(*y, Int)?,
                out: self.s.get(*out, Int)?,
            },
            Instr::AddInt { x, y, out } => Op::Int {
                op: IntOp::Add,
                x: self.s.get(*x, Int)?,
                y: self.s.get(*y, Int)?,
                out: self.s.get(*out, Int)?,
            },
            Instr::AddK { x, k, out } => Op::IntK {
                op: IntOp::Add,
                x: self.s.get(*x, Int)?,
                k: *k,
                out: self.s.get(*out, Int)?,
            },
            Instr::IntK { op, x, k, out } => Op::IntK {
                op: *op,
                x: self.s.get(*x, Int)?,
                k: *k,
                out: self.s.get(*out, Int)?,
            },
            Instr::NegInt { x, out } => Op::Neg {
                x: self.s.get(*x, Int)?,
                out: self.s.get(*out, Int)?,
            },
            Instr::Not { x, out } => Op::Not {
                x: self.s.get(*x, Bool)?,
                out: self.s.get(*out, Bool)?,
            },
            Instr::Cmp {
                op,
                kind,
                x,
                y,
                out,
            } => {
                let k = cmp_kind(*op, *kind)?;
                Op::Cmp {
                    op: *op,
                    x: self.s.get(*x, k)?,
                    y: self.s.get(*y, k)?,
                    out: self.s.get(*out, Bool)?,
                }
            }
            Instr::Jump { to } => {
                if *to as usize <= at {
                    self.back(at, *to);
                }
                Op::Jump { to: *to as usize }
            }
            Instr::JumpIfNot { cond, to } => Op::JumpIfNot {
                cond: self.s.get(*cond, Bool)?,
                to: *to as usize,
            },
            Instr::CmpJump { op, kind, x, y, to } => {
                let k = cmp_kind(*op, *kind)?;
                Op::CmpJump {
                    op: *op,
                    x: self.s.get(*x, k)?,
                    y: self.s.get(*y, k)?,
                    to: *to as usize,
                }
            }
            Instr::CmpJumpK { op, x, k, to } => Op::CmpJumpK {
                op: *op,
                x: self.s.get(*x, Int)?,
                k: *k,
                to: *to as usize,
            },
            // `LoopK` and `LoopN` are `AddK; Jump { to: top }` (the
            // condition they evaluate is the instruction at `top`): the
            // add here, the jump as the next op of the same instruction.
            Instr::LoopK { x, k, out, top, .. } | Instr::LoopN { x, k, out, top, .. } => {
                if *top as usize > at {
                    return None;
                }
                self.back(at, *top);
                self.ops.push((
                    at,
                    Op::IntK {
                        op: IntOp::Add,
                        x: self.s.get(*x, Int)?,
                        k: *k,
                        out: self.s.get(*out, Int)?,
                    },
                ));
                Op::Jump { to: *top as usize }
            }
            Instr::Send { ch, v } => {
                let (ch, elem) = self.s.chan(*ch)?;
                Op::Send {
                    ch,
                    v: self.s.get(*v, elem.kind())?,
                    elem,
                }
            }
            Instr::Recv { ch, out, ok, .. } => {
                let (ch, elem) = self.s.chan(*ch)?;
                Op::Recv {
                    ch,
                    out: match out {
                        Some(o) => Some(self.s.get(*o, elem.kind())?),
                        None => None,
                    },
                    ok: match ok {
                        Some(k) => Some(self.s.get(*k, Bool)?),
                        None => None,
                    },
                    elem,
                }
            }
            Instr::Select { cases, default } => {
                self.selects
                    .push(select_plan(&mut self.s, cases, *default)?);
                Op::Select {
                    sel: self.selects.len() - 1,
                }
            }
            // Run at most once per entry: the region stops before them.
            Instr::Ret { .. } | Instr::End | Instr::Panic { .. } | Instr::Exit { .. } => Op::Leave,
            _ => return None,
        })
    }
}

/// Whether some path from the header `h` back to it runs only compiled
/// ops, none that always leaves (`Op::Leave`): else every entry would
/// leave within its first iteration, and compiling the loop (a few
/// megabytes of Cranelift's memory, once) would buy nothing. A loop that
/// spawns a task every iteration is such a loop.
fn completes_an_iteration(h: usize, ops: &[(usize, Op)], selects: &[SelectPlan]) -> bool {
    // The first op of each instruction (a `LoopK` is two ops).
    let mut first: HashMap<usize, usize> = HashMap::new();
    for (i, &(pc, _)) in ops.iter().enumerate() {
        first.entry(pc).or_insert(i);
    }
    let mut seen = vec![false; ops.len()];
    let mut todo = vec![0usize];
    while let Some(i) = todo.pop() {
        if i >= ops.len() || std::mem::replace(&mut seen[i], true) {
            continue;
        }
        let at = |pc: usize| first.get(&pc).copied();
        match ops[i].1 {
            Op::Leave => {}
            Op::Jump { to } if to == h => return true,
            Op::Jump { to } => todo.extend(at(to)),
            Op::JumpIfNot { to, .. } | Op::CmpJump { to, .. } | Op::CmpJumpK { to, .. } => {
                todo.push(i + 1);
                todo.extend(at(to));
            }
            Op::Select { sel } => {
                let p = &selects[sel];
                todo.extend(p.cases.iter().filter_map(|c| at(c.target)));
                todo.extend(p.default.and_then(at));
            }
            _ => todo.push(i + 1),
        }
    }
    false
}

/// The plan of a `select` whose cases all receive on channels of ints or
/// bools (at most `MAX_CASES`), into slots of that type; `None` for any
/// other select (a send case, another element type), which the region
/// leaves to the interpreter.
fn select_plan(s: &mut Slots<'_>, cases: &[SelCase], default: Option<Pc>) -> Option<SelectPlan> {
    if cases.is_empty() || cases.len() > MAX_CASES {
        return None;
    }
    let mut planned = Vec::with_capacity(cases.len());
    for c in cases {
        if c.send {
            return None;
        }
        let (ch, elem) = s.chan(c.chan)?;
        planned.push(RecvCase {
            ch,
            out: match c.recv {
                Some(o) => Some(s.get(o, elem.kind())?),
                None => None,
            },
            ok: match c.ok {
                Some(k) => Some(s.get(k, Kind::Bool)?),
                None => None,
            },
            elem,
            target: c.target as usize,
        });
    }
    Some(SelectPlan {
        cases: planned,
        default: default.map(|d| d as usize),
    })
}
