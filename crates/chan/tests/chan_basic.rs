//! Behaviour of `weft_chan` one rule at a time: Go's channel rules (spec
//! section 6), the error messages, select's corner cases, cancellation
//! safety and wake-ups through `Waker`.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;

use weft_chan::{
    block_forever, Chan, CloseError, Outcome, Select, SendError, TryRecvError, TrySendError,
    WaitSlot,
};

/// A waker that counts its wake-ups.
struct Count(AtomicUsize);
impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}
fn counter() -> (Arc<Count>, Waker) {
    let c = Arc::new(Count(AtomicUsize::new(0)));
    (c.clone(), Waker::from(c))
}

fn poll_once<F: Future + Unpin>(f: &mut F, w: &Waker) -> Poll<F::Output> {
    std::pin::Pin::new(f).poll(&mut Context::from_waker(w))
}

#[test]
fn buffered_fifo_len_cap() {
    let c = Chan::new(3);
    assert_eq!(c.cap(), 3);
    for i in 0..3 {
        c.try_send(i).unwrap();
    }
    assert_eq!(c.len(), 3);
    assert!(matches!(c.try_send(9), Err(TrySendError::Full(9))));
    assert_eq!(c.try_recv(), Ok(0));
    assert_eq!(c.recv_blocking(), Some(1));
    assert_eq!(c.len(), 1);
}

#[test]
fn unbuffered_try_forms_need_a_partner() {
    let c = Chan::<i32>::new(0);
    assert!(matches!(c.try_send(1), Err(TrySendError::Full(1))));
    assert_eq!(c.try_recv(), Err(TryRecvError::Empty));
    assert_eq!(c.len(), 0);
    assert_eq!(c.cap(), 0);
}

#[test]
fn close_rules_and_messages() {
    let c = Chan::new(2);
    c.try_send(1).unwrap();
    c.close().unwrap();
    assert_eq!(c.close(), Err(CloseError));
    assert_eq!(CloseError.to_string(), "close of closed channel");
    let e = c.send_blocking(5).unwrap_err();
    assert_eq!(e.0, 5);
    assert_eq!(e.to_string(), "send on closed channel");
    assert!(matches!(c.try_send(6), Err(TrySendError::Closed(6))));
    assert_eq!(c.recv_blocking(), Some(1));
    assert_eq!(c.recv_blocking(), None);
    assert_eq!(c.try_recv(), Err(TryRecvError::Closed));
}

#[test]
fn close_wakes_blocked_receivers_and_senders() {
    let (cnt, w) = counter();
    let r = Chan::<i32>::new(0);
    let mut f1 = r.recv();
    let mut f2 = r.recv();
    assert!(poll_once(&mut f1, &w).is_pending());
    assert!(poll_once(&mut f2, &w).is_pending());
    r.close().unwrap();
    assert_eq!(cnt.0.load(Ordering::SeqCst), 2);
    assert_eq!(poll_once(&mut f1, &w), Poll::Ready(None));
    assert_eq!(poll_once(&mut f2, &w), Poll::Ready(None));

    let s = Chan::new(1);
    s.try_send(0).unwrap();
    let mut f = s.send(7);
    assert!(poll_once(&mut f, &w).is_pending());
    s.close().unwrap();
    assert_eq!(cnt.0.load(Ordering::SeqCst), 3);
    assert_eq!(poll_once(&mut f, &w), Poll::Ready(Err(SendError(7))));
    assert_eq!(s.try_recv(), Ok(0));
    assert_eq!(s.try_recv(), Err(TryRecvError::Closed));
}

#[test]
fn blocked_senders_are_served_in_order() {
    let (_, w) = counter();
    let c = Chan::new(1);
    c.try_send(0).unwrap();
    let mut fs: Vec<_> = (1..5).map(|i| c.send(i)).collect();
    for f in &mut fs {
        assert!(poll_once(f, &w).is_pending());
    }
    for want in 0..5 {
        assert_eq!(c.try_recv(), Ok(want));
    }
    for f in &mut fs {
        assert_eq!(poll_once(f, &w), Poll::Ready(Ok(())));
    }
}

