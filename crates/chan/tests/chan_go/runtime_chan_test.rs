//! Ports of golang/go `src/runtime/chan_test.go`: TestChan,
//! TestNonblockRecvRace, TestNonblockSelectRace(2), TestSelfSelect,
//! TestSelectStress, TestChanSendInterface, TestPseudoRandomSend,
//! TestMultiConsumer, TestSelectDuplicateChannel, TestSelectFairness.
//! Go's `time.Sleep` "make sure it blocked" checks become exact checks
//! (a pending poll, or `queued()` showing the party parked).

use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::thread;

use weft_chan::{Chan, Outcome, Select, TryRecvError, TrySendError};

use crate::{gosched, run, Go};

fn pending<F: Future>(f: F) -> bool {
    let mut f = pin!(f);
    f.as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_pending()
}

/// Waits (yielding the thread) until `c` has `s` senders and `r` receivers parked.
fn wait_queued<T: Send>(c: &Chan<T>, s: usize, r: usize) {
    while c.queued() != (s, r) {
        thread::yield_now();
    }
}

#[test]
fn test_chan() {
    for cap in 0..20usize {
        // Receive from an empty channel blocks; non-blocking receive does not.
        let c = Chan::<i32>::new(cap);
        let r1 = thread::spawn({
            let c = c.clone();
            move || c.recv_blocking()
        });
        let r2 = thread::spawn({
            let c = c.clone();
            move || c.recv_blocking()
        });
        wait_queued(&c, 0, 2);
        assert!(
            !r1.is_finished() && !r2.is_finished(),
            "chan[{cap}]: receive from empty chan"
        );
        assert_eq!(c.try_recv(), Err(TryRecvError::Empty));
        c.send_blocking(0).unwrap();
        c.send_blocking(0).unwrap();
        assert_eq!((r1.join().unwrap(), r2.join().unwrap()), (Some(0), Some(0)));

        // Send to a full channel blocks; non-blocking send does not.
        let c = Chan::<i32>::new(cap);
        for i in 0..cap as i32 {
            c.try_send(i).unwrap();
        }
        let s = thread::spawn({
            let c = c.clone();
            move || c.send_blocking(0)
        });
        wait_queued(&c, 1, 0);
        assert!(!s.is_finished(), "chan[{cap}]: send to full chan");
        assert!(matches!(c.try_send(0), Err(TrySendError::Full(0))));
        c.recv_blocking().unwrap();
        s.join().unwrap().unwrap();

        // Receive zero (None) from a closed channel after draining it.
        let c = Chan::<i32>::new(cap);
        for i in 0..cap as i32 {
            c.try_send(i).unwrap();
        }
        c.close().unwrap();
        for i in 0..cap as i32 {
            assert_eq!(c.recv_blocking(), Some(i));
        }
        assert_eq!(c.recv_blocking(), None);
        assert_eq!(c.recv_blocking(), None);

        // Close unblocks receive.
        let c = Chan::<i32>::new(cap);
        let r = thread::spawn({
            let c = c.clone();
            move || c.recv_blocking()
        });
        wait_queued(&c, 0, 1);
        c.close().unwrap();
        assert_eq!(r.join().unwrap(), None);

        // 100 values arrive uncorrupted, in FIFO order (twice).
        let c = Chan::<i32>::new(cap);
        for _ in 0..2 {
            let s = thread::spawn({
                let c = c.clone();
                move || (0..100).for_each(|i| c.send_blocking(i).unwrap())
            });
            for i in 0..100 {
                assert_eq!(c.recv_blocking(), Some(i));
            }
            s.join().unwrap();
        }

        // P senders, P receivers: everything sent arrives, once.
        const P: usize = 4;
        const L: i32 = 100;
        let senders: Vec<_> = (0..P)
            .map(|_| {
                let c = c.clone();
                thread::spawn(move || (0..L).for_each(|i| c.send_blocking(i).unwrap()))
            })
            .collect();
        let receivers: Vec<_> = (0..P)
            .map(|_| {
                let c = c.clone();
                thread::spawn(move || {
                    let mut m = HashMap::new();
                    for _ in 0..L {
                        *m.entry(c.recv_blocking().unwrap()).or_insert(0) += 1;
                    }
                    m
                })
            })
            .collect();
        senders.into_iter().for_each(|h| h.join().unwrap());
        let mut recv: HashMap<i32, usize> = HashMap::new();
        for h in receivers {
            for (k, v) in h.join().unwrap() {
                *recv.entry(k).or_insert(0) += v;
            }
        }
        assert_eq!(recv.len(), L as usize, "chan[{cap}]");
        assert!(recv.values().all(|&v| v == P), "chan[{cap}]");

        // len and cap.
        let c = Chan::<i32>::new(cap);
        assert_eq!((c.len(), c.cap()), (0, cap));
        for i in 0..cap as i32 {
            c.try_send(i).unwrap();
        }
        assert_eq!((c.len(), c.cap()), (cap, cap));
    }
}

