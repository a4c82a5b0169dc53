//! `Select<'a, T>`: Go's `select` over cases built at run time (`selectgo`).
//! A case names its channel by value (`recv`, `send`: the select owns a
//! handle) or by reference (`recv_ref`, `send_ref`: no reference-count
//! traffic, for a select that lives shorter than its channels).
//!
//! The protocol below runs over any [`Cases`]: a `Select` is one; the
//! interpreter's `select` instruction is another, reading its channels and
//! send values straight from the task's frame, so running a select there
//! builds no case list at all (building and moving one was about a sixth
//! of a 4-way select fan-in).
//!
//! Protocol, in numbered steps (Go's `runtime/select.go`):
//! 1. `pollorder`: every case in a uniformly random order, drawn from the
//!    caller's `fastrand::Rng` when the select is entered (for up to 8
//!    cases, one 64-bit draw; the walks below skip nil cases). Taking the
//!    first ready case in this order chooses uniformly among ready cases.
//! 2. `lockorder`: the distinct channels sorted by [`Chan::id`]; all of them
//!    are locked in that order (a channel named by several cases is locked
//!    once). Every multi-channel locker uses this order, so no deadlock.
//! 3. Pass 1, first without locks: in `pollorder`, probe each case on a
//!    buffered channel lock-free (`Select::probe`: its open ring, else its
//!    flags); fire the first that completes or finds its channel closed,
//!    skip a case found not ready, and at the first case the probe cannot
//!    judge (a party is queued there, or the channel is unbuffered) go on
//!    with the locked pass:
//!    lock everything (step 2) and, in `pollorder`, run each case's step
//!    (`state.rs`); the first that completes fires. A send case on a closed
//!    channel is ready and fires as `SendClosed`. The lock-free pass fires
//!    the first case in `pollorder` found ready when its turn came
//!    (crossbeam's `Select` does the same), which differs from one snapshot
//!    only when a case it had found not ready became ready within that
//!    pass. "Nothing ready" must hold at one instant: the locked pass
//!    decides it, or (`try_select` only) the lock-free pass when every case
//!    was a ring found full / empty and a second look at every ring's
//!    indices finds them unmoved (a double collect; see `note`).
//!    A caller that can fire a case where it stands but must leave to
//!    park (the interpreter's dispatch loop) runs the lock-free pass alone
//!    first (`select_ready_on`), and if it fires nothing, parks with
//!    `select_on_locked`, whose first poll starts at the locked pass.
//! 4. Nothing ready: `try_select` unlocks and returns `None` (the `default`
//!    case). A blocking select creates one `Context` and queues one entry
//!    per non-nil case, in `pollorder` (so when several cases name one
//!    channel, which of them a partner meets first is random, as in Go),
//!    while still holding every lock (so no partner can see half of them,
//!    and the select cannot match itself), then unlocks and parks.
//! 5. A partner or `close` wins the context's CAS for one case and delivers
//!    that case's outcome under that channel's lock (`waiter.rs`). The
//!    woken select locks each of its other channels in turn and removes its
//!    remaining (now stale) entries, so a finished or dropped select leaves
//!    nothing in any queue, and only then reuses or frees its context.
//!
//! A select with no cases, or only nil cases, never fires.
//!
//! Allocation: the cases (up to 4) live in a `SmallVec`; for up to 8
//! cases the poll order is one word and the lock order, the held locks
//! and each case's lock (`LockSet`) fixed arrays (Go keeps them on the
//! stack for up to 65536 cases), so a select of up to 4 cases allocates
//! only the `Context` it parks with (more than 8 cases: vectors). A
//! `try_select` with one non-nil case is the channel's `try_send` /
//! `try_recv` (lock-free when it fails or the buffer serves it), as Go's
//! `selectnbsend` / `selectnbrecv` are; with several cases it reports
//! "none ready" only at one instant (step 3):
//! checking the cases one by one alone would not see one instant, so "none
//! ready" could be reported when at every instant some case was ready
//! (`tests/chan_basic.rs` toggles a channel under such a select).

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll, Waker};

use smallvec::SmallVec;

use super::channel::{Locked, Probe};
use super::loom::Backoff;
use super::ring::Words;
use super::state::{RecvStep, SendStep};
use super::waiter::{
    block_on, context_in, hint, keep_in, Check, Handoff, Owned, Parkable, WaitSlot, Waiter,
};
use super::{Chan, Outcome, Selected, TryRecvError, TrySendError};

/// The cases of a select, wherever they are kept: case `i` (below
/// `count()`) is a send or a receive on `chan(i)` (`None`: the nil
/// channel). A send case's value is taken when the case fires or is
/// queued, and given back when it turns out not ready.
///
/// [`Select`] keeps its own cases; an interpreter that already holds a
/// select's channels and values in its frame implements `Cases` over them
/// and runs [`select_on`] / [`try_select_on`] without building a `Select`.
///
/// # Examples
///
/// ```
/// use weft_chan::{try_select_on, Cases, Chan, Outcome};
///
/// /// A receive case on every channel of a slice.
/// struct RecvAll<'a>(&'a [Chan<u32>]);
///
/// impl Cases<u32> for RecvAll<'_> {
///     fn count(&self) -> usize {
///         self.0.len()
///     }
///     fn chan(&self, i: usize) -> Option<&Chan<u32>> {
///         self.0.get(i)
///     }
///     fn is_send(&self, _: usize) -> bool {
///         false
///     }
///     fn take_value(&self, _: usize) -> Option<u32> {
///         None
///     }
///     fn put_back(&self, _: usize, _: u32) {}
/// }
///
/// let chans = [Chan::new(1), Chan::new(1), Chan::new(1)];
/// chans[2].try_send(5).unwrap();
/// let fired = try_select_on(&RecvAll(&chans), &mut fastrand::Rng::new()).unwrap();
/// assert_eq!((fired.index, fired.outcome), (2, Outcome::Received(Some(5))));
/// ```
pub trait Cases<T> {
    /// The number of cases.
    fn count(&self) -> usize;
    /// Case `i`'s channel (`None`: the nil channel, never ready).
    fn chan(&self, i: usize) -> Option<&Chan<T>>;
    /// Whether case `i` sends (otherwise it receives).
    fn is_send(&self, i: usize) -> bool;
    /// The value of send case `i` (`None`: not a send case, or taken).
    fn take_value(&self, i: usize) -> Option<T>;
    /// Gives back a value `take_value` gave that was not sent.
    fn put_back(&self, i: usize, v: T);
}

