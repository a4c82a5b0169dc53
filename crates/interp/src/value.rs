//! Run-time values and types of the interpreter.
//!
//! Invariants:
//! - every value but a channel has value semantics: lists and structs share
//!   storage through an `Arc` and are copied on write (`Arc::make_mut`), so no
//!   task ever sees another task's write;
//! - a channel value is a reference (`Chan` is a handle) plus its element type,
//!   kept only so that it prints as `chan T(cap N)`; `None` is the nil channel;
//! - a comm value is a reference too: a member of a collective group
//!   (`weft_coll::Member`, whose copies are the same member) or this
//!   process's member of `world()` across processes; `None` is nil;
//! - a channel of another process (docs/distributed.md) is a `FarChan`: its
//!   reference there and this process's `Procs`; its `ch` is `None`, so only
//!   the cold paths that find no local channel look for it;
//! - maps are values too: `Arc<MapVal>`, copied on write like lists; a
//!   map's entries keep their insertion order (`indexmap`), so iteration is
//!   reproducible, and printing sorts them by key as Go's fmt does;
//! - a func value is `None` (nil) or a closure: a function and the values
//!   its first parameters are bound to;
//! - printing follows docs/language.md ("Printing values") exactly (`fmt_float` for floats);
//! - a string is bytes, as in Go (`Str`, a thin shared `[u8]`, usually but not always UTF-8:
//!   slicing cuts bytes, so `s[0:2] + s[2:] == s` even through a
//!   character); only its printed form replaces bytes that are not UTF-8
//!   with U+FFFD (`String::from_utf8_lossy`), where text leaves the program.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;
use triomphe::ThinArc;
use weft_chan::loom::Mutex;
use weft_chan::Chan;
use weft_coll::Member;
use weft_mpi::{ChanRef, World};
use weft_tensor::Tensor;

use super::error::RuntimeError;
use super::fmt_float::write_float;

/// A run-time type: what a variable holds. Struct types are named and carry
/// their index in the program's struct table (so a struct may reach itself
/// through a channel without a cycle of `Arc`s).
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Int,
    Float,
    Bool,
    Str,
    Tensor,
    Comm,
    Chan(Arc<Ty>),
    List(Arc<Ty>),
    Struct {
        id: u32,
        name: Arc<str>,
    },
    Map(Arc<Ty>, Arc<Ty>),
    /// A func type, with its printed form (`func(int) bool`).
    Func(Arc<str>),
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Int => f.write_str("int"),
            Ty::Float => f.write_str("float"),
            Ty::Bool => f.write_str("bool"),
            Ty::Str => f.write_str("string"),
            Ty::Tensor => f.write_str("tensor"),
            Ty::Comm => f.write_str("comm"),
            Ty::Chan(e) => write!(f, "chan {e}"),
            Ty::List(e) => write!(f, "[]{e}"),
            Ty::Struct { name, .. } => f.write_str(name),
            Ty::Map(k, v) => write!(f, "map[{k}]{v}"),
            Ty::Func(sig) => f.write_str(sig),
        }
    }
}

/// A declared struct: its name and fields in declaration order.
#[derive(Clone, Debug)]
pub struct StructInfo {
    pub name: Arc<str>,
    pub fields: Vec<(Arc<str>, Ty)>,
}

/// A channel value: the channel (None = nil, or another process's), its
/// element type, for another process's channel the reference to it, and
/// for the channel of a `lines` the error its reader may leave.
#[derive(Clone)]
pub struct ChanVal {
    pub ch: Option<Chan<Value>>,
    pub elem: Arc<Ty>,
    pub far: Option<Box<FarChan>>,
    pub read_err: Option<Arc<ReadErr>>,
}

/// The read error of a `lines` reader (docs/language.md, "Input and
/// output"): the reader sets it and then closes the channel, and a receive
/// that finds the channel closed and drained panics with it instead of
/// getting the zero value. Only `lines` channels have one, and it is
/// looked at only on a receive that found the channel closed, so other
/// channels' receives pay nothing for it.
pub type ReadErr = OnceLock<Box<str>>;

