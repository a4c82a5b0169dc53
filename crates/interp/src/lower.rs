//! Lowering: a verified `ProgramDesc` becomes the compact form of `code`.
//!
//! Done once per run, before any task starts. For each function:
//! 1. collect the blocks it owns (its body and every block reachable through
//!    the block attributes of its ops) and give every variable declared there
//!    a frame slot (names are unique within a function, so one frame serves
//!    the body and all its sub-blocks; the verifier keeps the root block
//!    empty, so there are no globals);
//! 2. emit the body's ops in order; structured ops (`if`, `loop`, `region`,
//!    `select`) inline their sub-blocks and become jumps; `break`/`continue`
//!    become jumps patched when the enclosing construct's end is known;
//! 3. each `go` block becomes a `Func` of its own with a frame of its own:
//!    its captures first, in the order the `go` lists them, then the
//!    variables its blocks declare (its id is reserved where the `go` is
//!    met; it is emitted after).
//!
//! Linear in the program's size, whatever its shape (issue 26): one
//! pre-order walk finds the reads, writes and hoistable constants (the
//! constant check once rescanned every op before each `const`: quadratic
//! in a function's length), the peephole table is made once per function,
//! and blocks are walked with explicit stacks, never recursion, so a chain
//! of 100,000 `else if`s (100,000 nested blocks) lowers on any stack.
//!
//! This file drives the lowering and emits control flow; the emitter and
//! its state are `lower_emit`, data ops `lower_ops`, a select's cases
//! `lower_select`. Lowering never panics: a malformed program (one the
//! verifier would reject) gives a `LowerError`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use weft_ir::pb;

use super::code::{Func, Instr, Pc, Program, SelCase, Slot};
use super::lower_emit::{attr, bad, Ctl, CtlKind, Cx, Emitter, GoBlock, Vars};
use super::lower_ops::const_value;
use super::lower_select::SelectParts;
use super::peephole;
use super::value::{zero_value, Value};

pub use super::lower_emit::LowerError;

/// Lowers a whole program.
pub fn lower(prog: &pb::ProgramDesc) -> Result<Program, LowerError> {
    lower_with(prog, false)
}

/// Lowers a whole program for `weft test`: as `lower`, plus a `Point`
/// before every operation the controlled executor must see (channel
/// operations, `select`, `go`, `print`, channel creation, `rand`, `perm`;
/// see `Instr::needs_point`). Every function may be a test's entry
/// (`Program::func_id`).
pub fn lower_for_tests(prog: &pb::ProgramDesc) -> Result<Program, LowerError> {
    lower_with(prog, true)
}

fn lower_with(prog: &pb::ProgramDesc, points: bool) -> Result<Program, LowerError> {
    let mut cx = Cx::new(prog)?;
    cx.points = points;
    let n = prog.functions.len();
    let mut funcs: Vec<Func> = Vec::with_capacity(n);
    let mut extra: Vec<Func> = Vec::new();
    for f in &prog.functions {
        funcs.push(cx.lower_function(f, n, &mut extra)?);
    }
    funcs.extend(extra);
    let entry = *cx
        .func_ids
        .get(prog.entry.as_str())
        .ok_or_else(|| LowerError::NoEntry(prog.entry.clone()))?;
    Ok(Program {
        funcs,
        structs: cx.structs,
        entry,
        jit: Default::default(),
    })
}

