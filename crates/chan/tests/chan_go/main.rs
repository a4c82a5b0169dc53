//! Go's channel tests, ported: one module per Go file, each naming its
//! origin in golang/go. Goroutines become futures on a single-threaded
//! `futures::executor::LocalPool` (deterministic; dropping the pool at the
//! end also drops every still-blocked task, which exercises cancellation)
//! or plain threads using the `_blocking` forms where real parallelism is
//! the point. Counts are scaled down so the suite stays fast in debug mode.
//! Tests of Go internals (stack shrinking, GC barriers, allocation counts,
//! generated code) have no counterpart and are not ported.

mod doubleselect;
mod fifo;
mod goroutines;
mod nonblock;
mod runtime_chan_test;
mod select;
mod select3;
mod select4;
mod select6;
mod select7;
mod sendstmt;
mod sieve1;
mod sieve2;
mod zerosize;

use std::future::Future;

use futures::executor::{LocalPool, LocalSpawner};
use futures::task::LocalSpawnExt;

/// Runs `main` (given a spawner for `go`) until it returns, then drops
/// every task still blocked.
pub fn run<F, Fut>(main: F)
where
    F: FnOnce(Go) -> Fut,
    Fut: Future<Output = ()>,
{
    let mut pool = LocalPool::new();
    let go = Go(pool.spawner());
    pool.run_until(main(go));
}

/// `go f()`: starts a task on the test's pool.
#[derive(Clone)]
pub struct Go(LocalSpawner);

impl Go {
    pub fn go(&self, f: impl Future<Output = ()> + 'static) {
        self.0.spawn_local(f).expect("spawn on a live pool");
    }
}

/// `runtime.Gosched()` inside a task: yield once to the pool.
pub async fn gosched() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            std::task::Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await
}