impl ChanVal {
    /// The error a receive that found this channel closed panics with,
    /// if its `lines` reader left one.
    #[cold]
    #[inline(never)]
    pub fn closed_error(&self) -> Option<RuntimeError> {
        let msg = self.read_err.as_deref()?.get()?;
        Some(RuntimeError::Builtin(msg.clone()))
    }
}

/// `closed_error` of the channel value `v` (`None` for other values).
#[cold]
#[inline(never)]
pub fn closed_error(v: &Value) -> Option<RuntimeError> {
    match v {
        Value::Chan(c) => c.closed_error(),
        _ => None,
    }
}

/// The processes of a run started by `mpirun` (docs/distributed.md): this
/// process's member of the world, and its channels that other processes
/// hold, by number (a reference that comes back is the channel again).
pub struct Procs {
    pub world: World,
    pub local: Mutex<HashMap<u64, Chan<Value>>>,
}

/// A channel that another process made.
#[derive(Clone)]
pub struct FarChan {
    pub r: ChanRef,
    pub procs: Arc<Procs>,
}

/// What a comm value refers to: a member of a group of tasks, or this
/// process's member of the group of all processes.
#[derive(Clone)]
pub enum CommVal {
    Group(Member<Value>),
    World(Arc<Procs>),
}

impl CommVal {
    pub fn rank(&self) -> usize {
        match self {
            CommVal::Group(m) => m.rank(),
            CommVal::World(p) => p.world.rank(),
        }
    }

    pub fn size(&self) -> usize {
        match self {
            CommVal::Group(m) => m.size(),
            CommVal::World(p) => p.world.size(),
        }
    }

    /// Identity, to hash by: equal for members that are [`CommVal::same`]
    /// (every copy of this process's world member is the same).
    pub fn identity(&self) -> Option<(usize, usize)> {
        match self {
            CommVal::Group(m) => Some(m.identity()),
            CommVal::World(_) => None,
        }
    }

    /// Identity: copies of one member are the same.
    pub fn same(&self, other: &CommVal) -> bool {
        match (self, other) {
            (CommVal::Group(a), CommVal::Group(b)) => a.same(b),
            (CommVal::World(a), CommVal::World(b)) => a.world.same(&b.world),
            _ => false,
        }
    }
}

/// The bytes of one value in a list, struct, frame or channel buffer (what
/// the memory ceiling's checks count per element).
pub const VALUE_BYTES: usize = std::mem::size_of::<Value>();

/// A string's bytes (Go's strings are bytes, usually but not always
/// UTF-8), shared and immutable, behind one thin pointer: the length sits
/// in the allocation beside the bytes (`triomphe::ThinArc`), not in the
/// pointer, so a `Value` is 16 bytes rather than 24 (with `Arc<[u8]>`'s
/// fat pointer). At 16 bytes a `Value`, an `Option<Value>` and a
/// `Result<Value, _>` travel in two registers instead of through memory,
/// and every frame slot and buffered value is a third smaller.
#[derive(Clone)]
pub struct Str(ThinArc<(), u8>);

impl Str {
    /// The bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.0.slice
    }
}

