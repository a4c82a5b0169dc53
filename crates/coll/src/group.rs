//! Groups, members and the rendezvous: each member deposits its value in
//! its rank's slot of the group's step and parks (a `Waker`, like a
//! channel waiter); the last to arrive validates the step and either
//! computes every member's result itself (the small path) or starts a
//! sliced job that the members then share (`job.rs`). docs/collectives.md
//! has the design; the invariants kept here:
//!
//! 1. A rank's `Mail` is not `Idle` from the moment a call deposits until
//!    that call takes its result or is dropped; a second call on the same
//!    rank (a copy of the member used by another task) waits in `queued`
//!    until it is `Idle` again. So a rank has at most one deposit in a step,
//!    and a member that already left step k may deposit for step k+1 while
//!    slower members still collect step k's results: the step's slots are
//!    emptied as soon as the last arriver takes them, and results go to the
//!    per-rank mail.
//! 2. Wakers are taken under the group lock and woken after it is released.
//! 3. A result is delivered (mail set to `Ready`, waker taken) under the
//!    lock, and a parked call stores its waker under the same lock, so no
//!    wake is lost.
//! 4. Dropping a call leaves no waker or pointer behind: a deposit whose
//!    call is gone stays in the step (the member did call) and its mail
//!    becomes `Abandoned`, so its result is thrown away on delivery; a
//!    sliced job is shared through an `Arc`, and any member can finish it.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Wake, Waker};

use smallvec::SmallVec;

use crate::job::Job;
use crate::loom::{self, Arc, Mutex};
use crate::step::{self, Deposit};
use crate::{CollError, Data, Op, Outcome};

/// How a group runs its algorithm ([`group_tuned`]); [`group`] uses the
/// default: the sizes measured on the benchmark in `benches/allreduce.rs`,
/// and no `progress` hook.
#[derive(Clone, Copy, Debug)]
pub struct Tuning {
    /// Tensor all-reduces whose inputs hold fewer elements than this in
    /// all (members times elements) are reduced by the last arriving
    /// member alone; larger ones take the sliced path.
    pub small_elems: usize,
    /// Elements per chunk of the sliced path (a member claims one chunk at
    /// a time). A job has at least `size * rings` chunks.
    pub chunk_elems: usize,
    /// Called by a member between the chunks it reduces on the sliced
    /// path. The members woken to help are queued on the waking thread's
    /// scheduler; a runtime that keeps woken tasks on the waking worker
    /// needs this chance to hand them to idle workers, or the job runs on
    /// one thread. On `weft-rt` it is `weft_rt::release_lifo`, which moves
    /// the woken task where idle workers find it once the poll has run for
    /// its grace period (docs/runtime.md, "The LIFO grace period"). The
    /// crate itself knows nothing of tasks.
    pub progress: Option<fn()>,
    /// Called by the member that completes a step (or starts a sliced
    /// job) right after it has woken the members that waited for it, with
    /// the lock released: they will run beside it, not after it. On
    /// `weft-rt` it is `weft_rt::hand_off_lifo`, which offers the woken
    /// task to idle workers at once instead of keeping it on the waking
    /// worker for `progress`'s grace period (docs/runtime.md, "Hand-off
    /// after a collective").
    pub handoff: Option<fn()>,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            small_elems: 4 << 20,
            chunk_elems: 16 << 10,
            progress: None,
            handoff: None,
        }
    }
}

/// A new group of `n` members, in rank order. `rings` (at least 1; 0 is
/// taken as 1) is how many chunks per member a sliced all-reduce is cut
/// into at least, the number of pieces each member's share can be worked
/// on in. `n < 1` fails with [`CollError::GroupSize`].
///
/// ```
/// let g = weft_coll::group::<()>(4, 1).unwrap();
/// assert_eq!((g[2].rank(), g[2].size()), (2, 4));
/// assert!(g[2].same(&g[2].clone()) && !g[2].same(&g[1]));
/// assert_eq!(g[2].identity(), g[2].clone().identity());
/// let h = weft_coll::group::<()>(4, 1).unwrap();
/// assert_ne!(g[2].identity(), g[1].identity());
/// assert_ne!(g[2].identity(), h[2].identity());
/// assert!(weft_coll::group::<()>(0, 1).is_err());
/// ```
pub fn group<V>(n: usize, rings: usize) -> Result<Vec<Member<V>>, CollError> {
    group_tuned(n, rings, Tuning::default())
}

