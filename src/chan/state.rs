//! The state behind one channel's lock and the three steps of Go's
//! `chansend` / `chanrecv`: hand off to a waiting party, else use the buffer,
//! else report that the caller must park (the caller parks; see `channel.rs`
//! and `select.rs`).
//!
//! Invariants (all under the channel lock):
//! 1. `buf.len() <= cap`; `buf` is FIFO.
//! 2. A *live* `recvq` entry (its context still `WAITING`) exists only while
//!    `buf` is empty; a live `sendq` entry only while `buf` is full.
//! 3. Once `closed`, no entry is ever added to `sendq` or `recvq`, and `close`
//!    empties both.
//! 4. Entries whose context already left `WAITING` ("stale": the select won
//!    another case, or was cancelled) may linger until their owner removes
//!    them; every step skips and drops them (`pop_live`).
//! 5. Queues are FIFO, so blocked senders are served in arrival order.

use std::collections::VecDeque;

use super::sync::Arc;
use super::waiter::{Context, Handoff, Waiter};
use super::{CloseError, Outcome};

/// At most this many buffer slots are allocated up front; the buffer grows
/// on demand beyond it (Go allocates all of `cap` in `makechan`).
const PREALLOC: usize = 64;

pub(crate) struct State<T> {
    /// Buffered values, oldest first (`hchan.buf`).
    pub(crate) buf: VecDeque<T>,
    /// Set once by `close` (`hchan.closed`).
    pub(crate) closed: bool,
    /// Blocked senders with their values (`hchan.sendq`).
    pub(crate) sendq: VecDeque<Waiter<T, T>>,
    /// Blocked receivers (`hchan.recvq`).
    pub(crate) recvq: VecDeque<Waiter<T, ()>>,
}

/// What a send step did.
pub(crate) enum SendStep<T> {
    /// Completed: handed to a receiver (deliver the handoff) or buffered.
    Done(Option<Handoff<T>>),
    /// The channel is closed; the value comes back.
    Closed(T),
    /// No receiver and no room: the caller parks or gives up.
    Full(T),
}

/// What a receive step did.
pub(crate) enum RecvStep<T> {
    /// Completed with a value, or `None` when closed and drained; a sender
    /// taken from `sendq` must be told (deliver the handoff).
    Done(Option<T>, Option<Handoff<T>>),
    /// Nothing to receive: the caller parks or gives up.
    Empty,
}

/// Pops the first entry whose party this call wins (invariant 4).
#[inline]
fn pop_live<T, V>(q: &mut VecDeque<Waiter<T, V>>) -> Option<Waiter<T, V>> {
    while let Some(w) = q.pop_front() {
        if w.cx.try_select(w.case) {
            return Some(w);
        }
    }
    None
}

impl<T> State<T> {
    pub(crate) fn new(cap: usize) -> Self {
        State {
            buf: VecDeque::with_capacity(cap.min(PREALLOC)),
            closed: false,
            sendq: VecDeque::new(),
            recvq: VecDeque::new(),
        }
    }

    /// `chansend` without parking: closed? a waiting receiver? room?
    #[inline]
    pub(crate) fn send(&mut self, cap: usize, v: T) -> SendStep<T> {
        if self.closed {
            return SendStep::Closed(v);
        }
        if let Some(w) = pop_live(&mut self.recvq) {
            return SendStep::Done(Some(Handoff {
                cx: w.cx,
                outcome: Outcome::Received(Some(v)),
            }));
        }
        if self.buf.len() < cap {
            self.buf.push_back(v);
            return SendStep::Done(None);
        }
        SendStep::Full(v)
    }

    /// `chanrecv` without parking: closed and drained? a waiting sender?
    /// a buffered value?
    #[inline]
    pub(crate) fn recv(&mut self) -> RecvStep<T> {
        if self.closed && self.buf.is_empty() {
            return RecvStep::Done(None, None);
        }
        if let Some(w) = pop_live(&mut self.sendq) {
            // Unbuffered: take the sender's value. Buffered (and so full,
            // invariant 2): take the head, the sender's value goes to the tail.
            let v = match self.buf.pop_front() {
                Some(head) => {
                    self.buf.push_back(w.val);
                    head
                }
                None => w.val,
            };
            return RecvStep::Done(
                Some(v),
                Some(Handoff {
                    cx: w.cx,
                    outcome: Outcome::Sent,
                }),
            );
        }
        match self.buf.pop_front() {
            Some(v) => RecvStep::Done(Some(v), None),
            None => RecvStep::Empty,
        }
    }

    /// `closechan`: mark closed and release every blocked party, receivers
    /// first (they get `None`), then senders (they get their value back).
    pub(crate) fn close(&mut self) -> Result<Vec<Handoff<T>>, CloseError> {
        if self.closed {
            return Err(CloseError);
        }
        self.closed = true;
        let mut woken = Vec::new();
        while let Some(w) = pop_live(&mut self.recvq) {
            woken.push(Handoff {
                cx: w.cx,
                outcome: Outcome::Received(None),
            });
        }
        while let Some(w) = pop_live(&mut self.sendq) {
            woken.push(Handoff {
                cx: w.cx,
                outcome: Outcome::SendClosed(w.val),
            });
        }
        Ok(woken)
    }

    /// Removes every entry of `cx` (a party that finished or gave up).
    pub(crate) fn remove(&mut self, cx: &Arc<Context<T>>) {
        self.sendq.retain(|w| !Arc::ptr_eq(&w.cx, cx));
        self.recvq.retain(|w| !Arc::ptr_eq(&w.cx, cx));
    }
}
