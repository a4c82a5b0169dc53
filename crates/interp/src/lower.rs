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
//! 3. each `go` block becomes a `Func` of its own sharing the frame layout.
//!
//! This file drives the lowering and emits control flow; the emitter and
//! its state are `lower_emit`, data ops `lower_ops`, a select's cases
//! `lower_select`. Lowering never panics: a malformed program (one the
//! verifier would reject) gives a `LowerError`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use weft_ir::pb;

use super::code::{Func, FuncId, Instr, Pc, Program, Slot};
use super::lower_emit::{attr, bad, Ctl, CtlKind, Cx, Emitter, Vars};
use super::lower_ops::const_value;
use super::lower_select::SelectParts;
use super::value::{zero_value, Value};

pub use super::lower_emit::LowerError;

/// Lowers a whole program.
pub fn lower(prog: &pb::ProgramDesc) -> Result<Program, LowerError> {
    let mut cx = Cx::new(prog)?;
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
        let mut blocks: Vec<&'p pb::BlockDesc> = Vec::new();
        let mut seen = HashSet::new();
        self.owned_blocks(body, &mut seen, &mut blocks);
        let mut vars = Vars {
            fname: f.name.as_str(),
            map: HashMap::new(),
            junk: 0,
            reads: HashMap::new(),
            writes: HashMap::new(),
            hoisted: HashSet::new(),
        };
        for b in &blocks {
            for op in &b.ops {
                for v in &op.inputs {
                    for a in &v.args {
                        *vars.reads.entry(a.as_str()).or_insert(0) += 1;
                    }
                }
                for v in &op.outputs {
                    for a in &v.args {
                        *vars.writes.entry(a.as_str()).or_insert(0) += 1;
                    }
                }
            }
        }
        let mut template = Vec::new();
        for b in &blocks {
            for v in &b.vars {
                let ty = match &v.r#type {
                    Some(t) => self.ty(t)?,
                    None => return Err(LowerError::Untyped(v.name.clone())),
                };
                if vars.map.contains_key(v.name.as_str()) {
                    continue;
                }
                template.push(zero_value(&ty, &self.structs)?);
                vars.map
                    .insert(v.name.as_str(), (template.len() as Slot - 1, ty));
            }
        }
        // A variable other than a parameter whose only writer is a `const`
        // op in the block that declares it, with no read before that op (in the block or below
        // the ops before it), holds the constant from the frame's start: every
        // read (reads are scoped to the block and below) comes after the op
        // on every path. The op is then dropped (`Vars::hoisted`).
        for b in &blocks {
            for (k, op) in b.ops.iter().enumerate() {
                if op.r#type != "const" {
                    continue;
                }
                let Some(name) = op.outputs.first().and_then(|o| o.args.first()) else {
                    continue;
                };
                let declared_here = b.vars.iter().any(|v| v.name == *name);
                // A parameter is written by the call before any op runs.
                let param = f.params.iter().any(|p| p.name == *name);
                if !declared_here
                    || param
                    || vars.writes.get(name.as_str()) != Some(&1)
                    || self.reads_in(&b.ops[..k], name, &mut HashSet::new())
                {
                    continue;
                }
                if let Ok((slot, ty)) = vars.get(name) {
                    let v = const_value(op, Some(ty))?;
                    template[*slot as usize] = v;
                    vars.hoisted.insert(name.as_str());
                }
            }
        }
        vars.junk = template.len() as Slot;
        template.push(Value::Int(0));
        let template: Arc<[Value]> = template.into();
        let mut params = Vec::with_capacity(f.params.len());
        for p in &f.params {
            params.push(vars.slot(&p.name)?);
        }
        // 2. The body.
        let mut em = Emitter::new(self, &vars, template.clone(), nfuncs, extra);
        em.emit_block(body)?;
        em.push(Instr::End, None);
        Ok(em.finish(Arc::from(f.name.as_str()), params))
    }

    /// Whether any of `ops`, or an op in a block below them, reads `name`.
    fn reads_in(&self, ops: &[pb::OpDesc], name: &str, seen: &mut HashSet<i32>) -> bool {
        ops.iter().any(|op| {
            op.inputs.iter().any(|v| v.args.iter().any(|a| a == name))
                || op.attrs.iter().any(|a| {
                    attr_blocks(a).into_iter().any(|idx| {
                        seen.insert(idx)
                            && self
                                .block(idx)
                                .is_some_and(|sub| self.reads_in(&sub.ops, name, seen))
                    })
                })
        })
    }

    /// Every block owned by `b`'s ops, transitively, `b` included.
    fn owned_blocks(
        &self,
        b: &'p pb::BlockDesc,
        seen: &mut HashSet<i32>,
        out: &mut Vec<&'p pb::BlockDesc>,
    ) {
        if !seen.insert(b.idx) {
            return;
        }
        out.push(b);
        for op in &b.ops {
            for a in &op.attrs {
                for idx in attr_blocks(a) {
                    if let Some(sub) = self.block(idx) {
                        self.owned_blocks(sub, seen, out);
                    }
                }
            }
        }
    }
}

