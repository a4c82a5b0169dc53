//! Lowering of data ops (everything but the structured control ops of
//! `lower`, which calls `emit_data_op` and `const_value`): picks the instruction from the op type and the operand types, so
//! `add` on ints, floats, strings and tensors becomes four different
//! instructions and nothing is decided by type while running.

use std::borrow::Cow;
use std::sync::Arc;

use weft_coll::Reduce;
use weft_ir::{pb, registry};

use super::code::{CmpKind, CmpOp, CollInstr, CollOp, FloatOp, Instr, IntOp, LibOp, TensorOp};
use super::lower_emit::{attr, bad, Emitter, LowerError};
use super::value::{zero_value, Closure, Ty, Value};

impl<'p> Emitter<'_, 'p> {
    pub(super) fn emit_data_op(&mut self, op: &'p pb::OpDesc) -> Result<(), LowerError> {
        let t = op.r#type.as_str();
        let i = match t {
            "const" if self.hoisted(op) => return Ok(()),
            "const" => {
                let out = self.out1(op, "Out")?;
                let oty = self.out_ty(op, "Out")?;
                let val = const_value(op, oty.as_ref())?;
                Instr::Const { out, val }
            }
            "zero" => {
                let out = self.out1(op, "Out")?;
                let val = match self.out_ty(op, "Out")? {
                    Some(ty) => zero_value(&ty, &self.cx.structs)?,
                    None => Value::Int(0),
                };
                Instr::Const { out, val }
            }
            "copy" => {
                let out = self.out1(op, "Out")?;
                if let Some(x) = self.ins(op, "X").first() {
                    if self.coalesce_copy(x, out)? {
                        return Ok(());
                    }
                }
                Instr::Copy {
                    x: self.in1(op, "X")?,
                    out,
                }
            }
            "add" | "sub" | "mul" | "div" | "mod" | "and" | "or" | "xor" | "shl" | "shr" => {
                self.arith(op, t)?
            }
            "neg" => {
                let x = self.in1(op, "X")?;
                let out = self.out1(op, "Out")?;
                match self.in_ty(op, "X")? {
                    Ty::Int => Instr::NegInt { x, out },
                    Ty::Float => Instr::NegFloat { x, out },
                    Ty::Tensor => Instr::Tensor {
                        op: TensorOp::Neg,
                        moves: self.moves(op, &[x]),
                        ins: Box::new([x]),
                        out,
                    },
                    ty => return Err(bad(op, format!("neg of {ty}"))),
                }
            }
            "not" => Instr::Not {
                x: self.in1(op, "X")?,
                out: self.out1(op, "Out")?,
            },
            "eq" | "ne" | "lt" | "le" | "gt" | "ge" => {
                let cop = match t {
                    "eq" => CmpOp::Eq,
                    "ne" => CmpOp::Ne,
                    "lt" => CmpOp::Lt,
                    "le" => CmpOp::Le,
                    "gt" => CmpOp::Gt,
                    _ => CmpOp::Ge,
                };
                let kind = match (self.in_ty(op, "X")?, self.in_ty(op, "Y")?) {
                    (Ty::Int, Ty::Int) => CmpKind::Int,
                    (Ty::Float, Ty::Float) => CmpKind::Float,
                    (Ty::Str, Ty::Str) => CmpKind::Str,
                    _ if matches!(cop, CmpOp::Eq | CmpOp::Ne) => CmpKind::Other,
                    (a, b) => return Err(bad(op, format!("{t} of {a} and {b}"))),
                };
                Instr::Cmp {
                    op: cop,
                    kind,
                    x: self.in1(op, "X")?,
                    y: self.in1(op, "Y")?,
                    out: self.out1(op, "Out")?,
                }
            }
            "to_int" => Instr::ToInt {
                x: self.in1(op, "X")?,
                out: self.out1(op, "Out")?,
            },
            "to_float" => Instr::ToFloat {
                x: self.in1(op, "X")?,
                out: self.out1(op, "Out")?,
            },
            "to_str" => Instr::ToStr {
                x: self.in1(op, "X")?,
                out: self.out1(op, "Out")?,
            },
            "list_new" => Instr::ListNew {
                elems: self.ins_slots(op, "Elems")?,
                out: self.out1(op, "Out")?,
            },
            "index" => Instr::Index {
                x: self.in1(op, "X")?,
                i: self.in1(op, "Index")?,
                out: self.out1(op, "Out")?,
                byte_str: matches!(self.out_ty(op, "Out")?, Some(Ty::Str)),
            },
            "set_index" => Instr::SetIndex {
                x: self.in1(op, "X")?,
                i: self.in1(op, "Index")?,
                v: self.in1(op, "Value")?,
                out: self.out1(op, "Out")?,
            },
            "slice" => Instr::Slice {
                x: self.in1(op, "X")?,
                lo: self.opt_in(op, "Lo")?,
                hi: self.opt_in(op, "Hi")?,
                out: self.out1(op, "Out")?,
            },
            "append" => Instr::Append {
                x: self.in1(op, "X")?,
                elems: self.ins_slots(op, "Elems")?,
                out: self.out1(op, "Out")?,
            },
            "len" => {
                if matches!(self.in_ty(op, "X")?, Ty::Chan(_)) {
                    self.point_here(op);
                }
                Instr::Len {
                    x: self.in1(op, "X")?,
                    out: self.out1(op, "Out")?,
                }
            }
            "cap" => Instr::Cap {
                x: self.in1(op, "X")?,
                out: self.out1(op, "Out")?,
            },
            "struct_new" => Instr::StructNew {
                fields: self.ins_slots(op, "Fields")?,
                out: self.out1(op, "Out")?,
            },
            "field" => Instr::Field {
                x: self.in1(op, "X")?,
                idx: self.field_index(op)?,
                out: self.out1(op, "Out")?,
            },
            "set_field" => Instr::SetField {
                x: self.in1(op, "X")?,
                idx: self.field_index(op)?,
                v: self.in1(op, "Value")?,
                out: self.out1(op, "Out")?,
            },
            "make_chan" => {
                let elem = match self.out_ty(op, "Out")? {
                    Some(Ty::Chan(e)) => e,
                    _ => return Err(bad(op, "Out is not a channel".into())),
                };
                Instr::MakeChan {
                    cap: self.opt_in(op, "Cap")?,
                    elem,
                    out: self.out1(op, "Out")?,
                }
            }
            "send" => Instr::Send {
                ch: self.in1(op, "Chan")?,
                v: self.in1(op, "Value")?,
            },
            "recv" => {
                let zero = match self.in_ty(op, "Chan")? {
                    Ty::Chan(e) => zero_value(&e, &self.cx.structs)?,
                    _ => return Err(bad(op, "Chan is not a channel".into())),
                };
                Instr::Recv {
                    ch: self.in1(op, "Chan")?,
                    out: self.opt_out(op, "Out")?,
                    ok: self.opt_out(op, "Ok")?,
                    zero,
                }
            }
            "close" => Instr::Close {
                ch: self.in1(op, "Chan")?,
            },
            "after" => Instr::After {
                ms: self.in1(op, "Ms")?,
                out: self.out1(op, "Out")?,
            },
            "sleep" => Instr::Sleep {
                ms: self.in1(op, "Ms")?,
            },
            "go_call" => Instr::GoCall {
                func: self.func_id(op)?,
                args: self.ins_slots(op, "Args")?,
                device: self.opt_in(op, "Device")?,
            },
            "here" => Instr::Here {
                out: self.out1(op, "Out")?,
            },
            "call" => Instr::Call {
                func: self.func_id(op)?,
                args: self.ins_slots(op, "Args")?,
                out: self.opt_out(op, "Out")?,
            },
            "return" => Instr::Ret {
                val: self.opt_in(op, "Value")?,
            },
            "map_new" => Instr::MapNew {
                keys: self.ins_slots(op, "Keys")?,
                vals: self.ins_slots(op, "Values")?,
                out: self.out1(op, "Out")?,
            },
            "map_get" => {
                let zero = match self.in_ty(op, "X")? {
                    Ty::Map(_, v) => zero_value(&v, &self.cx.structs)?,
                    _ => return Err(bad(op, "X is not a map".into())),
                };
                Instr::MapGet {
                    x: self.in1(op, "X")?,
                    k: self.in1(op, "Key")?,
                    out: self.opt_out(op, "Out")?,
                    ok: self.opt_out(op, "Ok")?,
                    zero,
                }
            }
            "map_set" => Instr::MapSet {
                x: self.in1(op, "X")?,
                k: self.in1(op, "Key")?,
                v: self.in1(op, "Value")?,
                out: self.out1(op, "Out")?,
            },
            "map_delete" => Instr::MapDelete {
                x: self.in1(op, "X")?,
                k: self.in1(op, "Key")?,
                out: self.out1(op, "Out")?,
            },
            "map_entry" => Instr::MapEntry {
                x: self.in1(op, "X")?,
                i: self.in1(op, "Index")?,
                key: self.opt_out(op, "Key")?,
                val: self.opt_out(op, "Value")?,
            },
            // A named function as a value is a constant closure.
            "func_ref" => Instr::Const {
                out: self.out1(op, "Out")?,
                val: Value::Func(Some(Arc::new(Closure {
                    func: self.func_id(op)?,
                    captures: Box::default(),
                }))),
            },
            "closure" => Instr::Closure {
                func: self.func_id(op)?,
                caps: self.ins_slots(op, "Captures")?,
                out: self.out1(op, "Out")?,
            },
            "call_value" => Instr::CallValue {
                f: self.in1(op, "F")?,
                args: self.ins_slots(op, "Args")?,
                out: self.opt_out(op, "Out")?,
            },
            "go_value" => Instr::GoValue {
                f: self.in1(op, "F")?,
                args: self.ins_slots(op, "Args")?,
                device: self.opt_in(op, "Device")?,
            },
            "print" => Instr::Print {
                args: self.ins_slots(op, "Args")?,
            },
            "panic" => Instr::Panic {
                msg: self.in1(op, "Msg")?,
            },
            "assert" => Instr::Assert {
                cond: self.in1(op, "Cond")?,
                msg: self.in1(op, "Msg")?,
            },
            "exit" => Instr::Exit {
                code: self.in1(op, "Code")?,
            },
            "now" => Instr::Now {
                out: self.out1(op, "Out")?,
            },
            "args" => Instr::Args {
                out: self.out1(op, "Out")?,
            },
            "rand" => Instr::Rand {
                n: self.in1(op, "N")?,
                out: self.out1(op, "Out")?,
            },
            "perm" => Instr::Perm {
                n: self.in1(op, "N")?,
                out: self.out1(op, "Out")?,
            },
            "c_group" => {
                let rings = match attr(op, registry::RINGS_ATTR) {
                    Some(pb::attr::Value::I(r)) => u32::try_from(*r).ok().filter(|r| *r >= 1),
                    _ => None,
                };
                Instr::Group {
                    n: self.in1(op, "N")?,
                    rings: rings.ok_or_else(|| bad(op, "rings is not a positive u32".into()))?,
                    out: self.out1(op, "Out")?,
                }
            }
            "c_world" => Instr::World {
                out: self.out1(op, "Out")?,
            },
            "c_rank" | "c_size" => Instr::CommInfo {
                comm: self.in1(op, "Comm")?,
                size: t == "c_size",
                out: self.out1(op, "Out")?,
            },
            "c_allreduce_sum" | "c_allreduce_max" | "c_allreduce_min" | "c_allreduce_prod"
            | "c_broadcast" | "c_allgather" | "c_barrier" => self.collective(op, t)?,
            "make_list" => {
                let zero = match self.out_ty(op, "Out")? {
                    Some(Ty::List(e)) => zero_value(&e, &self.cx.structs)?,
                    _ => return Err(bad(op, "Out is not a list".into())),
                };
                Instr::MakeList {
                    n: self.in1(op, "N")?,
                    zero,
                    out: self.out1(op, "Out")?,
                }
            }
            "decode_rune" => Instr::DecodeRune {
                x: self.in1(op, "X")?,
                i: self.in1(op, "Index")?,
                out: self.out1(op, "Out")?,
                width: self.out1(op, "Width")?,
            },
            "exp" | "log" if self.in_ty(op, "X")? == Ty::Float => self.lib_builtin(op, t)?,
            other => match TensorOp::from_name(other) {
                Some(top) => self.tensor_builtin(op, top)?,
                None if LibOp::from_op(other).is_some() => self.lib_builtin(op, other)?,
                None => return Err(LowerError::UnknownOp(other.to_string())),
            },
        };
        self.push(i, Some(op));
        Ok(())
    }

    /// Whether this `const` op's value was put in the frame template.
    fn hoisted(&self, op: &pb::OpDesc) -> bool {
        match op.outputs.first().and_then(|o| o.args.first()) {
            Some(name) => self.vars.hoisted.contains(name.as_str()),
            None => false,
        }
    }

    fn arith(&mut self, op: &'p pb::OpDesc, t: &str) -> Result<Instr, LowerError> {
        let x = self.in1(op, "X")?;
        let y = self.in1(op, "Y")?;
        let out = self.out1(op, "Out")?;
        let (tx, ty) = (self.in_ty(op, "X")?, self.in_ty(op, "Y")?);
        Ok(match (&tx, &ty) {
            (Ty::Int, Ty::Int) => Instr::Int {
                op: match t {
                    "add" => IntOp::Add,
                    "sub" => IntOp::Sub,
                    "mul" => IntOp::Mul,
                    "div" => IntOp::Div,
                    "mod" => IntOp::Mod,
                    "and" => IntOp::And,
                    "or" => IntOp::Or,
                    "xor" => IntOp::Xor,
                    "shl" => IntOp::Shl,
                    _ => IntOp::Shr,
                },
                x,
                y,
                out,
            },
            (Ty::Float, Ty::Float) => Instr::Float {
                op: match t {
                    "add" => FloatOp::Add,
                    "sub" => FloatOp::Sub,
                    "mul" => FloatOp::Mul,
                    "div" => FloatOp::Div,
                    _ => return Err(bad(op, format!("{t} of floats"))),
                },
                x,
                y,
                out,
            },
            (Ty::Str, Ty::Str) if t == "add" => Instr::Concat { x, y, out },
            (Ty::Tensor, _) | (_, Ty::Tensor) => {
                let top = match t {
                    "add" => TensorOp::Add,
                    "sub" => TensorOp::Sub,
                    "mul" => TensorOp::Mul,
                    "div" => TensorOp::Div,
                    _ => return Err(bad(op, format!("{t} of {tx} and {ty}"))),
                };
                Instr::Tensor {
                    op: top,
                    moves: self.moves(op, &[x, y]),
                    ins: Box::new([x, y]),
                    out,
                }
            }
            _ => return Err(bad(op, format!("{t} of {tx} and {ty}"))),
        })
    }

    fn field_index(&self, op: &'p pb::OpDesc) -> Result<u32, LowerError> {
        let name = match attr(op, "name") {
            Some(pb::attr::Value::S(s)) => s,
            _ => return Err(bad(op, "missing attribute name".into())),
        };
        let id = match self.in_ty(op, "X")? {
            Ty::Struct { id, .. } => id,
            other => return Err(bad(op, format!("field of {other}"))),
        };
        let info = self
            .cx
            .structs
            .get(id as usize)
            .ok_or_else(|| bad(op, format!("struct id {id}")))?;
        info.fields
            .iter()
            .position(|(f, _)| **f == **name)
            .map(|i| i as u32)
            .ok_or_else(|| LowerError::UnknownField(info.name.to_string(), name.clone()))
    }

    /// A collective op (`c_allreduce_*`, `c_broadcast`, `c_allgather`,
    /// `c_barrier`), with its value's type named for mismatch messages.
    fn collective(&self, op: &'p pb::OpDesc, t: &str) -> Result<Instr, LowerError> {
        let cop = match t {
            "c_allreduce_sum" => CollOp::AllReduce(Reduce::Sum),
            "c_allreduce_max" => CollOp::AllReduce(Reduce::Max),
            "c_allreduce_min" => CollOp::AllReduce(Reduce::Min),
            "c_allreduce_prod" => CollOp::AllReduce(Reduce::Prod),
            "c_broadcast" => CollOp::Broadcast,
            "c_allgather" => CollOp::AllGather,
            _ => CollOp::Barrier,
        };
        let (x, out, ty) = if cop == CollOp::Barrier {
            (None, None, Cow::Borrowed(""))
        } else {
            let ty = match self.in_ty(op, "X")? {
                Ty::Int => Cow::Borrowed("int"),
                Ty::Float => Cow::Borrowed("float"),
                Ty::Bool => Cow::Borrowed("bool"),
                Ty::Str => Cow::Borrowed("string"),
                Ty::Tensor => Cow::Borrowed("tensor"),
                Ty::Comm => Cow::Borrowed("comm"),
                other => Cow::Owned(other.to_string()),
            };
            let x = self.in1(op, "X")?;
            (Some(x), Some(self.out1(op, "Out")?), ty)
        };
        let root = match cop {
            CollOp::Broadcast => Some(self.in1(op, "Root")?),
            _ => None,
        };
        Ok(Instr::Collective(Box::new(CollInstr {
            op: cop,
            comm: self.in1(op, "Comm")?,
            x,
            root,
            out,
            ty,
        })))
    }

    /// A tensor builtin: the inputs of its registry slots, in argument
    /// order (variadic slots, like `get`'s `Indices`, spread out); one
    /// output `Out` (possibly `_`).
    fn tensor_builtin(&self, op: &'p pb::OpDesc, top: TensorOp) -> Result<Instr, LowerError> {
        let ins = self.registry_ins(op)?;
        Ok(Instr::Tensor {
            op: top,
            moves: self.moves(op, &ins),
            ins,
            out: self.out1(op, "Out")?,
        })
    }
}