#[test]
fn dropped_future_leaves_no_waiter() {
    let (_, w) = counter();
    let c = Chan::<i32>::new(0);
    {
        let mut f = c.recv();
        assert!(poll_once(&mut f, &w).is_pending());
    }
    // The dropped receiver must not take the value.
    assert_eq!(c.queued(), (0, 0));
    assert!(matches!(c.try_send(1), Err(TrySendError::Full(1))));
    {
        let mut f = c.send(3);
        assert!(poll_once(&mut f, &w).is_pending());
    }
    assert_eq!(c.try_recv(), Err(TryRecvError::Empty));
}

#[test]
fn select_picks_only_ready_cases_and_default() {
    let mut rng = fastrand::Rng::with_seed(1);
    let a = Chan::new(1);
    let b = Chan::new(1);
    let mut s = Select::new();
    s.recv(Some(a.clone()));
    s.recv(Some(b.clone()));
    s.recv(None);
    assert!(s.try_select(&mut rng).is_none());
    b.try_send(4).unwrap();
    let got = s.try_select(&mut rng).unwrap();
    assert_eq!(got.index, 1);
    assert_eq!(got.outcome, Outcome::Received(Some(4)));
}

#[test]
fn select_send_on_closed_is_ready() {
    let mut rng = fastrand::Rng::with_seed(2);
    let a = Chan::new(0);
    a.close().unwrap();
    let mut s = Select::new();
    s.recv(None);
    s.send(Some(a), 5);
    let got = s.try_select(&mut rng).unwrap();
    assert_eq!(got.index, 1);
    assert_eq!(got.outcome, Outcome::SendClosed(5));
}

#[test]
fn blocked_select_fires_one_case_and_cleans_up() {
    let mut rng = fastrand::Rng::with_seed(3);
    let (cnt, w) = counter();
    let a = Chan::<i32>::new(0);
    let b = Chan::<i32>::new(0);
    let mut s = Select::new();
    s.recv(Some(a.clone()));
    s.send(Some(b.clone()), 10);
    s.recv(Some(a.clone()));
    let mut f = s.select(&mut rng);
    assert!(poll_once(&mut f, &w).is_pending());
    a.try_send(1).unwrap();
    assert_eq!(cnt.0.load(Ordering::SeqCst), 1);
    let got = match poll_once(&mut f, &w) {
        Poll::Ready(s) => s,
        Poll::Pending => panic!("select not woken"),
    };
    // Cases 0 and 2 both receive from `a`: either may be met first.
    assert!(got.index == 0 || got.index == 2);
    assert_eq!(got.outcome, Outcome::Received(Some(1)));
    // No stale entries: nothing waits on `a` or `b` any more.
    assert_eq!(a.queued(), (0, 0));
    assert_eq!(b.queued(), (0, 0));
    assert!(matches!(a.try_send(2), Err(TrySendError::Full(2))));
    assert_eq!(b.try_recv(), Err(TryRecvError::Empty));
}

#[test]
fn select_send_and_recv_on_one_channel_does_not_match_itself() {
    let mut rng = fastrand::Rng::with_seed(4);
    let (_, w) = counter();
    let c = Chan::<i32>::new(0);
    let mut s = Select::new();
    s.send(Some(c.clone()), 1);
    s.recv(Some(c.clone()));
    let mut f = s.select(&mut rng);
    assert!(poll_once(&mut f, &w).is_pending());
    assert!(poll_once(&mut f, &w).is_pending());
    assert_eq!(c.try_recv(), Ok(1));
    assert!(matches!(poll_once(&mut f, &w), Poll::Ready(s) if s.index == 0));
}

