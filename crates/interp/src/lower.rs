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
//! Data ops are lowered in `lower_ops`. Lowering never panics: a malformed
//! program (one the verifier would reject) gives a `LowerError`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use weft_ir::pb;

use weft_rt::SrcLoc;

use super::code::{Func, FuncId, Instr, Pc, Program, Slot};
use super::value::{zero_value, StructInfo, Ty, Value, ZeroError};

/// Why a program could not be lowered.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LowerError {
    #[error("entry function {0} not found")]
    NoEntry(String),
    #[error("function {0}: body block {1} does not exist")]
    NoBlock(String, i32),
    #[error("unknown function {0}")]
    UnknownFunc(String),
    #[error("unknown struct type {0}")]
    UnknownStruct(String),
    #[error("struct {0} has no field {1}")]
    UnknownField(String, String),
    #[error("unknown variable {0} in function {1}")]
    UnknownVar(String, String),
    #[error("variable {0} has no type")]
    Untyped(String),
    #[error("invalid type: {0}")]
    BadType(String),
    #[error("op {op}: {what}")]
    BadOp { op: String, what: String },
    #[error("unknown op {0}")]
    UnknownOp(String),
    #[error("{0} outside of a loop, region or select case")]
    StrayJump(String),
    #[error(transparent)]
    Zero(#[from] ZeroError),
}

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

/// Program-wide lowering state.
pub(super) struct Cx<'p> {
    pub prog: &'p pb::ProgramDesc,
    pub struct_ids: HashMap<&'p str, u32>,
    pub structs: Vec<StructInfo>,
    pub func_ids: HashMap<&'p str, FuncId>,
    files: HashMap<String, Arc<str>>,
}

/// A function's variables: name to slot and type.
pub(super) struct Vars<'p> {
    pub fname: &'p str,
    pub map: HashMap<&'p str, (Slot, Ty)>,
    /// The slot that `_` outputs write to.
    pub junk: Slot,
    /// How many op inputs read each variable (over the whole function).
    pub reads: HashMap<&'p str, u32>,
    /// How many op outputs write each variable.
    pub writes: HashMap<&'p str, u32>,
    /// Variables whose constant lives in the frame template (their `const`
    /// op emits nothing).
    pub hoisted: HashSet<&'p str>,
}

impl<'p> Cx<'p> {
    fn new(prog: &'p pb::ProgramDesc) -> Result<Self, LowerError> {
        let mut struct_ids = HashMap::new();
        for (i, s) in prog.structs.iter().enumerate() {
            struct_ids.insert(s.name.as_str(), i as u32);
        }
        let mut cx = Cx {
            prog,
            struct_ids,
            structs: Vec::new(),
            func_ids: HashMap::new(),
            files: HashMap::new(),
        };
        let mut structs = Vec::with_capacity(prog.structs.len());
        for s in &prog.structs {
            let mut fields = Vec::with_capacity(s.fields.len());
            for f in &s.fields {
                let ty = cx.field_ty(f)?;
                fields.push((Arc::from(f.name.as_str()), ty));
            }
            structs.push(StructInfo {
                name: Arc::from(s.name.as_str()),
                fields,
            });
        }
        cx.structs = structs;
        for (i, f) in prog.functions.iter().enumerate() {
            cx.func_ids.insert(f.name.as_str(), i as FuncId);
        }
        Ok(cx)
    }