#[test]
fn test_nonblock_recv_race() {
    for _ in 0..200 {
        let c = Chan::new(1);
        c.try_send(1).unwrap();
        let t = thread::spawn({
            let c = c.clone();
            move || {
                let mut s = Select::new();
                s.recv(Some(c));
                assert!(
                    s.try_select(&mut fastrand::Rng::with_seed(1)).is_some(),
                    "chan is not ready"
                );
            }
        });
        c.close().unwrap();
        let _ = c.recv_blocking();
        t.join().unwrap();
    }
}

fn nonblock_select_race(close_c2: bool) {
    let done = Chan::new(1);
    for i in 0..300 {
        let c1 = Chan::new(1);
        let c2 = Chan::new(if close_c2 { 0 } else { 1 });
        c1.try_send(1).unwrap();
        let t = thread::spawn({
            let (c1, c2, done) = (c1.clone(), c2.clone(), done.clone());
            move || {
                let mut s = Select::new();
                s.recv(Some(c1));
                s.recv(Some(c2));
                let ready = s.try_select(&mut fastrand::Rng::with_seed(i)).is_some();
                done.send_blocking(ready).unwrap();
            }
        });
        if close_c2 {
            c2.close().unwrap();
        } else {
            c2.try_send(1).unwrap();
        }
        let _ = c1.try_recv();
        assert_eq!(done.recv_blocking(), Some(true), "no chan is ready");
        t.join().unwrap();
    }
}

#[test]
fn test_nonblock_select_race() {
    nonblock_select_race(false);
}

#[test]
fn test_nonblock_select_race2() {
    nonblock_select_race(true);
}

#[test]
fn test_self_select() {
    for cap in [0usize, 10] {
        let c = Chan::<usize>::new(cap);
        let hs: Vec<_> = (0..2usize)
            .map(|p| {
                let c = c.clone();
                thread::spawn(move || {
                    let mut rng = fastrand::Rng::with_seed(p as u64);
                    for i in 0..300 {
                        let mut s = Select::new();
                        if p == 0 || i % 2 == 0 {
                            s.send(Some(c.clone()), p);
                            s.recv(Some(c.clone()));
                        } else {
                            s.recv(Some(c.clone()));
                            s.send(Some(c.clone()), p);
                        }
                        if let Outcome::Received(Some(v)) = s.select_blocking(&mut rng).outcome {
                            assert!(!(cap == 0 && v == p), "self receive");
                        }
                    }
                })
            })
            .collect();
        hs.into_iter().for_each(|h| h.join().unwrap());
    }
}

#[test]
fn test_select_stress() {
    let c: [Chan<i32>; 4] = [Chan::new(0), Chan::new(0), Chan::new(2), Chan::new(3)];
    const N: usize = 1_000;
    let mut hs = Vec::new();
    for ck in &c {
        let ck2 = ck.clone();
        hs.push(thread::spawn(move || {
            (0..N).for_each(|_| ck2.send_blocking(0).unwrap())
        }));
        let ck = ck.clone();
        hs.push(thread::spawn(move || {
            (0..N).for_each(|_| assert!(ck.recv_blocking().is_some()))
        }));
    }
    for send in [true, false] {
        let c = c.clone();
        hs.push(thread::spawn(move || {
            let mut rng = fastrand::Rng::with_seed(u64::from(send));
            let mut n = [0usize; 4];
            let mut c1: [Option<Chan<i32>>; 4] = c.map(Some);
            for _ in 0..4 * N {
                let mut s = Select::new();
                for ch in &c1 {
                    if send {
                        s.send(ch.clone(), 0);
                    } else {
                        s.recv(ch.clone());
                    }
                }
                let k = s.select_blocking(&mut rng).index;
                n[k] += 1;
                if n[k] == N {
                    c1[k] = None;
                }
            }
        }));
    }
    hs.into_iter().for_each(|h| h.join().unwrap());
}

#[test]
fn test_chan_send_interface() {
    struct Mt;
    let c = Chan::<Box<dyn Any + Send>>::new(1);
    c.try_send(Box::new(Mt)).map_err(|_| "full").unwrap();
    let mut rng = fastrand::Rng::with_seed(0);
    let mut s = Select::new();
    s.send(Some(c.clone()), Box::new(Mt) as Box<dyn Any + Send>);
    assert!(s.try_select(&mut rng).is_none());
    let mut s = Select::new();
    s.send(Some(c.clone()), Box::new(Mt) as Box<dyn Any + Send>);
    s.send(Some(c.clone()), Box::new(Mt) as Box<dyn Any + Send>);
    assert!(s.try_select(&mut rng).is_none());
    assert!(c.try_recv().unwrap().is::<Mt>());
}

#[test]
fn test_pseudo_random_send() {
    const N: usize = 100;
    for cap in [0usize, N] {
        let c = Chan::<usize>::new(cap);
        let r = thread::spawn({
            let c = c.clone();
            move || {
                (0..N)
                    .map(|_| {
                        thread::yield_now();
                        c.recv_blocking().unwrap()
                    })
                    .collect::<Vec<_>>()
            }
        });
        let mut rng = fastrand::Rng::with_seed(cap as u64);
        for _ in 0..N {
            let mut s = Select::new();
            s.send(Some(c.clone()), 1);
            s.send(Some(c.clone()), 0);
            s.select_blocking(&mut rng);
        }
        let l = r.join().unwrap();
        let n1: usize = l.iter().sum();
        let n0 = N - n1;
        assert!(
            n0 > N / 10 && n1 > N / 10,
            "want pseudorandom, got {n0} zeros and {n1} ones (cap {cap})"
        );
    }
}

