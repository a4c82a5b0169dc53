//! Weft across processes (docs/distributed.md): `world()` as the group of
//! every process that `mpirun` started, its collectives, channels that
//! other processes send to, close and receive from, and the detection of a
//! deadlock that spans processes. The crate moves bytes and `f32` buffers;
//! the interpreter serializes its values. Built without the `mpi` feature
//! (or started without `mpirun`) a program is one process of rank 0 and
//! nothing here starts a thread. Table of contents:
//!
//! | file           | what |
//! |----------------|------|
//! | `world.rs`     | the public face: `World`, `Call`, `ChanRef`, `Endpoint`, `Host`, `End`; the inbox of commands |
//! | `launch.rs`    | starting a world: alone, under `mpirun`, or simulated in memory |
//! | `engine.rs`    | the messaging thread: commands, messages, served channels, collectives, detection, the end |
//! | `detect.rs`    | the deadlock detector (Safra's algorithm), a pure state machine |
//! | `header.rs`    | a collective's first step: headers, the agreement checks |
//! | `reduce.rs`    | a large all-reduce's chunks; the rank-order fold (`weft_coll::kernel`) |
//! | `wire.rs`      | the messages between processes and their bytes |
//! | `payload.rs`   | `Payload`: a value's bytes, with room for a header |
//! | `pool.rs`      | large byte buffers kept for reuse (payloads, received messages) |
//! | `slot.rs`      | one-shot completions between tasks and the thread: `Pending` |
//! | `backoff.rs`   | how the messaging thread waits between polls |
//! | `transport.rs` | what the thread needs from MPI: the `Transport` trait |
//! | `mem.rs`       | the in-memory transport (simulated processes) |
//! | `mpi.rs`       | the MPI transport over rsmpi (feature `mpi`) |
//! | `error.rs`     | `RemoteError`, `CallError`, `MpiError` |
//!
//! Layering: `world` imports `slot`, `header` and `error`; `engine`
//! imports everything but `launch` and `mpi`; `launch` and `mpi` import
//! `engine`, `world` and the transports. Nothing below `engine` imports
//! it or `world` except `slot` (`error` only).
#![deny(missing_docs)]

mod backoff;
mod detect;
mod engine;
mod error;
mod header;
mod launch;
mod mem;
#[cfg(feature = "mpi")]
mod mpi;
mod payload;
mod pool;
mod reduce;
mod slot;
mod transport;
mod wire;
mod world;

/// The loom facade shared by every Weft crate.
use weft_chan::loom;

pub use error::{CallError, MpiError, RemoteError};
pub use launch::{in_memory, launch, launched_rank, launched_size, not_built_warning};
pub use payload::{Payload, MAX_ATTACHED};
pub use slot::Pending;
pub use world::{chan_endpoint, BoxFuture, Bytes, Call, ChanRef, End, Endpoint, Host, World};