impl std::ops::Deref for Str {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl From<&[u8]> for Str {
    fn from(b: &[u8]) -> Str {
        Str(ThinArc::from_header_and_slice((), b))
    }
}

impl From<Vec<u8>> for Str {
    fn from(b: Vec<u8>) -> Str {
        Str::from(&b[..])
    }
}

impl PartialEq for Str {
    #[inline]
    fn eq(&self, other: &Str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Str {}

impl PartialOrd for Str {
    fn partial_cmp(&self, other: &Str) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Str {
    fn cmp(&self, other: &Str) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl Hash for Str {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.as_bytes().hash(h)
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&String::from_utf8_lossy(self), f)
    }
}

/// One run-time value.
///
/// `repr(C, u64)`: the tag is a whole word, then every payload at byte 8.
/// Every payload is one word (a string is a thin [`Str`]), so a `Value` is
/// 16 bytes, two words the compiler moves whole, and `Option<Value>` too
/// (the tag has spare values). With Rust's default layout `Bool`'s
/// payload sat at byte 1, so the compiler copied a `Value` as byte 0,
/// bytes 1..8 (two overlapping 4-byte moves) and the rest; with a tag
/// byte (`repr(C, u8)`) it still copied the byte and the seven after it
/// apart, at odd offsets. A load spanning two of the stores that had just
/// written a value cannot be forwarded from them and waits for them to
/// reach the cache (measured: about 5% of a task ping-pong's cycles in one
/// such copy; the 16-byte `Value` with a tag byte was 1.12x the 24-byte
/// one's time on `pingpong`, with a tag word 1.02x).
#[derive(Clone)]
#[repr(C, u64)]
pub enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(Str),
    List(Arc<Vec<Value>>),
    Struct(Arc<Vec<Value>>),
    Chan(Arc<ChanVal>),
    Tensor(Arc<Tensor>),
    /// A member of a collective group; `None` is the nil comm.
    Comm(Option<Arc<CommVal>>),
    Map(Arc<MapVal>),
    /// `None` is the nil func.
    Func(Option<Arc<Closure>>),
}

/// A func value: the function to run and the values its first
/// parameters are bound to (a function literal's captured variables).
#[derive(Debug)]
pub struct Closure {
    pub func: u32,
    pub captures: Box<[Value]>,
}

/// The hasher of maps: foldhash, fast on the short keys maps mostly hold
/// (an int, a word), seeded per process. Iteration order does not depend
/// on it: entries keep insertion order.
pub type MapHasher = foldhash::fast::RandomState;

/// A map's entries, in insertion order (a deleted entry's place is taken
/// by the last one, `swap_remove`), and whether it is a nil map.
#[derive(Clone, Default)]
pub struct MapVal {
    pub entries: IndexMap<Key, Value, MapHasher>,
    /// A nil map (docs/language.md, "Maps"): a map type's zero value, as
    /// in Go. It has no entries and reads as empty; writing to it panics
    /// (`assignment to entry in nil map`); it equals `nil`. `make` and
    /// literals make maps that are not nil.
    pub nil: bool,
}

impl MapVal {
    /// A nil map value.
    pub fn nil_value() -> Value {
        Value::Map(Arc::new(MapVal {
            entries: IndexMap::default(),
            nil: true,
        }))
    }

    /// The entries in printing order: sorted by key with [`key_order`]
    /// (stable), as `print` and `sprintf` write a map.
    pub fn sorted(&self) -> Vec<(&Value, &Value)> {
        let mut entries: Vec<(&Value, &Value)> =
            self.entries.iter().map(|(k, v)| (&k.0, v)).collect();
        entries.sort_by(|a, b| key_order(a.0, b.0));
        entries
    }
}

/// What a map's key table holds for one entry: its key, value, hash and
/// index slot (the memory ceiling's count per entry).
pub const MAP_ENTRY_BYTES: usize = 2 * VALUE_BYTES + 16;

/// A map key: a value of a comparable type (an int, float, string, bool,
/// channel, comm or struct of those), hashed and compared as `==` does, except
/// that a float NaN equals itself (so that a NaN key can be found again)
/// and `-0.0` is `0.0`. A new comparable kind of value needs one arm in
/// `hash_value` and one in `values_equal`.
#[derive(Clone)]
pub struct Key(pub Value);

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        key_eq(&self.0, &other.0)
    }
}

impl Eq for Key {}

impl Hash for Key {
    fn hash<H: Hasher>(&self, h: &mut H) {
        hash_value(&self.0, h);
    }
}

/// A map key borrowed from where it is (a frame slot), to look it up
/// without cloning it: hashed and compared as [`Key`].
pub struct KeyRef<'a>(pub &'a Value);

impl Hash for KeyRef<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        hash_value(self.0, h);
    }
}