/// [`group`] with explicit tuning (tests and benchmarks use it to move the
/// small/sliced boundary; results do not depend on it).
pub fn group_tuned<V>(n: usize, rings: usize, tuning: Tuning) -> Result<Vec<Member<V>>, CollError> {
    if n < 1 {
        return Err(CollError::GroupSize);
    }
    let group = Arc::new(Group {
        size: n,
        rings: rings.max(1),
        tuning,
        state: Mutex::new(State {
            slots: (0..n).map(|_| None).collect(),
            arrived: 0,
            mail: (0..n).map(|_| Mail::Idle).collect(),
            queued: Vec::new(),
        }),
    });
    Ok((0..n)
        .map(|rank| Member {
            group: group.clone(),
            rank,
        })
        .collect())
}

/// The state shared by a group's members.
struct Group<V> {
    size: usize,
    rings: usize,
    tuning: Tuning,
    state: Mutex<State<V>>,
}

/// The state under the group lock.
struct State<V> {
    /// The current step's deposits, by rank.
    slots: Vec<Option<Deposit<V>>>,
    /// How many slots are full.
    arrived: usize,
    /// Each rank's call in flight, and its result (invariant 1).
    mail: Vec<Mail<V>>,
    /// Calls waiting for their rank's mail to become `Idle`.
    queued: Vec<Waker>,
}

/// Where a rank's call in flight stands.
enum Mail<V> {
    /// No call of this rank in flight.
    Idle,
    /// Deposited; the step is not complete. The call's waker.
    Waiting(Waker),
    /// Deposited, and the call was dropped.
    Abandoned,
    /// A sliced job to help with and wait for; the waker once the call
    /// parked after helping.
    Job(Arc<Job>, Option<Waker>),
    /// The call's result.
    Ready(Outcome<V>),
}

/// Wakers to wake once the lock is released (invariant 2).
type Wakers = SmallVec<[Waker; 8]>;

impl<V> State<V> {
    /// Sets `rank`'s mail to `Idle`; the queued calls go to `wake`.
    fn idle(&mut self, rank: usize, wake: &mut Wakers) {
        self.mail[rank] = Mail::Idle;
        wake.extend(self.queued.drain(..));
    }

    /// Delivers `out` to every waiting rank but `me` (whose mail goes
    /// `Idle`; it returns its result itself). With `job`, only the ranks
    /// whose mail is that job are delivered to.
    fn deliver(&mut self, me: usize, job: Option<&Arc<Job>>, out: &Outcome<V>, wake: &mut Wakers)
    where
        V: Clone,
    {
        for r in 0..self.mail.len() {
            let mine = match (&self.mail[r], job) {
                (Mail::Waiting(_) | Mail::Abandoned, None) => true,
                (Mail::Job(j, _), Some(job)) => Arc::ptr_eq(j, job),
                _ => false,
            };
            if !mine {
                continue;
            }
            if r == me || matches!(self.mail[r], Mail::Abandoned) {
                self.idle(r, wake);
                continue;
            }
            match std::mem::replace(&mut self.mail[r], Mail::Ready(out.clone())) {
                Mail::Waiting(w) | Mail::Job(_, Some(w)) => wake.push(w),
                _ => {}
            }
        }
    }
}

/// One member of a group: its rank and the group. Copies (`clone`) are the
/// same member. A member takes part in one collective at a time: calls on
/// copies of one member are served one after the other.
pub struct Member<V> {
    group: Arc<Group<V>>,
    rank: usize,
}

impl<V> Clone for Member<V> {
    fn clone(&self) -> Self {
        Member {
            group: self.group.clone(),
            rank: self.rank,
        }
    }
}

impl<V> fmt::Debug for Member<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Member(rank {} of {})", self.rank, self.group.size)
    }
}

impl<V: Clone + Send> Member<V> {
    /// This member's rank, `0..size`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The group's size.
    pub fn size(&self) -> usize {
        self.group.size
    }

    /// The group's tuning (see [`group_tuned`]).
    pub fn tuning(&self) -> Tuning {
        self.group.tuning
    }

    /// The group's `rings` (see [`group`]).
    pub fn rings(&self) -> usize {
        self.group.rings
    }

    /// True when `other` is this member (the same group and rank).
    pub fn same(&self, other: &Member<V>) -> bool {
        Arc::ptr_eq(&self.group, &other.group) && self.rank == other.rank
    }

    /// This member's identity, to hash by: the group's address and the
    /// rank. Equal for members that are [`Member::same`]; members of two
    /// live groups, or of two ranks, differ.
    pub fn identity(&self) -> (usize, usize) {
        (Arc::as_ptr(&self.group) as usize, self.rank)
    }

