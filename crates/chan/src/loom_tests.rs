//! Loom model checks of the channel protocol: every interleaving of the
//! small scenarios below with at most 5 preemptions (set
//! LOOM_MAX_PREEMPTIONS to change it). Unit tests (`#[cfg(all(test,
//! loom))]`), so that they may reach the crate's internals; they use only
//! the public API. Run:
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release -p weft-chan --lib loom_tests`
//! (CI runs them in release: about four times faster than the dev profile).
//! Scenarios: hand-off, close while parties are blocked, two senders racing
//! into one select, a select cancelled by another case, a receive future
//! dropped while a sender races it, the lock-free `try_recv` fast path
//! racing a send and a close (buffered and unbuffered), and the lock-free
//! ring of buffered channels racing a parking select, a close, a parked
//! sender, and another receiver; blocking operations' first attempts
//! racing on a ring; a task's `WaitSlot` reused across waits;
//! a receive and a select polled with a new waker while a sender delivers;
//! the interpreter's select (the ready path, then the locked park) racing
//! a ring push, and an unbuffered sender and a close.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Waker};

use ::loom::thread;

use crate::{Chan, Outcome, Select, TryRecvError, TrySendError, WaitSlot};

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = ::loom::model::Builder::new();
    // LOOM_MAX_PREEMPTIONS overrides. With 5 the whole file takes about
    // 3 minutes in release mode, most of it in
    // `two_senders_race_into_one_select` (docs/testing.md).
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(5);
    }
    b.check(f);
}

#[test]
fn handoff_unbuffered() {
    model(|| {
        let c = Chan::<i32>::new(0);
        let s = {
            let c = c.clone();
            thread::spawn(move || c.send_blocking(7))
        };
        assert_eq!(c.recv_blocking(), Some(7));
        assert!(s.join().unwrap().is_ok());
        assert_eq!(c.queued(), (0, 0));
    });
}

#[test]
fn handoff_buffered_keeps_fifo() {
    model(|| {
        let c = Chan::<i32>::new(1);
        let s = {
            let c = c.clone();
            thread::spawn(move || {
                c.send_blocking(1).unwrap();
                c.send_blocking(2).unwrap();
            })
        };
        assert_eq!(c.recv_blocking(), Some(1));
        assert_eq!(c.recv_blocking(), Some(2));
        s.join().unwrap();
    });
}

#[test]
fn close_while_parties_blocked() {
    model(|| {
        let c = Chan::<i32>::new(0);
        let r = {
            let c = c.clone();
            thread::spawn(move || c.recv_blocking())
        };
        let s = {
            let c = c.clone();
            thread::spawn(move || c.send_blocking(5).is_ok())
        };
        c.close().unwrap();
        let got = r.join().unwrap();
        let sent = s.join().unwrap();
        // Either they met before the close, or both were released by it.
        assert_eq!(sent, got == Some(5));
        assert!(got.is_none() || got == Some(5));
        assert_eq!(c.queued(), (0, 0));
    });
}

#[test]
fn two_senders_race_into_one_select() {
    model(|| {
        let a = Chan::<i32>::new(0);
        let b = Chan::<i32>::new(0);
        let sa = {
            let a = a.clone();
            thread::spawn(move || a.send_blocking(1).unwrap())
        };
        let sb = {
            let b = b.clone();
            thread::spawn(move || b.send_blocking(2).unwrap())
        };
        let mut rng = fastrand::Rng::with_seed(0);
        let mut s = Select::new();
        s.recv(Some(a.clone()));
        s.recv(Some(b.clone()));
        let got = s.select_blocking(&mut rng);
        // Exactly one case fired; the other sender is still owed a receive.
        let other = match (got.index, got.outcome) {
            (0, Outcome::Received(Some(1))) => b.recv_blocking(),
            (1, Outcome::Received(Some(2))) => a.recv_blocking(),
            _ => panic!("wrong case fired"),
        };
        assert!(other.is_some());
        sa.join().unwrap();
        sb.join().unwrap();
        assert_eq!(a.queued(), (0, 0));
        assert_eq!(b.queued(), (0, 0));
    });
}

#[test]
fn select_cancelled_by_another_case() {
    model(|| {
        let a = Chan::<i32>::new(1);
        let b = Chan::<i32>::new(0);
        let t = {
            let (a, b) = (a.clone(), b.clone());
            thread::spawn(move || {
                let mut rng = fastrand::Rng::with_seed(1);
                let mut s = Select::new();
                s.recv(Some(a));
                s.recv(Some(b));
                s.select_blocking(&mut rng)
            })
        };
        let closer = {
            let b = b.clone();
            thread::spawn(move || b.close().unwrap())
        };
        a.send_blocking(9).unwrap();
        let got = t.join().unwrap();
        closer.join().unwrap();
        match (got.index, got.outcome) {
            (0, Outcome::Received(Some(9))) => assert_eq!(a.len(), 0),
            (1, Outcome::Received(None)) => assert_eq!(a.len(), 1),
            _ => panic!("wrong case fired"),
        }
        assert_eq!(a.queued(), (0, 0));
        assert_eq!(b.queued(), (0, 0));
    });
}

#[test]
fn dropped_receive_races_a_sender() {
    model(|| {
        let c = Chan::<i32>::new(0);
        let s = {
            let c = c.clone();
            thread::spawn(move || c.try_send(3))
        };
        {
            let mut f = c.recv();
            let _ = poll_noop(&mut f);
        }
        match s.join().unwrap() {
            // Handed to the receive before it was dropped (or found it parked).
            Ok(()) => {}
            Err(TrySendError::Full(3)) => {}
            Err(_) => panic!("unexpected send result"),
        }
        assert_eq!(c.queued(), (0, 0));
    });
}

#[test]
fn try_recv_races_send_then_close_buffered() {
    model(|| {
        let c = Chan::<i32>::new(1);
        let s = {
            let c = c.clone();
            thread::spawn(move || {
                c.try_send(1).unwrap();
                c.close().unwrap();
            })
        };
        let r1 = c.try_recv();
        let r2 = c.try_recv();
        s.join().unwrap();
        // The value is buffered before the close, so `Closed` can only
        // follow its receipt, and it is received exactly once.
        let rest = c.try_recv();
        match (r1, r2, rest) {
            (Ok(1), Err(_), Err(TryRecvError::Closed)) => {}
            (Err(TryRecvError::Empty), Ok(1), Err(TryRecvError::Closed)) => {}
            (Err(TryRecvError::Empty), Err(TryRecvError::Empty), Ok(1)) => {}
            other => panic!("not linearizable: {other:?}"),
        }
        assert_eq!(c.try_recv(), Err(TryRecvError::Closed));
    });
}

#[test]
fn try_recv_races_send_and_close_unbuffered() {
    model(|| {
        let c = Chan::<i32>::new(0);
        let s = {
            let c = c.clone();
            thread::spawn(move || c.send_blocking(5).is_ok())
        };
        let closer = {
            let c = c.clone();
            thread::spawn(move || c.close().unwrap())
        };
        let r = c.try_recv();
        let sent = s.join().unwrap();
        closer.join().unwrap();
        // The send succeeds exactly when this receive took its value.
        assert_eq!(sent, r == Ok(5));
        assert!(matches!(
            r,
            Ok(5) | Err(TryRecvError::Empty) | Err(TryRecvError::Closed)
        ));
        assert_eq!(c.try_recv(), Err(TryRecvError::Closed));
        assert_eq!(c.queued(), (0, 0));
    });
}

// The lock-free ring of buffered channels (`ring.rs`): lock-free
// sends and receives racing a party that freezes the ring to park, close,
// or select.

#[test]
fn ring_push_races_a_parking_select() {
    model(|| {
        let a = Chan::<i32>::new(1);
        let b = Chan::<i32>::new(1);
        let t = {
            let (a, b) = (a.clone(), b.clone());
            thread::spawn(move || {
                let mut rng = fastrand::Rng::with_seed(3);
                let mut s = Select::new();
                s.recv(Some(a));
                s.recv(Some(b));
                s.select_blocking(&mut rng)
            })
        };
        // Lands in the open ring, or is handed to the parked select.
        a.try_send(1).unwrap();
        let got = t.join().unwrap();
        assert_eq!((got.index, got.outcome), (0, Outcome::Received(Some(1))));
        assert_eq!(a.len(), 0);
        assert_eq!(a.queued(), (0, 0));
        assert_eq!(b.queued(), (0, 0));
    });
}

#[test]
fn ring_pushes_race_close() {
    model(|| {
        let c = Chan::<i32>::new(2);
        let s = {
            let c = c.clone();
            thread::spawn(move || (c.try_send(1), c.try_send(2)))
        };
        c.close().unwrap();
        let (r1, r2) = s.join().unwrap();
        // Nothing is sent after a failed send (the close is permanent), and
        // every value sent before the close is drained, in order.
        let sent: Vec<i32> = match (r1, r2) {
            (Ok(()), Ok(())) => vec![1, 2],
            (Ok(()), Err(TrySendError::Closed(2))) => vec![1],
            (Err(TrySendError::Closed(1)), Err(TrySendError::Closed(2))) => vec![],
            other => panic!("not linearizable: {other:?}"),
        };
        let mut got = Vec::new();
        while let Ok(v) = c.try_recv() {
            got.push(v);
        }
        assert_eq!(got, sent);
        assert_eq!(c.try_recv(), Err(TryRecvError::Closed));
    });
}

#[test]
fn ring_sender_parks_on_full_buffer_and_fifo_holds() {
    model(|| {
        let c = Chan::<i32>::new(1);
        c.try_send(1).unwrap();
        let s = {
            let c = c.clone();
            thread::spawn(move || c.send_blocking(2))
        };
        // Lock-free, or through the lock taking the parked sender's value
        // into the buffer behind the head.
        assert_eq!(c.recv_blocking(), Some(1));
        assert_eq!(c.recv_blocking(), Some(2));
        assert!(s.join().unwrap().is_ok());
        assert_eq!(c.queued(), (0, 0));
        assert_eq!(c.try_recv(), Err(TryRecvError::Empty));
    });
}

/// Two blocking receivers' first attempts (`pop_first`) race each other
/// and a blocking sender's (`push_first`) on a one-slot ring: a first
/// attempt that finds its slot taken falls back to the full protocol, and
/// every value arrives once. (The sender is the model's main thread: with
/// the sender spawned and joined as well, loom 0.7 fails its own
/// `state.notified` assertion in `JoinHandle::join`, tokio-rs/loom#249,
/// on this code and on the code before the first attempts alike.)
#[test]
fn blocking_first_attempts_race_on_a_ring() {
    model(|| {
        let c = Chan::<i32>::new(1);
        let r = {
            let c = c.clone();
            thread::spawn(move || c.recv_blocking())
        };
        c.send_blocking(1).unwrap();
        c.send_blocking(2).unwrap();
        let mine = c.recv_blocking();
        let theirs = r.join().unwrap();
        let mut got: Vec<i32> = [mine, theirs].into_iter().flatten().collect();
        got.sort_unstable();
        assert_eq!(got, [1, 2], "lost or duplicated");
        assert_eq!(c.queued(), (0, 0));
    });
}

#[test]
fn ring_receivers_race_a_wrapping_sender() {
    model(|| {
        let c = Chan::<i32>::new(2);
        c.try_send(1).unwrap();
        c.try_send(2).unwrap();
        let r = {
            let c = c.clone();
            thread::spawn(move || c.try_recv())
        };
        // Wraps into the slot the other receiver frees, or finds it full.
        let sent3 = c.try_send(3);
        let mine = c.try_recv();
        let theirs = r.join().unwrap();
        let mut got: Vec<i32> = [mine, theirs].into_iter().flatten().collect();
        while let Ok(v) = c.try_recv() {
            got.push(v);
        }
        got.sort_unstable();
        let want = if sent3.is_ok() {
            vec![1, 2, 3]
        } else {
            vec![1, 2]
        };
        assert_eq!(got, want, "lost or duplicated");
    });
}

/// Drives a future on this loom thread, parking it while pending (the
/// channel wakes it through the waker with `unpark`).
fn block_on<F: Future + Unpin>(mut f: F) -> F::Output {
    struct Unpark(thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(std::sync::Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let std::task::Poll::Ready(v) = Pin::new(&mut f).poll(&mut cx) {
            return v;
        }
        thread::park();
    }
}

#[test]
fn wait_slot_reused_across_hand_offs() {
    // Two receives in a row park with one `WaitSlot`: the second reuses the
    // first's context only once the sender has let go of it.
    model(|| {
        let c = Chan::<i32>::new(0);
        let s = {
            let c = c.clone();
            thread::spawn(move || {
                c.send_blocking(1).unwrap();
                c.send_blocking(2).unwrap();
            })
        };
        let mut slot = WaitSlot::new();
        let a = block_on(c.recv_in(&mut slot));
        let b = block_on(c.recv_in(&mut slot));
        assert_eq!((a, b), (Some(1), Some(2)));
        s.join().unwrap();
        assert_eq!(c.queued(), (0, 0));
    });
}

#[test]
fn wait_slot_reused_after_a_dropped_wait() {
    // A receive parked with a slot is dropped while a sender races it (the
    // abort and the sender's choice are both made under the channel lock);
    // the next wait through the slot still gets exactly the values sent.
    model(|| {
        let c = Chan::<i32>::new(0);
        let s = {
            let c = c.clone();
            thread::spawn(move || c.try_send(3))
        };
        let mut slot = WaitSlot::new();
        let first = {
            let mut f = c.recv_in(&mut slot);
            match poll_noop(&mut f) {
                std::task::Poll::Ready(v) => v,
                std::task::Poll::Pending => None,
            }
        };
        // `try_send` never queues, so the single poll cannot have completed;
        // whether the dropped receive took the 3 (and dropped it) or the
        // send found no receiver, nothing is left queued.
        assert!(first.is_none());
        let _ = s.join().unwrap();
        assert_eq!(c.queued(), (0, 0));
        let t = {
            let c = c.clone();
            thread::spawn(move || c.send_blocking(4))
        };
        let second = block_on(c.recv_in(&mut slot));
        assert_eq!(second, Some(4));
        t.join().unwrap().unwrap();
        assert_eq!(c.queued(), (0, 0));
    });
}

/// Polls `f` once with a waker that does nothing, then drives it with
/// `block_on`: the second poll brings a new waker, which the future must
/// store (under the channel locks) so that a delivery racing it still
/// wakes this thread.
fn poll_then_block_on<F: Future + Unpin>(mut f: F) -> F::Output {
    if let std::task::Poll::Ready(v) = poll_noop(&mut f) {
        return v;
    }
    block_on(f)
}

/// Polls `f` once with a waker that does nothing.
fn poll_noop<F: Future + Unpin>(f: &mut F) -> std::task::Poll<F::Output> {
    Pin::new(f).poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn receive_polled_with_a_new_waker_while_a_sender_delivers() {
    // The sender's delivery (under the channel lock) races the receiver
    // replacing its waker (under the same lock): either the new waker is
    // woken, or the receiver finds the outcome after replacing it. A lost
    // wake-up would leave the receiver parked for ever (loom reports it).
    model(|| {
        let c = Chan::<i32>::new(0);
        let s = {
            let c = c.clone();
            thread::spawn(move || c.send_blocking(7))
        };
        let mut slot = WaitSlot::new();
        assert_eq!(poll_then_block_on(c.recv_in(&mut slot)), Some(7));
        s.join().unwrap().unwrap();
        assert_eq!(c.queued(), (0, 0));
    });
}

#[test]
fn select_polled_with_a_new_waker_while_a_sender_delivers() {
    // As above for a select: the new waker is stored under both channels'
    // locks; the select's stale entry on the other channel is removed.
    model(|| {
        let a = Chan::<i32>::new(0);
        let b = Chan::<i32>::new(0);
        let s = {
            let b = b.clone();
            thread::spawn(move || b.send_blocking(8))
        };
        let mut sel = Select::new();
        sel.recv_ref(Some(&a));
        let ib = sel.recv_ref(Some(&b));
        let mut rng = fastrand::Rng::with_seed(1);
        let got = poll_then_block_on(sel.select(&mut rng));
        assert_eq!(got.index, ib);
        assert_eq!(got.outcome, Outcome::Received(Some(8)));
        s.join().unwrap().unwrap();
        assert_eq!(a.queued(), (0, 0));
        assert_eq!(b.queued(), (0, 0));
    });
}

/// The interpreter's select without `default`: the ready path
/// (`select_ready_on`) where the task stands, then, if it fired nothing,
/// `select_on_locked` awaited.
fn ready_then_park(sel: &Select<'_, i32>, rng: &mut fastrand::Rng) -> crate::Selected<i32> {
    if let Some(got) = crate::select_ready_on(sel, rng) {
        return got;
    }
    let mut slot = WaitSlot::new();
    block_on(crate::select_on_locked(sel, rng, &mut slot))
}

#[test]
fn ready_path_then_locked_park_races_a_ring_push() {
    // The push lands before the ready path's probe (fired there), between
    // it and the locked pass (fired there), or after the select queued
    // (handed to it): never lost, never left queued.
    model(|| {
        let a = Chan::<i32>::new(1);
        let b = Chan::<i32>::new(1);
        let t = {
            let a = a.clone();
            thread::spawn(move || a.try_send(1).unwrap())
        };
        let mut sel = Select::new();
        let ia = sel.recv_ref(Some(&a));
        sel.recv_ref(Some(&b));
        let got = ready_then_park(&sel, &mut fastrand::Rng::with_seed(2));
        assert_eq!((got.index, got.outcome), (ia, Outcome::Received(Some(1))));
        t.join().unwrap();
        assert_eq!(a.len(), 0);
        assert_eq!(a.queued(), (0, 0));
        assert_eq!(b.queued(), (0, 0));
    });
}

#[test]
fn ready_path_then_locked_park_races_an_unbuffered_sender_and_a_close() {
    // An unbuffered sender and a close of the other case's channel race
    // the ready path and the park: the select gets the value or the
    // close, the sender's value is never lost (a sender left over is
    // received after the select).
    model(|| {
        let a = Chan::<i32>::new(0);
        let b = Chan::<i32>::new(0);
        let s = {
            let a = a.clone();
            thread::spawn(move || a.send_blocking(8))
        };
        let c = {
            let b = b.clone();
            thread::spawn(move || b.close().unwrap())
        };
        let mut sel = Select::new();
        let ia = sel.recv_ref(Some(&a));
        let ib = sel.recv_ref(Some(&b));
        let got = ready_then_park(&sel, &mut fastrand::Rng::with_seed(4));
        if got.index == ia {
            assert_eq!(got.outcome, Outcome::Received(Some(8)));
        } else {
            assert_eq!((got.index, got.outcome), (ib, Outcome::Received(None)));
            assert_eq!(a.recv_blocking(), Some(8));
        }
        s.join().unwrap().unwrap();
        c.join().unwrap();
        assert_eq!(a.queued(), (0, 0));
        assert_eq!(b.queued(), (0, 0));
    });
}
