//! `Select<T>`: Go's `select` over cases built at run time (`selectgo`).
//!
//! Protocol, in numbered steps (Go's `runtime/select.go`):
//! 1. `pollorder`: the non-nil cases in a uniformly random order, drawn from
//!    the caller's `fastrand::Rng` when the select is entered. Taking the
//!    first ready case in this order chooses uniformly among ready cases.
//! 2. `lockorder`: the distinct channels sorted by [`Chan::id`]; all of them
//!    are locked in that order (a channel named by several cases is locked
//!    once). Every multi-channel locker uses this order, so no deadlock.
//! 3. Pass 1: in `pollorder`, run each case's step (`state.rs`); the first
//!    that completes fires. A send case on a closed channel is ready and
//!    fires as `SendClosed`.
//! 4. Nothing ready: `try_select` unlocks and returns `None` (the `default`
//!    case). A blocking select creates one `Context` and queues one entry
//!    per non-nil case, in `pollorder` (so when several cases name one
//!    channel, which of them a partner meets first is random, as in Go),
//!    while still holding every lock (so no partner can see half of them,
//!    and the select cannot match itself), then unlocks and parks.
//! 5. A partner or `close` wins the context's CAS for one case and delivers
//!    that case's outcome (`waiter.rs`). The woken select locks each of its
//!    channels in turn and removes its remaining (now stale) entries, so a
//!    finished or dropped select leaves nothing in any queue.
//!
//! A select with no cases, or only nil cases, never fires.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll, Waker};

use super::state::{RecvStep, SendStep, State};
use super::sync::{Arc, MutexGuard};
use super::waiter::{block_on, hint, Context, Parkable, Waiter};
use super::{Chan, Outcome, Selected};

/// A select statement under construction: add cases, then run it.
pub struct Select<T> {
    cases: Vec<Case<T>>,
    /// The value of each send case until it is sent or queued (`None` for
    /// receive cases).
    vals: Vec<Option<T>>,
}

struct Case<T> {
    /// `None` is the nil channel: never ready.
    chan: Option<Chan<T>>,
    send: bool,
}

enum Attempt<T> {
    Fired(Selected<T>),
    Parked(Arc<Context<T>>),
    NotReady,
}

impl<T: Send> Default for Select<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Send> Select<T> {
    pub fn new() -> Self {
        Select {
            cases: Vec::new(),
            vals: Vec::new(),
        }
    }

    /// Adds `case <-ch:`; returns the case index.
    pub fn recv(&mut self, ch: Option<Chan<T>>) -> usize {
        self.cases.push(Case {
            chan: ch,
            send: false,
        });
        self.vals.push(None);
        self.cases.len() - 1
    }

    /// Adds `case ch <- v:`; returns the case index.
    pub fn send(&mut self, ch: Option<Chan<T>>, v: T) -> usize {
        self.cases.push(Case {
            chan: ch,
            send: true,
        });
        self.vals.push(Some(v));
        self.cases.len() - 1
    }

    /// Number of cases added.
    pub fn len(&self) -> usize {
        self.cases.len()
    }

    /// True when no case was added.
    pub fn is_empty(&self) -> bool {
        self.cases.is_empty()
    }

    /// `select` with `default`: fires one ready case, chosen uniformly at
    /// random, or returns `None` (nothing ready: run `default`).
    pub fn try_select(&mut self, rng: &mut fastrand::Rng) -> Option<Selected<T>> {
        let pollorder = self.pollorder(rng);
        match self.attempt(&pollorder, None) {
            Attempt::Fired(s) => Some(s),
            Attempt::Parked(_) | Attempt::NotReady => None,
        }
    }

    /// `select` without `default`: waits until one case fires.
    pub fn select(self, rng: &mut fastrand::Rng) -> SelectFut<T> {
        let pollorder = self.pollorder(rng);
        SelectFut {
            sel: self,
            pollorder,
            cx: None,
            done: false,
        }
    }

    /// `select` for a plain thread: parks the thread while blocked.
    /// `select` for a plain thread: parks the thread while blocked (after
    /// a short spin, see `waiter::block_on`).
    pub fn select_blocking(self, rng: &mut fastrand::Rng) -> Selected<T> {
        block_on(self.select(rng))
    }