/// A select statement under construction: add cases, then run it. `'a`
/// bounds the channels added by reference (`'static` when every case owns
/// its channel).
///
/// Each `recv` / `send` (or `_ref`) call adds a case and returns its index;
/// a `None` channel is Go's nil channel, whose case never fires. Run the
/// select once with [`select`](Select::select) (async),
/// [`select_blocking`](Select::select_blocking) (a thread) or
/// [`try_select`](Select::try_select) (with `default`). Among the cases
/// ready at that moment one is chosen uniformly at random, with the
/// `fastrand::Rng` passed in. Every case carries the same element type `T`.
///
/// # Examples
///
/// ```
/// use weft_chan::{Chan, Outcome, Select};
///
/// let mut rng = fastrand::Rng::new();
/// let requests = Chan::new(1);
/// let replies = Chan::new(1);
/// requests.try_send(1).unwrap();
///
/// let mut sel = Select::new();
/// let got_request = sel.recv_ref(Some(&requests));
/// let nil_case = sel.recv(None); // never fires
/// let fired = sel.select_blocking(&mut rng);
/// assert_eq!(fired.index, got_request);
/// assert_ne!(fired.index, nil_case);
/// if let Outcome::Received(Some(n)) = fired.outcome {
///     replies.try_send(n * 10).unwrap();
/// }
/// assert_eq!(replies.try_recv(), Ok(10));
/// ```
pub struct Select<'a, T> {
    cases: SmallVec<[Case<'a, T>; INLINE_CASES]>,
}

/// Cases a select holds without allocating (kept small: a `Select` is
/// moved around by value).
const INLINE_CASES: usize = 4;
/// Channels and case indices a select run holds without allocating.
const INLINE: usize = 8;

/// Case indices in poll order: for a select of up to 8 cases, a byte each
/// in one word (a vector of them, built and then moved, cost a failed
/// store forwarding on every move: about a tenth of a 4-way select
/// fan-in); for more cases, a vector.
enum Order {
    Packed { bits: u64, len: usize },
    Spilled(Vec<usize>),
}

/// Cases that fit in `Order::Packed`.
const PACKED: usize = 8;

impl Order {
    #[inline]
    fn len(&self) -> usize {
        match self {
            Order::Packed { len, .. } => *len,
            Order::Spilled(v) => v.len(),
        }
    }

    #[inline]
    fn iter(&self) -> OrderIter<'_> {
        OrderIter { order: self, k: 0 }
    }
}

struct OrderIter<'a> {
    order: &'a Order,
    k: usize,
}

impl Iterator for OrderIter<'_> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        let i = match self.order {
            Order::Packed { bits, len } => {
                if self.k >= *len {
                    return None;
                }
                ((bits >> (8 * self.k)) & 0xff) as usize
            }
            Order::Spilled(v) => *v.get(self.k)?,
        };
        self.k += 1;
        Some(i)
    }
}

/// The rings (and their words) that showed the cases not ready, for the
/// double check; `None` once some case was judged otherwise.
type Seen<'a, T> = Option<SmallVec<[(&'a Chan<T>, Words); INLINE]>>;

/// A case's channel: a handle the select owns, or a borrowed one.
enum ChanRef<'a, T> {
    Owned(Chan<T>),
    Borrowed(&'a Chan<T>),
}

struct Case<'a, T> {
    /// `None` is the nil channel: never ready.
    chan: Option<ChanRef<'a, T>>,
    send: bool,
    /// The value of a send case until it is sent or queued (`None` for
    /// receive cases). A `Cell`, so that a value can be taken while the
    /// held locks borrow the cases' channels.
    val: Cell<Option<T>>,
}

impl<T> Case<'_, T> {
    /// The case's channel; `None` for the nil channel.
    #[inline]
    fn chan(&self) -> Option<&Chan<T>> {
        match self.chan.as_ref()? {
            ChanRef::Owned(c) => Some(c),
            ChanRef::Borrowed(c) => Some(c),
        }
    }
}

impl<T> Cases<T> for Select<'_, T> {
    #[inline]
    fn count(&self) -> usize {
        self.cases.len()
    }
    #[inline]
    fn chan(&self, i: usize) -> Option<&Chan<T>> {
        self.cases.get(i)?.chan()
    }
    #[inline]
    fn is_send(&self, i: usize) -> bool {
        self.cases.get(i).is_some_and(|c| c.send)
    }
    #[inline]
    fn take_value(&self, i: usize) -> Option<T> {
        self.cases.get(i)?.val.take()
    }
    #[inline]
    fn put_back(&self, i: usize, v: T) {
        if let Some(c) = self.cases.get(i) {
            c.val.set(Some(v));
        }
    }
}

/// What the lock-free pass found.
enum Probed<T> {
    Fired(Selected<T>),
    /// Every case was found not ready when probed; `exact`: all at one
    /// instant (the double check passed), so "none ready" holds.
    NotReady {
        exact: bool,
    },
    /// A case needs the locked pass.
    Unknown,
}

enum Attempt<T> {
    Fired(Selected<T>),
    Parked(Owned<T>),
    NotReady,
}

impl<T: Send> Default for Select<'_, T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a, T: Send> Select<'a, T> {
    /// A select with no cases yet. Run as it is, it never fires (Go's
    /// `select {}`), and `try_select` returns `None`.
    pub fn new() -> Self {
        Select {
            cases: SmallVec::new(),
        }
    }

