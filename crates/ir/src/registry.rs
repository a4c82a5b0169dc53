//! The op registry: every op type of the IR, with its slots, attributes,
//! sub-blocks and a one-line meaning (in the manner of Lua's `lopcodes.h`).
//!
//! This table is the contract between lowering (weft-lang) and the
//! interpreter (weft): the verifier checks ops against it, and the op table of
//! `docs/ir.md` is generated from it ([`crate::irdoc::render_ir_doc`], checked by
//! `tests/ir_doc.rs`). Invariants: names are unique; slot names are unique
//! within an op; an op's block-valued attributes are its sub-blocks.
//!
//! Slot types ([`Ty`]) are the cheap per-slot checks; the relations between
//! slots ("X, Y and Out share a type") are in the meaning and checked by
//! `verify`'s type rules.

use std::fmt;

/// How many variables a slot binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    /// Exactly one.
    Required,
    /// Zero or one (the slot is absent or has no args).
    Optional,
    /// Any number, in order.
    Variadic,
}

/// The type a slot's variables must have (checked by `verify`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// Any type (relations to other slots are in the op's meaning).
    Any,
    /// `int`.
    Int,
    /// `float`.
    Float,
    /// `bool`.
    Bool,
    /// `string`.
    Str,
    /// `int` or `float`.
    Num,
    /// `tensor`.
    Tensor,
    /// `chan T` for any `T`.
    Chan,
    /// `[]T` for any `T`.
    List,
    /// `[]int`.
    IntList,
    /// `[]float`.
    FloatList,
    /// `[]string`.
    StrList,
    /// A declared struct.
    Struct,
    /// `map[K]V` for any `K`, `V`.
    Map,
    /// A function type.
    Func,
    /// `comm`: a member of a collective group.
    Comm,
    /// `[]comm`.
    CommList,
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ty::Any => "any",
            Ty::Int => "int",
            Ty::Float => "float",
            Ty::Bool => "bool",
            Ty::Str => "string",
            Ty::Num => "int|float",
            Ty::Tensor => "tensor",
            Ty::Chan => "chan",
            Ty::List => "list",
            Ty::IntList => "[]int",
            Ty::FloatList => "[]float",
            Ty::StrList => "[]string",
            Ty::Struct => "struct",
            Ty::Map => "map",
            Ty::Func => "func",
            Ty::Comm => "comm",
            Ty::CommList => "[]comm",
        })
    }
}

/// One named input or output slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotSpec {
    /// The slot name (`X`, `Out`, `Chans`, ...).
    pub name: &'static str,
    /// How many variables it binds.
    pub arity: Arity,
    /// The type each bound variable must have.
    pub ty: Ty,
}

/// The kind of value an attribute holds (the `attr::Value` variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    /// `i`: int64.
    Int,
    /// `f`: double.
    Float,
    /// `s`: string.
    Str,
    /// `b`: bool.
    Bool,
    /// `ints`: list of int64.
    Ints,
    /// `blk`: a sub-block index.
    Block,
    /// `blks`: a list of sub-block indices.
    Blocks,
    /// `ty`: a type.
    Type,
    /// `lit`: any of `i`, `f`, `s`, `b` (a literal).
    Literal,
}

impl fmt::Display for AttrKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AttrKind::Int => "i",
            AttrKind::Float => "f",
            AttrKind::Str => "s",
            AttrKind::Bool => "b",
            AttrKind::Ints => "ints",
            AttrKind::Block => "blk",
            AttrKind::Blocks => "blks",
            AttrKind::Type => "ty",
            AttrKind::Literal => "i/f/s/b/raw",
        })
    }
}

/// One named attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttrSpec {
    /// The attribute name.
    pub name: &'static str,
    /// The kind of value it holds.
    pub kind: AttrKind,
    /// Whether every op of this type must carry it.
    pub required: bool,
}

impl AttrSpec {
    /// Whether this attribute names sub-blocks (`blk` or `blks`).
    pub fn is_block(&self) -> bool {
        matches!(self.kind, AttrKind::Block | AttrKind::Blocks)
    }
}