impl indexmap::Equivalent<Key> for KeyRef<'_> {
    fn equivalent(&self, key: &Key) -> bool {
        key_eq(self.0, &key.0)
    }
}

fn float_key(x: f64) -> u64 {
    if x == 0.0 {
        0
    } else if x.is_nan() {
        f64::NAN.to_bits()
    } else {
        x.to_bits()
    }
}

#[inline]
fn key_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // The common key first, without the call into `values_equal`.
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => float_key(*x) == float_key(*y),
        (Value::Struct(x), Value::Struct(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| key_eq(p, q))
        }
        _ => values_equal(a, b),
    }
}

/// A channel's identity, to hash and order map keys by, equal exactly when
/// `values_equal` says so: nil, this process's channel by its id, or
/// another process's by its owner and number there.
fn chan_identity(c: &ChanVal) -> ChanIdentity {
    match (&c.ch, &c.far) {
        (Some(ch), _) => ChanIdentity::Local(ch.id()),
        (None, Some(far)) => ChanIdentity::Far(far.r.owner, far.r.id),
        (None, None) => ChanIdentity::Nil,
    }
}

#[derive(Hash, PartialEq, Eq, PartialOrd, Ord)]
enum ChanIdentity {
    Nil,
    Local(usize),
    Far(usize, u64),
}

fn hash_value<H: Hasher>(v: &Value, h: &mut H) {
    match v {
        Value::Int(i) => i.hash(h),
        Value::Float(x) => float_key(*x).hash(h),
        Value::Bool(b) => b.hash(h),
        Value::Str(s) => s.hash(h),
        Value::Chan(c) => chan_identity(c).hash(h),
        // identity, as `values_equal`: the group and the rank
        Value::Comm(c) => c.as_ref().map(|m| m.identity()).hash(h),
        Value::Struct(fields) => fields.iter().for_each(|f| hash_value(f, h)),
        // not comparable: never a key (the checker rejects such map types)
        Value::List(_) | Value::Tensor(_) | Value::Map(_) | Value::Func(_) => {}
    }
}

/// The order in which maps print their keys (Go's fmt: numbers and
/// strings ascending, false before true, channels by identity, comms by
/// rank (nil first; comms of one rank keep insertion order: the sort is
/// stable), structs field by field; NaN first).
pub fn key_order(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Float(x), Value::Float(y)) => match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        },
        (Value::Str(x), Value::Str(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Chan(x), Value::Chan(y)) => chan_identity(x).cmp(&chan_identity(y)),
        (Value::Comm(x), Value::Comm(y)) => {
            let rank = |c: &Option<Arc<CommVal>>| c.as_ref().map(|m| (m.rank(), m.size()));
            rank(x).cmp(&rank(y))
        }
        (Value::Struct(x), Value::Struct(y)) => x
            .iter()
            .zip(y.iter())
            .map(|(p, q)| key_order(p, q))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal),
        _ => Ordering::Equal,
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_display())
    }
}

impl Value {
    /// The empty string.
    pub fn empty_str() -> Value {
        Value::Str(Str::from(&b""[..]))
    }

    /// A string value.
    pub fn str(s: &str) -> Value {
        Value::Str(Str::from(s.as_bytes()))
    }

    /// A string value of any bytes (Go's strings need not be UTF-8).
    pub fn bytes(b: &[u8]) -> Value {
        Value::Str(Str::from(b))
    }

    /// A list value.
    pub fn list(v: Vec<Value>) -> Value {
        Value::List(Arc::new(v))
    }