    /// Adds a receive case. The value of a send case is written straight
    /// into its case (passing an `Option<T>` through cost a failed store
    /// forwarding on every receive case).
    #[inline]
    fn push_recv(&mut self, chan: Option<ChanRef<'a, T>>) -> usize {
        self.cases.push(Case {
            chan,
            send: false,
            val: Cell::new(None),
        });
        self.cases.len() - 1
    }

    #[inline]
    fn push_send(&mut self, chan: Option<ChanRef<'a, T>>, v: T) -> usize {
        self.cases.push(Case {
            chan,
            send: true,
            val: Cell::new(Some(v)),
        });
        self.cases.len() - 1
    }

    /// Adds `case <-ch:`, the select keeping its own handle of the channel
    /// (`None`: a nil channel, never ready); returns the case index.
    pub fn recv(&mut self, ch: Option<Chan<T>>) -> usize {
        self.push_recv(ch.map(ChanRef::Owned))
    }

    /// Adds `case ch <- v:`, the select keeping its own handle of the
    /// channel (`None`: a nil channel, never ready); returns the case
    /// index. If another case fires, `v` is dropped with the select.
    pub fn send(&mut self, ch: Option<Chan<T>>, v: T) -> usize {
        self.push_send(ch.map(ChanRef::Owned), v)
    }

    /// Adds `case <-ch:` naming the channel by reference (no handle is
    /// cloned); returns the case index.
    #[inline]
    pub fn recv_ref(&mut self, ch: Option<&'a Chan<T>>) -> usize {
        self.push_recv(ch.map(ChanRef::Borrowed))
    }

    /// Adds `case ch <- v:` naming the channel by reference (no handle is
    /// cloned); returns the case index.
    #[inline]
    pub fn send_ref(&mut self, ch: Option<&'a Chan<T>>, v: T) -> usize {
        self.push_send(ch.map(ChanRef::Borrowed), v)
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
    ///
    /// "Nothing ready" holds at one instant, as in Go. A send case that did
    /// not fire keeps its value, so the select can be tried again.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft_chan::{Chan, Outcome, Select};
    ///
    /// let mut rng = fastrand::Rng::new();
    /// let ch = Chan::new(1);
    /// ch.try_send(0).unwrap(); // full
    ///
    /// let mut sel = Select::new();
    /// let send = sel.send_ref(Some(&ch), 1);
    /// assert!(sel.try_select(&mut rng).is_none()); // default
    ///
    /// assert_eq!(ch.try_recv(), Ok(0));
    /// let fired = sel.try_select(&mut rng).unwrap();
    /// assert_eq!((fired.index, fired.outcome), (send, Outcome::Sent));
    /// assert_eq!(ch.try_recv(), Ok(1));
    /// ```
    pub fn try_select(&mut self, rng: &mut fastrand::Rng) -> Option<Selected<T>> {
        try_select_on(&*self, rng)
    }

    /// `select` without `default`: waits until one case fires.
    ///
    /// The poll order is drawn from `rng` here; the future does not borrow
    /// it. Dropping the future while it waits withdraws every case; as
    /// with [`Chan::recv`], a case that had already fired is then lost
    /// (a received value is dropped, a sent one was delivered).
    ///
    /// # Examples
    ///
    /// ```
    /// use futures::executor::block_on;
    /// use weft_chan::{Chan, Outcome, Select};
    ///
    /// let mut rng = fastrand::Rng::new();
    /// let a = Chan::new(0);
    /// let b = Chan::new(0);
    ///
    /// let mut sel = Select::new();
    /// sel.recv_ref(Some(&a));
    /// let on_b = sel.recv_ref(Some(&b));
    /// let (fired, sent) = block_on(async { futures::join!(sel.select(&mut rng), b.send(9)) });
    /// sent.unwrap();
    /// assert_eq!(fired.index, on_b);
    /// assert_eq!(fired.outcome, Outcome::Received(Some(9)));
    /// ```
    pub fn select(self, rng: &mut fastrand::Rng) -> SelectFut<'a, T> {
        let run = Run::new(&self, rng);
        SelectFut {
            sel: self,
            run,
            slot: None,
        }
    }

