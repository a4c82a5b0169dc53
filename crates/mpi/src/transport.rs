//! What the messaging thread needs from the layer below: point-to-point
//! messages that never block the caller, and one non-blocking collective
//! step at a time. MPI provides it (`mpi.rs`, feature `mpi`); so does an
//! in-memory network of threads (`mem.rs`), which runs the same protocol
//! in one process for tests.
//!
//! Rules every transport keeps (the protocol relies on them):
//! - Messages from one process to another arrive in the order sent
//!   (MPI's non-overtaking rule: the MPI transport uses one communicator
//!   for them, and sends a message's attached buffers right behind it),
//!   with their attached buffers, in order.
//! - A collective step completes on every process once every process has
//!   started the same step, and steps are matched in the order started.
//! - `send` copies nothing and never waits for the receiver: the buffer is
//!   kept until the transport is done with it.

use std::ops::Range;
use std::sync::Arc;

/// The `f32` buffers a message carries beside its bytes (never copied
/// into them; see `Payload::attach`).
pub(crate) type Attached = Vec<Arc<Vec<f32>>>;

/// One step of a collective, started on every process.
#[derive(Debug)]
pub(crate) enum Step {
    /// Every process contributes `mine` (`counts[r]` bytes from rank `r`);
    /// everyone gets the contributions concatenated in rank order.
    Gather { mine: Vec<u8>, counts: Vec<usize> },
    /// Everyone gets the root's `buf`; the others pass a buffer of the
    /// same length to fill.
    Bcast { root: usize, buf: Vec<u8> },
    /// Rank `r` sends `send[ranges[j]]` to every rank `j` and receives
    /// `recv_counts[j]` elements from every rank `j`: everyone gets its
    /// pieces in rank order (the reduce-scatter half of a large
    /// all-reduce, where a rank sends itself nothing), in `recv` (cleared
    /// first: a buffer to reuse, docs/distributed.md, "Speed").
    ToAllF32 {
        send: Arc<Vec<f32>>,
        ranges: Vec<Range<usize>>,
        recv_counts: Vec<usize>,
        recv: Vec<f32>,
    },
    /// Like `Gather`, for `mine[range]` of an `f32` buffer; the result
    /// lands in `recv` (cleared first). `mine` comes back with the result.
    GatherF32 {
        mine: F32Src,
        range: Range<usize>,
        counts: Vec<usize>,
        recv: Vec<f32>,
    },
}

/// The buffer an `f32` step sends from: a tensor of the program's, or a
/// scratch buffer of the messaging thread's, handed back when the step
/// completes so that the next step reuses it.
#[derive(Debug)]
pub(crate) enum F32Src {
    Shared(Arc<Vec<f32>>),
    Owned(Vec<f32>),
}

impl F32Src {
    pub fn as_slice(&self) -> &[f32] {
        match self {
            F32Src::Shared(v) => v,
            F32Src::Owned(v) => v,
        }
    }

    /// The scratch buffer, if it is one.
    pub fn into_owned(self) -> Option<Vec<f32>> {
        match self {
            F32Src::Shared(_) => None,
            F32Src::Owned(v) => Some(v),
        }
    }
}

/// What a finished step gives.
#[derive(Debug, PartialEq)]
pub(crate) enum StepOut {
    Bytes(Vec<u8>),
    /// The received elements, and the step's send buffer if it was a
    /// scratch buffer (`F32Src::Owned`).
    F32(Vec<f32>, Option<Vec<f32>>),
}

/// The transport failed: the MPI library reported an error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct TransportError(pub String);

/// The layer under the messaging thread (see the module doc).
pub(crate) trait Transport {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Starts sending `buf[start..]` to `to`, with the buffers `attached`
    /// (a payload's, `Payload::attach`): they arrive with the bytes.
    fn send(
        &mut self,
        to: usize,
        buf: Vec<u8>,
        start: usize,
        attached: Attached,
    ) -> Result<(), TransportError>;
    /// Sends not finished yet (the transport tests them).
    fn sends_in_flight(&mut self) -> Result<usize, TransportError>;
    /// A message that arrived, with its sender and its attached buffers,
    /// if any.
    fn try_recv(&mut self) -> Result<Option<(usize, Vec<u8>, Attached)>, TransportError>;
    /// Starts a collective step (none is in progress).
    fn start(&mut self, step: Step) -> Result<(), TransportError>;
    /// The step in progress, if it has finished.
    fn test(&mut self) -> Result<Option<StepOut>, TransportError>;
    /// Shuts the transport down; `clean` unless the transport failed (MPI
    /// is then left to the process's exit).
    fn close(self, clean: bool);
}