impl<'p> Cx<'p> {
    fn lower_function(
        &mut self,
        f: &'p pb::FunctionDesc,
        nfuncs: usize,
        extra: &mut Vec<Func>,
    ) -> Result<Func, LowerError> {
        let body = self
            .block(f.body_block)
            .ok_or_else(|| LowerError::NoBlock(f.name.clone(), f.body_block))?;
        // 1. Slots for every owned block's variables.
        let params: Vec<&'p str> = f.params.iter().map(|p| p.name.as_str()).collect();
        let (vars, template) = self.layout(f.name.as_str(), body, Bound::Params(&params))?;
        let mut param_slots = Vec::with_capacity(params.len());
        for p in &params {
            param_slots.push(vars.slot(p)?);
        }
        // 2. The body.
        let mut em = Emitter::new(self, &vars, template.clone(), nfuncs, extra);
        em.emit_body(body)?;
        em.push(Instr::End, None);
        let mut go_blocks: Vec<(GoBlock<'p>, usize)> = std::mem::take(&mut em.go_blocks)
            .into_iter()
            .map(|g| (g, 0))
            .collect();
        let func = em.finish(Arc::from(f.name.as_str()), param_slots);
        // 3. Its go blocks (and theirs), each a function of its own whose
        // id its `go` instruction already holds, with a frame of its own:
        // its captures first, in the order the `go` lists them (the `go`
        // copies capture i to slot i), then the variables its blocks
        // declare. A blocked task holds its frame for as long as it is
        // blocked, so it holds only the slots it uses (not its parent's
        // whole frame). Frames of enclosing blocks are kept in `frames`
        // (index 0 the function's), on an explicit stack: go blocks nest
        // as deep as the program says.
        let mut frames: Vec<Vars<'p>> = vec![vars];
        while let Some((g, outer)) = go_blocks.pop() {
            let (vars, template) = self.layout(
                f.name.as_str(),
                g.block,
                Bound::Captures(g.captures, &frames[outer]),
            )?;
            let mut em = Emitter::new(self, &vars, template, nfuncs, extra);
            em.emit_body(g.block)?;
            em.push(Instr::End, None);
            let inner = std::mem::take(&mut em.go_blocks);
            let name: Arc<str> = Arc::from(format!("{}.go{}", f.name, g.block.idx));
            let go = em.finish(name, Vec::new());
            extra[g.at] = go;
            if !inner.is_empty() {
                frames.push(vars);
                let here = frames.len() - 1;
                go_blocks.extend(inner.into_iter().map(|g| (g, here)));
            }
        }
        Ok(func)
    }

    /// The frame layout of a function or go block whose body is `body`:
    /// the variables bound before the body runs (a go block's captures,
    /// first and in order), then every variable its blocks declare, then
    /// (for a go block) any variable of an enclosing frame it names but
    /// does not capture (the verifier rules that out; such a slot starts
    /// as the enclosing frame's template value, as the block would have
    /// seen in a copy of that frame), and last the junk slot (dropped if
    /// unused, `Emitter::finish`). Constants
    /// hoisted into the template are marked in the `Vars`.
    fn layout(
        &mut self,
        fname: &'p str,
        body: &'p pb::BlockDesc,
        bound: Bound<'_, 'p>,
    ) -> Result<(Vars<'p>, Arc<[Value]>), LowerError> {
        let walk = self.walk_function(body);
        let mut vars = Vars {
            fname,
            map: HashMap::new(),
            junk: 0,
            junk_used: Default::default(),
            reads: walk.reads,
            writes: walk.writes,
            hoisted: HashSet::new(),
            konst: Vec::new(),
            scalar_frame: true,
            template: Vec::new(),
            entry: Vec::new(),
            dead_after_read: HashSet::new(),
        };
        let mut template = Vec::new();
        // The block declaring each slot's variable (`OUTSIDE` for one
        // declared in an enclosing frame).
        const OUTSIDE: i32 = i32::MIN;
        let mut declared_in: Vec<i32> = Vec::new();
        let (params, outer): (HashSet<&str>, Option<&Vars<'p>>) = match bound {
            Bound::Params(ps) => (ps.iter().copied().collect(), None),
            Bound::Captures(caps, outer) => {
                for c in caps {
                    let (slot, ty) = outer.get(c)?;
                    let v = outer.template.get(*slot as usize).cloned();
                    template.push(v.unwrap_or(zero_value(ty, &self.structs)?));
                    declared_in.push(OUTSIDE);
                    let s = template.len() as Slot - 1;
                    vars.map.entry(c.as_str()).or_insert((s, ty.clone()));
                }
                (caps.iter().map(String::as_str).collect(), Some(outer))
            }
        };
        for b in &walk.blocks {
            for v in &b.vars {
                let ty = match &v.r#type {
                    Some(t) => self.ty(t)?,
                    None => return Err(LowerError::Untyped(v.name.clone())),
                };
                if vars.map.contains_key(v.name.as_str()) {
                    continue;
                }
                declared_in.push(b.idx);
                template.push(zero_value(&ty, &self.structs)?);
                vars.map
                    .insert(v.name.as_str(), (template.len() as Slot - 1, ty));
            }
        }
        if let Some(outer) = outer {
            let mut named: Vec<&'p str> = (vars.reads.keys())
                .chain(vars.writes.keys())
                .copied()
                .filter(|n| !vars.map.contains_key(n) && outer.map.contains_key(n))
                .collect();
            named.sort_unstable();
            named.dedup();
            for n in named {
                let (slot, ty) = outer.get(n)?;
                let v = outer.template.get(*slot as usize).cloned();
                template.push(v.unwrap_or(zero_value(ty, &self.structs)?));
                declared_in.push(OUTSIDE);
                vars.map.insert(n, (template.len() as Slot - 1, ty.clone()));
            }
        }
        // A variable other than a parameter whose only writer is a `const`
        // op in the block that declares it, with no read before that op (in the block or below
        // the ops before it), holds the constant from the frame's start: every
        // read (reads are scoped to the block and below) comes after the op
        // on every path. The op is then dropped (`Vars::hoisted`). Ops are
        // numbered in pre-order (an op before the ops of its sub-blocks), so
        // the reads before the op in its block or below are exactly the reads
        // numbered lower (a variable is read only where it is in scope).
        for &(b, op, num) in &walk.consts {
            let Some(name) = op.outputs.first().and_then(|o| o.args.first()) else {
                continue;
            };
            let Ok((slot, ty)) = vars.get(name) else {
                continue;
            };
            // A parameter is written by the call before any op runs.
            if params.contains(name.as_str())
                || written_first(name, *slot, &vars, &declared_in, &walk.writers)
                    != Some((b.idx, num))
            {
                continue;
            }
            {
                let v = const_value(op, Some(ty))?;
                template[*slot as usize] = v;
                vars.hoisted.insert(name.as_str());
            }
        }
        vars.junk = template.len() as Slot;
        template.push(Value::Int(0));
        vars.konst = peephole::constants(&template, vars.hoisted.iter().map(|n| vars.map[n].0));
        vars.scalar_frame = template
            .iter()
            .all(|v| matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_)));
        vars.entry = entry_template(&template, &vars, &declared_in, &params, &walk.writers);
        vars.dead_after_read =
            dead_after_read(&vars, &declared_in, &params, &walk.writers, &walk.readers);
        vars.template = template.clone();
        Ok((vars, template.into()))
    }

    /// Walks the blocks a function owns (its body and every block reachable
    /// through the block attributes of its ops), in pre-order, without
    /// recursion: a block's ops in order, each followed by its sub-blocks.
    fn walk_function(&self, body: &'p pb::BlockDesc) -> FuncWalk<'p> {
        let mut w = FuncWalk {
            blocks: Vec::new(),
            reads: HashMap::new(),
            writes: HashMap::new(),
            writers: HashMap::new(),
            readers: HashMap::new(),
            consts: Vec::new(),
        };
        let mut seen = HashSet::new();
        let mut num = 0usize;
        enum Step<'p> {
            Enter(&'p pb::BlockDesc),
            Ops(&'p pb::BlockDesc, usize),
        }
        let mut stack = vec![Step::Enter(body)];
        while let Some(step) = stack.pop() {
            let (b, k) = match step {
                Step::Enter(b) => {
                    if seen.insert(b.idx) {
                        w.blocks.push(b);
                        stack.push(Step::Ops(b, 0));
                    }
                    continue;
                }
                Step::Ops(b, k) => (b, k),
            };
            let Some(op) = b.ops.get(k) else { continue };
            stack.push(Step::Ops(b, k + 1));
            let plain = !op.attrs.iter().any(|a| attr_blocks(a).next().is_some());
            for v in &op.inputs {
                for a in &v.args {
                    w.reads.entry(a.as_str()).or_insert((0, num)).0 += 1;
                    w.readers.insert(a.as_str(), (b.idx, num, plain));
                }
            }
            for v in &op.outputs {
                for a in &v.args {
                    *w.writes.entry(a.as_str()).or_insert(0) += 1;
                    w.writers.insert(a.as_str(), (b.idx, num, plain));
                }
            }
            if op.r#type == "const" {
                w.consts.push((b, op, num));
            }
            num += 1;
            // Sub-blocks in attribute order: the first is entered first.
            let at = stack.len();
            for a in &op.attrs {
                for idx in attr_blocks(a) {
                    if let Some(sub) = self.block(idx) {
                        stack.push(Step::Enter(sub));
                    }
                }
            }
            stack[at..].reverse();
        }
        w
    }
}

