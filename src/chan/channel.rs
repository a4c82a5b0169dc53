//! `Chan<T>`: one Go channel (`hchan`), its send/receive futures, and the
//! `try_` and `_blocking` forms.
//!
//! Every operation locks the channel once and runs one step of `state.rs`.
//! If the step cannot complete, an async operation creates a `Context`,
//! queues one entry and returns `Pending` with the lock released; it is
//! completed by a partner or `close` (see `waiter.rs`). A future dropped
//! while queued aborts its context and removes its entry (cancellation
//! safety); if a partner had already chosen it, the operation counts as done
//! (a received value is dropped with the future).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use super::state::{RecvStep, SendStep, State};
use super::sync::{Arc, Mutex, MutexGuard};
use super::waiter::{block_on, hint, Context, Parkable, Waiter};
use super::{CloseError, Outcome, SendError, TryRecvError, TrySendError};

/// A channel: a reference to a shared queue with Go's semantics.
/// `Clone` gives another reference to the same channel.
pub struct Chan<T> {
    pub(crate) inner: Arc<Inner<T>>,
}

pub(crate) struct Inner<T> {
    /// Capacity (`hchan.dataqsiz`); 0 is unbuffered.
    pub(crate) cap: usize,
    /// Everything else, under the channel lock (`hchan.lock`).
    pub(crate) state: Mutex<State<T>>,
}

impl<T> Clone for Chan<T> {
    fn clone(&self) -> Self {
        Chan {
            inner: self.inner.clone(),
        }
    }
}

impl<T> PartialEq for Chan<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
impl<T> Eq for Chan<T> {}

impl<T> fmt::Debug for Chan<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Chan({:#x}, cap {})", self.id(), self.inner.cap)
    }
}

impl<T> Chan<T> {
    /// Identity of the channel: equal ids are the same channel. Also the
    /// lock order of `select` (Go sorts by `hchan` address).
    #[inline]
    pub fn id(&self) -> usize {
        &*self.inner as *const Inner<T> as usize
    }

    #[inline]
    pub(crate) fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.inner.state.lock()
    }
}

impl<T: Send> Chan<T> {
    /// A channel with `cap` buffer slots (0: unbuffered).
    pub fn new(cap: usize) -> Chan<T> {
        Chan {
            inner: Arc::new(Inner {
                cap,
                state: Mutex::new(State::new(cap)),
            }),
        }
    }

    /// Values buffered now (`len(ch)`).
    pub fn len(&self) -> usize {
        self.lock().buf.len()
    }

    /// True when nothing is buffered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Capacity (`cap(ch)`).
    pub fn cap(&self) -> usize {
        self.inner.cap
    }

    /// Entries now in (`sendq`, `recvq`), counting entries of parties that
    /// already finished elsewhere and have not removed them yet. For tests
    /// and diagnostics: after every party has finished it is `(0, 0)`.
    pub fn queued(&self) -> (usize, usize) {
        let st = self.lock();
        (st.sendq.len(), st.recvq.len())
    }

    /// True once `close` has succeeded.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// `close(ch)`: wakes every blocked receiver (they get `None`) and
    /// sender (they fail). Fails if already closed.
    pub fn close(&self) -> Result<(), CloseError> {
        let woken = self.lock().close()?;
        for h in woken {
            h.deliver();
        }
        Ok(())
    }

    /// Sends without blocking: `Full` when no receiver waits and the buffer
    /// is full, `Closed` when the channel is closed.
    pub fn try_send(&self, v: T) -> Result<(), TrySendError<T>> {
        let step = self.lock().send(self.inner.cap, v);
        match step {
            SendStep::Done(h) => {
                if let Some(h) = h {
                    h.deliver();
                }
                Ok(())
            }
            SendStep::Closed(v) => Err(TrySendError::Closed(v)),
            SendStep::Full(v) => Err(TrySendError::Full(v)),
        }
    }

    /// Receives without blocking: `Empty` when nothing is there, `Closed`
    /// when the channel is closed and drained.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        let step = self.lock().recv();
        match step {
            RecvStep::Done(v, h) => {
                if let Some(h) = h {
                    h.deliver();
                }
                v.ok_or(TryRecvError::Closed)
            }
            RecvStep::Empty => Err(TryRecvError::Empty),
        }
    }

    /// `ch <- v`: completes when a receiver took the value or it was
    /// buffered; fails (value returned) if the channel is or gets closed.
    pub fn send(&self, v: T) -> SendFut<'_, T> {
        SendFut {
            chan: self,
            val: Some(v),
            cx: None,
        }
    }

    /// `v, ok := <-ch`: `None` once the channel is closed and drained.
    pub fn recv(&self) -> RecvFut<'_, T> {
        RecvFut {
            chan: self,
            cx: None,
            done: false,
        }
    }

    /// `send` for a plain thread: parks the thread while blocked.
    /// `send` for a plain thread: parks the thread while blocked (after a
    /// short spin, see `waiter::block_on`).
    pub fn send_blocking(&self, v: T) -> Result<(), SendError<T>> {
        // Fast path: no waker needed when it completes at once.
        match self.try_send(v) {
            Ok(()) => Ok(()),
            Err(TrySendError::Closed(v)) => Err(SendError(v)),
            Err(TrySendError::Full(v)) => block_on(self.send(v)),
        }
    }

    /// `recv` for a plain thread: parks the thread while blocked (after a
    /// short spin, see `waiter::block_on`).
    pub fn recv_blocking(&self) -> Option<T> {
        match self.try_recv() {
            Ok(v) => Some(v),
            Err(TryRecvError::Closed) => None,
            Err(TryRecvError::Empty) => block_on(self.recv()),
        }
    }
}