    /// Step 1: the non-nil cases, shuffled (Fisher-Yates).
    fn pollorder(&self, rng: &mut fastrand::Rng) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.cases.len())
            .filter(|&i| self.cases[i].chan.is_some())
            .collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.usize(..=i));
        }
        order
    }

    /// Steps 2-4: lock everything, fire the first ready case in `pollorder`,
    /// else (with a waker) queue every case.
    fn attempt(&mut self, pollorder: &[usize], park: Option<&Waker>) -> Attempt<T> {
        let Select { cases, vals } = self;
        let lockorder = lockorder(cases);
        let mut guards: Vec<MutexGuard<'_, State<T>>> =
            lockorder.iter().map(|c| c.lock()).collect();
        let slot = |ch: &Chan<T>| lockorder.binary_search_by_key(&ch.id(), |c| c.id()).ok();

        let mut fired = None;
        for &i in pollorder {
            let Some(ch) = &cases[i].chan else { continue };
            let Some(g) = slot(ch) else { continue };
            let st = &mut guards[g];
            if cases[i].send {
                let Some(v) = vals[i].take() else { continue };
                match st.send(ch.inner.cap, v) {
                    SendStep::Done(h) => {
                        fired = Some((i, Outcome::Sent, h));
                        break;
                    }
                    SendStep::Closed(v) => {
                        fired = Some((i, Outcome::SendClosed(v), None));
                        break;
                    }
                    SendStep::Full(v) => vals[i] = Some(v),
                }
            } else if let RecvStep::Done(v, h) = st.recv() {
                fired = Some((i, Outcome::Received(v), h));
                break;
            }
        }
        if let Some((index, outcome, h)) = fired {
            drop(guards);
            if let Some(h) = h {
                h.deliver();
            }
            return Attempt::Fired(Selected { index, outcome });
        }
        let Some(waker) = park else {
            return Attempt::NotReady;
        };
        let cx = Context::new(waker);
        for &i in pollorder {
            let c = &cases[i];
            let Some(ch) = &c.chan else { continue };
            let Some(g) = slot(ch) else { continue };
            if c.send {
                if let Some(v) = vals[i].take() {
                    guards[g].sendq.push_back(Waiter {
                        cx: cx.clone(),
                        case: i,
                        val: v,
                    });
                }
            } else {
                guards[g].recvq.push_back(Waiter {
                    cx: cx.clone(),
                    case: i,
                    val: (),
                });
            }
        }
        Attempt::Parked(cx)
    }
}

/// The future of [`Select::select`].
#[must_use = "futures do nothing unless polled"]
pub struct SelectFut<T> {
    sel: Select<T>,
    pollorder: Vec<usize>,
    /// Set while parked.
    cx: Option<Arc<Context<T>>>,
    done: bool,
}

impl<T> Unpin for SelectFut<T> {}

impl<T: Send> Future for SelectFut<T> {
    type Output = Selected<T>;

    fn poll(mut self: Pin<&mut Self>, tcx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Some(cx) = &this.cx {
            let Some((index, outcome)) = cx.poll_outcome(tcx.waker()) else {
                return Poll::Pending;
            };
            if let Some(cx) = this.cx.take() {
                // With one non-nil case, whoever chose it popped its entry.
                if this.pollorder.len() > 1 {
                    dequeue_all(&this.sel.cases, &cx);
                }
            }
            this.done = true;
            return Poll::Ready(Selected { index, outcome });
        }
        if this.done {
            return Poll::Pending;
        }
        match this.sel.attempt(&this.pollorder, Some(tcx.waker())) {
            Attempt::Fired(s) => {
                this.done = true;
                Poll::Ready(s)
            }
            Attempt::Parked(cx) => {
                this.cx = Some(cx);
                Poll::Pending
            }
            Attempt::NotReady => Poll::Pending,
        }
    }
}

impl<T: Send> Parkable for SelectFut<T> {
    fn ready_hint(&self) -> bool {
        hint(&self.cx)
    }
}

impl<T> Drop for SelectFut<T> {
    fn drop(&mut self) {
        if let Some(cx) = self.cx.take() {
            // Withdraw (or, if a case was chosen meanwhile, drop its outcome);
            // either way no entry may stay behind.
            cx.try_abort();
            dequeue_all(&self.sel.cases, &cx);
        }
    }
}

/// Step 5: removes every entry of `cx` from every channel of the select.
fn dequeue_all<T>(cases: &[Case<T>], cx: &Arc<Context<T>>) {
    for ch in lockorder(cases) {
        ch.lock().remove(cx);
    }
}

/// Step 2: the distinct channels, sorted by id.
fn lockorder<T>(cases: &[Case<T>]) -> Vec<&Chan<T>> {
    let mut order: Vec<&Chan<T>> = cases.iter().filter_map(|c| c.chan.as_ref()).collect();
    order.sort_unstable_by_key(|c| c.id());
    order.dedup_by_key(|c| c.id());
    order
}