/// What `walk_function` found in one function's blocks.
struct FuncWalk<'p> {
    /// Every block the function owns, in pre-order.
    blocks: Vec<&'p pb::BlockDesc>,
    /// How many op inputs read each variable, with the pre-order number of
    /// the first op reading it; how many outputs write it.
    reads: HashMap<&'p str, (u32, usize)>,
    writes: HashMap<&'p str, u32>,
    /// The last op writing each variable: its block, its pre-order number,
    /// and whether it is plain (no sub-blocks, so its outputs are written
    /// whenever it completes).
    writers: HashMap<&'p str, (i32, usize, bool)>,
    /// The last op reading each variable, as `writers`.
    readers: HashMap<&'p str, (i32, usize, bool)>,
    /// Every `const` op, with its block and pre-order number.
    consts: Vec<(&'p pb::BlockDesc, &'p pb::OpDesc, usize)>,
}

/// The one op writing variable `name` (slot `slot`), as its block and
/// pre-order number, when that op is plain (no sub-blocks: it writes its
/// outputs whenever it completes), lies in the block that declares the
/// variable, and is numbered before every read of it. Reads are scoped to
/// the declaring block and below, and ops are numbered in pre-order, so
/// every read then runs after the write in the same pass through the
/// block (a loop body's pass included: a read of the previous iteration's
/// value would be numbered before the write). An op that reads the
/// variable it writes (`X = X op Y`) reads it at its own number, so it
/// does not qualify.
fn written_first(
    name: &str,
    slot: Slot,
    vars: &Vars<'_>,
    declared_in: &[i32],
    writers: &HashMap<&str, (i32, usize, bool)>,
) -> Option<(i32, usize)> {
    let &(block, at, plain) = writers.get(name)?;
    let first = plain
        && vars.writes.get(name) == Some(&1)
        && declared_in.get(slot as usize) == Some(&block)
        && vars.reads.get(name).is_none_or(|r| r.1 > at);
    first.then_some((block, at))
}

