//! Error values. `Display` is the message of docs/language.md
//! ("Collectives"); the interpreter panics with it.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// Why a collective (or `group`) failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CollError {
    /// `group(n)` with `n < 1`.
    #[error("group: size out of range")]
    GroupSize,
    /// Members called different collectives at the same step: rank 0's op
    /// and that of the lowest rank that differs.
    #[error("collective mismatch: rank 0 called {first}, rank {rank} called {other}")]
    OpMismatch {
        /// Rank 0's op name.
        first: &'static str,
        /// The lowest rank whose op differs.
        rank: usize,
        /// That rank's op name.
        other: &'static str,
    },
    /// Members of a broadcast named different roots.
    #[error("broadcast: root mismatch: {first} (rank 0) vs {other} (rank {rank})")]
    RootMismatch {
        /// Rank 0's root.
        first: usize,
        /// The lowest rank whose root differs.
        rank: usize,
        /// That rank's root.
        other: usize,
    },
    /// Members passed values of different types.
    #[error("{op}: type mismatch: {first} (rank 0) vs {other} (rank {rank})")]
    TypeMismatch {
        /// The op name.
        op: &'static str,
        /// Rank 0's type name.
        first: Cow<'static, str>,
        /// The lowest rank whose type differs.
        rank: usize,
        /// That rank's type name.
        other: Cow<'static, str>,
    },
    /// Members passed tensors of different shapes.
    #[error(
        "{op}: shape mismatch: {} (rank 0) vs {} (rank {rank})",
        Dims(first),
        Dims(other)
    )]
    ShapeMismatch {
        /// The op name.
        op: &'static str,
        /// Rank 0's shape.
        first: Arc<[usize]>,
        /// The lowest rank whose shape differs.
        rank: usize,
        /// That rank's shape.
        other: Arc<[usize]>,
    },
    /// Members passed lists of tensors ([`Data::F32s`](crate::Data::F32s))
    /// that differ in length or in a shape: every shape of both lists.
    #[error(
        "{op}: shape mismatch: {} (rank 0) vs {} (rank {rank})",
        ListDims(first),
        ListDims(other)
    )]
    ListShapeMismatch {
        /// The op name.
        op: &'static str,
        /// Rank 0's shapes.
        first: Arc<[Arc<[usize]>]>,
        /// The lowest rank whose shapes differ.
        rank: usize,
        /// That rank's shapes.
        other: Arc<[Arc<[usize]>]>,
    },
    /// A broadcast root outside `0..size` (found on the calling member,
    /// before any rendezvous).
    #[error("broadcast: root {root} out of range for group of size {size}")]
    RootRange {
        /// The root asked for.
        root: usize,
        /// The group's size.
        size: usize,
    },
    /// Data the op cannot take (found on the calling member, before any
    /// rendezvous): an all-reduce of a value that is not an int, float or
    /// tensor, or an all-gather of anything but `Data::Value`/`Shaped`.
    /// The language's checker rejects these programs, so this is the
    /// caller's bug.
    #[error("{op}: cannot take a value of type {ty}")]
    Unsupported {
        /// The op name.
        op: &'static str,
        /// The value's type name.
        ty: Cow<'static, str>,
    },
    /// An `F32` whose buffer length is not the product of its shape (found
    /// on the calling member; the caller's bug).
    #[error("{op}: tensor of shape {} has {len} elements", Dims(shape))]
    BadTensor {
        /// The op name.
        op: &'static str,
        /// The shape.
        shape: Arc<[usize]>,
        /// The buffer's length.
        len: usize,
    },
    /// A call future polled again after it completed, or a broken
    /// internal invariant: a bug in the caller or in this crate.
    #[error("collective: internal error: {0}")]
    Internal(&'static str),
}

/// A shape as the language prints it, and as the mismatch messages name
/// it: `[2 3]`.
pub struct Dims<'a>(pub &'a [usize]);

impl fmt::Display for Dims<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        bracketed(f, self.0.iter())
    }
}

/// `[a b c]`: the items apart by spaces, in brackets.
fn bracketed<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    items: impl Iterator<Item = T>,
) -> fmt::Result {
    f.write_str("[")?;
    for (i, d) in items.enumerate() {
        if i > 0 {
            f.write_str(" ")?;
        }
        write!(f, "{d}")?;
    }
    f.write_str("]")
}

/// A list's shapes as the mismatch messages name them: `[[2 3] [4]]`.
pub struct ListDims<'a>(pub &'a [Arc<[usize]>]);

impl fmt::Display for ListDims<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        bracketed(f, self.0.iter().map(|d| Dims(d)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_docs_language() {
        let cases = [
            (CollError::GroupSize, "group: size out of range"),
            (
                CollError::OpMismatch {
                    first: "allreduce_sum",
                    rank: 1,
                    other: "broadcast",
                },
                "collective mismatch: rank 0 called allreduce_sum, rank 1 called broadcast",
            ),
            (
                CollError::RootMismatch {
                    first: 0,
                    rank: 1,
                    other: 2,
                },
                "broadcast: root mismatch: 0 (rank 0) vs 2 (rank 1)",
            ),
            (
                CollError::TypeMismatch {
                    op: "allreduce_sum",
                    first: "int".into(),
                    rank: 1,
                    other: "float".into(),
                },
                "allreduce_sum: type mismatch: int (rank 0) vs float (rank 1)",
            ),
            (
                CollError::ShapeMismatch {
                    op: "allreduce_sum",
                    first: Arc::from([2, 3]),
                    rank: 2,
                    other: Arc::from([3, 2]),
                },
                "allreduce_sum: shape mismatch: [2 3] (rank 0) vs [3 2] (rank 2)",
            ),
            (
                CollError::ListShapeMismatch {
                    op: "allreduce_sum",
                    first: Arc::from([Arc::from([2, 3]), Arc::from([4])]),
                    rank: 1,
                    other: Arc::from([Arc::from([3, 2]), Arc::from([4])]),
                },
                "allreduce_sum: shape mismatch: [[2 3] [4]] (rank 0) vs [[3 2] [4]] (rank 1)",
            ),
            (
                CollError::RootRange { root: 5, size: 4 },
                "broadcast: root 5 out of range for group of size 4",
            ),
            (
                CollError::BadTensor {
                    op: "allreduce_max",
                    shape: Arc::from([]),
                    len: 2,
                },
                "allreduce_max: tensor of shape [] has 2 elements",
            ),
        ];
        for (e, msg) in cases {
            assert_eq!(e.to_string(), msg);
        }
    }
}
