//! The public face: [`World`] (this process's member of the group of all
//! processes), what the program gives it ([`Host`], [`Endpoint`]) and what
//! it gives back ([`Call`], [`Pending`], [`End`]). A world of one process
//! needs no thread: its collectives complete at once. A world of several
//! has a messaging thread (`engine.rs`) that owns the transport; tasks
//! hand it commands through [`Inbox`] and await a completion.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread::{JoinHandle, Thread};

use weft_chan::Chan;
use weft_coll::{Data, Op, Outcome};

use crate::header::check_local;
use crate::loom::{AtomicBool, AtomicU64, Mutex, Ordering};
use crate::slot::{self, Completer, Pending, Waiter};
use crate::{CallError, Payload, RemoteError};

/// A value as bytes, in collectives (the caller serializes).
pub type Bytes = Vec<u8>;

/// A boxed future the messaging thread polls.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A channel as other processes name it: its owner, its number there, its
/// capacity. Eight-byte fields, so it crosses processes inside a value
/// ([`ChanRef::to_bytes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChanRef {
    /// The rank of the process that made the channel.
    pub owner: usize,
    /// Its number in that process.
    pub id: u64,
    /// Its capacity (0: unbuffered).
    pub cap: usize,
}

impl ChanRef {
    /// Bytes of [`ChanRef::to_bytes`].
    pub const BYTES: usize = 24;

    /// The reference as bytes.
    pub fn to_bytes(&self) -> [u8; 24] {
        let mut b = [0u8; 24];
        b[..8].copy_from_slice(&(self.owner as u64).to_le_bytes());
        b[8..16].copy_from_slice(&self.id.to_le_bytes());
        b[16..].copy_from_slice(&(self.cap as u64).to_le_bytes());
        b
    }

    /// Reads [`ChanRef::to_bytes`].
    pub fn from_bytes(b: &[u8]) -> Option<ChanRef> {
        let word = |i: usize| -> Option<u64> {
            Some(u64::from_le_bytes(
                b.get(8 * i..8 * i + 8)?.try_into().ok()?,
            ))
        };
        Some(ChanRef {
            owner: usize::try_from(word(0)?).ok()?,
            id: word(1)?,
            cap: usize::try_from(word(2)?).ok()?,
        })
    }
}

/// A channel of this process, as the messaging thread serves it to other
/// processes. [`chan_endpoint`] makes one from a `weft_chan::Chan`.
pub trait Endpoint: Send + Sync {
    /// Puts a value into the channel; completes once a receiver has taken
    /// it (unbuffered) or it is buffered, or fails with `Closed`.
    fn send(&self, value: Payload) -> BoxFuture<Result<(), RemoteError>>;
    /// Takes a value; `None` once the channel is closed and drained.
    fn recv(&self) -> BoxFuture<Result<Option<Payload>, RemoteError>>;
    /// Closes the channel; `Closed` if it already was.
    fn close(&self) -> Result<(), RemoteError>;
    /// Values buffered now.
    fn len(&self) -> usize;
    /// No value is buffered now.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An [`Endpoint`] over a channel of `T`, with the value's serialization
/// (a value that cannot be serialized fails the receive as `Broken`).
pub fn chan_endpoint<T, E, D>(chan: Chan<T>, encode: E, decode: D) -> Arc<dyn Endpoint>
where
    T: Send + 'static,
    E: Fn(T) -> Result<Payload, String> + Send + Sync + 'static,
    D: Fn(Payload) -> Result<T, String> + Send + Sync + 'static,
{
    Arc::new(ChanEndpoint {
        chan,
        encode: Arc::new(encode),
        decode: Arc::new(decode),
    })
}

struct ChanEndpoint<T, E, D> {
    chan: Chan<T>,
    encode: Arc<E>,
    decode: Arc<D>,
}

impl<T, E, D> Endpoint for ChanEndpoint<T, E, D>
where
    T: Send + 'static,
    E: Fn(T) -> Result<Payload, String> + Send + Sync + 'static,
    D: Fn(Payload) -> Result<T, String> + Send + Sync + 'static,
{
    fn send(&self, value: Payload) -> BoxFuture<Result<(), RemoteError>> {
        let chan = self.chan.clone();
        let v = (self.decode)(value);
        Box::pin(async move {
            let v = v.map_err(RemoteError::Broken)?;
            chan.send(v).await.map_err(|_| RemoteError::Closed)
        })
    }

    fn recv(&self) -> BoxFuture<Result<Option<Payload>, RemoteError>> {
        let chan = self.chan.clone();
        let encode = self.encode.clone();
        Box::pin(async move {
            match chan.recv().await {
                Some(v) => encode(v).map(Some).map_err(RemoteError::Broken),
                None => Ok(None),
            }
        })
    }

    fn close(&self) -> Result<(), RemoteError> {
        self.chan.close().map_err(|_| RemoteError::Closed)
    }

    fn len(&self) -> usize {
        self.chan.len()
    }
}

/// How the program ends, as the messaging thread tells the [`Host`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// `main` returned in every process: exit 0.
    Finished,
    /// Process `rank` panicked (`code` 2) or called `exit(code)`: end the
    /// run quietly with that exit code.
    Abort {
        /// The process that ended the program.
        rank: usize,
        /// Its exit code.
        code: i32,
    },
    /// Every task of every process is blocked. Rank 0 gets the report's
    /// lines (`rank R task N [tag]: FILE:LINE:COL`, rank then task order)
    /// to print after `fatal error: all tasks are asleep - deadlock!`; the
    /// others get `None`. Exit code 2.
    Deadlock {
        /// The lines, on rank 0.
        report: Option<Vec<String>>,
    },
}

