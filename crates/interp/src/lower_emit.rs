//! The lowering's emitter and its state, shared by every part of the
//! lowering: `Cx` (program-wide: struct and function ids, types, source
//! locations), `Vars` (one function's variables and their slots), `Emitter`
//! (one function's code: pushing and patching instructions, copy
//! coalescing, compare-and-branch fusion, operand lookup) and `LowerError`.
//!
//! A leaf of the lowering: `lower.rs` (control flow), `lower_ops.rs` (data
//! ops) and `lower_select.rs` (select cases) build on it; it knows none of
//! them. Finishing a function runs `peephole`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use weft_ir::pb;

use weft_rt::SrcLoc;

use super::code::{Func, FuncId, Instr, Pc, Slot};
use super::peephole;
use super::value::{StructInfo, Ty, Value, ZeroError};

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

/// Program-wide lowering state.
pub(super) struct Cx<'p> {
    pub prog: &'p pb::ProgramDesc,
    pub struct_ids: HashMap<&'p str, u32>,
    pub structs: Vec<StructInfo>,
    pub func_ids: HashMap<&'p str, FuncId>,
    files: HashMap<String, Arc<str>>,
    /// Lowering for `weft test`: a `Point` goes before every operation the
    /// controlled executor must see (`Instr::needs_point`).
    pub points: bool,
}

/// A function's variables: name to slot and type.
pub(super) struct Vars<'p> {
    pub fname: &'p str,
    pub map: HashMap<&'p str, (Slot, Ty)>,
    /// The slot that `_` outputs write to: the last of the template, and
    /// dropped from it when no instruction writes to it (`junk_used`).
    pub junk: Slot,
    /// Whether an instruction was given the junk slot (`Emitter::out1`).
    pub junk_used: std::cell::Cell<bool>,
    /// How many op inputs read each variable (over the whole function),
    /// and the pre-order number of the first op that reads it (`lower.rs`).
    pub reads: HashMap<&'p str, (u32, usize)>,
    /// How many op outputs write each variable.
    pub writes: HashMap<&'p str, u32>,
    /// Variables whose constant lives in the frame template (their `const`
    /// op emits nothing).
    pub hoisted: HashSet<&'p str>,
    /// Each slot's int constant, if it holds a hoisted one (for `peephole`;
    /// computed once per function, shared by its go blocks).
    pub konst: Vec<Option<i64>>,
    /// Whether the frame template holds only scalars (`Func::scalar_frame`).
    pub scalar_frame: bool,
    /// The frame's template (its go blocks' captures start from it).
    pub template: Vec<Value>,
    /// The template a call starts the frame with (`Func::entry`).
    pub entry: Vec<Value>,
    /// Variables whose one read is the last before their next write
    /// (`lower.rs`, `dead_after_read`): the op reading one may take its
    /// value instead of copying it.
    pub dead_after_read: HashSet<&'p str>,
}

/// A `go` block met while emitting a frame's code, emitted after it.
pub(super) struct GoBlock<'p> {
    /// Its place among the extra functions (`reserve_go`).
    pub at: usize,
    pub block: &'p pb::BlockDesc,
    /// The `go`'s `Captures`: the variables of the enclosing frame it copies.
    pub captures: &'p [String],
}

impl<'p> Cx<'p> {
    pub(super) fn new(prog: &'p pb::ProgramDesc) -> Result<Self, LowerError> {
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
            points: false,
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
            Some(Kind::Comm(_)) => Ok(Ty::Comm),
            Some(Kind::Chan(e)) => Ok(Ty::Chan(Arc::new(self.ty(e)?))),
            Some(Kind::List(e)) => Ok(Ty::List(Arc::new(self.ty(e)?))),
            Some(Kind::StructName(n)) => match self.struct_ids.get(n.as_str()) {
                Some(id) => Ok(Ty::Struct {
                    id: *id,
                    name: Arc::from(n.as_str()),
                }),
                None => Err(LowerError::UnknownStruct(n.clone())),
            },
            Some(Kind::Map(m)) => match (&m.key, &m.value) {
                (Some(k), Some(v)) => Ok(Ty::Map(Arc::new(self.ty(k)?), Arc::new(self.ty(v)?))),
                _ => Err(LowerError::BadType("map without key or value type".into())),
            },
            Some(Kind::Func(_)) => Ok(Ty::Func(Arc::from(t.to_string()))),
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
    /// Whether exactly one op input in the function reads `name`.
    pub fn read_once(&self, name: &str) -> bool {
        self.reads.get(name).is_some_and(|r| r.0 == 1)
    }
}

impl Emitter<'_, '_> {
    /// The `Instr::Tensor::moves` of an op over the slots `ins`: a bit for
    /// each operand whose variable is dead after this read.
    pub fn moves(&self, op: &pb::OpDesc, ins: &[Slot]) -> u8 {
        let mut bits = 0u8;
        for v in &op.inputs {
            for name in &v.args {
                if !self.vars.dead_after_read.contains(name.as_str()) {
                    continue;
                }
                let Ok((slot, _)) = self.vars.get(name) else {
                    continue;
                };
                for (i, s) in ins.iter().enumerate().take(8) {
                    if s == slot {
                        bits |= 1 << i;
                    }
                }
            }
        }
        bits
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
    /// The `go` blocks met, with their places in the extra functions, to
    /// emit after this code (`reserve_go`).
    pub go_blocks: Vec<GoBlock<'p>>,
}

impl<'a, 'p> Emitter<'a, 'p> {
    pub(super) fn new(
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
            go_blocks: Vec::new(),
        }
    }

