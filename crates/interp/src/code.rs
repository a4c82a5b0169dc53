//! The compact form the interpreter runs: one flat instruction vector per
//! function, variables resolved to frame slots, control flow as jumps.
//!
//! Invariants (established by `lower`, relied on by `exec` without checks
//! beyond slice bounds):
//! - every `Slot` of a function's code is `< Func::template.len()`;
//! - every jump target is `<= code.len()`, and the last instruction of every
//!   function is `Ret` or `End`, so the program counter never runs off;
//! - `locs[pc]` is the source location of the op that produced `code[pc]`;
//! - a `go` block is its own `Func` with a frame of its own whose first
//!   slots are its captures, in the order its `Go` instruction lists them;
//! - the last template slot is the junk slot (see `lower.rs`) when an
//!   instruction writes to it; a frame none writes to has no junk slot.
//!
//! The instruction set imports nothing from the executor or the lowering:
//! only values (`value.rs`).

use std::borrow::Cow;
use std::sync::Arc;

use weft_rt::SrcLoc;

use super::value::{StructInfo, Ty, Value};

/// A tensor operation (builtin or operator on tensors): the tensor
/// crate's builtin table, run by `tensor_ops`.
pub use weft_tensor::builtins::Builtin as TensorOp;

/// A builtin of the library (numbers, strings, lists, files, time), run
/// out of line by `lib_ops::run` on its operands in argument order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LibOp {
    Abs,
    Min,
    Max,
    Sqrt,
    Pow,
    Floor,
    Ceil,
    /// `exp` of a float (of a tensor it is a `TensorOp`).
    Exp,
    /// `log` of a float.
    Log,
    Inf,
    Nan,
    IsNan,
    Split,
    Fields,
    Join,
    Contains,
    /// `index(s, t)` (the IR's `str_index`).
    Index,
    HasPrefix,
    HasSuffix,
    Replace,
    Trim,
    Lower,
    Upper,
    Repeat,
    Chr,
    Sprintf,
    Sort,
    Reverse,
    Tick,
    Lines,
    ReadFile,
    WriteFile,
    AppendFile,
    Exists,
    Env,
}

impl LibOp {
    /// The library builtin of an IR op type (`exp` and `log` are the float
    /// forms; the lowering picks them by operand type).
    pub fn from_op(name: &str) -> Option<LibOp> {
        use LibOp::*;
        Some(match name {
            "abs" => Abs,
            "min" => Min,
            "max" => Max,
            "sqrt" => Sqrt,
            "pow" => Pow,
            "floor" => Floor,
            "ceil" => Ceil,
            "exp" => Exp,
            "log" => Log,
            "inf" => Inf,
            "nan" => Nan,
            "is_nan" => IsNan,
            "split" => Split,
            "fields" => Fields,
            "join" => Join,
            "contains" => Contains,
            "str_index" => Index,
            "has_prefix" => HasPrefix,
            "has_suffix" => HasSuffix,
            "replace" => Replace,
            "trim" => Trim,
            "lower" => Lower,
            "upper" => Upper,
            "repeat" => Repeat,
            "chr" => Chr,
            "sprintf" => Sprintf,
            "sort" => Sort,
            "reverse" => Reverse,
            "tick" => Tick,
            "lines" => Lines,
            "read_file" => ReadFile,
            "write_file" => WriteFile,
            "append_file" => AppendFile,
            "exists" => Exists,
            "env" => Env,
            _ => return None,
        })
    }
}

/// A variable: an index into the current frame.
pub type Slot = u32;
/// An index into a function's code.
pub type Pc = u32;
/// An index into `Program::funcs`.
pub type FuncId = u32;

/// A lowered program, shared by every task of a run.
pub struct Program {
    pub funcs: Vec<Func>,
    pub structs: Vec<StructInfo>,
    pub entry: FuncId,
    /// The loop JIT's state for this program (`jit/`: the loop headers'
    /// sample counts and the compiled regions), made on first use and
    /// shared by every run of the program. Opaque outside the crate.
    pub jit: JitState,
}

/// See `Program::jit`.
#[derive(Default)]
pub struct JitState(pub(crate) std::sync::OnceLock<super::jit::Cache>);