    fn field_ty(&self, f: &pb::Field) -> Result<Ty, LowerError> {
        match &f.r#type {
            Some(t) => self.ty(t),
            None => Err(LowerError::Untyped(f.name.clone())),
        }
    }

    /// Converts an IR type.
    pub fn ty(&self, t: &pb::Type) -> Result<Ty, LowerError> {
        use pb::r#type::Kind;
        match &t.kind {
            Some(Kind::Scalar(s)) => match pb::Scalar::try_from(*s) {
                Ok(pb::Scalar::Int) => Ok(Ty::Int),
                Ok(pb::Scalar::Float) => Ok(Ty::Float),
                Ok(pb::Scalar::Bool) => Ok(Ty::Bool),
                Ok(pb::Scalar::String) => Ok(Ty::Str),
                _ => Err(LowerError::BadType(format!("scalar {s}"))),
            },
            Some(Kind::Tensor(_)) => Ok(Ty::Tensor),
            Some(Kind::Chan(e)) => Ok(Ty::Chan(Arc::new(self.ty(e)?))),
            Some(Kind::List(e)) => Ok(Ty::List(Arc::new(self.ty(e)?))),
            Some(Kind::StructName(n)) => match self.struct_ids.get(n.as_str()) {
                Some(id) => Ok(Ty::Struct {
                    id: *id,
                    name: Arc::from(n.as_str()),
                }),
                None => Err(LowerError::UnknownStruct(n.clone())),
            },
            None => Err(LowerError::BadType("no kind".into())),
        }
    }

    /// The run-time location of an op.
    pub fn loc(&mut self, l: Option<&pb::SourceLoc>) -> SrcLoc {
        let (file, line, col) = match l {
            Some(l) => (l.file.as_str(), l.line, l.col),
            None => ("?", 0, 0),
        };
        let file = match self.files.get(file) {
            Some(f) => f.clone(),
            None => {
                let f: Arc<str> = Arc::from(file);
                self.files.insert(file.to_string(), f.clone());
                f
            }
        };
        SrcLoc { file, line, col }
    }

    pub fn block(&self, idx: i32) -> Option<&'p pb::BlockDesc> {
        usize::try_from(idx)
            .ok()
            .and_then(|i| self.prog.blocks.get(i))
    }

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
                    let v = super::lower_ops::const_value(op, Some(ty))?;
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

impl Vars<'_> {
    pub fn get(&self, name: &str) -> Result<&(Slot, Ty), LowerError> {
        self.map
            .get(name)
            .ok_or_else(|| LowerError::UnknownVar(name.to_string(), self.fname.to_string()))
    }
    pub fn slot(&self, name: &str) -> Result<Slot, LowerError> {
        Ok(self.get(name)?.0)
    }
}

/// What `break` and `continue` can leave.
pub(super) enum CtlKind {
    Loop { cont_patches: Vec<usize> },
    Region,
    Case,
}

pub(super) struct Ctl {
    pub kind: CtlKind,
    pub label: Option<String>,
    pub break_patches: Vec<usize>,
}

/// Emits one function's (or go block's) code.
pub(super) struct Emitter<'a, 'p> {
    pub cx: &'a mut Cx<'p>,
    pub vars: &'a Vars<'p>,
    template: Arc<[Value]>,
    nfuncs: usize,
    extra: &'a mut Vec<Func>,
    pub code: Vec<Instr>,
    locs: Vec<SrcLoc>,
    pub ctl: Vec<Ctl>,
    /// No instruction before this index may be merged with a later one (a
    /// block starts or a jump may land here).
    barrier: usize,
}

impl<'a, 'p> Emitter<'a, 'p> {
    fn new(
        cx: &'a mut Cx<'p>,
        vars: &'a Vars<'p>,
        template: Arc<[Value]>,
        nfuncs: usize,
        extra: &'a mut Vec<Func>,
    ) -> Self {
        Emitter {
            cx,
            vars,
            template,
            nfuncs,
            extra,
            code: Vec::new(),
            locs: Vec::new(),
            ctl: Vec::new(),
            barrier: 0,
        }
    }

