//! The values of the public interface: the collective operations
//! ([`Op`], [`Reduce`]), what a member contributes ([`Data`]) and what it
//! gets back ([`Outcome`]). Nothing here knows about groups or waiting.

use std::sync::Arc;

/// How an all-reduce combines the members' values, element by element, in
/// rank order: `((x0 op x1) op x2) ...` (docs/collectives.md, "Results").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reduce {
    /// `+`; integers wrap.
    Sum,
    /// The largest; a NaN wins (floats), ties keep the lower rank's value.
    Max,
    /// The smallest; a NaN wins (floats), ties keep the lower rank's value.
    Min,
    /// `*`; integers wrap.
    Prod,
}

/// One collective operation, as every member of a group calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Every member gets the reduction of all members' values.
    AllReduce(Reduce),
    /// Every member gets the value of member `root`.
    Broadcast {
        /// The rank whose value everyone gets.
        root: usize,
    },
    /// Every member gets the list of all members' values, in rank order.
    AllGather,
    /// Returns once every member has called it; carries no value.
    Barrier,
}

impl Op {
    /// The operation's name in messages: `allreduce_sum`, `allreduce_max`,
    /// `allreduce_min`, `allreduce_prod`, `broadcast`, `allgather`,
    /// `barrier` (the language's builtin names, docs/language.md).
    pub fn name(&self) -> &'static str {
        match self {
            Op::AllReduce(Reduce::Sum) => "allreduce_sum",
            Op::AllReduce(Reduce::Max) => "allreduce_max",
            Op::AllReduce(Reduce::Min) => "allreduce_min",
            Op::AllReduce(Reduce::Prod) => "allreduce_prod",
            Op::Broadcast { .. } => "broadcast",
            Op::AllGather => "allgather",
            Op::Barrier => "barrier",
        }
    }

    /// The operation with the root left out: two members whose ops have
    /// the same kind called the same collective.
    pub(crate) fn kind(&self) -> Op {
        match self {
            Op::Broadcast { .. } => Op::Broadcast { root: 0 },
            op => *op,
        }
    }
}

/// What one member contributes to a collective. `V` is the caller's own
/// value type (the interpreter's `Value`); the crate only clones and moves
/// it.
///
/// - [`Op::AllReduce`] takes `Int`, `Float`, `F32` or `F32s` (every member
///   the same kind and, for `F32` and `F32s`, the same shapes).
/// - [`Op::Broadcast`] takes any kind; every member gets the root's.
/// - [`Op::AllGather`] takes `Value` or `Shaped` (every member the same
///   kind); the result is the list of the values.
/// - [`Op::Barrier`] takes anything (normally `Unit`); it is dropped.
#[derive(Clone, Debug)]
pub enum Data<V> {
    /// A 64-bit integer.
    Int(i64),
    /// A 64-bit float.
    Float(f64),
    /// A host tensor of `f32`, row-major; `data.len()` is the product of
    /// `shape`. The buffer is only read, never copied on the way in.
    F32 {
        /// The dimensions.
        shape: Arc<[usize]>,
        /// The elements.
        data: Arc<Vec<f32>>,
    },
    /// Host tensors of `f32` reduced as a list (a bucketed all-reduce,
    /// docs/collectives.md, "Lists of tensors"): part `i` is reduced
    /// elementwise with part `i` of every other member, the members meet
    /// once for the whole list, and no buffer is copied in or out (the
    /// result is one new buffer a part). Every member must pass as many
    /// parts, of the same shapes in the same order. All-reduce and
    /// broadcast take it; every part's `data.len()` is the product of its
    /// shape.
    F32s(Vec<F32Part>),
    /// Any other value (broadcast, all-gather).
    Value(V),
    /// A value with a shape that members must agree on (a tensor passed to
    /// broadcast or all-gather as the caller's own value): shapes are
    /// checked like `F32`'s, and the value is handled like `Value`'s.
    Shaped {
        /// The dimensions every member must agree on.
        shape: Arc<[usize]>,
        /// The value.
        value: V,
    },
    /// No value (barrier).
    Unit,
}

/// One tensor of a [`Data::F32s`] list, or of an [`Outcome::F32s`] result.
#[derive(Clone, Debug)]
pub struct F32Part {
    /// The dimensions.
    pub shape: Arc<[usize]>,
    /// The elements, row-major.
    pub data: Arc<Vec<f32>>,
}

impl<V> Data<V> {
    /// The kind, for the type check: members of one step must agree.
    pub(crate) fn kind(&self) -> u8 {
        match self {
            Data::Int(_) => 0,
            Data::Float(_) => 1,
            Data::F32 { .. } => 2,
            Data::Value(_) => 3,
            Data::Shaped { .. } => 4,
            Data::Unit => 5,
            Data::F32s(_) => 6,
        }
    }

    /// The shape members must agree on, if the data has one.
    pub(crate) fn shape(&self) -> Option<&Arc<[usize]>> {
        match self {
            Data::F32 { shape, .. } | Data::Shaped { shape, .. } => Some(shape),
            _ => None,
        }
    }
}

/// What a member gets back from a collective. Every member gets bitwise
/// the same result; buffers and lists are shared, not copied.
#[derive(Clone, Debug)]
pub enum Outcome<V> {
    /// An integer all-reduce, or a broadcast of `Data::Int`.
    Int(i64),
    /// A float all-reduce, or a broadcast of `Data::Float`.
    Float(f64),
    /// A tensor all-reduce, or a broadcast of `Data::F32`: one buffer
    /// shared by every member (tensors are immutable).
    F32 {
        /// The dimensions.
        shape: Arc<[usize]>,
        /// The elements.
        data: Arc<Vec<f32>>,
    },
    /// An all-reduce of `Data::F32s`, or a broadcast of it: one buffer a
    /// part, the list shared by every member.
    F32s(Arc<[F32Part]>),
    /// A broadcast of `Data::Value` or `Data::Shaped`: the root's value,
    /// cloned for each member.
    Value(V),
    /// An all-gather: one list shared by every member, in rank order.
    Gathered(Arc<Vec<V>>),
    /// A barrier, or a broadcast of `Data::Unit`.
    Unit,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_builtins() {
        let ops = [
            (Op::AllReduce(Reduce::Sum), "allreduce_sum"),
            (Op::AllReduce(Reduce::Max), "allreduce_max"),
            (Op::AllReduce(Reduce::Min), "allreduce_min"),
            (Op::AllReduce(Reduce::Prod), "allreduce_prod"),
            (Op::Broadcast { root: 3 }, "broadcast"),
            (Op::AllGather, "allgather"),
            (Op::Barrier, "barrier"),
        ];
        for (op, name) in ops {
            assert_eq!(op.name(), name);
        }
        assert_eq!(Op::Broadcast { root: 3 }.kind(), Op::Broadcast { root: 0 });
    }
}