impl Program {
    /// The function named `name` (a top-level function, not a go block).
    pub fn func_id(&self, name: &str) -> Option<FuncId> {
        self.funcs
            .iter()
            .position(|f| &*f.name == name)
            .map(|i| i as FuncId)
    }
}

/// One function (or one `go` block).
pub struct Func {
    pub name: Arc<str>,
    /// The zero value of every slot's type (the JIT reads slot types
    /// from it).
    pub template: Arc<[Value]>,
    /// The frame a call or a new task starts with: `template`, but with
    /// a scalar stand-in (`Int(0)`) in every non-scalar slot that is
    /// written before it is read (`lower.rs`, `entry_template`): the
    /// parameters or captures, which the call or `go` fills, and the
    /// variables written once by a plain op of their own block ahead of
    /// every read. Copying a zero value that is overwritten unread cost a
    /// reference count on the template's shared value and its release.
    pub entry: Arc<[Value]>,
    /// Every `entry` value is a scalar: a call may copy it bitwise.
    pub entry_scalar: bool,
    /// Parameter slots, in order (empty for `go` blocks).
    pub params: Vec<Slot>,
    pub code: Vec<Instr>,
    pub locs: Vec<SrcLoc>,
    /// The junk slot (the last of the template), which `_` outputs of any
    /// type write to; `None` when no instruction writes to it and the
    /// frame has none.
    pub junk: Option<Slot>,
    /// Every template value is a scalar (int, float, bool), so every slot
    /// but the junk slot (`junk`, the last) only ever holds scalars: a
    /// call may copy the template bitwise and a return need only clear the
    /// last slot.
    pub scalar_frame: bool,
}

/// Integer binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

/// Float binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// Comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// What a comparison compares, decided from the operand types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpKind {
    Int,
    Float,
    Str,
    /// `==`/`!=` on bools, channels and structs.
    Other,
}

/// One case of a `select`.
#[derive(Debug)]
pub struct SelCase {
    pub send: bool,
    pub chan: Slot,
    /// The value to send (send cases).
    pub value: Option<Slot>,
    /// Where a received value goes (receive cases).
    pub recv: Option<Slot>,
    pub ok: Option<Slot>,
    /// The element type's zero value, received from a closed channel.
    pub zero: Value,
    /// The first instruction of the case's block.
    pub target: Pc,
    /// Where the case is written (the IR's `case_locs`), for a panic in a
    /// chosen case (docs/language.md, "Details"); `None`: the `select`'s location.
    pub loc: Option<SrcLoc>,
}

/// A collective's operation: the backend's `weft_coll::Op` less
/// `broadcast`'s root, which is a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollOp {
    AllReduce(weft_coll::Reduce),
    Broadcast,
    AllGather,
    Barrier,
}

/// The operands of a collective (boxed in `Instr::Collective`: rare, and
/// wider than the other instructions).
#[derive(Debug)]
pub struct CollInstr {
    pub op: CollOp,
    pub comm: Slot,
    /// The member's value (every op but `barrier`).
    pub x: Option<Slot>,
    /// `broadcast`'s root.
    pub root: Option<Slot>,
    /// Where the result goes (every op but `barrier`).
    pub out: Option<Slot>,
    /// The value's type as mismatch messages name it (`int`, `[]float`,
    /// a struct's name).
    pub ty: Cow<'static, str>,
}

/// `m[k] op= y` (`Instr::MapUpdate`): what `MapGet { x, k, out: got,
/// zero }`, `op` writing `new`, then `MapSet { x, k, v: new, out }` do, with
/// one lookup of the key and no copy of it when it is present; then on to
/// the instruction after the `MapSet`.
#[derive(Debug)]
pub struct MapUpdate {
    pub x: Slot,
    pub k: Slot,
    pub out: Slot,
    pub got: Slot,
    pub new: Slot,
    pub zero: Value,
    pub op: UpdateOp,
}

/// The operation of a `MapUpdate` on the value read (`got`): as the
/// instruction of the same name with `got` as its left operand.
#[derive(Debug, Clone, Copy)]
pub enum UpdateOp {
    Int(IntOp, Slot),
    IntK(IntOp, i64),
    Float(FloatOp, Slot),
    Concat(Slot),
}