    /// [`select`](Select::select), parking (if it must) with the wait
    /// record kept in `slot`, so that repeated waits allocate once (see
    /// [`WaitSlot`]).
    pub fn select_in(self, rng: &mut fastrand::Rng, slot: &'a mut WaitSlot<T>) -> SelectFut<'a, T> {
        let run = Run::new(&self, rng);
        SelectFut {
            sel: self,
            run,
            slot: Some(slot),
        }
    }

    /// `select` for a plain thread: parks the thread while blocked. If a
    /// case names a buffered channel it first retries pass 1 for a few
    /// microseconds, as `Chan::send_blocking` does (same poll order, so the
    /// draws from `rng` do not depend on timing); if every case is
    /// unbuffered (or nil) it queues at once. Once queued it spins briefly
    /// before parking (`waiter::block_on`).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::thread;
    /// use weft_chan::{Chan, Outcome, Select};
    ///
    /// let quit = Chan::<u32>::new(0);
    /// let q = quit.clone();
    /// thread::spawn(move || q.close().unwrap());
    ///
    /// let mut sel = Select::new();
    /// let on_quit = sel.recv_ref(Some(&quit));
    /// let fired = sel.select_blocking(&mut fastrand::Rng::with_seed(1));
    /// // A receive on a closed channel is ready: it fires with `None`.
    /// assert_eq!((fired.index, fired.outcome), (on_quit, Outcome::Received(None)));
    /// ```
    pub fn select_blocking(self, rng: &mut fastrand::Rng) -> Selected<T> {
        let run = Run::new(&self, rng);
        let buffered = self
            .cases
            .iter()
            .any(|c| c.chan().is_some_and(|ch| ch.cap() > 0));
        if buffered {
            let backoff = Backoff::new();
            loop {
                // The pass one case at a time only: the retry is a
                // heuristic (`block_on` below runs the exact locked pass).
                match probe::<false, _, _>(&self, &run.pollorder) {
                    Probed::Fired(s) => return s,
                    Probed::Unknown => break,
                    Probed::NotReady { .. } => {}
                }
                if backoff.is_completed() {
                    break;
                }
                backoff.snooze();
            }
        }
        block_on(SelectFut {
            sel: self,
            run,
            slot: None,
        })
    }
}

/// [`Select::try_select`] over any cases: fires one ready case (chosen
/// uniformly at random among the ready ones with `rng`), or returns `None`
/// at once when none is ready, as Go's `select` with `default`.
pub fn try_select_on<T: Send, S: Cases<T>>(
    src: &S,
    rng: &mut fastrand::Rng,
) -> Option<Selected<T>> {
    if src.count() == 1 {
        return try_one(src, 0);
    }
    let pollorder = pollorder(src, rng);
    match probe::<true, _, _>(src, &pollorder) {
        Probed::Fired(s) => return Some(s),
        Probed::NotReady { exact: true } => return None,
        _ => {}
    }
    match attempt(src, &pollorder, None, &mut None) {
        Attempt::Fired(s) => Some(s),
        Attempt::Parked(_) | Attempt::NotReady => None,
    }
}

/// The ready path of a `select` without `default`, for a caller that can
/// fire a case where it stands but must leave to park (the interpreter's
/// dispatch loop): draws the poll order from `rng` and runs the pass one
/// case at a time (step 3a), firing the first case found ready, as the
/// first poll of [`select_on`]'s future would. `None`: no case fired;
/// nothing was queued and no send value was kept, and the caller parks
/// with [`select_on_locked`], which starts with the locked pass (so
/// "nothing ready" is still decided at one instant, under every lock,
/// before the select queues; a case that became ready in between fires
/// there).
///
/// # Examples
///
/// ```
/// use weft_chan::{select_ready_on, Cases, Chan, Outcome};
///
/// struct RecvAll<'a>(&'a [Chan<u32>]);
///
/// impl Cases<u32> for RecvAll<'_> {
///     fn count(&self) -> usize {
///         self.0.len()
///     }
///     fn chan(&self, i: usize) -> Option<&Chan<u32>> {
///         self.0.get(i)
///     }
///     fn is_send(&self, _: usize) -> bool {
///         false
///     }
///     fn take_value(&self, _: usize) -> Option<u32> {
///         None
///     }
///     fn put_back(&self, _: usize, _: u32) {}
/// }
///
/// let mut rng = fastrand::Rng::with_seed(1);
/// let chans = [Chan::new(1), Chan::new(1)];
/// assert!(select_ready_on(&RecvAll(&chans), &mut rng).is_none());
/// chans[1].try_send(5).unwrap();
/// let fired = select_ready_on(&RecvAll(&chans), &mut rng).unwrap();
/// assert_eq!((fired.index, fired.outcome), (1, Outcome::Received(Some(5))));
/// ```
pub fn select_ready_on<T: Send, S: Cases<T>>(
    src: &S,
    rng: &mut fastrand::Rng,
) -> Option<Selected<T>> {
    match probe::<false, _, _>(src, &pollorder(src, rng)) {
        Probed::Fired(s) => Some(s),
        Probed::NotReady { .. } | Probed::Unknown => None,
    }
}

/// A select with one case `i` and a default: the channel's own
/// `try_send` / `try_recv` (Go's `selectnbsend` / `selectnbrecv`).
fn try_one<T: Send, S: Cases<T>>(src: &S, i: usize) -> Option<Selected<T>> {
    let ch = src.chan(i)?;
    let outcome = if src.is_send(i) {
        let v = src.take_value(i)?;
        match ch.try_send(v) {
            Ok(()) => Outcome::Sent,
            Err(TrySendError::Closed(v)) => Outcome::SendClosed(v),
            Err(TrySendError::Full(v)) => {
                src.put_back(i, v);
                return None;
            }
        }
    } else {
        match ch.try_recv() {
            Ok(v) => Outcome::Received(Some(v)),
            Err(TryRecvError::Closed) => Outcome::Received(None),
            Err(TryRecvError::Empty) => return None,
        }
    };
    Some(Selected { index: i, outcome })
}

/// Step 3a, the pass one case at a time: in `pollorder`, probe each
/// case without the lock (`Chan::probe_send` / `probe_recv`: an open
/// ring, else the channel's flags) and fire the first that completes
/// or finds its channel closed; skip a case found not ready; a case the
/// probe cannot judge (a party is queued there, so the flags say it may
/// be ready) runs its step under that channel's lock alone and fires if
/// it completes. So the case that fires is the first in `pollorder`
/// found ready when its turn came, each case looked at in turn (as
/// crossbeam's `Select` does), and a select that fires takes at most
/// one lock. "Nothing ready" is exact only when every case was a ring
/// and the double check passed; otherwise the locked pass decides it.
///
/// `EXACT`: whether "nothing ready" must be told exact (`try_select_on`,
/// which returns `default` on it); a select that parks runs the locked
/// pass anyway, so it skips the double check's bookkeeping and the
/// fence in an open ring's full / empty check (`Ring::push_open`): a ring
/// it wrongly finds not ready is, unless another case fires, looked at
/// again under the lock.
fn probe<'s, const EXACT: bool, T: Send + 's, S: Cases<T>>(
    src: &'s S,
    pollorder: &Order,
) -> Probed<T> {
    // The ring words that showed each case not ready; `None` once some
    // case was judged otherwise (no double check then), or from the start
    // when none is wanted.
    let mut seen: Seen<'s, T> = if EXACT { Some(SmallVec::new()) } else { None };
    for i in pollorder.iter() {
        let Some(ch) = src.chan(i) else { continue };
        let outcome = if src.is_send(i) {
            let Some(v) = src.take_value(i) else {
                return Probed::Unknown;
            };
            match ch.probe_send::<EXACT>(v) {
                Ok(()) => Outcome::Sent,
                Err((v, Probe::Closed)) => Outcome::SendClosed(v),
                Err((v, Probe::NotReady(w))) => {
                    src.put_back(i, v);
                    if EXACT {
                        note(&mut seen, ch, w);
                    }
                    continue;
                }
                Err((v, Probe::Unknown)) => {
                    // The guard is dropped at the end of the statement,
                    // before the hand-off is delivered.
                    let step = ch.lock().send(v);
                    match step {
                        SendStep::Done(h) => {
                            h.deliver();
                            Outcome::Sent
                        }
                        SendStep::Closed(v) => Outcome::SendClosed(v),
                        SendStep::Full(v) => {
                            src.put_back(i, v);
                            if EXACT {
                                seen = None;
                            }
                            continue;
                        }
                    }
                }
            }
        } else {
            match ch.probe_recv::<EXACT>() {
                Ok(v) => Outcome::Received(Some(v)),
                Err(Probe::Closed) => Outcome::Received(None),
                Err(Probe::NotReady(w)) => {
                    if EXACT {
                        note(&mut seen, ch, w);
                    }
                    continue;
                }
                Err(Probe::Unknown) => {
                    let step = ch.lock().recv();
                    match step {
                        RecvStep::Done(v, h) => {
                            h.deliver();
                            Outcome::Received(v)
                        }
                        RecvStep::Empty => {
                            if EXACT {
                                seen = None;
                            }
                            continue;
                        }
                    }
                }
            }
        };
        return Probed::Fired(Selected { index: i, outcome });
    }
    // Double check: every ring still shows the words its case saw, so
    // no index moved since; at the instant between the two passes every
    // case was as found (the argument is at `note`).
    let exact = seen.is_some_and(|seen| seen.iter().all(|&(ch, w)| ch.ring_words() == Some(w)));
    Probed::NotReady { exact }
}

/// Step 1: every case, nil ones included, in a uniformly random order
/// (Go's `pollorder`; the walks of the order skip a nil case, and the
/// order restricted to the non-nil cases is uniform as well). The
/// inside-out shuffle Go runs (`j` uniform in `0..=i`, then
/// `order[i] = order[j]; order[j] = i`), no case looked at.
fn pollorder<T, S: Cases<T>>(src: &S, rng: &mut fastrand::Rng) -> Order {
    let n = src.count();
    if n > PACKED {
        return spilled_order(n, rng);
    }
    // On a word, byte k the k-th case index, with the `j`s cut from one
    // 64-bit draw `x` (Go's `fastrandn` is one multiply-shift per draw):
    // `j = (x * (i + 1)) >> 64` and the low half of the product is the
    // next `x`. The `j`s are then the mixed-radix digits (radices 2, 3,
    // ..., n) of `x * n! >> 64`, so each of the n! orders has
    // floor(2^64 / n!) or one more of the 2^64 draws: uniform within
    // n!/2^64 < 2^-48 for n <= 8.
    let mut x = rng.u64(..);
    let mut bits = 0u64;
    for i in 1..n {
        let m = u128::from(x) * (i as u128 + 1);
        let j = (m >> 64) as usize;
        x = m as u64;
        let bj = (bits >> (8 * j)) & 0xff;
        bits = (bits & !(0xff << (8 * j))) | ((i as u64) << (8 * j)) | (bj << (8 * i));
    }
    Order::Packed { bits, len: n }
}

/// `pollorder` of more than `PACKED` cases: a vector, a draw a case. Out
/// of line, so that the word's shuffle needs no stack frame.
#[cold]
#[inline(never)]
fn spilled_order(n: usize, rng: &mut fastrand::Rng) -> Order {
    let mut order: Vec<usize> = Vec::with_capacity(n);
    for i in 0..n {
        let j = rng.usize(..=i);
        order.push(i);
        order.swap(i, j);
    }
    Order::Spilled(order)
}

/// Steps 2-4: lock everything, fire the first ready case in `pollorder`,
/// else (with a waker) queue every case.
fn attempt<T: Send, S: Cases<T>>(
    src: &S,
    pollorder: &Order,
    park: Option<&Waker>,
    slot: &mut Option<&mut WaitSlot<T>>,
) -> Attempt<T> {
    let mut locks = LockSet::lock(src);

    let mut fired = None;
    for i in pollorder.iter() {
        let Some(st) = locks.of_case(i) else { continue };
        if src.is_send(i) {
            let Some(v) = src.take_value(i) else {
                continue;
            };
            match st.send(v) {
                SendStep::Done(h) => {
                    fired = Some((i, Outcome::Sent, h));
                    break;
                }
                SendStep::Closed(v) => {
                    fired = Some((i, Outcome::SendClosed(v), Handoff::NONE));
                    break;
                }
                SendStep::Full(v) => src.put_back(i, v),
            }
        } else if let RecvStep::Done(v, h) = st.recv() {
            fired = Some((i, Outcome::Received(v), h));
            break;
        }
    }
    if let Some((index, outcome, h)) = fired {
        drop(locks);
        h.deliver();
        return Attempt::Fired(Selected { index, outcome });
    }
    let Some(waker) = park else {
        return Attempt::NotReady;
    };
    let mut cx = context_in(slot, waker);
    // One number for every entry of the party: past every number queued
    // on any of its channels, each of which then moves past it (`queue.rs`).
    let held = locks.held();
    let seq = held.iter().flatten().map(|g| g.next_seq).max().unwrap_or(0);
    for g in held.iter_mut().flatten() {
        g.next_seq = seq + 1;
    }
    cx.set_seq(seq);
    for i in pollorder.iter() {
        let Some(st) = locks.of_case(i) else { continue };
        if src.is_send(i) {
            if let Some(v) = src.take_value(i) {
                st.sendq
                    .push_back(seq, Waiter::new(cx.entry(), i as u32, v, false));
            }
        } else {
            st.recvq
                .push_back(seq, Waiter::new(cx.entry(), i as u32, (), false));
        }
    }
    Attempt::Parked(cx)
}

/// A select's run: its poll order and, while parked, its context. The
/// futures below pair it with their cases.
struct Run<T> {
    pollorder: Order,
    /// Set while parked.
    cx: Option<Owned<T>>,
    phase: Phase,
}

/// Where a [`Run`] stands (apart from parked, which `Run::cx` tells).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not polled yet: the first poll runs the lock-free pass, then the
    /// locked one.
    Fresh,
    /// Not polled yet, and the caller has just run the lock-free pass
    /// (`select_ready_on`): the first poll starts with the locked pass.
    Probed,
    /// Fired.
    Done,
}