/// Everything the IR knows about one op type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpSpec {
    /// The op type (`OpDesc.type`).
    pub name: &'static str,
    /// The section of `docs/ir.md` it is listed in.
    pub group: &'static str,
    /// Input slots, in argument order.
    pub inputs: &'static [SlotSpec],
    /// Output slots.
    pub outputs: &'static [SlotSpec],
    /// Attributes (block-valued ones are the op's sub-blocks).
    pub attrs: &'static [AttrSpec],
    /// What the op does, in one line.
    pub meaning: &'static str,
}

impl OpSpec {
    /// The input slot named `name`.
    pub fn input(&self, name: &str) -> Option<&'static SlotSpec> {
        self.inputs.iter().find(|s| s.name == name)
    }
    /// The output slot named `name`.
    pub fn output(&self, name: &str) -> Option<&'static SlotSpec> {
        self.outputs.iter().find(|s| s.name == name)
    }
    /// The attribute named `name`.
    pub fn attr(&self, name: &str) -> Option<&'static AttrSpec> {
        self.attrs.iter().find(|a| a.name == name)
    }
}

/// The op spec for an op type, if the op exists.
pub fn lookup(name: &str) -> Option<&'static OpSpec> {
    OPS.iter().find(|op| op.name == name)
}

const fn req(name: &'static str, ty: Ty) -> SlotSpec {
    SlotSpec {
        name,
        arity: Arity::Required,
        ty,
    }
}
const fn opt(name: &'static str, ty: Ty) -> SlotSpec {
    SlotSpec {
        name,
        arity: Arity::Optional,
        ty,
    }
}
const fn var(name: &'static str, ty: Ty) -> SlotSpec {
    SlotSpec {
        name,
        arity: Arity::Variadic,
        ty,
    }
}
const fn attr(name: &'static str, kind: AttrKind) -> AttrSpec {
    AttrSpec {
        name,
        kind,
        required: true,
    }
}
const fn attr_opt(name: &'static str, kind: AttrKind) -> AttrSpec {
    AttrSpec {
        name,
        kind,
        required: false,
    }
}
const fn op(
    group: &'static str,
    name: &'static str,
    inputs: &'static [SlotSpec],
    outputs: &'static [SlotSpec],
    attrs: &'static [AttrSpec],
    meaning: &'static str,
) -> OpSpec {
    OpSpec {
        name,
        group,
        inputs,
        outputs,
        attrs,
        meaning,
    }
}

use AttrKind as K;
use Ty::*;

const X: &[SlotSpec] = &[req("X", Any)];
const XY: &[SlotSpec] = &[req("X", Any), req("Y", Any)];
const XI: &[SlotSpec] = &[req("X", Int), req("Y", Int)];
const T1: &[SlotSpec] = &[req("X", Tensor)];
const OUT: &[SlotSpec] = &[req("Out", Any)];
const CM: &[SlotSpec] = &[req("Comm", Comm)];
const CMX: &[SlotSpec] = &[req("Comm", Comm), req("X", Any)];
const OUT_T: &[SlotSpec] = &[req("Out", Tensor)];
const OUT_I: &[SlotSpec] = &[req("Out", Int)];
const OUT_F: &[SlotSpec] = &[req("Out", Float)];
const OUT_B: &[SlotSpec] = &[req("Out", Bool)];
const NONE: &[SlotSpec] = &[];
const NO_ATTRS: &[AttrSpec] = &[];
const LABEL: &[AttrSpec] = &[attr_opt("label", K::Str)];

const V: &str = "values";
const A: &str = "arithmetic and comparison";
const L: &str = "lists, strings and structs";
const M: &str = "maps";
const C: &str = "channels and select";
const G: &str = "tasks and calls";
const F: &str = "control flow";
const B: &str = "builtins";
const T: &str = "tensors and devices";
const CO: &str = "collectives";
const N: &str = "numbers";
const S: &str = "strings";
const LS: &str = "lists";
const D: &str = "time, files and data";

/// The `rings` attribute of `c_group`: how many rings a group splits its
/// reductions over (Fluid's `nrings`); at least 1. `group(n)` lowers with
/// [`DEFAULT_RINGS`].
pub const RINGS_ATTR: &str = "rings";

/// The ring count `group(n)` gives its group (docs/language.md, "Collectives").
pub const DEFAULT_RINGS: i64 = 1;

