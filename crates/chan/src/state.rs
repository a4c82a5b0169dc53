//! The state behind one channel's lock and the three steps of Go's
//! `chansend` / `chanrecv`: hand off to a waiting party, else use the buffer,
//! else report that the caller must park (the caller parks; see `channel.rs`
//! and `select.rs`).
//!
//! The buffer is the channel's lock-free ring (`ring.rs`), frozen while the
//! lock is held, or for capacities above `RING_MAX` the `VecDeque` here; the
//! steps reach it only through [`Buf`].
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
//! 6. Every entry queued here carries a number below `next_seq`, and a
//!    party's entries all carry the one number its owner keeps
//!    (`queue.rs`), so a party withdraws in O(log n), not by a scan.

use std::collections::VecDeque;

use super::queue::HeadQueue;
use super::ring::Ring;
use super::waiter::{Handoff, Owned, Waiter};
use super::{CloseError, Outcome};

/// At most this many buffer slots are allocated up front; the buffer grows
/// on demand beyond it (Go allocates all of `cap` in `makechan`).
const PREALLOC: usize = 64;

pub(crate) struct State<T> {
    /// Buffered values, oldest first (`hchan.buf`), when the channel has no
    /// ring (capacity above `RING_MAX`); otherwise unused.
    pub(crate) deque: VecDeque<T>,
    /// True while the ring is frozen (`ring.rs` step 1); kept across lock
    /// holders while a party is queued or the channel is closed.
    pub(crate) frozen: bool,
    /// Set once by `close` (`hchan.closed`).
    pub(crate) closed: bool,
    /// Blocked senders with their values (`hchan.sendq`).
    pub(crate) sendq: HeadQueue<T, T>,
    /// Blocked receivers (`hchan.recvq`).
    pub(crate) recvq: HeadQueue<T, ()>,
    /// The number the next party to queue here gets, at least (invariant 6).
    pub(crate) next_seq: u64,
}

/// What a send step did.
pub(crate) enum SendStep<T> {
    /// Completed: handed to a receiver (wake the hand-off after unlocking)
    /// or buffered (an empty hand-off).
    Done(Handoff),
    /// The channel is closed; the value comes back.
    Closed(T),
    /// No receiver and no room: the caller parks or gives up.
    Full(T),
}

/// What a receive step did.
pub(crate) enum RecvStep<T> {
    /// Completed with a value, or `None` when closed and drained; a sender
    /// taken from `sendq` has its outcome (wake the hand-off after unlocking).
    Done(Option<T>, Handoff),
    /// Nothing to receive: the caller parks or gives up.
    Empty,
}

/// Pops the first entry whose party this call wins (invariant 4).
#[inline(always)]
fn pop_live<T, V>(q: &mut HeadQueue<T, V>) -> Option<Waiter<T, V>> {
    while let Some(w) = q.pop_front() {
        if w.choose() {
            return Some(w);
        }
    }
    None
}

/// The buffer as the lock holder sees it: the frozen ring or the deque.
pub(crate) struct Buf<'a, T> {
    pub(crate) cap: usize,
    pub(crate) ring: Option<&'a Ring<T>>,
}

impl<T> Buf<'_, T> {
    #[inline]
    fn len(&self, st: &State<T>) -> usize {
        match self.ring {
            Some(r) => r.len_frozen(),
            None => st.deque.len(),
        }
    }
    #[inline]
    fn push(&self, st: &mut State<T>, v: T) {
        match self.ring {
            Some(r) => r.push_frozen(v),
            None => st.deque.push_back(v),
        }
    }
    #[inline]
    fn pop(&self, st: &mut State<T>) -> Option<T> {
        match self.ring {
            Some(r) => r.pop_frozen(),
            None => st.deque.pop_front(),
        }
    }
}