#[test]
fn self_select_pairs_two_threads() {
    let c = Chan::<i32>::new(0);
    let hs: Vec<_> = (0..2)
        .map(|t| {
            let c = c.clone();
            thread::spawn(move || {
                let mut rng = fastrand::Rng::with_seed(t);
                let mut s = Select::new();
                s.send(Some(c.clone()), t as i32);
                s.recv(Some(c));
                s.select_blocking(&mut rng)
            })
        })
        .collect();
    let r: Vec<_> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    let sends = r.iter().filter(|s| s.outcome == Outcome::Sent).count();
    assert_eq!(sends, 1);
}

#[test]
fn nil_select_and_block_forever_never_finish() {
    let mut rng = fastrand::Rng::with_seed(5);
    let (cnt, w) = counter();
    let mut s = Select::<i32>::new();
    s.recv(None);
    s.send(None, 1);
    assert!(s.try_select(&mut rng).is_none());
    let mut f = s.select(&mut rng);
    assert!(poll_once(&mut f, &w).is_pending());
    let mut empty = Select::<i32>::new().select(&mut rng);
    assert!(poll_once(&mut empty, &w).is_pending());
    let mut bf = pin!(block_forever());
    assert!(bf.as_mut().poll(&mut Context::from_waker(&w)).is_pending());
    assert_eq!(cnt.0.load(Ordering::SeqCst), 0);
}

#[test]
fn blocking_forms_across_threads() {
    let c = Chan::new(0);
    let p = {
        let c = c.clone();
        thread::spawn(move || {
            for i in 0..100 {
                c.send_blocking(i).unwrap();
            }
            c.close().unwrap();
        })
    };
    let got: Vec<i32> = std::iter::from_fn(|| c.recv_blocking()).collect();
    p.join().unwrap();
    assert_eq!(got, (0..100).collect::<Vec<_>>());
}

#[test]
fn ids_are_identity() {
    let a = Chan::<u8>::new(0);
    let b = Chan::<u8>::new(0);
    assert_eq!(a.id(), a.clone().id());
    assert_ne!(a.id(), b.id());
    assert_eq!(a, a.clone());
    assert_ne!(a, b);
}

/// The lock-free pass of a select must not favour buffered cases: with a
/// value buffered on `a` and a sender parked on unbuffered `b`, both cases
/// are ready and each must fire about half the time.
#[test]
fn select_is_fair_between_buffered_and_unbuffered_cases() {
    let a = Chan::new(1);
    let b = Chan::new(0);
    let (_, w) = counter();
    let mut rng = fastrand::Rng::with_seed(7);
    let mut fired = [0usize; 2];
    for i in 0..400 {
        if a.is_empty() {
            a.try_send(i).unwrap();
        }
        let mut parked = b.send(i);
        assert!(poll_once(&mut parked, &w).is_pending());
        let mut s = Select::new();
        s.recv(Some(a.clone()));
        s.recv(Some(b.clone()));
        let got = s.try_select(&mut rng).expect("both cases are ready");
        fired[got.index] += 1;
        if got.index == 0 {
            drop(parked); // withdraws the parked send
        } else {
            assert!(poll_once(&mut parked, &w).is_ready());
        }
        assert_eq!(b.queued(), (0, 0));
    }
    assert!(fired.iter().all(|&n| n > 140), "unfair: {fired:?}");
}

/// Capacities above the ring's limit keep a buffer under the lock: the
/// same rules hold (the model test covers them too).
#[test]
fn very_large_capacity_channel() {
    let c = Chan::new((1 << 16) + 1);
    for i in 0..100 {
        c.try_send(i).unwrap();
    }
    assert_eq!(c.len(), 100);
    c.close().unwrap();
    assert!(matches!(c.try_send(0), Err(TrySendError::Closed(0))));
    assert_eq!(
        (0..100)
            .map(|_| c.recv_blocking())
            .collect::<Option<Vec<_>>>(),
        Some((0..100).collect())
    );
    assert_eq!(c.try_recv(), Err(TryRecvError::Closed));
}