    /// The printed form (docs/language.md, "Printing values"), as `print` and `str(x)` write it,
    /// as text: bytes of strings that are not UTF-8 show as U+FFFD (for
    /// messages and tests; `print` and `str(x)` keep them, `write_within`).
    pub fn to_display(&self) -> String {
        let mut b = Vec::new();
        self.write_within(&mut b, usize::MAX);
        match String::from_utf8(b) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }
    }

    /// Appends the printed form to `out` while `out` stays within `max`
    /// bytes; false (with `out` cut short, at most a scalar's form past
    /// `max`) when it would not. The printed form of a list can be far
    /// larger than the list (a million references to one long string), so
    /// `print` and `str(x)` bound it by what the memory ceiling leaves.
    /// A string's bytes go out as they are, UTF-8 or not, as Go writes
    /// them.
    pub fn write_within(&self, out: &mut Vec<u8>, max: usize) -> bool {
        use std::io::Write;
        match self {
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Float(x) => write_float(out, *x),
            Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Value::Str(s) => {
                if s.len() > max.saturating_sub(out.len()) {
                    return false;
                }
                out.extend_from_slice(s)
            }
            Value::List(items) | Value::Struct(items) => {
                let (open, close) = match self {
                    Value::List(_) => (b'[', b']'),
                    _ => (b'{', b'}'),
                };
                out.push(open);
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b' ');
                    }
                    if !v.write_within(out, max) {
                        return false;
                    }
                }
                out.push(close);
            }
            Value::Chan(c) => match (&c.ch, &c.far) {
                (Some(ch), _) => {
                    let _ = write!(out, "chan {}(cap {})", c.elem, ch.cap());
                }
                (None, Some(far)) => {
                    let _ = write!(out, "chan {}(cap {})", c.elem, far.r.cap);
                }
                (None, None) => out.extend_from_slice(b"nil"),
            },
            Value::Tensor(t) => {
                let _ = write!(out, "{t}");
            }
            Value::Comm(None) => out.extend_from_slice(b"nil"),
            Value::Comm(Some(m)) => {
                let _ = write!(out, "comm(rank {} of {})", m.rank(), m.size());
            }
            Value::Map(m) => {
                out.extend_from_slice(b"map[");
                for (i, (k, v)) in m.sorted().into_iter().enumerate() {
                    if i > 0 {
                        out.push(b' ');
                    }
                    if !k.write_within(out, max) {
                        return false;
                    }
                    out.push(b':');
                    if !v.write_within(out, max) {
                        return false;
                    }
                }
                out.push(b']');
            }
            Value::Func(f) => out.extend_from_slice(if f.is_some() { b"func" } else { b"nil" }),
        }
        out.len() <= max
    }

    /// The truth value of a bool (false for anything else; the verifier
    /// guarantees conditions are bools).
    pub fn truthy(&self) -> bool {
        matches!(self, Value::Bool(true))
    }
}

/// `==` of the language: scalars by value, channels and comms by identity
/// (nil equals nil), structs field by field. Lists and tensors are not comparable (the
/// checker rejects them); they compare unequal here.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Chan(x), Value::Chan(y)) => match (&x.ch, &y.ch) {
            (Some(p), Some(q)) => p.id() == q.id(),
            (None, None) => match (&x.far, &y.far) {
                (None, None) => true,
                (Some(a), Some(b)) => a.r.owner == b.r.owner && a.r.id == b.r.id,
                _ => false,
            },
            _ => false,
        },
        (Value::Comm(x), Value::Comm(y)) => match (x, y) {
            (None, None) => true,
            (Some(p), Some(q)) => p.same(q),
            _ => false,
        },
        (Value::Struct(x), Value::Struct(y)) => {
            Arc::ptr_eq(x, y)
                || (x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| values_equal(p, q)))
        }
        // maps compare only with nil (the checker's rule)
        (Value::Map(x), Value::Map(y)) => x.nil && y.nil,
        // func values compare only with nil (the checker's rule)
        (Value::Func(x), Value::Func(y)) => match (x, y) {
            (None, None) => true,
            (Some(p), Some(q)) => Arc::ptr_eq(p, q),
            _ => false,
        },
        _ => false,
    }
}

/// Why a zero value could not be built.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ZeroError {
    #[error("unknown struct type id {0}")]
    UnknownStruct(u32),
    #[error("struct type {0} contains itself")]
    Recursive(String),
}