/// One instruction. Operands are slots of the current frame.
#[derive(Debug)]
pub enum Instr {
    Const {
        out: Slot,
        val: Value,
    },
    Copy {
        x: Slot,
        out: Slot,
    },
    Int {
        op: IntOp,
        x: Slot,
        y: Slot,
        out: Slot,
    },
    Float {
        op: FloatOp,
        x: Slot,
        y: Slot,
        out: Slot,
    },
    Concat {
        x: Slot,
        y: Slot,
        out: Slot,
    },
    Cmp {
        op: CmpOp,
        kind: CmpKind,
        x: Slot,
        y: Slot,
        out: Slot,
    },
    NegInt {
        x: Slot,
        out: Slot,
    },
    NegFloat {
        x: Slot,
        out: Slot,
    },
    Not {
        x: Slot,
        out: Slot,
    },
    ToInt {
        x: Slot,
        out: Slot,
    },
    ToFloat {
        x: Slot,
        out: Slot,
    },
    ToStr {
        x: Slot,
        out: Slot,
    },
    ListNew {
        elems: Box<[Slot]>,
        out: Slot,
    },
    /// `X[Index]`; on a string, the byte as an int, or as a one-byte string
    /// when `byte_str`.
    Index {
        x: Slot,
        i: Slot,
        out: Slot,
        byte_str: bool,
    },
    SetIndex {
        x: Slot,
        i: Slot,
        v: Slot,
        out: Slot,
    },
    Slice {
        x: Slot,
        lo: Option<Slot>,
        hi: Option<Slot>,
        out: Slot,
    },
    Append {
        x: Slot,
        elems: Box<[Slot]>,
        out: Slot,
    },
    Len {
        x: Slot,
        out: Slot,
    },
    Cap {
        x: Slot,
        out: Slot,
    },
    StructNew {
        fields: Box<[Slot]>,
        out: Slot,
    },
    Field {
        x: Slot,
        idx: u32,
        out: Slot,
    },
    SetField {
        x: Slot,
        idx: u32,
        v: Slot,
        out: Slot,
    },
    MakeChan {
        cap: Option<Slot>,
        elem: Arc<Ty>,
        out: Slot,
    },
    Send {
        ch: Slot,
        v: Slot,
    },
    Recv {
        ch: Slot,
        out: Option<Slot>,
        ok: Option<Slot>,
        zero: Value,
    },
    Close {
        ch: Slot,
    },
    Select {
        cases: Box<[SelCase]>,
        default: Option<Pc>,
    },
    After {
        ms: Slot,
        out: Slot,
    },
    Sleep {
        ms: Slot,
    },
    /// Start a task running `func` (a go block) with the captured slots
    /// copied into the first slots of its frame (capture i to slot i), placed on the device named
    /// in slot `device` (none: the parent's device).
    Go {
        func: FuncId,
        captures: Box<[Slot]>,
        device: Option<Slot>,
    },
    /// Start a task running `func` with these arguments, placed as `Go`.
    GoCall {
        func: FuncId,
        args: Box<[Slot]>,
        device: Option<Slot>,
    },
    /// `here()`: the device this task runs on.
    Here {
        out: Slot,
    },
    Call {
        func: FuncId,
        args: Box<[Slot]>,
        out: Option<Slot>,
    },
    Ret {
        val: Option<Slot>,
    },
    /// The end of a function or go block without `return`.
    End,
    /// A scheduling point (lowering for `weft test` only): the instruction
    /// after it is an operation the controlled executor must see, which the
    /// task announces first (docs/testing-programs.md).
    Point,
    Jump {
        to: Pc,
    },
    JumpIfNot {
        cond: Slot,
        to: Pc,
    },
    /// `Cmp` fused with the `JumpIfNot` that consumes it: jump unless
    /// `x op y`.
    CmpJump {
        op: CmpOp,
        kind: CmpKind,
        x: Slot,
        y: Slot,
        to: Pc,
    },
    /// `out = x + k` on ints (also `x - K`, with `k = -K`): see `peephole`.
    AddK {
        x: Slot,
        k: i64,
        out: Slot,
    },
    /// `out = x op k` on ints, `k` a constant.
    IntK {
        op: IntOp,
        x: Slot,
        k: i64,
        out: Slot,
    },
    /// `out = x + y` on ints.
    AddInt {
        x: Slot,
        y: Slot,
        out: Slot,
    },
    /// `CmpJump` on ints against a constant: jump to `to` unless `x op k`.
    CmpJumpK {
        op: CmpOp,
        x: Slot,
        k: i64,
        to: Pc,
    },
    /// A `for` loop's increment, back edge and condition in one: `out = x +
    /// k`, count the back edge against the preemption budget (yielding
    /// with the program counter at `top`, the loop's `CmpJumpK`), then go to
    /// `top + 1` if `cx op bound`, else to `exit`.
    LoopK {
        x: Slot,
        k: i64,
        out: Slot,
        op: CmpOp,
        cx: Slot,
        bound: i64,
        top: Pc,
        exit: Pc,
    },
    /// `LoopK` with the bound in a slot: the condition is `cx op cy` (a
    /// `CmpJump` on ints at `top`).
    LoopN {
        x: Slot,
        k: i64,
        out: Slot,
        op: CmpOp,
        cx: Slot,
        cy: Slot,
        top: Pc,
        exit: Pc,
    },
    Print {
        args: Box<[Slot]>,
    },
    Panic {
        msg: Slot,
    },
    Assert {
        cond: Slot,
        msg: Slot,
    },
    Exit {
        code: Slot,
    },
    Now {
        out: Slot,
    },
    Args {
        out: Slot,
    },
    Rand {
        n: Slot,
        out: Slot,
    },
    Perm {
        n: Slot,
        out: Slot,
    },
    Tensor {
        op: TensorOp,
        ins: Box<[Slot]>,
        out: Slot,
        /// Bit `i`: `ins[i]` is read here for the last time before it is
        /// written again (`Vars::dead_after_read`), or is `out` and read
        /// once here (`Emitter::finish`), so its value is moved into the
        /// op, not copied: a tensor left with one owner is written in
        /// place by the elementwise kernels.
        moves: u8,
    },
    /// A map of `keys[i]: vals[i]`.
    MapNew {
        keys: Box<[Slot]>,
        vals: Box<[Slot]>,
        out: Slot,
    },
    /// `out, ok = x[k]`; `zero` when absent.
    MapGet {
        x: Slot,
        k: Slot,
        out: Option<Slot>,
        ok: Option<Slot>,
        zero: Value,
    },
    MapSet {
        x: Slot,
        k: Slot,
        v: Slot,
        out: Slot,
    },
    MapDelete {
        x: Slot,
        k: Slot,
        out: Slot,
    },
    /// `m[k] op= y` in one lookup (`peephole`: a `MapGet`, the op on
    /// what it read, and the `MapSet` of the result, fused at the
    /// `MapGet`'s index); boxed, as it is wide.
    MapUpdate(Box<MapUpdate>),
    /// The entry at position `i` of `x`'s iteration order.
    MapEntry {
        x: Slot,
        i: Slot,
        key: Option<Slot>,
        val: Option<Slot>,
    },
    /// A func value: `func` with its first parameters bound to `caps`.
    Closure {
        func: FuncId,
        caps: Box<[Slot]>,
        out: Slot,
    },
    /// `out = f(args)` through a func value.
    CallValue {
        f: Slot,
        args: Box<[Slot]>,
        out: Option<Slot>,
    },
    /// `go f(args)` through a func value, placed as `Go`.
    GoValue {
        f: Slot,
        args: Box<[Slot]>,
        device: Option<Slot>,
    },
    /// `group(n)`: a new group of `n` members, as a `[]comm`.
    Group {
        n: Slot,
        rings: u32,
        out: Slot,
    },
    /// `world()`: the run's member of the group of all processes.
    World {
        out: Slot,
    },
    /// `rank(c)`, or `size(c)` when `size`.
    CommInfo {
        comm: Slot,
        size: bool,
        out: Slot,
    },
    /// A collective: leaves `step` for `run_task` to wait for the group.
    Collective(Box<CollInstr>),
    /// A library builtin (`lib_ops::run`); `out` is the junk slot for one
    /// without a result.
    Lib {
        op: LibOp,
        ins: Box<[Slot]>,
        out: Slot,
    },
    /// `make([]T, n)`: `n` copies of `zero`.
    MakeList {
        n: Slot,
        zero: Value,
        out: Slot,
    },
    /// `out, width = decode_rune(x, i)`: the character at byte `i` of a
    /// string (`for i, r := range s`).
    DecodeRune {
        x: Slot,
        i: Slot,
        out: Slot,
        width: Slot,
    },
}

