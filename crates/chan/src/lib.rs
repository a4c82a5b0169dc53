//! Typed channels and `select` with Go's semantics, for tasks (async) and
//! plain threads (`_blocking`).
//!
//! The model is Go's `runtime/chan.go` and `runtime/select.go`; a blocked
//! party's state is crossbeam-channel's one-CAS `Context`. Table of contents:
//!
//! | file         | what                                                        |
//! |--------------|-------------------------------------------------------------|
//! | `channel.rs` | `Chan<T>`, the send/receive futures, `try_`/`_blocking`     |
//! | `state.rs`   | the state under the channel lock; the steps of send/recv/close |
//! | `ring.rs`    | the buffer: a lock-free ring the channel lock can freeze    |
//! | `select.rs`  | `Select<T>`: poll order, lock order, park, dequeue          |
//! | `waiter.rs`  | a blocked party (`Context`), its CAS, waking, `block_on`    |
//! | `error.rs`   | error values                                                |
//! | `loom.rs`    | the loom facade of every Weft crate: std/parking_lot, or loom's types under `--cfg loom` |
//!
//! Rules kept (Go's, docs/language.md, "Channels"): FIFO values and FIFO blocked senders
//! and receivers; send hands off to a waiting receiver before buffering;
//! send on a closed channel fails; close of a closed channel fails; receive
//! on a closed channel drains the buffer, then yields `None`; close wakes
//! every blocked party; a nil channel (`None` in a `Select`, or
//! [`block_forever`]) is never ready. Waiting uses `std::task::Waker` only.
//! The design is written up in `docs/channels.md`.

mod channel;
mod error;
pub mod loom;
mod ring;
mod select;
mod state;
mod waiter;

pub use channel::{block_forever, Chan, RecvFut, SendFut};
pub use error::{CloseError, SendError, TryRecvError, TrySendError};
pub use select::{select_on, try_select_on, Cases, Select, SelectFut, SelectOn};
pub use waiter::WaitSlot;

/// The case that fired in a select.
#[derive(Debug, PartialEq, Eq)]
pub struct Selected<T> {
    /// The index returned by `Select::recv` / `Select::send`.
    pub index: usize,
    pub outcome: Outcome<T>,
}

/// What the fired case did.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome<T> {
    /// A receive case: the value, or `None` when closed and drained.
    Received(Option<T>),
    /// A send case: the value was taken or buffered.
    Sent,
    /// A send case on a closed channel: the value comes back (Go panics).
    SendClosed(T),
}