    fn finish(mut self, name: Arc<str>, params: Vec<Slot>) -> Func {
        let consts: Vec<Slot> = self
            .vars
            .hoisted
            .iter()
            .filter_map(|n| self.vars.map.get(n).map(|(s, _)| *s))
            .collect();
        super::peephole::optimize(&mut self.code, &self.template, &consts);
        let scalar_frame = self
            .template
            .iter()
            .all(|v| matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_)));
        Func {
            name,
            scalar_frame,
            template: self.template,
            params,
            code: self.code,
            locs: self.locs,
        }
    }

    pub fn pc(&self) -> usize {
        self.code.len()
    }

    /// Appends an instruction with the location of `op` (or of the previous
    /// instruction).
    pub fn push(&mut self, i: Instr, op: Option<&pb::OpDesc>) -> usize {
        let loc = match op {
            Some(op) => self.cx.loc(op.loc.as_ref()),
            None => match self.locs.last() {
                Some(l) => l.clone(),
                None => self.cx.loc(None),
            },
        };
        self.code.push(i);
        self.locs.push(loc);
        self.code.len() - 1
    }

    pub fn patch(&mut self, at: usize, target: usize) {
        let t = target as Pc;
        match &mut self.code[at] {
            Instr::Jump { to } | Instr::JumpIfNot { to, .. } | Instr::CmpJump { to, .. } => *to = t,
            _ => {}
        }
    }

    pub fn emit_block(&mut self, b: &'p pb::BlockDesc) -> Result<(), LowerError> {
        self.barrier = self.pc();
        for op in &b.ops {
            self.emit_op(op)?;
        }
        Ok(())
    }

    /// Emits a conditional jump on `cond` (target patched later), fused with
    /// the comparison that computed `cond` when nothing else reads it.
    fn jump_if_not(&mut self, cond: Slot, cond_name: &str, op: &'p pb::OpDesc) -> usize {
        let single = self.vars.reads.get(cond_name) == Some(&1);
        if single && self.barrier < self.pc() {
            if let Some(Instr::Cmp {
                op: cop,
                kind,
                x,
                y,
                out,
            }) = self.code.last()
            {
                if *out == cond {
                    let fused = Instr::CmpJump {
                        op: *cop,
                        kind: *kind,
                        x: *x,
                        y: *y,
                        to: 0,
                    };
                    let at = self.code.len() - 1;
                    self.code[at] = fused;
                    return at;
                }
            }
        }
        self.push(Instr::JumpIfNot { cond, to: 0 }, Some(op))
    }

    /// `Out = copy(X)` right after the instruction that computed `X`, where
    /// nothing else reads `X`, becomes that instruction writing `Out`
    /// directly. Besides saving a dispatch, this lets `l = set_index(l, ...)`
    /// and friends update the list in place (copy-on-write sees one owner).
    pub fn coalesce_copy(&mut self, x: &str, out: Slot) -> Result<bool, LowerError> {
        let xs = self.vars.slot(x)?;
        if self.vars.reads.get(x) != Some(&1) || xs == out || self.barrier >= self.pc() {
            return Ok(false);
        }
        match self.code.last_mut().and_then(Instr::out_mut) {
            Some(o) if *o == xs => {
                *o = out;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    pub fn sub_block(
        &self,
        op: &pb::OpDesc,
        name: &str,
    ) -> Result<Option<&'p pb::BlockDesc>, LowerError> {
        match attr(op, name) {
            None => Ok(None),
            Some(pb::attr::Value::Block(b)) => match self.cx.block(*b) {
                Some(blk) => Ok(Some(blk)),
                None => Err(bad(op, format!("block {b} does not exist"))),
            },
            Some(_) => Err(bad(op, format!("attribute {name} is not a block"))),
        }
    }

    fn need_block(&self, op: &pb::OpDesc, name: &str) -> Result<&'p pb::BlockDesc, LowerError> {
        self.sub_block(op, name)?
            .ok_or_else(|| bad(op, format!("missing block {name}")))
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
        self.barrier = self.pc();
        Ok(())
    }

    fn emit_go_block(&mut self, b: &'p pb::BlockDesc) -> Result<FuncId, LowerError> {
        let name: Arc<str> = Arc::from(format!("{}.go{}", self.vars.fname, b.idx));
        let func = {
            let mut child = Emitter::new(
                self.cx,
                self.vars,
                self.template.clone(),
                self.nfuncs,
                self.extra,
            );
            child.emit_block(b)?;
            child.push(Instr::End, None);
            child.finish(name, Vec::new())
        };
        self.extra.push(func);
        Ok((self.nfuncs + self.extra.len() - 1) as FuncId)
    }

    // ---- operand helpers, shared with lower_ops ----

    pub fn ins(&self, op: &'p pb::OpDesc, slot: &str) -> &'p [String] {
        op.inputs
            .iter()
            .find(|v| v.slot == slot)
            .map(|v| v.args.as_slice())
            .unwrap_or(&[])
    }

    pub fn outs(&self, op: &'p pb::OpDesc, slot: &str) -> &'p [String] {
        op.outputs
            .iter()
            .find(|v| v.slot == slot)
            .map(|v| v.args.as_slice())
            .unwrap_or(&[])
    }

    pub fn ins_slots(&self, op: &'p pb::OpDesc, slot: &str) -> Result<Box<[Slot]>, LowerError> {
        self.ins(op, slot)
            .iter()
            .map(|n| self.vars.slot(n))
            .collect()
    }

    pub fn in1(&self, op: &'p pb::OpDesc, slot: &str) -> Result<Slot, LowerError> {
        self.opt_in(op, slot)?
            .ok_or_else(|| bad(op, format!("missing input {slot}")))
    }

    pub fn opt_in(&self, op: &'p pb::OpDesc, slot: &str) -> Result<Option<Slot>, LowerError> {
        match self.ins(op, slot).first() {
            None => Ok(None),
            Some(n) if n.is_empty() || n == "_" => Ok(None),
            Some(n) => Ok(Some(self.vars.slot(n)?)),
        }
    }

    /// The type of the variable bound to input `slot`.
    pub fn in_ty(&self, op: &'p pb::OpDesc, slot: &str) -> Result<Ty, LowerError> {
        match self.ins(op, slot).first() {
            Some(n) => Ok(self.vars.get(n)?.1.clone()),
            None => Err(bad(op, format!("missing input {slot}"))),
        }
    }

    /// An output; `_` and a missing output go to the junk slot.
    pub fn out1(&self, op: &'p pb::OpDesc, slot: &str) -> Result<Slot, LowerError> {
        Ok(self.opt_out(op, slot)?.unwrap_or(self.vars.junk))
    }

    pub fn opt_out(&self, op: &'p pb::OpDesc, slot: &str) -> Result<Option<Slot>, LowerError> {
        self.named_out(self.outs(op, slot).first())
    }

    pub fn named_out(&self, n: Option<&String>) -> Result<Option<Slot>, LowerError> {
        match n {
            None => Ok(None),
            Some(n) if n.is_empty() || n == "_" => Ok(None),
            Some(n) => Ok(Some(self.vars.slot(n)?)),
        }
    }

    /// The type of the variable bound to output `slot` (None for `_`).
    pub fn out_ty(&self, op: &'p pb::OpDesc, slot: &str) -> Result<Option<Ty>, LowerError> {
        match self.outs(op, slot).first() {
            None => Ok(None),
            Some(n) if n.is_empty() || n == "_" => Ok(None),
            Some(n) => Ok(Some(self.vars.get(n)?.1.clone())),
        }
    }

    pub fn func_id(&self, op: &pb::OpDesc) -> Result<FuncId, LowerError> {
        match attr(op, "func") {
            Some(pb::attr::Value::S(name)) => self
                .cx
                .func_ids
                .get(name.as_str())
                .copied()
                .ok_or_else(|| LowerError::UnknownFunc(name.clone())),
            _ => Err(bad(op, "missing attribute func".into())),
        }
    }
}

/// An attribute's value by name.
pub(super) fn attr<'o>(op: &'o pb::OpDesc, name: &str) -> Option<&'o pb::attr::Value> {
    op.attrs
        .iter()
        .find(|a| a.name == name)
        .and_then(|a| a.value.as_ref())
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

/// A malformed-op error.
pub(super) fn bad(op: &pb::OpDesc, what: String) -> LowerError {
    LowerError::BadOp {
        op: op.r#type.clone(),
        what,
    }
}