impl<T: Send> Run<T> {
    fn new<S: Cases<T>>(src: &S, rng: &mut fastrand::Rng) -> Self {
        Run {
            pollorder: pollorder(src, rng),
            cx: None,
            phase: Phase::Fresh,
        }
    }

    fn poll<S: Cases<T>>(
        &mut self,
        src: &S,
        slot: &mut Option<&mut WaitSlot<T>>,
        tcx: &mut TaskContext<'_>,
    ) -> Poll<Selected<T>> {
        if let Some(cx) = &mut self.cx {
            let (index, outcome) = match cx.check(tcx.waker()) {
                Check::Done(index, outcome) => (index, outcome),
                Check::Waiting => return Poll::Pending,
                Check::NewWaker => {
                    let locks = LockSet::lock(src);
                    // SAFETY: every channel of the select is locked, so
                    // every queue that may hold an entry of `cx`.
                    unsafe { cx.set_waker(tcx.waker()) };
                    drop(locks);
                    match cx.take_outcome() {
                        Some(got) => got,
                        None => return Poll::Pending,
                    }
                }
            };
            if let Some(cx) = self.cx.take() {
                // With one case, whoever chose it popped its entry.
                if self.pollorder.len() > 1 {
                    dequeue_all(src, &cx, Some(index));
                }
                keep_in(slot, cx);
            }
            self.phase = Phase::Done;
            return Poll::Ready(Selected { index, outcome });
        }
        match self.phase {
            Phase::Done => return Poll::Pending,
            Phase::Probed => {}
            Phase::Fresh => {
                if let Probed::Fired(s) = probe::<false, _, _>(src, &self.pollorder) {
                    self.phase = Phase::Done;
                    return Poll::Ready(s);
                }
            }
        }
        match attempt(src, &self.pollorder, Some(tcx.waker()), slot) {
            Attempt::Fired(s) => {
                self.phase = Phase::Done;
                Poll::Ready(s)
            }
            Attempt::Parked(cx) => {
                self.cx = Some(cx);
                Poll::Pending
            }
            Attempt::NotReady => Poll::Pending,
        }
    }
}