/// The block indices an attribute refers to.
fn attr_blocks(a: &pb::Attr) -> Vec<i32> {
    match &a.value {
        Some(pb::attr::Value::Block(b)) => vec![*b],
        Some(pb::attr::Value::Blocks(bs)) => bs.v.iter().map(|b| *b as i32).collect(),
        _ => Vec::new(),
    }
}

impl<'p> Emitter<'_, 'p> {
    pub fn emit_block(&mut self, b: &'p pb::BlockDesc) -> Result<(), LowerError> {
        self.barrier_here();
        for op in &b.ops {
            self.emit_op(op)?;
        }
        Ok(())
    }

    fn emit_op(&mut self, op: &'p pb::OpDesc) -> Result<(), LowerError> {
        match op.r#type.as_str() {
            "if" => {
                let cond = self.in1(op, "Cond")?;
                let then_b = self.need_block(op, "then_block")?;
                let else_b = self.sub_block(op, "else_block")?;
                let jf = self.jump_if_not(cond, first(self.ins(op, "Cond")), op);
                self.emit_block(then_b)?;
                if let Some(eb) = else_b {
                    let j = self.push(Instr::Jump { to: 0 }, None);
                    let here = self.pc();
                    self.patch(jf, here);
                    self.emit_block(eb)?;
                    let here = self.pc();
                    self.patch(j, here);
                } else {
                    let here = self.pc();
                    self.patch(jf, here);
                }
            }
            "loop" => {
                let cond = self.opt_in(op, "Cond")?;
                let cond_b = self.sub_block(op, "cond_block")?;
                let body = self.need_block(op, "body_block")?;
                let post = self.sub_block(op, "post_block")?;
                let top = self.pc();
                if let Some(cb) = cond_b {
                    self.emit_block(cb)?;
                }
                let exit = cond.map(|c| self.jump_if_not(c, first(self.ins(op, "Cond")), op));
                self.ctl.push(Ctl {
                    kind: CtlKind::Loop {
                        cont_patches: Vec::new(),
                    },
                    label: label(op),
                    break_patches: exit.into_iter().collect(),
                });
                self.emit_block(body)?;
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
                if let Some(pb) = post {
                    self.emit_block(pb)?;
                }
                self.push(Instr::Jump { to: top as Pc }, Some(op));
                let end = self.pc();
                for &p in &ctl.break_patches {
                    self.patch(p, end);
                }
            }
            "region" => {
                let b = self.need_block(op, "block")?;
                self.ctl.push(Ctl {
                    kind: CtlKind::Region,
                    label: label(op),
                    break_patches: Vec::new(),
                });
                self.emit_block(b)?;
                let ctl = self
                    .ctl
                    .pop()
                    .ok_or_else(|| bad(op, "control stack".into()))?;
                let end = self.pc();
                for &p in &ctl.break_patches {
                    self.patch(p, end);
                }
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
            "select" => self.emit_select(op)?,
            "go" => {
                let b = self.need_block(op, "block")?;
                let captures = self.ins_slots(op, "Captures")?;
                let id = self.emit_go_block(b)?;
                self.push(Instr::Go { func: id, captures }, Some(op));
            }
            _ => {
                self.emit_data_op(op)?;
                return Ok(());
            }
        }
        // A control op: what follows may be a jump target.
        self.barrier_here();
        Ok(())
    }

    /// `select`: one `Select` instruction holding every case, followed by
    /// the case blocks and the default block, each a `break` context ending
    /// in a jump past the last of them.
    fn emit_select(&mut self, op: &'p pb::OpDesc) -> Result<(), LowerError> {
        let SelectParts {
            mut cases,
            blocks,
            default: default_b,
        } = self.select_parts(op)?;
        let sel = self.push(
            Instr::Select {
                cases: Box::default(),
                default: None,
            },
            Some(op),
        );
        let mut ends = Vec::new();
        let mut default = None;
        // Each case block (and default) is its own break context.
        let bodies = blocks
            .into_iter()
            .enumerate()
            .map(|(i, b)| (Some(i), b))
            .chain(default_b.map(|b| (None, b)));
        for (which, blk) in bodies {
            let start = self.pc() as Pc;
            match which {
                Some(i) => cases[i].target = start,
                None => default = Some(start),
            }
            self.ctl.push(Ctl {
                kind: CtlKind::Case,
                label: None,
                break_patches: Vec::new(),
            });
            self.emit_block(blk)?;
            let ctl = self
                .ctl
                .pop()
                .ok_or_else(|| bad(op, "control stack".into()))?;
            ends.extend(ctl.break_patches);
            ends.push(self.push(Instr::Jump { to: 0 }, None));
        }
        let end = self.pc();
        for p in ends {
            self.patch(p, end);
        }
        self.code[sel] = Instr::Select {
            cases: cases.into_boxed_slice(),
            default,
        };
        Ok(())
    }

    fn emit_go_block(&mut self, b: &'p pb::BlockDesc) -> Result<FuncId, LowerError> {
        let name: Arc<str> = Arc::from(format!("{}.go{}", self.vars.fname, b.idx));
        let func = {
            let mut child = self.child();
            child.emit_block(b)?;
            child.push(Instr::End, None);
            child.finish(name, Vec::new())
        };
        Ok(self.add_func(func))
    }

    // ---- operand helpers, shared with lower_ops ----
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