/// Waits forever: the operation on a nil channel (`ch <- v` or `<-ch` with
/// `ch == nil`). A `Select` case with a `None` channel is the same.
pub async fn block_forever() -> std::convert::Infallible {
    std::future::pending().await
}

/// The future of [`Chan::send`].
#[must_use = "futures do nothing unless polled"]
pub struct SendFut<'a, T> {
    chan: &'a Chan<T>,
    /// The value, until it is sent or queued.
    val: Option<T>,
    /// Set while queued in `sendq`.
    cx: Option<Arc<Context<T>>>,
}

impl<T> Unpin for SendFut<'_, T> {}

impl<T: Send> Future for SendFut<'_, T> {
    type Output = Result<(), SendError<T>>;

    fn poll(mut self: Pin<&mut Self>, tcx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        if let Some(cx) = &self.cx {
            return match cx.poll_outcome(tcx.waker()) {
                None => Poll::Pending,
                Some((_, outcome)) => {
                    self.cx = None;
                    match outcome {
                        Outcome::SendClosed(v) => Poll::Ready(Err(SendError(v))),
                        _ => Poll::Ready(Ok(())),
                    }
                }
            };
        }
        let Some(v) = self.val.take() else {
            // Polled again after completion: nothing left to do.
            return Poll::Ready(Ok(()));
        };
        let chan = self.chan;
        let mut st = chan.lock();
        match st.send(chan.inner.cap, v) {
            SendStep::Done(h) => {
                drop(st);
                if let Some(h) = h {
                    h.deliver();
                }
                Poll::Ready(Ok(()))
            }
            SendStep::Closed(v) => Poll::Ready(Err(SendError(v))),
            SendStep::Full(v) => {
                let cx = Context::new(tcx.waker());
                st.sendq.push_back(Waiter {
                    cx: cx.clone(),
                    case: 0,
                    val: v,
                });
                drop(st);
                self.cx = Some(cx);
                Poll::Pending
            }
        }
    }
}

impl<T: Send> Parkable for SendFut<'_, T> {
    fn ready_hint(&self) -> bool {
        hint(&self.cx)
    }
}

impl<T> Drop for SendFut<'_, T> {
    fn drop(&mut self) {
        if let Some(cx) = self.cx.take() {
            // Not chosen yet: withdraw. Chosen: the partner popped the entry.
            if cx.try_abort() {
                self.chan.lock().remove(&cx);
            }
        }
    }
}

/// The future of [`Chan::recv`].
#[must_use = "futures do nothing unless polled"]
pub struct RecvFut<'a, T> {
    chan: &'a Chan<T>,
    /// Set while queued in `recvq`.
    cx: Option<Arc<Context<T>>>,
    done: bool,
}

impl<T> Unpin for RecvFut<'_, T> {}

impl<T: Send> Future for RecvFut<'_, T> {
    type Output = Option<T>;

    fn poll(mut self: Pin<&mut Self>, tcx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        if let Some(cx) = &self.cx {
            return match cx.poll_outcome(tcx.waker()) {
                None => Poll::Pending,
                Some((_, outcome)) => {
                    self.cx = None;
                    self.done = true;
                    match outcome {
                        Outcome::Received(v) => Poll::Ready(v),
                        _ => Poll::Ready(None),
                    }
                }
            };
        }
        if self.done {
            return Poll::Ready(None);
        }
        let chan = self.chan;
        let mut st = chan.lock();
        match st.recv() {
            RecvStep::Done(v, h) => {
                drop(st);
                if let Some(h) = h {
                    h.deliver();
                }
                self.done = true;
                Poll::Ready(v)
            }
            RecvStep::Empty => {
                let cx = Context::new(tcx.waker());
                st.recvq.push_back(Waiter {
                    cx: cx.clone(),
                    case: 0,
                    val: (),
                });
                drop(st);
                self.cx = Some(cx);
                Poll::Pending
            }
        }
    }
}

impl<T: Send> Parkable for RecvFut<'_, T> {
    fn ready_hint(&self) -> bool {
        hint(&self.cx)
    }
}

impl<T> Drop for RecvFut<'_, T> {
    fn drop(&mut self) {
        if let Some(cx) = self.cx.take() {
            if cx.try_abort() {
                self.chan.lock().remove(&cx);
            }
        }
    }
}