/// The frame a call (or a new task) starts with (`Func::entry`): the
/// template, with a scalar stand-in in each slot whose zero value no op
/// can read: the parameters or captures (the call or the `go` writes them
/// before any op runs) and the variables [`written_first`]. Constants
/// hoisted into the template keep their value.
fn entry_template(
    template: &[Value],
    vars: &Vars<'_>,
    declared_in: &[i32],
    params: &HashSet<&str>,
    writers: &HashMap<&str, (i32, usize, bool)>,
) -> Vec<Value> {
    let mut entry = template.to_vec();
    for (name, (slot, _)) in &vars.map {
        let Some(zero) = entry.get_mut(*slot as usize) else {
            continue;
        };
        if matches!(zero, Value::Int(_) | Value::Float(_) | Value::Bool(_))
            || vars.hoisted.contains(name)
        {
            continue;
        }
        if params.contains(name) || written_first(name, *slot, vars, declared_in, writers).is_some()
        {
            *zero = Value::Int(0);
        }
    }
    entry
}

/// The variables whose one read is the last before their next write:
/// [`written_first`], and read by one op input only, a plain op (it reads
/// once) in the writer's block. Every pass through that block runs the
/// write and then the read, and nothing else reads the variable, so after
/// the read its value is dead until the next pass writes it again: the
/// reading op may take the value out of its slot (`Instr::Tensor::moves`).
/// Parameters and captures (written by the call) and hoisted constants
/// (written by nobody) are left out. These are mostly the front end's
/// temporaries, `%N = matmul(x, w); y = %N + b`.
fn dead_after_read<'p>(
    vars: &Vars<'p>,
    declared_in: &[i32],
    params: &HashSet<&str>,
    writers: &HashMap<&str, (i32, usize, bool)>,
    readers: &HashMap<&str, (i32, usize, bool)>,
) -> HashSet<&'p str> {
    let mut dead = HashSet::new();
    for (&name, &(slot, _)) in &vars.map {
        if params.contains(name)
            || vars.hoisted.contains(name)
            || vars.reads.get(name).map(|r| r.0) != Some(1)
        {
            continue;
        }
        let write = written_first(name, slot, vars, declared_in, writers);
        let read = readers.get(name);
        if matches!((write, read), (Some((wb, _)), Some(&(rb, _, true))) if wb == rb) {
            dead.insert(name);
        }
    }
    dead
}