#[test]
fn test_multi_consumer() {
    const NWORK: usize = 23;
    const NITER: usize = 20_000;
    const PN: [usize; 10] = [2, 3, 7, 11, 13, 17, 19, 23, 27, 31];
    run(|go: Go| async move {
        let q = Chan::<usize>::new(NWORK * 3);
        let r = Chan::<usize>::new(NWORK * 3);
        let wg = Chan::<()>::new(NWORK);
        for w in 0..NWORK {
            let (q, r, wg) = (q.clone(), r.clone(), wg.clone());
            go.go(async move {
                while let Some(v) = q.recv().await {
                    // Mess with the FIFO-ish nature of the queue.
                    if PN[w % PN.len()] == v {
                        gosched().await;
                    }
                    r.send(v).await.unwrap();
                }
                wg.send(()).await.unwrap();
            });
        }
        let expect: usize = (0..NITER).map(|i| PN[i % PN.len()]).sum();
        go.go({
            let r = r.clone();
            async move {
                for i in 0..NITER {
                    q.send(PN[i % PN.len()]).await.unwrap();
                }
                q.close().unwrap();
                for _ in 0..NWORK {
                    wg.recv().await;
                }
                r.close().unwrap();
            }
        });
        let (mut n, mut s) = (0, 0);
        while let Some(v) = r.recv().await {
            n += 1;
            s += v;
        }
        assert_eq!((n, s), (NITER, expect));
    });
}

#[test]
fn test_select_duplicate_channel() {
    run(|go: Go| async move {
        let c = Chan::<i32>::new(0);
        let d = Chan::<i32>::new(0);
        let e = Chan::<i32>::new(0);
        // Task A: queued twice on c, once on d.
        go.go({
            let (c, d, e) = (c.clone(), d.clone(), e.clone());
            async move {
                let mut s = Select::new();
                s.recv(Some(c.clone()));
                s.recv(Some(c));
                s.recv(Some(d));
                s.select(&mut fastrand::Rng::with_seed(0)).await;
                e.send(9).await.unwrap();
            }
        });
        gosched().await;
        assert_eq!(c.queued(), (0, 2));
        // Task B: queued on c after A.
        go.go({
            let c = c.clone();
            async move {
                assert_eq!(c.recv().await, Some(8));
            }
        });
        gosched().await;
        d.send(7).await.unwrap(); // wakes A, which dequeues itself from c
        e.recv().await;
        assert_eq!(c.queued(), (0, 1));
        c.send(8).await.unwrap(); // must wake B
    });
}

#[test]
fn test_select_fairness() {
    const TRIALS: usize = 10_000;
    run(|go: Go| async move {
        let c1 = Chan::<u8>::new(TRIALS + 1);
        let c2 = Chan::<u8>::new(TRIALS + 1);
        for _ in 0..=TRIALS {
            c1.try_send(1).unwrap();
            c2.try_send(2).unwrap();
        }
        let c3 = Chan::<u8>::new(0);
        let c4 = Chan::<u8>::new(0);
        let out = Chan::<u8>::new(0);
        let done = Chan::<u8>::new(0);
        go.go({
            let (out, done) = (out.clone(), done.clone());
            async move {
                let mut rng = fastrand::Rng::with_seed(42);
                loop {
                    let mut s = Select::new();
                    for c in [&c3, &c4, &c1, &c2] {
                        s.recv(Some(c.clone()));
                    }
                    let Outcome::Received(Some(b)) = s.select(&mut rng).await.outcome else {
                        panic!("closed")
                    };
                    let mut s = Select::new();
                    s.send(Some(out.clone()), b);
                    s.recv(Some(done.clone()));
                    if s.select(&mut rng).await.index == 1 {
                        return;
                    }
                }
            }
        });
        let (mut cnt1, mut cnt2) = (0usize, 0usize);
        for _ in 0..TRIALS {
            match out.recv().await {
                Some(1) => cnt1 += 1,
                Some(2) => cnt2 += 1,
                other => panic!("unexpected value {other:?} on channel"),
            }
        }
        // Fair: cnt1 / TRIALS within 4.5 sigma of 0.5.
        let r = cnt1 as f64 / TRIALS as f64;
        let e = (r - 0.5).abs();
        assert!(
            e <= 4.5 / (TRIALS as f64).sqrt(),
            "unfair select: {cnt1}, {cnt2}"
        );
        done.close().unwrap();
    });
}

#[test]
fn pending_helper_sees_blocked_ops() {
    let c = Chan::<i32>::new(0);
    assert!(pending(c.recv()));
    assert!(matches!(
        std::pin::pin!(c.send(1)).poll(&mut Context::from_waker(Waker::noop())),
        Poll::Pending
    ));
    assert_eq!(c.queued(), (0, 0));
}