/// What the messaging thread asks of the program (the interpreter).
/// Called on the messaging thread; both must return promptly.
pub trait Host: Send + Sync {
    /// This process's blocked tasks, one line each (`task N [tag]:
    /// FILE:LINE:COL`), in task order; asked once every process is
    /// blocked.
    fn blocked(&self) -> Vec<String>;
    /// The program ends (at most one call): end this process's run.
    fn end(&self, why: End);
}

/// The direction of a served channel operation (which proxy future woke).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Dir {
    Send,
    Recv,
}

/// A request from a task to the messaging thread.
pub(crate) enum Cmd {
    Coll {
        op: Op,
        ty: Cow<'static, str>,
        data: Data<Bytes>,
        done: Completer<Result<Outcome<Bytes>, CallError>>,
    },
    Send {
        ch: ChanRef,
        payload: Payload,
        done: Completer<Result<(), RemoteError>>,
    },
    Recv {
        ch: ChanRef,
        done: Completer<Result<Option<Payload>, RemoteError>>,
    },
    Close {
        ch: ChanRef,
        done: Completer<Result<(), RemoteError>>,
    },
    Len {
        ch: ChanRef,
        done: Completer<Result<usize, RemoteError>>,
    },
    MainReturned,
    Abort(i32),
    Finalize,
}

/// What tasks and the messaging thread share.
pub(crate) struct Inbox {
    pub cmds: Mutex<VecDeque<Cmd>>,
    /// Served operations whose proxy future was woken.
    pub woken: Mutex<Vec<(u64, Dir)>>,
    /// The runtime says every task is blocked (`World::set_quiescent`).
    pub quiescent: AtomicBool,
    pub thread: Mutex<Option<Thread>>,
    /// Exported channels: caller's key → number, number → endpoint.
    pub exports: Mutex<Exports>,
    pub next_chan: AtomicU64,
}

#[derive(Default)]
pub(crate) struct Exports {
    pub by_key: HashMap<usize, ChanRef>,
    pub endpoints: HashMap<u64, Arc<dyn Endpoint>>,
}

impl Inbox {
    pub fn new() -> Inbox {
        Inbox {
            cmds: Mutex::new(VecDeque::new()),
            woken: Mutex::new(Vec::new()),
            quiescent: AtomicBool::new(false),
            thread: Mutex::new(None),
            exports: Mutex::new(Exports::default()),
            next_chan: AtomicU64::new(1),
        }
    }

    pub fn unpark(&self) {
        if let Some(t) = self.thread.lock().as_ref() {
            t.unpark();
        }
    }

    pub fn push(&self, cmd: Cmd) {
        self.cmds.lock().push_back(cmd);
        self.unpark();
    }

    /// Nothing submitted or woken is waiting for the messaging thread.
    pub fn is_empty(&self) -> bool {
        self.cmds.lock().is_empty() && self.woken.lock().is_empty()
    }
}

/// How the messaging thread ended, for [`World::finish`].
pub(crate) type EngineEnd = Result<(), String>;

struct Inner {
    rank: usize,
    size: usize,
    inbox: Arc<Inbox>,
    engine: Mutex<Option<JoinHandle<EngineEnd>>>,
}

/// This process's member of the group of all processes (`world()` of
/// docs/language.md, "Several processes"). Cheap to clone; clones are the
/// same member.
#[derive(Clone)]
pub struct World {
    inner: Arc<Inner>,
}

