//! Timers and I/O as seen from a task: `sleep`, `after`, `now_ms`, and
//! `register_io`. They reach the run's poller (`netpoll::Driver`) through the
//! worker context. A pending `sleep` or `after` keeps deadlock detection off
//! until it fires (or, for `sleep`, until its future is dropped).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use super::context::{with_ctx, yield_now};
use super::shared::Shared;
use crate::netpoll::{IoSource, TimerAction, TimerHandle};

/// Blocks the current task for at least `d`. `sleep(0)` yields.
pub async fn sleep(d: Duration) {
    if d.is_zero() {
        return yield_now().await;
    }
    Sleep { d, timer: None }.await
}

/// Runs `f` on a worker thread once `d` has passed. `f` must not block; it
/// typically sends on a buffered channel (`after(ms)` in Weft). The timer is
/// pending (no deadlock report) until it fires. Outside a runtime `f` is
/// dropped without running.
pub fn after(d: Duration, f: impl FnOnce() + Send + 'static) {
    with_ctx(|ctx| {
        ctx.shared
            .driver
            .add_timer_in(ctx.index, d, TimerAction::Call(Box::new(f)));
    });
}

/// Milliseconds since the run started (0 outside a runtime).
pub fn now_ms() -> f64 {
    with_ctx(|ctx| ctx.shared.driver.time() as f64 / 1e6).unwrap_or(0.0)
}

/// Registers an I/O source (a mio socket, pipe, ...) with the run's poller.
/// Its `read_with`/`write_with` wait for readiness without holding a thread;
/// a task waiting on one is never reported as deadlocked.
pub fn register_io<S: mio::event::Source>(source: S) -> std::io::Result<IoSource<S>> {
    match with_ctx(|ctx| ctx.shared.driver.io.clone()) {
        Some(io) => io.register(source),
        None => Err(std::io::Error::other(
            "register_io called outside a weft runtime task",
        )),
    }
}

/// The future behind `sleep`.
struct Sleep {
    d: Duration,
    timer: Option<(Weak<Shared>, TimerHandle)>,
}

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if let Some((_, handle)) = &self.timer {
            if handle.is_done() {
                self.timer = None;
                return Poll::Ready(());
            }
            handle.set_waker(cx.waker());
            return Poll::Pending;
        }
        let d = self.d;
        let waker = cx.waker().clone();
        let registered = with_ctx(|ctx| {
            let h = ctx
                .shared
                .driver
                .add_timer_in(ctx.index, d, TimerAction::Wake(waker));
            (Arc::downgrade(&ctx.shared), h)
        });
        match registered {
            Some(t) => {
                self.timer = Some(t);
                Poll::Pending
            }
            None => {
                // Not on a runtime worker: block this thread instead.
                std::thread::sleep(d);
                Poll::Ready(())
            }
        }
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some((shared, handle)) = self.timer.take() {
            if let Some(shared) = shared.upgrade() {
                shared.driver.timers.cancel(&handle);
            }
        }
    }
}
