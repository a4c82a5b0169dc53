//! One-shot completions between a task and the messaging thread: the task
//! awaits a [`Pending`] (or a `Call`), the messaging thread fills its
//! [`Completer`] and wakes the task's `Waker`. A completer dropped unfilled
//! (the program is ending) leaves `None`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::loom::Mutex;
use crate::RemoteError;

struct State<T> {
    value: Option<Option<T>>,
    waker: Option<Waker>,
}

type Slot<T> = Arc<Mutex<State<T>>>;

/// The filling end, held by the messaging thread.
pub(crate) struct Completer<T> {
    slot: Option<Slot<T>>,
}

/// The waiting end: a future of the result.
pub(crate) struct Waiter<T> {
    slot: Slot<T>,
}

pub(crate) fn pair<T>() -> (Completer<T>, Waiter<T>) {
    let slot = Arc::new(Mutex::new(State {
        value: None,
        waker: None,
    }));
    (
        Completer {
            slot: Some(slot.clone()),
        },
        Waiter { slot },
    )
}

/// A waiter that is done already.
pub(crate) fn ready<T>(v: T) -> Waiter<T> {
    let (c, w) = pair();
    c.complete(v);
    w
}

impl<T> Completer<T> {
    pub fn complete(mut self, v: T) {
        self.fill(Some(v));
    }

    fn fill(&mut self, v: Option<T>) {
        if let Some(slot) = self.slot.take() {
            let waker = {
                let mut s = slot.lock();
                s.value = Some(v);
                s.waker.take()
            };
            if let Some(w) = waker {
                w.wake();
            }
        }
    }
}

impl<T> Drop for Completer<T> {
    fn drop(&mut self) {
        self.fill(None);
    }
}

impl<T> Future for Waiter<T> {
    /// `None`: the messaging thread dropped the request (the program ends).
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut s = self.slot.lock();
        match s.value.take() {
            Some(v) => Poll::Ready(v),
            None => {
                if !s.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    s.waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }
}

/// The result of a remote channel operation: a future, or
/// [`Pending::wait`] from a thread.
pub struct Pending<T> {
    waiter: Waiter<Result<T, RemoteError>>,
}

impl<T> Pending<T> {
    pub(crate) fn new(waiter: Waiter<Result<T, RemoteError>>) -> Pending<T> {
        Pending { waiter }
    }

    /// Blocks this thread until the result is there.
    pub fn wait(self) -> Result<T, RemoteError> {
        block_on(self)
    }
}

impl<T> Future for Pending<T> {
    type Output = Result<T, RemoteError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.waiter)
            .poll(cx)
            .map(|r| r.unwrap_or(Err(RemoteError::Ended)))
    }
}

/// Runs a future on this thread: polls it, yielding the CPU between polls
/// for a short while (a reply from the messaging thread often comes within
/// microseconds, sooner than a park and wake), then parks between polls.
pub(crate) fn block_on<F: Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    let start = std::time::Instant::now();
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        if start.elapsed() < std::time::Duration::from_micros(50) {
            std::thread::yield_now();
        } else {
            std::thread::park();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_completion_from_another_thread_wakes_the_waiter() {
        let (c, w) = pair::<u32>();
        let t = std::thread::spawn(move || c.complete(7));
        assert_eq!(block_on(w), Some(7));
        t.join().unwrap();
    }

    #[test]
    fn a_dropped_completer_ends_the_wait() {
        let (c, w) = pair::<u32>();
        drop(c);
        assert_eq!(block_on(w), None);
        let (c, w) = pair::<Result<u32, RemoteError>>();
        drop(c);
        assert_eq!(Pending::new(w).wait(), Err(RemoteError::Ended));
    }
}