    /// This member's part of the group's next collective: `op` on `data`,
    /// whose type is named `ty` in mismatch messages (`"int"`, `"float"`,
    /// `"tensor"`, a struct's name...). The future completes once every
    /// member has called the same collective, with the result every member
    /// gets (bitwise the same), or with the error found:
    ///
    /// - at once, on this member, without waiting: [`CollError::RootRange`],
    ///   [`CollError::Unsupported`], [`CollError::BadTensor`];
    /// - on the last member to arrive, when the members' calls disagree:
    ///   [`CollError::OpMismatch`], [`CollError::RootMismatch`],
    ///   [`CollError::TypeMismatch`], [`CollError::ShapeMismatch`]. The
    ///   other members stay parked for ever: the group is broken.
    ///
    /// Nothing happens until the future is first polled. Dropping it after
    /// that counts as having called (the other members are not held up);
    /// its result is thrown away.
    pub fn call(&self, op: Op, ty: Cow<'static, str>, data: Data<V>) -> Call<V> {
        Call {
            group: self.group.clone(),
            rank: self.rank,
            stage: Stage::Start(Deposit { op, ty, data }),
        }
    }

    /// [`Member::call`] for plain threads: parks the thread until the
    /// collective completes.
    pub fn call_blocking(
        &self,
        op: Op,
        ty: Cow<'static, str>,
        data: Data<V>,
    ) -> Result<Outcome<V>, CollError> {
        block_on(self.call(op, ty, data))
    }
}

/// A member's part of one collective ([`Member::call`]).
pub struct Call<V> {
    group: Arc<Group<V>>,
    rank: usize,
    stage: Stage<V>,
}

/// Where a call stands.
enum Stage<V> {
    /// Not deposited yet.
    Start(Deposit<V>),
    /// Deposited: the mail of the call's rank is not `Idle`.
    Parked,
    /// Returned its result (or failed).
    Done,
}

// The call is never pinned structurally: it moves its fields freely.
impl<V> Unpin for Call<V> {}

impl<V> fmt::Debug for Call<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stage = match self.stage {
            Stage::Start(_) => "start",
            Stage::Parked => "parked",
            Stage::Done => "done",
        };
        write!(f, "Call(rank {}, {stage})", self.rank)
    }
}

impl<V: Clone + Send> Future for Call<V> {
    type Output = Result<Outcome<V>, CollError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match std::mem::replace(&mut this.stage, Stage::Done) {
            Stage::Start(dep) => this.start(dep, cx),
            Stage::Parked => this.parked(cx),
            Stage::Done => Poll::Ready(Err(CollError::Internal("call polled after it completed"))),
        }
    }
}