impl<T> Run<T> {
    /// The future is dropped: withdraw (or, if a case was chosen meanwhile,
    /// drop its outcome); either way no entry may stay behind.
    fn cancel<S: Cases<T>>(&mut self, src: &S, slot: &mut Option<&mut WaitSlot<T>>) {
        if let Some(mut cx) = self.cx.take() {
            cx.try_abort();
            dequeue_all(src, &cx, None);
            // Chosen meanwhile: the winner delivered under a lock that
            // `dequeue_all` took after it; the outcome is dropped here.
            drop(cx.take_outcome());
            keep_in(slot, cx);
        }
    }
}

/// The future of [`Select::select`] and [`Select::select_in`]: the case
/// that fired.
#[must_use = "futures do nothing unless polled"]
pub struct SelectFut<'a, T> {
    sel: Select<'a, T>,
    run: Run<T>,
    /// Where the context comes from and goes back to (`select_in`).
    slot: Option<&'a mut WaitSlot<T>>,
}

impl<T> Unpin for SelectFut<'_, T> {}

impl<T: Send> Future for SelectFut<'_, T> {
    type Output = Selected<T>;

    fn poll(mut self: Pin<&mut Self>, tcx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        this.run.poll(&this.sel, &mut this.slot, tcx)
    }
}

impl<T: Send> Parkable for SelectFut<'_, T> {
    fn ready_hint(&self) -> bool {
        hint(&self.run.cx)
    }
}

impl<T> Drop for SelectFut<'_, T> {
    fn drop(&mut self) {
        self.run.cancel(&self.sel, &mut self.slot);
    }
}

/// The future of [`select_on`]: a select over cases kept elsewhere, giving
/// the case that fired.
#[must_use = "futures do nothing unless polled"]
pub struct SelectOn<'s, T: Send, S: Cases<T>> {
    src: &'s S,
    run: Run<T>,
    slot: Option<&'s mut WaitSlot<T>>,
}

/// `select` without `default` over `src`, parking (if it must) with the
/// context kept in `slot` (reused from one select to the next, so a
/// waiting select allocates nothing).
pub fn select_on<'s, T: Send, S: Cases<T>>(
    src: &'s S,
    rng: &mut fastrand::Rng,
    slot: &'s mut WaitSlot<T>,
) -> SelectOn<'s, T, S> {
    SelectOn {
        src,
        run: Run::new(src, rng),
        slot: Some(slot),
    }
}

/// [`select_on`] for a select whose ready path ([`select_ready_on`]) has
/// just found no case ready: the first poll skips the lock-free pass and
/// starts with the locked one (lock every channel, fire the first ready
/// case in a new poll order, else queue on every case and park).
pub fn select_on_locked<'s, T: Send, S: Cases<T>>(
    src: &'s S,
    rng: &mut fastrand::Rng,
    slot: &'s mut WaitSlot<T>,
) -> SelectOn<'s, T, S> {
    let mut run = Run::new(src, rng);
    run.phase = Phase::Probed;
    SelectOn {
        src,
        run,
        slot: Some(slot),
    }
}