/// The zero value of `ty` (docs/language.md, "Types"): `0`, `0.0`, `false`, `""`, nil
/// channel, empty list, empty tensor, every field zero.
pub fn zero_value(ty: &Ty, structs: &[StructInfo]) -> Result<Value, ZeroError> {
    zero_depth(ty, structs, 0)
}

fn zero_depth(ty: &Ty, structs: &[StructInfo], depth: usize) -> Result<Value, ZeroError> {
    Ok(match ty {
        Ty::Int => Value::Int(0),
        Ty::Float => Value::Float(0.0),
        Ty::Bool => Value::Bool(false),
        Ty::Str => Value::empty_str(),
        Ty::Tensor => Value::Tensor(Arc::default()),
        Ty::Comm => Value::Comm(None),
        Ty::Chan(e) => Value::Chan(Arc::new(ChanVal {
            ch: None,
            elem: e.clone(),
            far: None,
            read_err: None,
        })),
        Ty::List(_) => Value::list(Vec::new()),
        Ty::Map(..) => MapVal::nil_value(),
        Ty::Func(_) => Value::Func(None),
        Ty::Struct { id, name } => {
            if depth > structs.len() {
                return Err(ZeroError::Recursive(name.to_string()));
            }
            let info = structs
                .get(*id as usize)
                .ok_or(ZeroError::UnknownStruct(*id))?;
            let mut fields = Vec::with_capacity(info.fields.len());
            for (_, fty) in &info.fields {
                fields.push(zero_depth(fty, structs, depth + 1)?);
            }
            Value::Struct(Arc::new(fields))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chan_of(elem: Ty, cap: usize) -> Value {
        Value::Chan(Arc::new(ChanVal {
            ch: Some(Chan::new(cap)),
            elem: Arc::new(elem),
            far: None,
            read_err: None,
        }))
    }

    #[test]
    fn prints_scalars_and_lists() {
        assert_eq!(Value::Int(-42).to_display(), "-42");
        assert_eq!(Value::Float(2.0).to_display(), "2.0");
        assert_eq!(Value::Bool(true).to_display(), "true");
        assert_eq!(Value::str("a b").to_display(), "a b");
        let l = Value::list(vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
        assert_eq!(l.to_display(), "[1 2 3]");
        assert_eq!(Value::list(vec![]).to_display(), "[]");
    }

    #[test]
    fn prints_structs_with_empty_string_field() {
        let s = Value::Struct(Arc::new(vec![
            Value::Int(1),
            Value::Float(2.0),
            Value::str("x"),
        ]));
        assert_eq!(s.to_display(), "{1 2.0 x}");
        let e = Value::Struct(Arc::new(vec![Value::Int(3), Value::empty_str()]));
        assert_eq!(e.to_display(), "{3 }");
        assert_eq!(Value::Struct(Arc::new(vec![])).to_display(), "{}");
    }

    #[test]
    fn prints_channels_with_element_type() {
        assert_eq!(chan_of(Ty::Int, 4).to_display(), "chan int(cap 4)");
        assert_eq!(chan_of(Ty::Int, 0).to_display(), "chan int(cap 0)");
        let cc = Ty::Chan(Arc::new(Ty::Int));
        assert_eq!(chan_of(cc, 2).to_display(), "chan chan int(cap 2)");
        let b = Ty::Struct {
            id: 0,
            name: Arc::from("Batch"),
        };
        assert_eq!(chan_of(b, 1).to_display(), "chan Batch(cap 1)");
        let nil = zero_value(&Ty::Chan(Arc::new(Ty::Int)), &[]).unwrap();
        assert_eq!(nil.to_display(), "nil");
        let l = Ty::List(Arc::new(Ty::Float));
        assert_eq!(chan_of(l, 3).to_display(), "chan []float(cap 3)");
    }

    #[test]
    fn zero_values_of_structs() {
        let structs = vec![
            StructInfo {
                name: Arc::from("P"),
                fields: vec![
                    (Arc::from("a"), Ty::Int),
                    (Arc::from("s"), Ty::Str),
                    (Arc::from("l"), Ty::List(Arc::new(Ty::Int))),
                ],
            },
            StructInfo {
                name: Arc::from("Loop"),
                fields: vec![(
                    Arc::from("me"),
                    Ty::Struct {
                        id: 1,
                        name: Arc::from("Loop"),
                    },
                )],
            },
        ];
        let p = Ty::Struct {
            id: 0,
            name: Arc::from("P"),
        };
        assert_eq!(zero_value(&p, &structs).unwrap().to_display(), "{0  []}");
        let l = Ty::Struct {
            id: 1,
            name: Arc::from("Loop"),
        };
        assert!(matches!(
            zero_value(&l, &structs),
            Err(ZeroError::Recursive(_))
        ));
    }

    #[test]
    fn comms_print_and_compare_by_identity() {
        let g = weft_coll::group::<Value>(4, 1).expect("a group of 4");
        let c = |i: usize| Value::Comm(Some(Arc::new(CommVal::Group(g[i].clone()))));
        assert_eq!(c(0).to_display(), "comm(rank 0 of 4)");
        assert_eq!(c(3).to_display(), "comm(rank 3 of 4)");
        let nil = zero_value(&Ty::Comm, &[]).unwrap();
        assert_eq!(nil.to_display(), "nil");
        assert!(values_equal(&c(1), &c(1)));
        assert!(!values_equal(&c(1), &c(2)));
        assert!(values_equal(&nil, &nil.clone()));
        assert!(!values_equal(&nil, &c(0)));
        let other = weft_coll::group::<Value>(4, 1).expect("a group of 4");
        let d = Value::Comm(Some(Arc::new(CommVal::Group(other[1].clone()))));
        assert!(!values_equal(&c(1), &d));
        assert_eq!(Ty::List(Arc::new(Ty::Comm)).to_string(), "[]comm");
        // as map keys: by identity, the group and the rank
        let mut m = MapVal::default();
        m.entries.insert(Key(c(1)), Value::Int(1));
        m.entries.insert(Key(nil.clone()), Value::Int(0));
        assert!(m.entries.contains_key(&Key(c(1))));
        assert!(m.entries.contains_key(&Key(nil.clone())));
        assert!(!m.entries.contains_key(&Key(c(2))));
        assert!(!m.entries.contains_key(&Key(d)));
        assert_eq!(
            Value::Map(Arc::new(m)).to_display(),
            "map[nil:0 comm(rank 1 of 4):1]"
        );
    }

    #[test]
    fn values_stay_small() {
        // Two words: passed and returned in registers (`Str`).
        assert_eq!(std::mem::size_of::<Value>(), 16);
        assert_eq!(std::mem::size_of::<Option<Value>>(), 16);
    }

    #[test]
    fn tensors_print_shape_and_device() {
        let t = Value::Tensor(Arc::default());
        assert_eq!(t.to_display(), "tensor[0]@cpu");
        let z = zero_value(&Ty::Tensor, &[]).unwrap();
        assert_eq!(z.to_display(), "tensor[0]@cpu");
        assert!(!values_equal(&t, &z));
    }

    #[test]
    fn equality_rules() {
        let c = chan_of(Ty::Int, 0);
        assert!(values_equal(&c, &c.clone()));
        assert!(!values_equal(&c, &chan_of(Ty::Int, 0)));
        let nil = zero_value(&Ty::Chan(Arc::new(Ty::Int)), &[]).unwrap();
        assert!(values_equal(&nil, &nil.clone()));
        assert!(!values_equal(&nil, &c));
        let s1 = Value::Struct(Arc::new(vec![Value::Int(1), Value::str("a")]));
        let s2 = Value::Struct(Arc::new(vec![Value::Int(1), Value::str("a")]));
        assert!(values_equal(&s1, &s2));
        assert!(!values_equal(
            &Value::Float(f64::NAN),
            &Value::Float(f64::NAN)
        ));
    }
}