impl Instr {
    /// Whether lowering for `weft test` puts a `Point` before this
    /// instruction: an operation on a channel or the output, a task start,
    /// a channel's creation (channels are numbered there), or a value the
    /// run's decisions give (`rand`, `perm`). `len` of a channel gets one
    /// too, placed by the lowering (the type tells).
    pub fn needs_point(&self) -> bool {
        matches!(
            self,
            Instr::Send { .. }
                | Instr::Recv { .. }
                | Instr::Close { .. }
                | Instr::Select { .. }
                | Instr::Go { .. }
                | Instr::GoCall { .. }
                | Instr::GoValue { .. }
                | Instr::Print { .. }
                | Instr::MakeChan { .. }
                | Instr::After { .. }
                | Instr::Rand { .. }
                | Instr::Perm { .. }
                | Instr::Collective(_)
        ) || self.touches_files()
            || matches!(
                self,
                Instr::Lib {
                    op: LibOp::Lines,
                    ..
                }
            )
    }

    /// Whether this instruction reads or writes a file (or stdin).
    pub fn touches_files(&self) -> bool {
        matches!(
            self,
            Instr::Lib {
                op: LibOp::ReadFile | LibOp::WriteFile | LibOp::AppendFile | LibOp::Exists,
                ..
            } | Instr::Tensor {
                op: TensorOp::LoadCsv | TensorOp::LoadNpy | TensorOp::SaveNpy,
                ..
            }
        )
    }

