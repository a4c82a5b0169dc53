//! Port of golang/go `test/chan/sieve2.go`: an Eratosthenes sieve over odd
//! candidates that merges channels of multiples through a heap, with a
//! feedback loop buffered by a proxy task whose select disables its send
//! case with a nil channel when its buffer is empty. Checks the primes
//! below 100.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use weft_chan::{Chan, Outcome, Select};

use crate::sieve1::PRIMES;
use crate::{run, Go};

/// Odd numbers from 5.
fn odds(go: &Go) -> Chan<u32> {
    let out = Chan::new(50);
    let o = out.clone();
    go.go(async move {
        let mut n = 5;
        while o.send(n).await.is_ok() {
            n += 2;
        }
    });
    out
}

/// Odd multiples of `p` from `p * p`.
fn multiples(go: &Go, p: u32) -> Chan<u32> {
    let out = Chan::new(10);
    let o = out.clone();
    go.go(async move {
        let mut n = p * p;
        while o.send(n).await.is_ok() {
            n += 2 * p;
        }
    });
    out
}

/// A channel forwarding to `out` through an unbounded buffer, so sending
/// to it never blocks for long.
fn sendproxy(go: &Go, out: Chan<u32>) -> Chan<u32> {
    let proxy = Chan::new(10);
    let p = proxy.clone();
    go.go(async move {
        let mut buf: VecDeque<u32> = VecDeque::new();
        let mut rng = fastrand::Rng::with_seed(2);
        loop {
            let mut s = Select::new();
            let recv = s.recv(Some(p.clone()));
            // Buffer empty: a nil channel disables the send case.
            match buf.front() {
                Some(&e) => s.send(Some(out.clone()), e),
                None => s.send(None, 0),
            };
            let got = s.select(&mut rng).await;
            match got.outcome {
                Outcome::Received(Some(e)) if got.index == recv => buf.push_back(e),
                Outcome::Sent => {
                    buf.pop_front();
                }
                _ => return,
            }
        }
    });
    proxy
}

fn sieve(go: &Go) -> Chan<u32> {
    let out = Chan::new(10);
    out.try_send(2).unwrap();
    out.try_send(3).unwrap();
    let composites = Chan::new(50);
    let primes = Chan::new(10);
    primes.try_send(3).unwrap();

    // Merge the channels of multiples of `primes` into `composites`.
    go.go({
        let (go, primes, composites) = (go.clone(), primes.clone(), composites.clone());
        async move {
            let mut heap: BinaryHeap<Reverse<(u32, usize)>> = BinaryHeap::new();
            let mut chans: Vec<Chan<u32>> = Vec::new();
            let mut min = 15;
            loop {
                let Some(p) = primes.recv().await else { return };
                let m = multiples(&go, p);
                let Some(head) = m.recv().await else { return };
                let advance = async |heap: &mut BinaryHeap<Reverse<(u32, usize)>>| {
                    let Reverse((h, i)) = heap.pop()?;
                    let next = chans[i].recv().await?;
                    heap.push(Reverse((next, i)));
                    Some(h)
                };
                while min < head {
                    if composites.send(min).await.is_err() {
                        return;
                    }
                    let Some(h) = advance(&mut heap).await else {
                        return;
                    };
                    min = h;
                }
                while min == head {
                    let Some(h) = advance(&mut heap).await else {
                        return;
                    };
                    min = h;
                }
                if composites.send(head).await.is_err() {
                    return;
                }
                let Some(next) = m.recv().await else { return };
                chans.push(m);
                heap.push(Reverse((next, chans.len() - 1)));
            }
        }
    });

    // Sieve `composites` out of the candidates.
    go.go({
        let (go, out) = (go.clone(), out.clone());
        async move {
            let primes = sendproxy(&go, primes);
            let candidates = odds(&go);
            let Some(mut p) = candidates.recv().await else {
                return;
            };
            loop {
                let Some(c) = composites.recv().await else {
                    return;
                };
                while p < c {
                    if primes.send(p).await.is_err() || out.send(p).await.is_err() {
                        return;
                    }
                    let Some(next) = candidates.recv().await else {
                        return;
                    };
                    p = next;
                }
                if p == c {
                    let Some(next) = candidates.recv().await else {
                        return;
                    };
                    p = next;
                }
            }
        }
    });
    out
}

#[test]
fn sieve2() {
    run(|go: Go| async move {
        let primes = sieve(&go);
        for want in PRIMES {
            assert_eq!(primes.recv().await, Some(want));
        }
    });
}