/// Every op type, grouped as listed in `docs/ir.md`.
#[rustfmt::skip]
pub static OPS: &[OpSpec] = &[
    op(V, "const", NONE, OUT, &[attr("value", K::Literal)], "Out = the literal `value` (its kind matches Out's scalar type)"),
    op(V, "zero", NONE, OUT, NO_ATTRS, "Out = the zero value of Out's type (nil chan or comm, empty list, zero struct, tensor of shape [0])"),
    op(V, "copy", X, OUT, NO_ATTRS, "Out = X (same type; a value copy, channels and comms by reference)"),
    op(A, "add", XY, OUT, NO_ATTRS, "Out = X + Y: ints (wrapping), floats, strings (concatenation), tensors (elementwise, tensor+float, row broadcast)"),
    op(A, "sub", XY, OUT, NO_ATTRS, "Out = X - Y on ints (wrapping), floats or tensors (as `add`)"),
    op(A, "mul", XY, OUT, NO_ATTRS, "Out = X * Y on ints (wrapping), floats or tensors (as `add`)"),
    op(A, "div", XY, OUT, NO_ATTRS, "Out = X / Y on ints (truncating; by 0 panics), floats or tensors (as `add`)"),
    op(A, "mod", XI, OUT_I, NO_ATTRS, "Out = X % Y on ints (sign of the dividend; by 0 panics)"),
    op(A, "and", XI, OUT_I, NO_ATTRS, "Out = X & Y"),
    op(A, "or", XI, OUT_I, NO_ATTRS, "Out = X | Y"),
    op(A, "xor", XI, OUT_I, NO_ATTRS, "Out = X ^ Y"),
    op(A, "shl", XI, OUT_I, NO_ATTRS, "Out = X << Y (negative Y panics)"),
    op(A, "shr", XI, OUT_I, NO_ATTRS, "Out = X >> Y, arithmetic (negative Y panics)"),
    op(A, "neg", X, OUT, NO_ATTRS, "Out = -X on an int (wrapping), float or tensor; Out has X's type"),
    op(A, "not", &[req("X", Bool)], OUT_B, NO_ATTRS, "Out = !X"),
    op(A, "eq", XY, OUT_B, NO_ATTRS, "Out = X == Y (X and Y share a comparable type: scalar, chan or comm identity, struct of comparables)"),
    op(A, "ne", XY, OUT_B, NO_ATTRS, "Out = X != Y (as `eq`)"),
    op(A, "lt", XY, OUT_B, NO_ATTRS, "Out = X < Y on ints, floats or strings of one type"),
    op(A, "le", XY, OUT_B, NO_ATTRS, "Out = X <= Y (as `lt`)"),
    op(A, "gt", XY, OUT_B, NO_ATTRS, "Out = X > Y (as `lt`)"),
    op(A, "ge", XY, OUT_B, NO_ATTRS, "Out = X >= Y (as `lt`)"),
    op(A, "to_int", X, OUT_I, NO_ATTRS, "Out = int(X) from int, float (toward zero) or string (parsed)"),
    op(A, "to_float", X, OUT_F, NO_ATTRS, "Out = float(X) from int, float or string"),
    op(A, "to_str", X, &[req("Out", Str)], NO_ATTRS, "Out = str(X), X's printed form"),
    op(L, "list_new", &[var("Elems", Any)], &[req("Out", List)], NO_ATTRS, "Out = a list of Elems, each of Out's element type"),
    op(L, "index", &[req("X", Any), req("Index", Int)], OUT, NO_ATTRS, "Out = X[Index]: an element of a list, or of a string (Out int: the byte; Out string: one-byte string)"),
    op(L, "set_index", &[req("X", List), req("Index", Int), req("Value", Any)], &[req("Out", List)], NO_ATTRS, "Out = X with X[Index] = Value (Out and X share a type)"),
    op(L, "slice", &[req("X", Any), opt("Lo", Int), opt("Hi", Int)], OUT, NO_ATTRS, "Out = X[Lo:Hi] of a list or string; Lo defaults to 0, Hi to len(X)"),
    op(L, "append", &[req("X", List), var("Elems", Any)], &[req("Out", List)], NO_ATTRS, "Out = X with Elems appended (Out and X share a type)"),
    op(L, "len", X, OUT_I, NO_ATTRS, "Out = the length of a string, list, map or channel (0 for a nil channel)"),
    op(L, "cap", &[req("X", Chan)], OUT_I, NO_ATTRS, "Out = the capacity of a channel (0 for nil)"),
    op(L, "struct_new", &[var("Fields", Any)], &[req("Out", Struct)], NO_ATTRS, "Out = a struct of Out's type from Fields, one per field in declaration order"),
    op(L, "field", &[req("X", Struct)], OUT, &[attr("name", K::Str)], "Out = X.name"),
    op(L, "set_field", &[req("X", Struct), req("Value", Any)], &[req("Out", Struct)], &[attr("name", K::Str)], "Out = X with X.name = Value"),
    op(M, "map_new", &[var("Keys", Any), var("Values", Any)], &[req("Out", Map)], NO_ATTRS, "Out = a map of Out's type holding Keys[i]: Values[i] (as many Keys as Values; a later equal key replaces an earlier one)"),
    op(M, "map_get", &[req("X", Map), req("Key", Any)], &[opt("Out", Any), opt("Ok", Bool)], NO_ATTRS, "Out = X[Key], the zero value of X's value type when absent; Ok = whether Key is present"),
    op(M, "map_set", &[req("X", Map), req("Key", Any), req("Value", Any)], &[req("Out", Map)], NO_ATTRS, "Out = X with X[Key] = Value (Out and X share a type)"),
    op(M, "map_delete", &[req("X", Map), req("Key", Any)], &[req("Out", Map)], NO_ATTRS, "Out = X without Key (Out and X share a type)"),
    op(M, "map_entry", &[req("X", Map), req("Index", Int)], &[opt("Key", Any), opt("Value", Any)], NO_ATTRS, "Key, Value = the entry at position Index of X's iteration order, 0 <= Index < len(X)"),
    op(C, "make_chan", &[opt("Cap", Int)], &[req("Out", Chan)], NO_ATTRS, "Out = a new channel of Out's element type with capacity Cap (default 0; negative panics)"),
    op(C, "send", &[req("Chan", Chan), req("Value", Any)], NONE, NO_ATTRS, "Chan <- Value (Value has Chan's element type)"),
    op(C, "recv", &[req("Chan", Chan)], &[opt("Out", Any), opt("Ok", Bool)], NO_ATTRS, "Out, Ok = <-Chan (Ok false when closed and drained; Out then zero)"),
    op(C, "close", &[req("Chan", Chan)], NONE, NO_ATTRS, "close(Chan)"),
    op(C, "select", &[var("Chans", Chan), var("Values", Any)], &[var("Recv", Any), var("Oks", Bool)],
        &[attr("kinds", K::Ints), attr("cases", K::Blocks), attr_opt("default_block", K::Block), attr_opt("case_locs", K::Ints)],
        "one case per Chans entry (kinds: 0 recv, 1 send); Values: the send cases' values in case order; Recv, Oks: empty or one per case (`_` where unused); case_locs: line, column of each case; runs the chosen case's block or default_block"),
    op(C, "after", &[req("Ms", Num)], &[req("Out", Chan)], NO_ATTRS, "Out = a new `chan int` that receives int(Ms) after Ms milliseconds (negative counts as 0)"),
    op(C, "sleep", &[req("Ms", Num)], NONE, NO_ATTRS, "block this task for at least Ms milliseconds (0 yields)"),
    op(G, "go", &[var("Captures", Any), opt("Device", Str)], NONE, &[attr("block", K::Block)], "start a task running `block` with a snapshot of Captures (every outer variable the block uses), placed on Device (absent: this task's device; \"auto\": chosen by the engine; not present: panics)"),
    op(G, "go_call", &[var("Args", Any), opt("Device", Str)], NONE, &[attr("func", K::Str)], "start a task running func(Args), placed on Device (as `go`)"),
    op(G, "call", &[var("Args", Any)], &[opt("Out", Any)], &[attr("func", K::Str)], "Out = func(Args); Args match func's parameters, Out its result"),
    op(G, "func_ref", NONE, &[req("Out", Func)], &[attr("func", K::Str)], "Out = the function `func` as a value (Out's type is its signature)"),
    op(G, "closure", &[var("Captures", Any)], &[req("Out", Func)], &[attr("func", K::Str)], "Out = `func` with its first len(Captures) parameters bound to Captures; Out's type is the signature of the rest"),
    op(G, "call_value", &[req("F", Func), var("Args", Any)], &[opt("Out", Any)], NO_ATTRS, "Out = F(Args); Args match F's parameters, Out its result; a nil F panics `call of nil function`"),
    op(G, "go_value", &[req("F", Func), var("Args", Any), opt("Device", Str)], NONE, NO_ATTRS, "start a task running F(Args) (a nil F panics `call of nil function`), placed on Device (as `go`)"),
    op(G, "return", &[opt("Value", Any)], NONE, NO_ATTRS, "return Value (present iff the function has a result); in a go block: end the task"),
    op(F, "if", &[req("Cond", Bool)], NONE, &[attr("then_block", K::Block), attr_opt("else_block", K::Block)], "run then_block if Cond, else else_block"),
    op(F, "loop", &[opt("Cond", Bool)], NONE,
        &[attr_opt("cond_block", K::Block), attr("body_block", K::Block), attr_opt("post_block", K::Block), attr_opt("label", K::Str)],
        "repeat: run cond_block, stop if Cond is false (Cond is required with cond_block), run body_block, run post_block"),
    op(F, "region", NONE, NONE, &[attr("block", K::Block), attr_opt("label", K::Str)], "run block; a `break` inside leaves it (lowers `switch`)"),
    op(F, "break", NONE, NONE, LABEL, "leave the innermost (or labelled) loop, region or select case"),
    op(F, "continue", NONE, NONE, LABEL, "start the next iteration of the innermost (or labelled) loop, running post_block first"),
    op(B, "print", &[var("Args", Any)], NONE, NO_ATTRS, "print Args separated by spaces, then a newline, as one write"),
    op(B, "panic", &[req("Msg", Any)], NONE, NO_ATTRS, "panic with Msg's printed form"),
    op(B, "assert", &[req("Cond", Bool), req("Msg", Str)], NONE, NO_ATTRS, "panic \"assertion failed: Msg\" if Cond is false"),
    op(B, "exit", &[req("Code", Int)], NONE, NO_ATTRS, "end the program with exit code Code"),
    op(B, "now", NONE, OUT_F, NO_ATTRS, "Out = milliseconds since the program started"),
    op(B, "args", NONE, &[req("Out", StrList)], NO_ATTRS, "Out = the program's arguments (the words after `--`)"),
    op(B, "rand", &[req("N", Int)], OUT_I, NO_ATTRS, "Out = an int in [0, N) from the run's seed (N <= 0 panics)"),
    op(B, "perm", &[req("N", Int)], &[req("Out", IntList)], NO_ATTRS, "Out = a random permutation of 0..N-1 from the run's seed"),
    op(T, "zeros", &[req("Shape", IntList)], OUT_T, NO_ATTRS, "Out = a tensor of zeros of shape Shape, on this task's device"),
    op(T, "ones", &[req("Shape", IntList)], OUT_T, NO_ATTRS, "Out = a tensor of ones of shape Shape, on this task's device"),
    op(T, "full", &[req("Shape", IntList), req("Value", Float)], OUT_T, NO_ATTRS, "Out = a tensor of shape Shape filled with Value, on this task's device"),
    op(T, "randn", &[req("Shape", IntList), req("Seed", Int)], OUT_T, NO_ATTRS, "Out = standard normal samples of shape Shape from Seed, on this task's device"),
    op(T, "tensor_from", &[req("List", FloatList), req("Shape", IntList)], OUT_T, NO_ATTRS, "Out = List's values laid out row-major in shape Shape, on this task's device"),
    op(T, "shape", T1, &[req("Out", IntList)], NO_ATTRS, "Out = X's shape"),
    op(T, "numel", T1, OUT_I, NO_ATTRS, "Out = the number of elements of X"),
    op(T, "matmul", &[req("X", Tensor), req("Y", Tensor)], OUT_T, NO_ATTRS, "Out = the matrix product X·Y"),
    op(T, "transpose", T1, OUT_T, NO_ATTRS, "Out = X transposed (2-d)"),
    op(T, "relu", T1, OUT_T, NO_ATTRS, "Out = max(X, 0) elementwise"),
    op(T, "relu_mask", T1, OUT_T, NO_ATTRS, "Out = 1 where X > 0, else 0"),
    op(T, "exp", X, OUT, NO_ATTRS, "Out = e^X elementwise on a tensor, or of a float (Out has X's type)"),
    op(T, "log", X, OUT, NO_ATTRS, "Out = ln X elementwise on a tensor, or of a float (Out has X's type)"),
    op(T, "softmax", T1, OUT_T, NO_ATTRS, "Out = softmax of each row of X"),
    op(T, "sum", T1, OUT_F, NO_ATTRS, "Out = the sum of X's elements"),
    op(T, "sum_rows", T1, OUT_T, NO_ATTRS, "Out = the sum of the m rows of an [m, n] X: shape [n]"),
    op(T, "mean", T1, OUT_F, NO_ATTRS, "Out = the mean of X's elements"),
    op(T, "argmax_rows", T1, &[req("Out", IntList)], NO_ATTRS, "Out = the index of the largest element of each row of X"),
    op(T, "onehot", &[req("Labels", IntList), req("N", Int)], OUT_T, NO_ATTRS, "Out = [len(Labels), N] with 1 at (i, Labels[i])"),
    op(T, "rows", &[req("X", Tensor), req("Start", Int), req("End", Int)], OUT_T, NO_ATTRS, "Out = rows Start..End-1 of X"),
    op(T, "gather", &[req("X", Tensor), req("Idx", IntList)], OUT_T, NO_ATTRS, "Out = the rows of X listed in Idx, in that order"),
    op(T, "get", &[req("X", Tensor), var("Indices", Int)], OUT_F, NO_ATTRS, "Out = the element of X at Indices"),
    op(T, "devices", NONE, &[req("Out", StrList)], NO_ATTRS, "Out = the devices present, starting with \"cpu\""),
    op(T, "device", T1, &[req("Out", Str)], NO_ATTRS, "Out = the device X lives on"),
    op(T, "to", &[req("X", Tensor), opt("Device", Str)], OUT_T, NO_ATTRS, "Out = X copied to Device (absent: this task's device; asynchronous on a GPU; the next use waits)"),
    op(T, "load_dataset", &[req("Name", Str)], &[req("Out", Struct)], NO_ATTRS, "Out = the named dataset shipped with the engine, as a `Dataset{x tensor; y []int}`, its tensor on this task's device"),
    op(T, "here", NONE, &[req("Out", Str)], NO_ATTRS, "Out = the device this task runs on (`main`: \"cpu\"; a task started with `go`: its placement)"),
    op(CO, "c_group", &[req("N", Int)], &[req("Out", CommList)], &[attr(RINGS_ATTR, K::Int)], "Out = the N members of a new group, by rank (N < 1 panics); `rings` (>= 1) is how many rings its reductions run over, at least (`group(n)` gives 1)"),
    op(CO, "c_world", NONE, &[req("Out", Comm)], NO_ATTRS, "Out = this process's member of the group of all processes (the same member every time; size 1 without MPI)"),
    op(CO, "c_rank", CM, OUT_I, NO_ATTRS, "Out = Comm's rank in its group (nil panics)"),
    op(CO, "c_size", CM, OUT_I, NO_ATTRS, "Out = the size of Comm's group (nil panics)"),
    op(CO, "c_allreduce_sum", CMX, OUT, NO_ATTRS, "Out = the sum of every member's X (int, wrapping; float; tensor, elementwise; list of tensors, each elementwise, in one rendezvous); Out has X's type; blocks until every member called it"),
    op(CO, "c_allreduce_max", CMX, OUT, NO_ATTRS, "Out = the largest of every member's X (as `c_allreduce_sum`)"),
    op(CO, "c_allreduce_min", CMX, OUT, NO_ATTRS, "Out = the smallest of every member's X (as `c_allreduce_sum`)"),
    op(CO, "c_allreduce_prod", CMX, OUT, NO_ATTRS, "Out = the product of every member's X (as `c_allreduce_sum`)"),
    op(CO, "c_broadcast", &[req("Comm", Comm), req("X", Any), req("Root", Int)], OUT, NO_ATTRS, "Out = the X of member Root (0 <= Root < size, else panics); X of any type, Out has X's type"),
    op(CO, "c_allgather", CMX, &[req("Out", List)], NO_ATTRS, "Out = every member's X, by rank; X of any type, Out is a list of X's type"),
    op(CO, "c_barrier", CM, NONE, NO_ATTRS, "return once every member of Comm's group has called it"),
    op(N, "abs", &[req("X", Num)], OUT, NO_ATTRS, "Out = |X| on an int (wrapping) or float; Out has X's type"),
    op(N, "min", &[var("Args", Num)], OUT, NO_ATTRS, "Out = the least of Args (at least one; ints or floats, one type, Out's; a NaN wins)"),
    op(N, "max", &[var("Args", Num)], OUT, NO_ATTRS, "Out = the greatest of Args (as `min`)"),
    op(N, "sqrt", &[req("X", Float)], OUT_F, NO_ATTRS, "Out = the square root of X"),
    op(N, "pow", &[req("X", Float), req("Y", Float)], OUT_F, NO_ATTRS, "Out = X to the power Y"),
    op(N, "floor", &[req("X", Float)], OUT_F, NO_ATTRS, "Out = the greatest integer value <= X"),
    op(N, "ceil", &[req("X", Float)], OUT_F, NO_ATTRS, "Out = the least integer value >= X"),
    op(N, "inf", NONE, OUT_F, NO_ATTRS, "Out = +Inf"),
    op(N, "nan", NONE, OUT_F, NO_ATTRS, "Out = NaN"),
    op(N, "is_nan", &[req("X", Float)], OUT_B, NO_ATTRS, "Out = whether X is NaN"),
    op(S, "decode_rune", &[req("X", Str), req("Index", Int)], &[req("Out", Int), req("Width", Int)], NO_ATTRS, "Out, Width = the character starting at byte Index of X and its length in bytes (invalid UTF-8: 0xFFFD, 1); lowers `for i, r := range s`"),
    op(S, "split", &[req("X", Str), req("Sep", Str)], &[req("Out", StrList)], NO_ATTRS, "Out = the parts of X between the Sep (empty Sep: its characters), as Go's strings.Split"),
    op(S, "fields", &[req("X", Str)], &[req("Out", StrList)], NO_ATTRS, "Out = the runs of X between white space"),
    op(S, "join", &[req("List", StrList), req("Sep", Str)], &[req("Out", Str)], NO_ATTRS, "Out = the strings of List with Sep between them"),
    op(S, "contains", &[req("X", Any), req("Y", Any)], OUT_B, NO_ATTRS, "Out = whether string X contains string Y, or list X has an element == Y"),
    op(S, "str_index", &[req("X", Str), req("Y", Str)], OUT_I, NO_ATTRS, "Out = the byte index of the first Y in X, or -1 (the builtin `index`)"),
    op(S, "has_prefix", &[req("X", Str), req("Y", Str)], OUT_B, NO_ATTRS, "Out = whether X starts with Y"),
    op(S, "has_suffix", &[req("X", Str), req("Y", Str)], OUT_B, NO_ATTRS, "Out = whether X ends with Y"),
    op(S, "replace", &[req("X", Str), req("Old", Str), req("New", Str)], &[req("Out", Str)], NO_ATTRS, "Out = X with every Old replaced by New, as Go's strings.ReplaceAll"),
    op(S, "trim", &[req("X", Str)], &[req("Out", Str)], NO_ATTRS, "Out = X without leading and trailing white space"),
    op(S, "lower", &[req("X", Str)], &[req("Out", Str)], NO_ATTRS, "Out = X in lower case"),
    op(S, "upper", &[req("X", Str)], &[req("Out", Str)], NO_ATTRS, "Out = X in upper case"),
    op(S, "repeat", &[req("X", Str), req("N", Int)], &[req("Out", Str)], NO_ATTRS, "Out = N copies of X (negative N panics)"),
    op(S, "chr", &[req("X", Int)], &[req("Out", Str)], NO_ATTRS, "Out = the UTF-8 encoding of code point X (U+FFFD when X is not one)"),
    op(S, "sprintf", &[req("Format", Str), var("Args", Any)], &[req("Out", Str)], NO_ATTRS, "Out = Format with Args formatted by Go's fmt verbs"),
    op(LS, "make_list", &[req("N", Int)], &[req("Out", List)], NO_ATTRS, "Out = N zero values of Out's element type (negative N panics)"),
    op(LS, "sort", &[req("X", List)], &[req("Out", List)], NO_ATTRS, "Out = X sorted ascending (ints, floats or strings; Out has X's type)"),
    op(LS, "reverse", &[req("X", List)], &[req("Out", List)], NO_ATTRS, "Out = X in reverse order (Out has X's type)"),
    op(D, "tick", &[req("Ms", Num)], &[req("Out", Chan)], NO_ATTRS, "Out = a new `chan int` that receives 1, 2, 3, ... every Ms milliseconds, dropping ticks a slow receiver misses"),
    op(D, "lines", &[req("Path", Str)], &[req("Out", Chan)], NO_ATTRS, "Out = a new `chan string` of the lines of file Path (\"-\": standard input), closed at the end"),
    op(D, "read_file", &[req("Path", Str)], &[req("Out", Str)], NO_ATTRS, "Out = the contents of file Path"),
    op(D, "write_file", &[req("Path", Str), req("Data", Str)], NONE, NO_ATTRS, "write Data to file Path, replacing it"),
    op(D, "append_file", &[req("Path", Str), req("Data", Str)], NONE, NO_ATTRS, "append Data to file Path, creating it"),
    op(D, "exists", &[req("Path", Str)], OUT_B, NO_ATTRS, "Out = whether a file or directory Path exists"),
    op(D, "env", &[req("Name", Str)], &[req("Out", Str)], NO_ATTRS, "Out = the environment variable Name (\"\" when unset)"),
    op(D, "load_csv", &[req("Path", Str)], OUT_T, NO_ATTRS, "Out = the numeric CSV file Path as a [rows, cols] tensor (a non-numeric first line is a header), on this task's device"),
    op(D, "load_npy", &[req("Path", Str)], OUT_T, NO_ATTRS, "Out = the NumPy .npy file Path (f32 or f64) as a tensor, on this task's device"),
    op(D, "save_npy", &[req("Path", Str), req("X", Tensor)], NONE, NO_ATTRS, "write X to Path as a NumPy .npy file of f32"),
    op(D, "values", T1, &[req("Out", FloatList)], NO_ATTRS, "Out = X's elements in row-major order"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_found() {
        let mut seen = HashSet::new();
        for op in OPS {
            assert!(seen.insert(op.name), "duplicate op {}", op.name);
            assert_eq!(lookup(op.name), Some(op));
            let mut slots = HashSet::new();
            for s in op.inputs.iter().chain(op.outputs) {
                assert!(
                    slots.insert(s.name),
                    "{}: duplicate slot {}",
                    op.name,
                    s.name
                );
            }
            let mut attrs = HashSet::new();
            for a in op.attrs {
                assert!(
                    attrs.insert(a.name),
                    "{}: duplicate attr {}",
                    op.name,
                    a.name
                );
            }
            assert!(!op.meaning.is_empty() && !op.meaning.contains('\n'));
        }
        assert!(lookup("nope").is_none());
    }

    #[test]
    fn every_tensor_builtin_of_the_spec_is_an_op() {
        let builtins = "zeros ones full randn tensor_from shape numel matmul transpose relu \
                        relu_mask exp log softmax sum sum_rows mean argmax_rows onehot rows \
                        gather get devices device to load_dataset here";
        for name in builtins.split_whitespace() {
            assert_eq!(lookup(name).map(|o| o.group), Some(T), "{name}");
        }
        let get = lookup("get").unwrap();
        assert_eq!(get.inputs[1].arity, Arity::Variadic);
        assert!(lookup("devices").unwrap().inputs.is_empty());
    }

    #[test]
    fn every_collective_of_the_spec_is_an_op() {
        let ops = "c_group c_world c_rank c_size c_allreduce_sum c_allreduce_max \
                   c_allreduce_min c_allreduce_prod c_broadcast c_allgather c_barrier";
        for name in ops.split_whitespace() {
            assert_eq!(lookup(name).map(|o| o.group), Some(CO), "{name}");
        }
        let rings = lookup("c_group").unwrap().attr(RINGS_ATTR).unwrap();
        assert!(rings.required && rings.kind == AttrKind::Int);
        assert!(lookup("c_barrier").unwrap().outputs.is_empty());
    }
}
