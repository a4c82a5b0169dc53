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
//! - printing follows docs/language.md ("Printing values") exactly (`fmt_float` for floats).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use weft_chan::loom::Mutex;
use weft_chan::Chan;
use weft_coll::Member;
use weft_mpi::{ChanRef, World};
use weft_tensor::Tensor;

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
    Struct { id: u32, name: Arc<str> },
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
/// element type, and for another process's channel the reference to it.
#[derive(Clone)]
pub struct ChanVal {
    pub ch: Option<Chan<Value>>,
    pub elem: Arc<Ty>,
    pub far: Option<Box<FarChan>>,
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

/// One run-time value.
///
/// `repr(C, u8)`: a tag byte, then every payload at byte 8. With Rust's
/// default layout `Bool`'s payload sat at byte 1, so the compiler copied a
/// `Value` as byte 0, bytes 1..8 (two overlapping 4-byte moves) and bytes
/// 8..24; a load spanning two of the stores that had just written a value
/// cannot be forwarded from them and waits for them to reach the cache
/// (measured: about 5% of a task ping-pong's cycles in one such copy).
/// `Option<Value>` stays 24 bytes (the tag byte has spare values).
#[derive(Clone)]
#[repr(C, u8)]
pub enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(Arc<str>),
    List(Arc<Vec<Value>>),
    Struct(Arc<Vec<Value>>),
    Chan(Box<ChanVal>),
    Tensor(Box<Tensor>),
    /// A member of a collective group; `None` is the nil comm.
    Comm(Option<Box<CommVal>>),
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_display())
    }
}

impl Value {
    /// The empty string.
    pub fn empty_str() -> Value {
        Value::Str(Arc::from(""))
    }

    /// A string value.
    pub fn str(s: &str) -> Value {
        Value::Str(Arc::from(s))
    }

    /// A list value.
    pub fn list(v: Vec<Value>) -> Value {
        Value::List(Arc::new(v))
    }

    /// The printed form (docs/language.md, "Printing values"), as `print` and `str(x)` write it.
    pub fn to_display(&self) -> String {
        let mut s = String::new();
        self.write_to(&mut s);
        s
    }

    /// Appends the printed form to `out`.
    pub fn write_to(&self, out: &mut String) {
        self.write_within(out, usize::MAX);
    }

    /// Appends the printed form to `out` while `out` stays within `max`
    /// bytes; false (with `out` cut short, at most a scalar's form past
    /// `max`) when it would not. The printed form of a list can be far
    /// larger than the list (a million references to one long string), so
    /// `print` and `str(x)` bound it by what the memory ceiling leaves.
    pub fn write_within(&self, out: &mut String, max: usize) -> bool {
        use std::fmt::Write;
        match self {
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Float(x) => write_float(out, *x),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Str(s) => {
                if s.len() > max.saturating_sub(out.len()) {
                    return false;
                }
                out.push_str(s)
            }
            Value::List(items) | Value::Struct(items) => {
                let (open, close) = match self {
                    Value::List(_) => ('[', ']'),
                    _ => ('{', '}'),
                };
                out.push(open);
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
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
                (None, None) => out.push_str("nil"),
            },
            Value::Tensor(t) => {
                let _ = write!(out, "{t}");
            }
            Value::Comm(None) => out.push_str("nil"),
            Value::Comm(Some(m)) => {
                let _ = write!(out, "comm(rank {} of {})", m.rank(), m.size());
            }
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
        Ty::Tensor => Value::Tensor(Box::default()),
        Ty::Comm => Value::Comm(None),
        Ty::Chan(e) => Value::Chan(Box::new(ChanVal {
            ch: None,
            elem: e.clone(),
            far: None,
        })),
        Ty::List(_) => Value::list(Vec::new()),
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
        Value::Chan(Box::new(ChanVal {
            ch: Some(Chan::new(cap)),
            elem: Arc::new(elem),
            far: None,
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
        let c = |i: usize| Value::Comm(Some(Box::new(CommVal::Group(g[i].clone()))));
        assert_eq!(c(0).to_display(), "comm(rank 0 of 4)");
        assert_eq!(c(3).to_display(), "comm(rank 3 of 4)");
        let nil = zero_value(&Ty::Comm, &[]).unwrap();
        assert_eq!(nil.to_display(), "nil");
        assert!(values_equal(&c(1), &c(1)));
        assert!(!values_equal(&c(1), &c(2)));
        assert!(values_equal(&nil, &nil.clone()));
        assert!(!values_equal(&nil, &c(0)));
        let other = weft_coll::group::<Value>(4, 1).expect("a group of 4");
        let d = Value::Comm(Some(Box::new(CommVal::Group(other[1].clone()))));
        assert!(!values_equal(&c(1), &d));
        assert_eq!(Ty::List(Arc::new(Ty::Comm)).to_string(), "[]comm");
    }

    #[test]
    fn values_stay_small() {
        assert!(std::mem::size_of::<Value>() <= 24);
    }

    #[test]
    fn tensors_print_shape_and_device() {
        let t = Value::Tensor(Box::default());
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
