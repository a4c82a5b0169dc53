//! Error values. `Display` is the message: the language's panic message
//! where the program sees it (docs/language.md), else a sentence for the
//! `weft` command to print (docs/distributed.md).

use weft_coll::CollError;

/// Why a remote channel operation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    /// The channel is closed: a send or a close failed (the interpreter
    /// turns this into `send on closed channel` or `close of closed
    /// channel`).
    #[error("channel closed")]
    Closed,
    /// The program is ending: the request will not be answered.
    #[error("the program is ending")]
    Ended,
    /// The other process could not serve the request: an engine bug.
    #[error("remote channel: {0}")]
    Broken(String),
}

/// Why a collective over `world()` failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The members disagree (the language's panic message).
    #[error(transparent)]
    Coll(#[from] CollError),
    /// The processes could not exchange the values: an engine bug, or a
    /// failure of the MPI library.
    #[error("collective over world(): {0}")]
    Broken(String),
}

/// Why the processes could not be joined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MpiError {
    /// `MPI_Init_thread` failed or was already called.
    #[error("cannot start MPI: {0}")]
    Init(String),
    /// The MPI library cannot serve one thread that owns it.
    #[error("the MPI library offers thread level {0}, and Weft needs MPI_THREAD_FUNNELED")]
    Threading(String),
    /// The messaging thread could not be started.
    #[error("cannot start the messaging thread: {0}")]
    Thread(String),
    /// Launched by `mpirun` but built without the `mpi` feature.
    #[error("launched by mpirun with {size} processes, but this weft was built without MPI, so each process runs alone as rank 0 of 1: rebuild with `cargo build --release --features mpi` (needs the MPI headers and libclang: `apt-get install mpich libmpich-dev libclang-dev`)")]
    NotBuilt {
        /// The number of processes `mpirun` started.
        size: usize,
    },
}