impl<T: Send, S: Cases<T>> Unpin for SelectOn<'_, T, S> {}

impl<T: Send, S: Cases<T>> Future for SelectOn<'_, T, S> {
    type Output = Selected<T>;

    fn poll(mut self: Pin<&mut Self>, tcx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        this.run.poll(this.src, &mut this.slot, tcx)
    }
}

impl<T: Send, S: Cases<T>> Drop for SelectOn<'_, T, S> {
    fn drop(&mut self) {
        self.run.cancel(self.src, &mut self.slot);
    }
}

/// Records the ring words that showed a case not ready (`probe`); a case
/// judged by the flags (`w == None`) rules the double check out.
///
/// Why the double check gives one instant (`none_ready`): a case's words
/// were read unmarked in the first pass and are equal in the second; the
/// indices only grow, so they did not move in between, and every case's
/// buffer was as full or empty as seen at the instant between the passes.
/// The words may have been frozen and thawed meanwhile without moving
/// (a party queued and left, or a lock holder looked): a queued receiver
/// needs an empty buffer and a queued sender a full one, so that can never
/// have made an empty buffer's receive case or a full buffer's send case
/// ready; a close freezes for good, so the second pass would see the mark.
fn note<'a, T>(seen: &mut Seen<'a, T>, ch: &'a Chan<T>, w: Option<Words>) {
    match (seen.as_mut(), w) {
        (Some(v), Some(w)) => v.push((ch, w)),
        _ => *seen = None,
    }
}

/// Step 5: removes every entry of `cx` from every channel of the select.
/// `fired`: the case a partner chose; its entry was popped by that partner,
/// so its channel is skipped unless another case names it too.
fn dequeue_all<T, S: Cases<T>>(src: &S, cx: &Owned<T>, fired: Option<usize>) {
    let n = src.count();
    if n > PACKED {
        // Many cases: the sorted distinct channels (no quadratic scan).
        let chans = sorted_chans(src);
        let skip = fired
            .and_then(|i| src.chan(i))
            .map(|f| f.id())
            .filter(|&f| {
                let at = chans.partition_point(|&(id, _, _)| id < f);
                chans.get(at + 1).is_none_or(|&(id, _, _)| id != f)
            });
        let mut last = None;
        for &(id, ch, _) in &chans {
            if last != Some(id) && skip != Some(id) {
                ch.lock().remove(cx);
            }
            last = Some(id);
        }
        return;
    }
    // Each case's channel, read once (a `Cases` may look it up in a frame).
    let mut chans: [Option<&Chan<T>>; PACKED] = [None; PACKED];
    for (i, c) in chans.iter_mut().enumerate().take(n) {
        *c = src.chan(i);
    }
    let fired = fired
        .and_then(|i| chans.get(i).copied().flatten())
        .map(|f| f.id());
    for i in 0..n {
        let Some(id) = chans[i].map(|c| c.id()) else {
            continue;
        };
        // The first case naming a channel removes every entry there; the
        // fired case's channel is skipped when no other case names it.
        let named = |j: usize| j != i && chans[j].is_some_and(|c| c.id() == id);
        if (0..i).any(named) || (fired == Some(id) && !(i + 1..n).any(named)) {
            continue;
        }
        if let Some(ch) = chans[i] {
            ch.lock().remove(cx);
        }
    }
}

/// The non-nil cases of a select of more than `PACKED` cases as `(id,
/// channel, case)`, sorted by id (step 2's order; cases naming one
/// channel are next to each other).
fn sorted_chans<T, S: Cases<T>>(src: &S) -> Vec<(usize, &Chan<T>, u32)> {
    let mut v: Vec<_> = (0..src.count())
        .filter_map(|i| src.chan(i).map(|ch| (ch.id(), ch, i as u32)))
        .collect();
    v.sort_unstable_by_key(|e| e.0);
    v
}

/// Steps 2-4's locks: every distinct channel of the select locked in
/// order of id, and for each case the guard of its channel, found by
/// index (no search per case). Up to `PACKED` cases in fixed arrays (a
/// growable vector's checks on every push were about a third of a
/// parking select's instructions).
enum LockSet<'c, T> {
    Packed {
        /// One guard per distinct channel, in lock order.
        guards: [Option<Locked<'c, T>>; PACKED],
        /// Guards held.
        held: usize,
        /// For each case, its channel's index in `guards` (`NIL`: nil).
        slot: [u8; PACKED],
    },
    Spilled {
        /// As above, every one `Some`.
        guards: Vec<Option<Locked<'c, T>>>,
        slot: Vec<u32>,
    },
}

/// `LockSet`'s slot of a nil case.
const NIL: u8 = u8::MAX;