    pub(super) fn finish(mut self, name: Arc<str>, params: Vec<Slot>) -> Func {
        peephole::optimize(&mut self.code, &self.vars.konst);
        // A tensor op whose result replaces an operand read once (`x = x
        // * k`, often made so by `coalesce_copy`, hence here, after it)
        // moves that operand too.
        for i in &mut self.code {
            if let Instr::Tensor {
                ins, out, moves, ..
            } = i
            {
                let mut at = ins.iter().enumerate().filter(|(_, s)| *s == out);
                if let (Some((k, _)), None) = (at.next(), at.next()) {
                    if k < 8 {
                        *moves |= 1 << k;
                    }
                }
            }
        }
        // A frame no `_` output writes to needs no junk slot: every task
        // holds its frame while it is blocked, so the slot is not kept.
        let (template, junk) = match self.template.split_last() {
            Some((_, rest)) if !self.vars.junk_used.get() => (Arc::from(rest), None),
            _ => (self.template, Some(self.vars.junk)),
        };
        let entry = &self.vars.entry[..template.len().min(self.vars.entry.len())];
        Func {
            name,
            scalar_frame: self.vars.scalar_frame,
            entry_scalar: entry
                .iter()
                .all(|v| matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_))),
            entry: Arc::from(entry),
            template,
            junk,
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
        if self.cx.points && i.needs_point() {
            self.code.push(Instr::Point);
            self.locs.push(loc.clone());
        }
        self.code.push(i);
        self.locs.push(loc);
        self.code.len() - 1
    }

    /// Appends a `Point` (lowering for `weft test` only): for an
    /// instruction `needs_point` cannot judge alone (`len` of a channel).
    pub fn point_here(&mut self, op: &pb::OpDesc) {
        if self.cx.points {
            let loc = self.cx.loc(op.loc.as_ref());
            self.code.push(Instr::Point);
            self.locs.push(loc);
        }
    }

    pub fn patch(&mut self, at: usize, target: usize) {
        let t = target as Pc;
        match &mut self.code[at] {
            Instr::Jump { to } | Instr::JumpIfNot { to, .. } | Instr::CmpJump { to, .. } => *to = t,
            _ => {}
        }
    }

    /// Marks the current end of the code as a place a jump may land: no
    /// instruction before it is merged with a later one.
    pub fn barrier_here(&mut self) {
        self.barrier = self.pc();
    }

    /// The function id of `go` block `b` (capturing `captures`), emitted
    /// once this emitter is done (`go_blocks`) as a function with a frame
    /// of its own: its place in the program is held by a stand-in until then.
    pub fn reserve_go(&mut self, b: &'p pb::BlockDesc, captures: &'p [String]) -> FuncId {
        self.extra.push(Func {
            name: Arc::from(""),
            template: self.template.clone(),
            entry: self.template.clone(),
            entry_scalar: self.vars.scalar_frame,
            junk: Some(self.vars.junk),
            params: Vec::new(),
            code: Vec::new(),
            locs: Vec::new(),
            scalar_frame: self.vars.scalar_frame,
        });
        let at = self.extra.len() - 1;
        self.go_blocks.push(GoBlock {
            at,
            block: b,
            captures,
        });
        (self.nfuncs + at) as FuncId
    }

    /// the comparison that computed `cond` when nothing else reads it.
    pub fn jump_if_not(&mut self, cond: Slot, cond_name: &str, op: &'p pb::OpDesc) -> usize {
        let single = self.vars.read_once(cond_name);
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
        if !self.vars.read_once(x) || xs == out || self.barrier >= self.pc() {
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

    pub fn need_block(&self, op: &pb::OpDesc, name: &str) -> Result<&'p pb::BlockDesc, LowerError> {
        self.sub_block(op, name)?
            .ok_or_else(|| bad(op, format!("missing block {name}")))
    }

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
        Ok(self.opt_out(op, slot)?.unwrap_or_else(|| {
            self.vars.junk_used.set(true);
            self.vars.junk
        }))
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

/// A malformed-op error.
pub(super) fn bad(op: &pb::OpDesc, what: String) -> LowerError {
    LowerError::BadOp {
        op: op.r#type.clone(),
        what,
    }
}
