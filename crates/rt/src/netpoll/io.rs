//! I/O readiness: sources registered with the run's epoll instance, each with
//! a readiness word and one waker per direction. Edge-triggered, as in mio:
//! a task waits for readiness, tries the operation, and on `WouldBlock`
//! clears the readiness bit and waits again (tokio's `ScheduledIo`, reduced).
//!
//! Invariants:
//! - `waiters` counts readiness futures that returned `Pending` and have not
//!   completed or been dropped; while it is non-zero the run is not a
//!   deadlock (an outside event may still arrive).
//! - A readiness bit is set before the waker is taken and woken, and a waiter
//!   stores its waker before re-checking the bit, so no event is lost.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use mio::event::Source;
use mio::{Events, Interest, Registry, Token};

use crate::loom::{AtomicUsize, Mutex, Ordering};

const READABLE: usize = 1;
const WRITABLE: usize = 2;

/// Readiness state of one registered source.
struct ScheduledIo {
    readiness: AtomicUsize,
    readers: Mutex<Option<Waker>>,
    writers: Mutex<Option<Waker>>,
}

/// The run's table of registered sources.
pub struct IoRegistry {
    registry: Registry,
    sources: Mutex<Sources>,
    registered: AtomicUsize,
    waiters: Arc<AtomicUsize>,
}

struct Sources {
    next: usize,
    map: HashMap<usize, Arc<ScheduledIo>>,
}

impl IoRegistry {
    pub(crate) fn new(registry: Registry) -> IoRegistry {
        IoRegistry {
            registry,
            sources: Mutex::new(Sources {
                next: 0,
                map: HashMap::new(),
            }),
            registered: AtomicUsize::new(0),
            waiters: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Sources currently registered.
    pub fn registered(&self) -> usize {
        self.registered.load(Ordering::SeqCst)
    }

    /// Readiness waits in progress (see the module invariants).
    pub fn waiters(&self) -> usize {
        self.waiters.load(Ordering::SeqCst)
    }

    /// Registers `source` for reading and writing readiness.
    pub fn register<S: Source>(self: &Arc<Self>, mut source: S) -> io::Result<IoSource<S>> {
        let sched = Arc::new(ScheduledIo {
            readiness: AtomicUsize::new(0),
            readers: Mutex::new(None),
            writers: Mutex::new(None),
        });
        let token = {
            let mut s = self.sources.lock();
            let t = s.next;
            s.next += 1;
            s.map.insert(t, sched.clone());
            t
        };
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(e) = self.registry.register(&mut source, Token(token), interest) {
            self.sources.lock().map.remove(&token);
            return Err(e);
        }
        self.registered.fetch_add(1, Ordering::SeqCst);
        Ok(IoSource {
            source: Some(source),
            token,
            sched,
            registry: self.clone(),
        })
    }

    /// Sets readiness bits from `events` and wakes the waiting tasks.
    pub(crate) fn dispatch(&self, events: &Events, skip: Token) {
        for ev in events.iter() {
            if ev.token() == skip {
                continue;
            }
            let Some(sched) = self.sources.lock().map.get(&ev.token().0).cloned() else {
                continue;
            };
            let mut bits = 0;
            if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                bits |= READABLE;
            }
            if ev.is_writable() || ev.is_write_closed() || ev.is_error() {
                bits |= WRITABLE;
            }
            sched.readiness.fetch_or(bits, Ordering::SeqCst);
            if bits & READABLE != 0 {
                if let Some(w) = sched.readers.lock().take() {
                    w.wake();
                }
            }
            if bits & WRITABLE != 0 {
                if let Some(w) = sched.writers.lock().take() {
                    w.wake();
                }
            }
        }
    }
}

/// A source registered with the run's poller. Deregistered on drop.
pub struct IoSource<S: Source> {
    source: Option<S>,
    token: usize,
    sched: Arc<ScheduledIo>,
    registry: Arc<IoRegistry>,
}

impl<S: Source> IoSource<S> {
    /// The source itself, for non-blocking operations.
    pub fn get_ref(&self) -> &S {
        // `source` is only `None` inside `drop`.
        self.source.as_ref().expect("source present until drop")
    }

    /// Runs `op` until it does not return `WouldBlock`, waiting for read
    /// readiness between tries.
    pub async fn read_with<R>(&self, mut op: impl FnMut(&S) -> io::Result<R>) -> io::Result<R> {
        loop {
            Readiness {
                io: self.sched.clone(),
                bit: READABLE,
                waiters: &self.registry.waiters,
                counted: false,
            }
            .await;
            match op(self.get_ref()) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.sched.readiness.fetch_and(!READABLE, Ordering::SeqCst);
                }
                r => return r,
            }
        }
    }

    /// Runs `op` until it does not return `WouldBlock`, waiting for write
    /// readiness between tries.
    pub async fn write_with<R>(&self, mut op: impl FnMut(&S) -> io::Result<R>) -> io::Result<R> {
        loop {
            Readiness {
                io: self.sched.clone(),
                bit: WRITABLE,
                waiters: &self.registry.waiters,
                counted: false,
            }
            .await;
            match op(self.get_ref()) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.sched.readiness.fetch_and(!WRITABLE, Ordering::SeqCst);
                }
                r => return r,
            }
        }
    }
}

impl<S: Source> Drop for IoSource<S> {
    fn drop(&mut self) {
        if let Some(mut s) = self.source.take() {
            let _ = self.registry.registry.deregister(&mut s);
        }
        self.registry.sources.lock().map.remove(&self.token);
        self.registry.registered.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits until `bit` is set in the source's readiness.
struct Readiness<'a> {
    io: Arc<ScheduledIo>,
    bit: usize,
    waiters: &'a AtomicUsize,
    counted: bool,
}

impl Future for Readiness<'_> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.io.readiness.load(Ordering::SeqCst) & self.bit != 0 {
            self.uncount();
            return Poll::Ready(());
        }
        let slot = if self.bit == READABLE {
            &self.io.readers
        } else {
            &self.io.writers
        };
        *slot.lock() = Some(cx.waker().clone());
        if self.io.readiness.load(Ordering::SeqCst) & self.bit != 0 {
            self.uncount();
            return Poll::Ready(());
        }
        if !self.counted {
            self.counted = true;
            self.waiters.fetch_add(1, Ordering::SeqCst);
        }
        Poll::Pending
    }
}

impl Readiness<'_> {
    fn uncount(&mut self) {
        if self.counted {
            self.counted = false;
            self.waiters.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Drop for Readiness<'_> {
    fn drop(&mut self) {
        self.uncount();
    }
}