impl<'p> Emitter<'_, 'p> {
    /// The inputs of `op` in its registry slots' order, variadic slots
    /// spread out: the operands of tensor and library builtins.
    fn registry_ins(&self, op: &'p pb::OpDesc) -> Result<Box<[crate::code::Slot]>, LowerError> {
        let spec =
            registry::lookup(&op.r#type).ok_or_else(|| LowerError::UnknownOp(op.r#type.clone()))?;
        let mut ins = Vec::new();
        for slot in spec.inputs {
            for a in self.ins(op, slot.name) {
                ins.push(self.vars.slot(a)?);
            }
        }
        Ok(ins.into_boxed_slice())
    }

    /// A library builtin: its inputs in the registry's slot order
    /// (variadic slots spread out); its one output `Out`, or the junk slot.
    fn lib_builtin(&self, op: &'p pb::OpDesc, name: &str) -> Result<Instr, LowerError> {
        let lop = LibOp::from_op(name).ok_or_else(|| LowerError::UnknownOp(name.to_string()))?;
        let ins = self.registry_ins(op)?;
        Ok(Instr::Lib {
            op: lop,
            ins,
            out: self.out1(op, "Out")?,
        })
    }
}

/// The literal of a `const` op, converted to the output's type where the
/// literal is an untyped integer used as a float.
pub(super) fn const_value(op: &pb::OpDesc, oty: Option<&Ty>) -> Result<Value, LowerError> {
    use pb::attr::Value as A;
    let v = attr(op, "value").ok_or_else(|| bad(op, "missing attribute value".into()))?;
    Ok(match (v, oty) {
        (A::I(i), Some(Ty::Float)) => Value::Float(*i as f64),
        (A::I(i), _) => Value::Int(*i),
        (A::F(f), _) => Value::Float(*f),
        (A::S(s), _) => Value::str(s),
        (A::Raw(b), _) => Value::bytes(b),
        (A::B(b), _) => Value::Bool(*b),
        _ => return Err(bad(op, "value is not a scalar".into())),
    })
}