impl<T> State<T> {
    /// The state of a channel of capacity `cap`; `ring`: whether its buffer
    /// is a ring (then the deque stays empty).
    pub(crate) fn new(cap: usize, ring: bool) -> Self {
        let prealloc = if ring { 0 } else { cap.min(PREALLOC) };
        State {
            deque: VecDeque::with_capacity(prealloc),
            frozen: false,
            closed: false,
            sendq: HeadQueue::new(),
            recvq: HeadQueue::new(),
            next_seq: 0,
        }
    }

    /// `chansend` without parking: closed? a waiting receiver? room?
    #[inline(always)]
    pub(crate) fn send(&mut self, buf: &Buf<'_, T>, v: T) -> SendStep<T> {
        if self.closed {
            return SendStep::Closed(v);
        }
        if let Some(w) = pop_live(&mut self.recvq) {
            return SendStep::Done(w.cx.fire(Outcome::Received(Some(v))));
        }
        if buf.len(self) < buf.cap {
            buf.push(self, v);
            return SendStep::Done(Handoff::NONE);
        }
        SendStep::Full(v)
    }

    /// `chanrecv` without parking: closed and drained? a waiting sender?
    /// a buffered value?
    #[inline(always)]
    pub(crate) fn recv(&mut self, buf: &Buf<'_, T>) -> RecvStep<T> {
        if self.closed && buf.len(self) == 0 {
            return RecvStep::Done(None, Handoff::NONE);
        }
        if let Some(w) = pop_live(&mut self.sendq) {
            // Unbuffered: take the sender's value. Buffered (and so full,
            // invariant 2): take the head, the sender's value goes to the tail.
            let (cx, val) = w.into_parts();
            let h = cx.fire(Outcome::Sent);
            let v = match buf.pop(self) {
                Some(head) => {
                    buf.push(self, val);
                    head
                }
                None => val,
            };
            return RecvStep::Done(Some(v), h);
        }
        match buf.pop(self) {
            Some(v) => RecvStep::Done(Some(v), Handoff::NONE),
            None => RecvStep::Empty,
        }
    }

    /// `closechan`: mark closed and release every blocked party, receivers
    /// first (they get `None`), then senders (they get their value back).
    pub(crate) fn close(&mut self) -> Result<Vec<Handoff>, CloseError> {
        if self.closed {
            return Err(CloseError);
        }
        self.closed = true;
        let mut woken = Vec::new();
        while let Some(w) = pop_live(&mut self.recvq) {
            woken.push(w.cx.fire(Outcome::Received(None)));
        }
        while let Some(w) = pop_live(&mut self.sendq) {
            let (cx, val) = w.into_parts();
            woken.push(cx.fire(Outcome::SendClosed(val)));
        }
        Ok(woken)
    }

    /// Whether `send` would complete or fail now rather than report
    /// `Full`: closed, a live receiver, or room in the buffer.
    pub(crate) fn send_ready(&self, buf: &Buf<'_, T>) -> bool {
        self.closed || self.recvq.has_live() || buf.len(self) < buf.cap
    }

    /// Whether `recv` would complete now rather than report `Empty`:
    /// closed, a buffered value, or a live sender.
    pub(crate) fn recv_ready(&self, buf: &Buf<'_, T>) -> bool {
        self.closed || buf.len(self) > 0 || self.sendq.has_live()
    }

    /// Values buffered now.
    pub(crate) fn len(&self, buf: &Buf<'_, T>) -> usize {
        buf.len(self)
    }

    /// The number of a party about to queue on this channel alone
    /// (invariant 6; a select takes one over all its channels).
    #[inline]
    pub(crate) fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq = seq + 1;
        seq
    }

    /// Removes every entry of `cx` (a party that finished or gave up):
    /// O(log n) amortized (`queue.rs`).
    pub(crate) fn remove(&mut self, cx: &Owned<T>) {
        let seq = cx.seq();
        self.sendq.remove(seq, cx);
        self.recvq.remove(seq, cx);
    }
}