impl<V: Clone + Send> Call<V> {
    /// Deposits `dep`; the last arriver completes the step.
    fn start(
        &mut self,
        dep: Deposit<V>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Outcome<V>, CollError>> {
        let g = &*self.group;
        if let Err(e) = step::local_check(&dep, g.size) {
            return Poll::Ready(Err(e));
        }
        let me = self.rank;
        let mut st = g.state.lock();
        if !matches!(st.mail[me], Mail::Idle) {
            // Another call of this rank is in flight (invariant 1).
            if !st.queued.iter().any(|w| w.will_wake(cx.waker())) {
                st.queued.push(cx.waker().clone());
            }
            self.stage = Stage::Start(dep);
            return Poll::Pending;
        }
        st.slots[me] = Some(dep);
        st.arrived += 1;
        st.mail[me] = Mail::Waiting(cx.waker().clone());
        self.stage = Stage::Parked;
        if st.arrived < g.size {
            return Poll::Pending;
        }

        // The last arriver: take the step's deposits and free the slots.
        st.arrived = 0;
        let deps: Vec<Deposit<V>> = st.slots.iter_mut().filter_map(Option::take).collect();
        let mut wake = Wakers::new();
        if let Err(e) = step::validate(&deps) {
            st.idle(me, &mut wake);
            self.stage = Stage::Done;
            drop(st);
            wake.into_iter().for_each(Waker::wake);
            return Poll::Ready(Err(e));
        }
        if step::sliced(&deps, g.tuning.small_elems) {
            let job = Arc::new(self.job(deps));
            for r in 0..g.size {
                match std::mem::replace(&mut st.mail[r], Mail::Job(job.clone(), None)) {
                    Mail::Waiting(w) if r != me => wake.push(w),
                    Mail::Abandoned => st.idle(r, &mut wake),
                    _ => {}
                }
            }
            drop(st);
            wake_peers(wake, g.tuning.handoff);
            return self.parked(cx);
        }
        let big = matches!(
            deps.first().map(|d| &d.data),
            Some(Data::F32 { .. } | Data::F32s(_))
        );
        let out = if big {
            // A tensor: reduce with the lock released (everyone else of
            // this step is parked; their mail keeps them so).
            drop(st);
            let out = step::combine(deps);
            st = g.state.lock();
            out
        } else {
            step::combine(deps)
        };
        let out = match out {
            Ok(out) => out,
            Err(e) => {
                st.idle(me, &mut wake);
                self.stage = Stage::Done;
                drop(st);
                wake.into_iter().for_each(Waker::wake);
                return Poll::Ready(Err(e));
            }
        };
        st.deliver(me, None, &out, &mut wake);
        self.stage = Stage::Done;
        drop(st);
        wake_peers(wake, g.tuning.handoff);
        Poll::Ready(Ok(out))
    }

    /// The sliced job for a validated all-reduce of tensors.
    fn job(&self, deps: Vec<Deposit<V>>) -> Job {
        let g = &*self.group;
        let mut op = crate::Reduce::Sum;
        let mut shape: std::sync::Arc<[usize]> = std::sync::Arc::from([]);
        let mut inputs = Vec::with_capacity(deps.len());
        for d in deps {
            if let (Op::AllReduce(r), Data::F32 { shape: s, data }) = (d.op, d.data) {
                op = r;
                shape = s;
                inputs.push(data);
            }
        }
        let len = inputs.first().map_or(0, |x| x.len());
        let chunks = len
            .div_ceil(g.tuning.chunk_elems.max(1))
            .max(g.size * g.rings);
        Job::new(op, shape, inputs, chunks)
    }

    /// Polls a deposited call: its result, or help with its job, or park.
    fn parked(&mut self, cx: &mut Context<'_>) -> Poll<Result<Outcome<V>, CollError>> {
        let me = self.rank;
        let g = &*self.group;
        let mut st = g.state.lock();
        let job = match &mut st.mail[me] {
            Mail::Waiting(w) => {
                if !w.will_wake(cx.waker()) {
                    *w = cx.waker().clone();
                }
                self.stage = Stage::Parked;
                return Poll::Pending;
            }
            Mail::Job(job, _) => job.clone(),
            Mail::Ready(_) => return Poll::Ready(Ok(take_ready(st, me))),
            Mail::Idle | Mail::Abandoned => {
                // Invariant 1: a parked call's mail is none of these.
                return Poll::Ready(Err(CollError::Internal("parked call without mail")));
            }
        };
        drop(st);
        let progress = g.tuning.progress;
        let hook = || {
            if let Some(f) = progress {
                f();
            }
        };
        if job.work(hook) {
            let out = Outcome::F32 {
                shape: job.shape().clone(),
                data: std::sync::Arc::new(job.take_output()),
            };
            let mut wake = Wakers::new();
            let mut st = g.state.lock();
            st.deliver(me, Some(&job), &out, &mut wake);
            drop(st);
            wake_peers(wake, g.tuning.handoff);
            return Poll::Ready(Ok(out));
        }
        let mut st = g.state.lock();
        match &mut st.mail[me] {
            Mail::Job(_, w) => {
                *w = Some(cx.waker().clone());
                self.stage = Stage::Parked;
                Poll::Pending
            }
            Mail::Ready(_) => Poll::Ready(Ok(take_ready(st, me))),
            _ => Poll::Ready(Err(CollError::Internal("helper lost its job"))),
        }
    }
}

/// Takes `rank`'s `Ready` result and sets its mail `Idle`.
fn take_ready<V>(mut st: loom::MutexGuard<'_, State<V>>, rank: usize) -> Outcome<V> {
    let mut wake = Wakers::new();
    let out = std::mem::replace(&mut st.mail[rank], Mail::Idle);
    wake.extend(st.queued.drain(..));
    drop(st);
    wake.into_iter().for_each(Waker::wake);
    match out {
        Mail::Ready(out) => out,
        _ => Outcome::Unit,
    }
}

impl<V> Drop for Call<V> {
    fn drop(&mut self) {
        if !matches!(self.stage, Stage::Parked) {
            return;
        }
        let mut wake = Wakers::new();
        let mut st = self.group.state.lock();
        match st.mail[self.rank] {
            Mail::Waiting(_) => st.mail[self.rank] = Mail::Abandoned,
            Mail::Job(..) | Mail::Ready(_) => st.idle(self.rank, &mut wake),
            Mail::Idle | Mail::Abandoned => {}
        }
        drop(st);
        wake.into_iter().for_each(Waker::wake);
    }
}

/// Wakes the members a step's result (or a sliced job) was delivered to,
/// with the lock released, then calls the `handoff` hook: the caller goes
/// on running, and so will they.
fn wake_peers(wake: Wakers, handoff: Option<fn()>) {
    let woke = !wake.is_empty();
    wake.into_iter().for_each(Waker::wake);
    if let (true, Some(f)) = (woke, handoff) {
        f();
    }
}

/// Wakes a parked thread: the waker of `call_blocking`.
struct ThreadWaker(loom::Thread);

impl Wake for ThreadWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `fut` to completion on this thread, parking it while pending. A
/// spurious unpark costs one more poll.
pub(crate) fn block_on<F: Future + Unpin>(mut fut: F) -> F::Output {
    let waker = Waker::from(std::sync::Arc::new(ThreadWaker(loom::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = Pin::new(&mut fut).poll(&mut cx) {
            return v;
        }
        loom::park();
    }
}