/// A cap-1 channel is always empty (its send case ready) or full (its
/// receive case ready): a select with a default over both must fire,
/// however another thread toggles the channel between its looks at the
/// two cases (the lock-free pass must see one instant, or lock).
#[test]
fn select_over_both_ends_of_a_toggled_channel_always_fires() {
    let a = Chan::new(1);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let toggler = {
        let (a, stop) = (a.clone(), stop.clone());
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = a.try_send(1);
                let _ = a.try_recv();
            }
        })
    };
    let mut rng = fastrand::Rng::with_seed(9);
    for i in 0..20_000 {
        let mut s = Select::new();
        s.recv(Some(a.clone()));
        s.send(Some(a.clone()), 2);
        assert!(
            s.try_select(&mut rng).is_some(),
            "no case fired at round {i}"
        );
    }
    stop.store(true, Ordering::Relaxed);
    toggler.join().unwrap();
}

#[test]
fn wait_slot_counts_the_waits_that_parked() {
    // The interpreter starts a task's next time slice only after a wait that
    // parked; `waits` must count exactly those.
    let (_, w) = counter();
    let c = Chan::new(1);
    let mut slot = WaitSlot::new();
    // Completes at once (room in the buffer, then a value): no wait.
    assert!(poll_once(&mut pin!(c.send_in(1, &mut slot)), &w).is_ready());
    assert!(poll_once(&mut pin!(c.recv_in(&mut slot)), &w).is_ready());
    assert_eq!(slot.waits(), 0);
    // Parks on an empty channel, then completes when a value arrives.
    {
        let mut r = pin!(c.recv_in(&mut slot));
        assert!(poll_once(&mut r, &w).is_pending());
        c.try_send(7).unwrap();
        assert!(matches!(poll_once(&mut r, &w), Poll::Ready(Some(7))));
    }
    assert_eq!(slot.waits(), 1);
    // A select that parks counts once, however many cases it queued on.
    let d = Chan::new(0);
    {
        let mut rng = fastrand::Rng::with_seed(1);
        let mut sel = Select::new();
        sel.recv(Some(c.clone()));
        sel.recv(Some(d.clone()));
        let mut s = pin!(sel.select_in(&mut rng, &mut slot));
        assert!(poll_once(&mut s, &w).is_pending());
    }
    assert_eq!(slot.waits(), 2);
}