    /// The slot of an instruction's single result, if it has exactly one
    /// and computes it from its inputs before writing (so the result may be
    /// redirected to another slot).
    pub fn out_mut(&mut self) -> Option<&mut Slot> {
        match self {
            Instr::Const { out, .. }
            | Instr::Copy { out, .. }
            | Instr::Int { out, .. }
            | Instr::AddK { out, .. }
            | Instr::IntK { out, .. }
            | Instr::AddInt { out, .. }
            | Instr::Float { out, .. }
            | Instr::Concat { out, .. }
            | Instr::Cmp { out, .. }
            | Instr::NegInt { out, .. }
            | Instr::NegFloat { out, .. }
            | Instr::Not { out, .. }
            | Instr::ToInt { out, .. }
            | Instr::ToFloat { out, .. }
            | Instr::ToStr { out, .. }
            | Instr::ListNew { out, .. }
            | Instr::Index { out, .. }
            | Instr::SetIndex { out, .. }
            | Instr::Slice { out, .. }
            | Instr::Append { out, .. }
            | Instr::Len { out, .. }
            | Instr::Cap { out, .. }
            | Instr::StructNew { out, .. }
            | Instr::Field { out, .. }
            | Instr::SetField { out, .. }
            | Instr::MakeChan { out, .. }
            | Instr::After { out, .. }
            | Instr::Now { out }
            | Instr::Args { out }
            | Instr::Rand { out, .. }
            | Instr::Perm { out, .. }
            | Instr::Here { out }
            | Instr::Tensor { out, .. }
            | Instr::MapNew { out, .. }
            | Instr::MapSet { out, .. }
            | Instr::MapDelete { out, .. }
            | Instr::Closure { out, .. }
            | Instr::Group { out, .. }
            | Instr::World { out }
            | Instr::CommInfo { out, .. }
            | Instr::Lib { out, .. }
            | Instr::MakeList { out, .. } => Some(out),
            Instr::Collective(c) => c.out.as_mut(),
            Instr::Call { out: Some(out), .. } => Some(out),
            _ => None,
        }
    }
}