impl<'c, T> LockSet<'c, T> {
    /// Locks every channel of `src` (step 2).
    #[inline]
    fn lock<S: Cases<T>>(src: &'c S) -> Self {
        let n = src.count();
        if n > PACKED {
            return Self::lock_spilled(src);
        }
        let mut chans: [Option<&'c Chan<T>>; PACKED] = [None; PACKED];
        // The non-nil cases as (id, case), sorted by id below.
        let mut byid = [(0usize, 0u8); PACKED];
        let mut m = 0;
        for (i, c) in chans.iter_mut().enumerate().take(n) {
            if let Some(ch) = src.chan(i) {
                *c = Some(ch);
                byid[m] = (ch.id(), i as u8);
                m += 1;
            }
        }
        // Insertion sort: a handful of entries.
        for k in 1..m {
            let e = byid[k];
            let mut j = k;
            while j > 0 && byid[j - 1].0 > e.0 {
                byid[j] = byid[j - 1];
                j -= 1;
            }
            byid[j] = e;
        }
        let mut guards = [const { None }; PACKED];
        let mut slot = [NIL; PACKED];
        let mut held = 0;
        let mut last = None;
        for &(id, i) in &byid[..m] {
            let i = usize::from(i);
            if last != Some(id) {
                if let Some(ch) = chans[i] {
                    guards[held] = Some(ch.lock());
                    held += 1;
                }
                last = Some(id);
            }
            slot[i] = (held - 1) as u8;
        }
        LockSet::Packed { guards, held, slot }
    }

    #[cold]
    #[inline(never)]
    fn lock_spilled<S: Cases<T>>(src: &'c S) -> Self {
        let byid = sorted_chans(src);
        let mut slot = vec![u32::MAX; src.count()];
        let mut guards = Vec::with_capacity(byid.len());
        let mut last = None;
        for &(id, ch, i) in &byid {
            if last != Some(id) {
                guards.push(Some(ch.lock()));
                last = Some(id);
            }
            if let Some(s) = slot.get_mut(i as usize) {
                *s = (guards.len() - 1) as u32;
            }
        }
        LockSet::Spilled { guards, slot }
    }

    /// The held lock of case `i`'s channel; `None` for a nil case.
    #[inline]
    fn of_case(&mut self, i: usize) -> Option<&mut Locked<'c, T>> {
        match self {
            LockSet::Packed { guards, slot, .. } => {
                guards.get_mut(usize::from(*slot.get(i)?))?.as_mut()
            }
            LockSet::Spilled { guards, slot } => guards.get_mut(*slot.get(i)? as usize)?.as_mut(),
        }
    }

    /// Every held lock, once each.
    #[inline]
    fn held(&mut self) -> &mut [Option<Locked<'c, T>>] {
        match self {
            LockSet::Packed { guards, held, .. } => &mut guards[..*held],
            LockSet::Spilled { guards, .. } => guards,
        }
    }
}

#[cfg(test)]
mod tests {
    //! Select's fairness, checked without flaking: the poll order and the
    //! ready path's choice are drawn from seeded generators, so every
    //! count below is the same on every run, and the chi-square bounds
    //! (critical values at p = 0.001) only fail if the shuffle is biased.
    use super::*;

    /// `n` cases and nothing else: what `pollorder` looks at.
    struct Count(usize);

    impl Cases<u8> for Count {
        fn count(&self) -> usize {
            self.0
        }
        fn chan(&self, _: usize) -> Option<&Chan<u8>> {
            None
        }
        fn is_send(&self, _: usize) -> bool {
            false
        }
        fn take_value(&self, _: usize) -> Option<u8> {
            None
        }
        fn put_back(&self, _: usize, _: u8) {}
    }

    fn orders(n: usize, draws: usize, seed: u64) -> Vec<Vec<usize>> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..draws)
            .map(|_| pollorder(&Count(n), &mut rng).iter().collect())
            .collect()
    }

    /// Pearson's chi-square of `counts` against equal expectations.
    fn chi_square(counts: &[usize]) -> f64 {
        let total: usize = counts.iter().sum();
        let e = total as f64 / counts.len() as f64;
        counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum()
    }

    /// The chi-square critical value at p = 0.001 for `dof` degrees of
    /// freedom (Wilson-Hilferty; within 1% of the table for dof >= 1).
    fn critical(dof: usize) -> f64 {
        let k = dof as f64;
        let z = 3.090_232; // the normal quantile at 0.999
        k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
    }

    #[test]
    fn pollorder_is_a_permutation() {
        for n in 0..=12 {
            for mut o in orders(n, 50, n as u64) {
                o.sort_unstable();
                assert_eq!(o, (0..n).collect::<Vec<_>>());
            }
        }
    }

    /// Every order of up to 5 cases about equally often.
    #[test]
    fn pollorder_draws_every_order_uniformly() {
        for n in 2..=5usize {
            let perms: usize = (1..=n).product();
            let mut counts = std::collections::HashMap::new();
            for o in orders(n, perms * 400, 11 + n as u64) {
                *counts.entry(o).or_insert(0usize) += 1;
            }
            assert_eq!(counts.len(), perms, "n = {n}: orders missing");
            let counts: Vec<usize> = counts.into_values().collect();
            let chi = chi_square(&counts);
            assert!(chi < critical(perms - 1), "n = {n}: chi-square {chi}");
        }
    }

    /// Which case comes at each place, for more cases (the word and the
    /// vector forms).
    #[test]
    fn pollorder_places_every_case_uniformly() {
        for n in [6usize, 7, 8, 9, 12] {
            let mut at = vec![vec![0usize; n]; n];
            for o in orders(n, n * 4000, 23 + n as u64) {
                for (k, &i) in o.iter().enumerate() {
                    at[k][i] += 1;
                }
            }
            for (k, row) in at.iter().enumerate() {
                let chi = chi_square(row);
                assert!(
                    chi < critical(n - 1),
                    "n = {n}, place {k}: chi-square {chi}"
                );
            }
        }
    }

    /// The ready path chooses uniformly among the ready cases, never a nil
    /// case nor one that is not ready.
    #[test]
    fn ready_path_chooses_uniformly_among_ready_cases() {
        let chans: Vec<Chan<u32>> = (0..4).map(|_| Chan::new(1)).collect();
        let ready = [0usize, 2, 3];
        let mut rng = fastrand::Rng::with_seed(5);
        let mut fired = [0usize; 5];
        for _ in 0..30_000 {
            for &i in &ready {
                if chans[i].is_empty() {
                    chans[i].try_send(i as u32).unwrap();
                }
            }
            let mut sel = Select::new();
            for c in &chans[..2] {
                sel.recv_ref(Some(c));
            }
            sel.recv_ref(None);
            for c in &chans[2..] {
                sel.recv_ref(Some(c));
            }
            let got = select_ready_on(&sel, &mut rng).expect("three cases are ready");
            fired[got.index] += 1;
        }
        assert_eq!((fired[1], fired[2]), (0, 0), "{fired:?}");
        let counts = [fired[0], fired[3], fired[4]];
        let chi = chi_square(&counts);
        assert!(chi < critical(2), "unfair: {fired:?}, chi-square {chi}");
    }
}