/// The variables of a frame that hold values before its body runs.
enum Bound<'a, 'p> {
    /// A function's parameters (declared in its body block).
    Params(&'a [&'p str]),
    /// A go block's captures, variables of the enclosing frame (`Vars`).
    Captures(&'p [String], &'a Vars<'p>),
}

/// The block indices an attribute refers to.
fn attr_blocks(a: &pb::Attr) -> impl Iterator<Item = i32> + '_ {
    let (one, many): (Option<i32>, &[i64]) = match &a.value {
        Some(pb::attr::Value::Block(b)) => (Some(*b), &[]),
        Some(pb::attr::Value::Blocks(bs)) => (None, &bs.v),
        _ => (None, &[]),
    };
    one.into_iter().chain(many.iter().map(|b| *b as i32))
}

/// Emission work left, on an explicit stack instead of recursion over
/// nested blocks: a chain of `else if`s or a `switch` nests blocks as deep
/// as it is long, and a `.pb` file may nest them deeper still.
enum Work<'p> {
    /// A block starts (a jump may land here), then its ops.
    Block(&'p pb::BlockDesc),
    /// The ops of a block from index `.1` on.
    Ops(&'p pb::BlockDesc, usize),
    /// What a control op does once the sub-block pushed above it is done.
    After(After<'p>),
}

/// The rest of a control op, run when its current sub-block is emitted.
enum After<'p> {
    /// After an `if`'s then block: jump over the else block, if any.
    IfThen {
        jf: usize,
        else_b: Option<&'p pb::BlockDesc>,
    },
    /// After the else block.
    IfElse { j: usize },
    /// After a loop's condition block (or at once without one).
    LoopCond {
        op: &'p pb::OpDesc,
        body: &'p pb::BlockDesc,
        post: Option<&'p pb::BlockDesc>,
        top: usize,
    },
    /// After the body: `continue` lands here, before the post block.
    LoopBody {
        post: Option<&'p pb::BlockDesc>,
        top: usize,
        op: &'p pb::OpDesc,
    },
    /// After the post block: the back edge; `break` lands after it.
    LoopEnd {
        op: &'p pb::OpDesc,
        top: usize,
        breaks: Vec<usize>,
    },
    /// After a region's block: `break` lands here.
    RegionEnd { op: &'p pb::OpDesc },
    /// Before the next case (or default) block of a select, or at its end.
    SelectNext(Box<SelectState<'p>>),
}

/// A select being emitted: its instruction, its cases, the blocks still to
/// emit and the jumps to patch to its end.
struct SelectState<'p> {
    op: &'p pb::OpDesc,
    sel: usize,
    cases: Vec<SelCase>,
    default: Option<Pc>,
    /// The case blocks (with their case index) and the default block.
    bodies: Vec<(Option<usize>, &'p pb::BlockDesc)>,
    next: usize,
    ends: Vec<usize>,
}

impl<'p> Emitter<'_, 'p> {
    /// Emits a function's (or go block's) body block and every block below
    /// it, in a loop over `Work`.
    pub fn emit_body(&mut self, b: &'p pb::BlockDesc) -> Result<(), LowerError> {
        let mut work = vec![Work::Block(b)];
        while let Some(w) = work.pop() {
            match w {
                Work::Block(b) => {
                    self.barrier_here();
                    work.push(Work::Ops(b, 0));
                }
                Work::Ops(b, k) => {
                    if let Some(op) = b.ops.get(k) {
                        work.push(Work::Ops(b, k + 1));
                        self.emit_op(op, &mut work)?;
                    }
                }
                Work::After(a) => self.after(a, &mut work)?,
            }
        }
        Ok(())
    }

    /// Emits `op`; a control op pushes its sub-blocks and what follows them.
    fn emit_op(&mut self, op: &'p pb::OpDesc, work: &mut Vec<Work<'p>>) -> Result<(), LowerError> {
        match op.r#type.as_str() {
            "if" => {
                let cond = self.in1(op, "Cond")?;
                let then_b = self.need_block(op, "then_block")?;
                let else_b = self.sub_block(op, "else_block")?;
                let jf = self.jump_if_not(cond, first(self.ins(op, "Cond")), op);
                work.push(Work::After(After::IfThen { jf, else_b }));
                work.push(Work::Block(then_b));
                return Ok(());
            }
            "loop" => {
                self.opt_in(op, "Cond")?;
                let cond_b = self.sub_block(op, "cond_block")?;
                let body = self.need_block(op, "body_block")?;
                let post = self.sub_block(op, "post_block")?;
                let top = self.pc();
                work.push(Work::After(After::LoopCond {
                    op,
                    body,
                    post,
                    top,
                }));
                if let Some(cb) = cond_b {
                    work.push(Work::Block(cb));
                }
                return Ok(());
            }
            "region" => {
                let b = self.need_block(op, "block")?;
                self.ctl.push(Ctl {
                    kind: CtlKind::Region,
                    label: label(op),
                    break_patches: Vec::new(),
                });
                work.push(Work::After(After::RegionEnd { op }));
                work.push(Work::Block(b));
                return Ok(());
            }
            "select" => {
                let SelectParts {
                    cases,
                    blocks,
                    default,
                } = self.select_parts(op)?;
                let sel = self.push(
                    Instr::Select {
                        cases: Box::default(),
                        default: None,
                    },
                    Some(op),
                );
                // Each case block (and default) is its own break context.
                let bodies = blocks
                    .into_iter()
                    .enumerate()
                    .map(|(i, b)| (Some(i), b))
                    .chain(default.map(|b| (None, b)))
                    .collect();
                let state = SelectState {
                    op,
                    sel,
                    cases,
                    default: None,
                    bodies,
                    next: 0,
                    ends: Vec::new(),
                };
                return self.after(After::SelectNext(Box::new(state)), work);
            }
            "break" => {
                let l = label(op);
                let j = self.push(Instr::Jump { to: 0 }, Some(op));
                let target = self
                    .ctl
                    .iter_mut()
                    .rev()
                    .find(|c| l.is_none() || c.label == l)
                    .ok_or_else(|| LowerError::StrayJump("break".into()))?;
                target.break_patches.push(j);
            }
            "continue" => {
                let l = label(op);
                let j = self.push(Instr::Jump { to: 0 }, Some(op));
                let target = self
                    .ctl
                    .iter_mut()
                    .rev()
                    .find(|c| {
                        matches!(c.kind, CtlKind::Loop { .. }) && (l.is_none() || c.label == l)
                    })
                    .ok_or_else(|| LowerError::StrayJump("continue".into()))?;
                if let CtlKind::Loop { cont_patches } = &mut target.kind {
                    cont_patches.push(j);
                }
            }
            "go" => {
                let b = self.need_block(op, "block")?;
                let captures = self.ins_slots(op, "Captures")?;
                let device = self.opt_in(op, "Device")?;
                let id = self.reserve_go(b, self.ins(op, "Captures"));
                let go = Instr::Go {
                    func: id,
                    captures,
                    device,
                };
                self.push(go, Some(op));
            }
            _ => return self.emit_data_op(op),
        }
        // A control op: what follows may be a jump target.
        self.barrier_here();
        Ok(())
    }

    /// The rest of a control op (see `After`).
    fn after(&mut self, a: After<'p>, work: &mut Vec<Work<'p>>) -> Result<(), LowerError> {
        match a {
            After::IfThen { jf, else_b } => {
                if let Some(eb) = else_b {
                    let j = self.push(Instr::Jump { to: 0 }, None);
                    let here = self.pc();
                    self.patch(jf, here);
                    work.push(Work::After(After::IfElse { j }));
                    work.push(Work::Block(eb));
                    return Ok(());
                }
                let here = self.pc();
                self.patch(jf, here);
            }
            After::IfElse { j } => {
                let here = self.pc();
                self.patch(j, here);
            }
            After::LoopCond {
                op,
                body,
                post,
                top,
            } => {
                let cond = self.opt_in(op, "Cond")?;
                let exit = cond.map(|c| self.jump_if_not(c, first(self.ins(op, "Cond")), op));
                self.ctl.push(Ctl {
                    kind: CtlKind::Loop {
                        cont_patches: Vec::new(),
                    },
                    label: label(op),
                    break_patches: exit.into_iter().collect(),
                });
                work.push(Work::After(After::LoopBody { post, top, op }));
                work.push(Work::Block(body));
                return Ok(());
            }
            After::LoopBody { post, top, op } => {
                let ctl = self
                    .ctl
                    .pop()
                    .ok_or_else(|| bad(op, "control stack".into()))?;
                let cont = self.pc();
                if let CtlKind::Loop { cont_patches } = &ctl.kind {
                    for &p in cont_patches {
                        self.patch(p, cont);
                    }
                }
                work.push(Work::After(After::LoopEnd {
                    op,
                    top,
                    breaks: ctl.break_patches,
                }));
                if let Some(pb) = post {
                    work.push(Work::Block(pb));
                }
                return Ok(());
            }
            After::LoopEnd { op, top, breaks } => {
                self.push(Instr::Jump { to: top as Pc }, Some(op));
                let end = self.pc();
                for p in breaks {
                    self.patch(p, end);
                }
            }
            After::RegionEnd { op } => {
                let ctl = self
                    .ctl
                    .pop()
                    .ok_or_else(|| bad(op, "control stack".into()))?;
                let end = self.pc();
                for &p in &ctl.break_patches {
                    self.patch(p, end);
                }
            }
            After::SelectNext(mut st) => {
                if st.next > 0 {
                    // A case block is done: leave the select.
                    let ctl = self
                        .ctl
                        .pop()
                        .ok_or_else(|| bad(st.op, "control stack".into()))?;
                    st.ends.extend(ctl.break_patches);
                    let j = self.push(Instr::Jump { to: 0 }, None);
                    st.ends.push(j);
                }
                if let Some(&(which, blk)) = st.bodies.get(st.next) {
                    let start = self.pc() as Pc;
                    match which {
                        Some(i) => st.cases[i].target = start,
                        None => st.default = Some(start),
                    }
                    self.ctl.push(Ctl {
                        kind: CtlKind::Case,
                        label: None,
                        break_patches: Vec::new(),
                    });
                    st.next += 1;
                    work.push(Work::After(After::SelectNext(st)));
                    work.push(Work::Block(blk));
                    return Ok(());
                }
                let end = self.pc();
                for &p in &st.ends {
                    self.patch(p, end);
                }
                let SelectState {
                    sel,
                    cases,
                    default,
                    ..
                } = *st;
                self.code[sel] = Instr::Select {
                    cases: cases.into_boxed_slice(),
                    default,
                };
            }
        }
        // The control op is done: what follows may be a jump target.
        self.barrier_here();
        Ok(())
    }
}

fn first(names: &[String]) -> &str {
    names.first().map_or("", String::as_str)
}

fn label(op: &pb::OpDesc) -> Option<String> {
    match attr(op, "label") {
        Some(pb::attr::Value::S(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}