/// One party of `many_withdrawals_from_long_queues_keep_fifo`.
enum Party<'a> {
    Recv(weft_chan::RecvFut<'a, u32>),
    Send(weft_chan::SendFut<'a, u32>),
    Select(weft_chan::SelectFut<'a, u32>),
}

impl Party<'_> {
    /// Polls once: the value received, `Some(u32::MAX)` for a send or a
    /// select's `d` case, `None` while waiting.
    fn poll(&mut self, w: &Waker) -> Option<u32> {
        match self {
            Party::Recv(f) => match poll_once(f, w) {
                Poll::Ready(v) => Some(v.expect("open channel")),
                Poll::Pending => None,
            },
            Party::Send(f) => match poll_once(f, w) {
                Poll::Ready(r) => r.map(|()| u32::MAX).ok(),
                Poll::Pending => None,
            },
            Party::Select(f) => match poll_once(f, w) {
                Poll::Ready(s) => match s.outcome {
                    Outcome::Received(Some(v)) if s.index == 0 => Some(v),
                    _ => Some(u32::MAX),
                },
                Poll::Pending => None,
            },
        }
    }
}

/// Long queues with parties leaving from the middle (issue 26: each
/// withdrawal used to scan the whole queue): 3,000 receivers on `c` (plain,
/// with a `WaitSlot`, or a select that also waits on `d`) and 1,000
/// senders on `s`. In a random order the test drops parties (cancelled
/// futures), wakes selects through `d` (their entries on `c` are left
/// behind and withdrawn), and sends on `c` / receives on `s`, checking each
/// time that the oldest party still waiting is the one served. At the end
/// every queue is empty.
#[test]
fn many_withdrawals_from_long_queues_keep_fifo() {
    const RECEIVERS: usize = 3000;
    const SENDERS: usize = 1000;
    let (c, d, s) = (
        Chan::<u32>::new(0),
        Chan::<u32>::new(0),
        Chan::<u32>::new(0),
    );
    let w = Waker::noop();
    let mut rng = fastrand::Rng::with_seed(26);
    let mut slots: Vec<WaitSlot<u32>> = (0..RECEIVERS).map(|_| WaitSlot::new()).collect();
    let mut parties: Vec<Option<Party<'_>>> = Vec::new();
    // Arrival order of the waiting parties on `c` and on `s` (indices).
    let mut on_c: std::collections::VecDeque<usize> = Default::default();
    let mut on_s: std::collections::VecDeque<usize> = Default::default();
    for (i, slot) in slots.iter_mut().enumerate() {
        let mut p = match i % 3 {
            0 => Party::Recv(c.recv()),
            1 => Party::Recv(c.recv_in(slot)),
            _ => {
                let mut sel = Select::new();
                sel.recv_ref(Some(&c));
                sel.recv_ref(Some(&d));
                Party::Select(sel.select(&mut rng))
            }
        };
        assert_eq!(p.poll(w), None);
        parties.push(Some(p));
        on_c.push_back(i);
    }
    for i in 0..SENDERS {
        let mut p = Party::Send(s.send(i as u32));
        assert_eq!(p.poll(w), None);
        parties.push(Some(p));
        on_s.push_back(RECEIVERS + i);
    }
    assert_eq!(c.queued(), (0, RECEIVERS));
    assert_eq!(s.queued(), (SENDERS, 0));
    let mut next = 0u32;
    while !on_c.is_empty() || !on_s.is_empty() {
        match rng.u8(..8) {
            // Drop a waiting party from anywhere.
            0..=3 => {
                let q = if on_s.is_empty() || (!on_c.is_empty() && rng.bool()) {
                    &mut on_c
                } else {
                    &mut on_s
                };
                let i = q.remove(rng.usize(..q.len())).unwrap();
                parties[i] = None;
            }
            // A send on `c`: the oldest receiver still waiting gets it.
            4 if !on_c.is_empty() => {
                next += 1;
                c.try_send(next).expect("a receiver waits");
                let i = on_c.pop_front().unwrap();
                let p = parties[i].as_mut().unwrap();
                assert_eq!(p.poll(w), Some(next), "party {i} is the oldest on c");
                parties[i] = None;
            }
            // A select won through `d`: its entry on `c` is withdrawn.
            5 => {
                let Some(k) = on_c.iter().position(|&i| i % 3 == 2) else {
                    continue;
                };
                d.try_send(0).expect("a select waits on d");
                let i = on_c.remove(k).unwrap();
                assert_eq!(parties[i].as_mut().unwrap().poll(w), Some(u32::MAX));
                parties[i] = None;
            }
            // A receive on `s`: the oldest sender still waiting is served.
            6 if !on_s.is_empty() => {
                let i = on_s.pop_front().unwrap();
                assert_eq!(s.try_recv(), Ok((i - RECEIVERS) as u32), "oldest sender");
                assert_eq!(parties[i].as_mut().unwrap().poll(w), Some(u32::MAX));
                parties[i] = None;
            }
            _ => {}
        }
        assert_eq!(c.queued(), (0, on_c.len()));
        assert_eq!(s.queued(), (on_s.len(), 0));
    }
    drop(parties);
    for ch in [&c, &d, &s] {
        assert_eq!(ch.queued(), (0, 0));
    }
    assert_eq!(c.try_send(0), Err(TrySendError::Full(0)));
}

#[test]
fn readiness_reads_without_changing_and_ignores_stale_entries() {
    let (_, w) = counter();
    // Buffered: room to send, a value to receive, closed is ready both ways.
    let c = Chan::new(1);
    assert!(c.send_ready() && !c.recv_ready());
    c.try_send(1).unwrap();
    assert!(!c.send_ready() && c.recv_ready());
    assert_eq!(c.len(), 1, "asking changed nothing");
    // Unbuffered: ready only with a party waiting.
    let u: Chan<u32> = Chan::new(0);
    assert!(!u.send_ready() && !u.recv_ready());
    let mut slot = WaitSlot::new();
    {
        let mut r = u.recv_in(&mut slot);
        assert!(poll_once(&mut r, &w).is_pending());
        assert!(u.send_ready() && !u.recv_ready());
    }
    assert!(!u.send_ready(), "the dropped receive left");
    // A select blocked on a and b fires through a: its entry still in b is
    // stale until the select's owner removes it, and does not count.
    let a: Chan<u32> = Chan::new(0);
    let b: Chan<u32> = Chan::new(0);
    let mut sel = Select::new();
    sel.recv_ref(Some(&a));
    sel.recv_ref(Some(&b));
    let mut fut = sel.select(&mut fastrand::Rng::with_seed(1));
    assert!(poll_once(&mut fut, &w).is_pending());
    assert!(a.send_ready() && b.send_ready());
    a.try_send(5).unwrap();
    assert_eq!(b.queued(), (0, 1), "the stale entry is still there");
    assert!(!b.send_ready(), "but its party no longer waits");
    match poll_once(&mut fut, &w) {
        Poll::Ready(s) => assert_eq!(s.outcome, Outcome::Received(Some(5))),
        Poll::Pending => panic!("the select fired"),
    }
    drop(fut);
    assert_eq!(b.queued(), (0, 0));
    c.close().unwrap();
    assert!(c.send_ready() && c.recv_ready());
}

#[test]
fn poll_sent_reports_taken_or_closed_and_drops_the_value() {
    let (_, w) = counter();
    let mut cx = Context::from_waker(&w);
    // Taken by a receiver: true.
    let c = Chan::<Arc<i32>>::new(0);
    let v = Arc::new(5);
    let mut f = c.send(v.clone());
    assert!(f.poll_sent(&mut cx).is_pending());
    assert_eq!(c.try_recv().as_deref(), Ok(&5));
    assert_eq!(f.poll_sent(&mut cx), Poll::Ready(true));
    drop(f);
    // Closed while queued: false, and the value is dropped, not leaked.
    let mut f = c.send(v.clone());
    assert!(f.poll_sent(&mut cx).is_pending());
    assert_eq!(Arc::strong_count(&v), 2);
    c.close().unwrap();
    assert_eq!(f.poll_sent(&mut cx), Poll::Ready(false));
    assert_eq!(Arc::strong_count(&v), 1);
    // Buffered at once: true on the first poll.
    let b = Chan::with_locked_buffer(1);
    let mut f = b.send(1);
    assert_eq!(f.poll_sent(&mut cx), Poll::Ready(true));
}

#[test]
fn send_blocks_now_is_exact_on_an_idle_channel() {
    let (_, w) = counter();
    // Unbuffered: blocks until a receiver waits.
    let u = Chan::<i32>::new(0);
    assert!(u.send_blocks_now());
    let mut r = u.recv();
    assert!(poll_once(&mut r, &w).is_pending());
    assert!(!u.send_blocks_now());
    drop(r);
    assert!(u.send_blocks_now());
    // A buffer under the lock: blocks once full; a closed channel does
    // not block (the send fails).
    let l = Chan::with_locked_buffer(2);
    assert!(!l.send_blocks_now());
    l.try_send(1).unwrap();
    l.try_send(2).unwrap();
    assert!(l.send_blocks_now());
    l.close().unwrap();
    assert!(!l.send_blocks_now());
    // A ring answers only through a send: never "certainly blocks".
    let g = Chan::new(1);
    g.try_send(1).unwrap();
    assert!(!g.send_blocks_now());
    assert_eq!(g.try_send(2), Err(TrySendError::Full(2)));
}