impl World {
    /// The world of a program run as one process: rank 0 of 1.
    pub fn solo() -> World {
        World {
            inner: Arc::new(Inner {
                rank: 0,
                size: 1,
                inbox: Arc::new(Inbox::new()),
                engine: Mutex::new(None),
            }),
        }
    }

    pub(crate) fn with_engine(
        rank: usize,
        size: usize,
        inbox: Arc<Inbox>,
        engine: JoinHandle<EngineEnd>,
    ) -> World {
        World {
            inner: Arc::new(Inner {
                rank,
                size,
                inbox,
                engine: Mutex::new(Some(engine)),
            }),
        }
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.inner.rank
    }

    /// The number of processes.
    pub fn size(&self) -> usize {
        self.inner.size
    }

    /// True when several processes run (a messaging thread exists).
    pub fn is_distributed(&self) -> bool {
        self.inner.engine.lock().is_some()
    }

    /// `==` on `comm` values: clones of one world are the same member.
    pub fn same(&self, other: &World) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Starts this process's part of the next collective over the world,
    /// with the rules of docs/language.md, "Collectives"; `ty` is the
    /// value's type name for mismatch messages.
    pub fn call(&self, op: Op, ty: Cow<'static, str>, data: Data<Bytes>) -> Call {
        if let Err(e) = check_local(op, &ty, &data, self.size()) {
            return Call::ready(Err(e.into()));
        }
        if !self.is_distributed() {
            return Call::ready(Ok(alone(op, data)));
        }
        let (done, waiter) = slot::pair();
        self.inner.inbox.push(Cmd::Coll { op, ty, data, done });
        Call { waiter }
    }

    /// The reference other processes use for a channel of this process,
    /// registering `endpoint()` the first time `key` (the channel's
    /// identity) is seen.
    pub fn export(
        &self,
        key: usize,
        cap: usize,
        endpoint: impl FnOnce() -> Arc<dyn Endpoint>,
    ) -> ChanRef {
        let inbox = &self.inner.inbox;
        let mut ex = inbox.exports.lock();
        if let Some(r) = ex.by_key.get(&key) {
            return *r;
        }
        let id = inbox.next_chan.fetch_add(1, Ordering::Relaxed);
        let r = ChanRef {
            owner: self.rank(),
            id,
            cap,
        };
        ex.by_key.insert(key, r);
        ex.endpoints.insert(id, endpoint());
        r
    }

    fn remote<T>(
        &self,
        ch: ChanRef,
        cmd: impl FnOnce(Completer<Result<T, RemoteError>>) -> Cmd,
    ) -> Pending<T> {
        if !self.is_distributed() || ch.owner == self.rank() || ch.owner >= self.size() {
            return Pending::new(slot::ready(Err(RemoteError::Broken(format!(
                "rank {} cannot reach a channel of rank {}",
                self.rank(),
                ch.owner
            )))));
        }
        let (done, waiter) = slot::pair();
        self.inner.inbox.push(cmd(done));
        Pending::new(waiter)
    }

    /// Sends a value to another process's channel: completes once a
    /// receiver there has taken it (unbuffered) or it is buffered there.
    pub fn send(&self, ch: ChanRef, payload: Payload) -> Pending<()> {
        self.remote(ch, |done| Cmd::Send { ch, payload, done })
    }

    /// Receives from another process's channel; `None` once it is closed
    /// and drained.
    pub fn recv(&self, ch: ChanRef) -> Pending<Option<Payload>> {
        self.remote(ch, |done| Cmd::Recv { ch, done })
    }

    /// Closes another process's channel.
    pub fn close(&self, ch: ChanRef) -> Pending<()> {
        self.remote(ch, |done| Cmd::Close { ch, done })
    }

    /// The values another process's channel holds now.
    pub fn len(&self, ch: ChanRef) -> Pending<usize> {
        self.remote(ch, |done| Cmd::Len { ch, done })
    }

    /// The runtime's quiescence (`weft_rt::Quiescence`): every task of
    /// this process is blocked with nothing pending locally, or no longer.
    /// Cheap; may be called under the runtime's locks.
    pub fn set_quiescent(&self, quiescent: bool) {
        let inbox = &self.inner.inbox;
        inbox.quiescent.store(quiescent, Ordering::SeqCst);
        if quiescent {
            inbox.unpark();
        }
    }

    /// This process's `main` returned: the program ends once every
    /// process's has ([`End::Finished`]).
    pub fn main_returned(&self) {
        if self.is_distributed() {
            self.inner.inbox.push(Cmd::MainReturned);
        }
    }

