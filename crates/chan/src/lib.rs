#![doc = include_str!("../README.md")]
//!
//! # Inside the crate
//!
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
//! | `queue.rs`   | a wait queue (`sendq`, `recvq`): FIFO, withdrawal in O(log n) |
//! | `ring.rs`    | the buffer: a lock-free ring the channel lock can freeze    |
//! | `select.rs`  | `Select<T>`: poll order, lock order, park, dequeue          |
//! | `waiter.rs`  | a blocked party (`Context`), its CAS, waking, `block_on`    |
//! | `error.rs`   | error values                                                |
//! | `loom.rs`    | the loom facade of every Weft crate: std/parking_lot, or loom's types under `--cfg loom` |
//! | `loom_tests.rs` | loom model checks of the blocking protocols (`cfg(all(test, loom))`) |
//!
//! Rules kept (Go's, docs/language.md, "Channels"): FIFO values and FIFO blocked senders
//! and receivers; send hands off to a waiting receiver before buffering;
//! send on a closed channel fails; close of a closed channel fails; receive
//! on a closed channel drains the buffer, then yields `None`; close wakes
//! every blocked party; a nil channel (`None` in a `Select`, or
//! [`block_forever`]) is never ready. Waiting uses `std::task::Waker` only.
//! The design is written up in `docs/channels.md`.
#![deny(missing_docs)]

mod channel;
mod error;
pub mod loom;
#[cfg(all(test, loom))]
mod loom_tests;
mod queue;
mod ring;
mod select;
mod state;
mod waiter;

pub use channel::{block_forever, Chan, RecvFut, SendFut};
pub use error::{CloseError, SendError, TryRecvError, TrySendError};
pub use select::{
    select_on, select_on_locked, select_ready_on, try_select_on, Cases, Select, SelectFut, SelectOn,
};
pub use waiter::WaitSlot;

/// The case that fired in a select: the result of [`Select::select`],
/// [`Select::select_blocking`] and [`Select::try_select`].
///
/// # Examples
///
/// ```
/// use weft_chan::{Chan, Outcome, Select, Selected};
///
/// let ch = Chan::new(1);
/// ch.try_send(7).unwrap();
/// let mut sel = Select::new();
/// let i = sel.recv_ref(Some(&ch));
/// let fired = sel.select_blocking(&mut fastrand::Rng::new());
/// assert_eq!(fired, Selected { index: i, outcome: Outcome::Received(Some(7)) });
/// ```
#[derive(Debug, PartialEq, Eq)]
pub struct Selected<T> {
    /// The index of the case that fired, as returned by the
    /// [`Select::recv`] / [`Select::send`] (or `_ref`) call that added it.
    pub index: usize,
    /// What that case did: the value received, or whether the send went
    /// through.
    pub outcome: Outcome<T>,
}

/// What the fired case of a select did ([`Selected::outcome`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome<T> {
    /// A receive case: the value, or `None` when closed and drained.
    Received(Option<T>),
    /// A send case: the value was taken or buffered.
    Sent,
    /// A send case on a closed channel: the value comes back (Go panics).
    SendClosed(T),
}