    /// This process ends the program (a panic: code 2, or `exit(code)`):
    /// every other process gets [`End::Abort`]. Call it whenever this
    /// process's run ends for a reason of its own.
    pub fn abort(&self, code: i32) {
        if self.is_distributed() {
            self.inner.inbox.push(Cmd::Abort(code));
        }
    }

    /// After this process's run ended: waits until every process has
    /// stopped sending, shuts the transport down, and joins the messaging
    /// thread. Other clones must not be used afterwards.
    pub fn finish(&self) -> Result<(), String> {
        let Some(engine) = self.inner.engine.lock().take() else {
            return Ok(());
        };
        self.inner.inbox.push(Cmd::Finalize);
        engine
            .join()
            .unwrap_or_else(|_| Err("the messaging thread panicked".to_string()))
    }
}

/// A one-member collective: the member's own value, as a group of one.
fn alone(op: Op, data: Data<Bytes>) -> Outcome<Bytes> {
    if matches!(op, Op::Barrier) {
        return Outcome::Unit;
    }
    match (op, data) {
        (Op::AllGather, Data::Value(v) | Data::Shaped { value: v, .. }) => {
            Outcome::Gathered(Arc::new(vec![v]))
        }
        (_, Data::Int(i)) => Outcome::Int(i),
        (_, Data::Float(f)) => Outcome::Float(f),
        (_, Data::F32 { shape, data }) => Outcome::F32 { shape, data },
        (_, Data::F32s(parts)) => Outcome::F32s(parts.into()),
        (_, Data::Value(v) | Data::Shaped { value: v, .. }) => Outcome::Value(v),
        (_, Data::Unit) => Outcome::Unit,
    }
}

/// This process's part of one collective over the world: a future of the
/// result, which every process gets bitwise the same.
pub struct Call {
    waiter: Waiter<Result<Outcome<Bytes>, CallError>>,
}

impl Call {
    fn ready(r: Result<Outcome<Bytes>, CallError>) -> Call {
        Call {
            waiter: slot::ready(r),
        }
    }

    /// Blocks this thread until the result is there.
    pub fn wait(self) -> Result<Outcome<Bytes>, CallError> {
        slot::block_on(self)
    }
}

impl Future for Call {
    type Output = Result<Outcome<Bytes>, CallError>;

    /// Stays pending if the program ends first (the task is then dropped).
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match Pin::new(&mut self.waiter).poll(cx) {
            Poll::Ready(Some(r)) => Poll::Ready(r),
            Poll::Ready(None) | Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_coll::Reduce;

    #[test]
    fn a_world_of_one_answers_at_once() {
        let w = World::solo();
        assert_eq!((w.rank(), w.size(), w.is_distributed()), (0, 1, false));
        let r = w
            .call(Op::AllReduce(Reduce::Sum), "int".into(), Data::Int(5))
            .wait();
        assert!(matches!(r, Ok(Outcome::Int(5))));
        let r = w
            .call(Op::AllGather, "[]int".into(), Data::Value(vec![1, 2]))
            .wait();
        assert!(matches!(r, Ok(Outcome::Gathered(v)) if *v == vec![vec![1u8, 2]]));
        let r = w
            .call(Op::Broadcast { root: 1 }, "int".into(), Data::Int(5))
            .wait();
        assert_eq!(
            r.err().map(|e| e.to_string()),
            Some("broadcast: root 1 out of range for group of size 1".to_string())
        );
        let ch = ChanRef {
            owner: 0,
            id: 1,
            cap: 0,
        };
        assert!(matches!(
            w.send(ch, Payload::new()).wait(),
            Err(RemoteError::Broken(_))
        ));
        assert_eq!(w.finish(), Ok(()));
    }

    #[test]
    fn chan_refs_read_back_and_exports_are_numbered_once() {
        let r = ChanRef {
            owner: 3,
            id: 99,
            cap: 7,
        };
        assert_eq!(ChanRef::from_bytes(&r.to_bytes()), Some(r));
        assert_eq!(ChanRef::from_bytes(&[1, 2]), None);
        let w = World::solo();
        let chan = Chan::<u8>::new(1);
        let ep = || {
            chan_endpoint(
                chan.clone(),
                |v: u8| Ok(Payload::from_bytes(&[v])),
                |p| Ok(p.as_slice()[0]),
            )
        };
        let a = w.export(10, 1, ep);
        let b = w.export(10, 1, ep);
        let c = w.export(11, 1, ep);
        assert_eq!(a, b);
        assert_ne!(a.id, c.id);
    }
}
