//! Loom model checks of the rendezvous and of the sliced job: every
//! interleaving of the small scenarios below with at most 4 preemptions
//! (set LOOM_MAX_PREEMPTIONS to change it). Members are loom threads
//! running their calls with `block_on`, which parks the thread while the
//! call is pending: a lost wake-up leaves a member parked for ever, which
//! loom reports as a deadlock, so every scenario fails if a wake is lost.
//! Run:
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release -p weft-coll --lib loom_tests`
//! (CI runs them in release, which is faster than the dev profile).
//!
//! Scenarios: the small path with 2 and 3 members; the sliced path with 2
//! and 3 members (the
//! last arriver and a helper racing for chunks, the finisher delivering
//! to a member that is still helping or already parked); a fast member
//! starting the next step while a slow one still collects the last; a
//! call dropped after it deposited, on both paths; two calls on copies of
//! one member.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use ::loom::thread;

use crate::group::block_on;
use crate::{group_tuned, Data, Member, Op, Outcome, Reduce, Tuning};

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = ::loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(4);
    }
    b.check(f);
}

/// Every tensor all-reduce takes the sliced path, one element per chunk.
const SLICED: Tuning = Tuning {
    small_elems: 1,
    chunk_elems: 1,
    progress: None,
    handoff: None,
};

/// Every tensor all-reduce takes the small path.
const SMALL: Tuning = Tuning {
    small_elems: usize::MAX,
    chunk_elems: 1,
    progress: None,
    handoff: None,
};

fn ty(s: &'static str) -> Cow<'static, str> {
    Cow::Borrowed(s)
}

fn sum_int(m: &Member<()>, x: i64) -> i64 {
    match block_on(m.call(Op::AllReduce(Reduce::Sum), ty("int"), Data::Int(x))) {
        Ok(Outcome::Int(v)) => v,
        other => panic!("unexpected {other:?}"),
    }
}

fn tensor(xs: &[f32]) -> Data<()> {
    Data::F32 {
        shape: Arc::from([xs.len()]),
        data: Arc::new(xs.to_vec()),
    }
}

fn sum_tensor(m: &Member<()>, xs: &[f32]) -> Arc<Vec<f32>> {
    match block_on(m.call(Op::AllReduce(Reduce::Sum), ty("tensor"), tensor(xs))) {
        Ok(Outcome::F32 { data, .. }) => data,
        other => panic!("unexpected {other:?}"),
    }
}

fn members(n: usize, tuning: Tuning) -> Vec<Member<()>> {
    group_tuned::<()>(n, 1, tuning).unwrap_or_default()
}

#[test]
fn small_path_two_members() {
    model(|| {
        let mut g = members(2, SMALL);
        let m1 = g.pop().unwrap();
        let t = thread::spawn(move || sum_int(&m1, 2));
        assert_eq!(sum_int(&g[0], 1), 3);
        assert_eq!(t.join().unwrap(), 3);
    });
}

#[test]
fn small_path_three_members() {
    model(|| {
        let g = members(3, SMALL);
        let ts: Vec<_> = g[1..]
            .iter()
            .cloned()
            .map(|m| thread::spawn(move || sum_int(&m, m.rank() as i64 + 1)))
            .collect();
        assert_eq!(sum_int(&g[0], 1), 6);
        for t in ts {
            assert_eq!(t.join().unwrap(), 6);
        }
    });
}

#[test]
fn sliced_path_shares_one_buffer() {
    model(|| {
        let mut g = members(2, SLICED);
        let m1 = g.pop().unwrap();
        let t = thread::spawn(move || sum_tensor(&m1, &[10.0, 20.0]));
        let a = sum_tensor(&g[0], &[1.0, 2.0]);
        let b = t.join().unwrap();
        assert_eq!(*a, [11.0, 22.0]);
        assert!(Arc::ptr_eq(&a, &b));
    });
}

#[test]
fn sliced_path_three_members() {
    model(|| {
        let g = members(3, SLICED);
        let ts: Vec<_> = g[1..]
            .iter()
            .cloned()
            .map(|m| thread::spawn(move || sum_tensor(&m, &[1.0, 2.0, 3.0])))
            .collect();
        let a = sum_tensor(&g[0], &[1.0, 1.0, 1.0]);
        assert_eq!(*a, [3.0, 5.0, 7.0]);
        for t in ts {
            assert!(Arc::ptr_eq(&a, &t.join().unwrap()));
        }
    });
}

#[test]
fn fast_member_starts_the_next_step() {
    model(|| {
        let mut g = members(2, SLICED);
        let m1 = g.pop().unwrap();
        let t = thread::spawn(move || {
            let a = sum_tensor(&m1, &[1.0]);
            let b = sum_int(&m1, 5);
            (a, b)
        });
        let a = sum_tensor(&g[0], &[2.0]);
        let b = sum_int(&g[0], 7);
        let (a1, b1) = t.join().unwrap();
        assert_eq!((a.as_slice(), b), (&[3.0][..], 12));
        assert_eq!((a1.as_slice(), b1), (&[3.0][..], 12));
    });
}

/// Polls `fut` once with a waker that does nothing.
fn poll_once<F: Future + Unpin>(fut: &mut F) -> Poll<F::Output> {
    Pin::new(fut).poll(&mut Context::from_waker(Waker::noop()))
}

fn dropped_call(tuning: Tuning) {
    model(move || {
        let mut g = members(2, tuning);
        let m1 = g.pop().unwrap();
        let m0 = g.pop().unwrap();
        let t = thread::spawn(move || (sum_tensor(&m1, &[10.0, 20.0]), sum_int(&m1, 5)));
        // Member 0 deposits, maybe completes, and gives up its call: the
        // call still counts, and the member is free for the next step.
        let mut call = m0.call(
            Op::AllReduce(Reduce::Sum),
            ty("tensor"),
            tensor(&[1.0, 2.0]),
        );
        if let Poll::Ready(r) = poll_once(&mut call) {
            assert!(matches!(r, Ok(Outcome::F32 { .. })));
        }
        drop(call);
        assert_eq!(sum_int(&m0, 7), 12);
        let (a, b) = t.join().unwrap();
        assert_eq!((a.as_slice(), b), (&[11.0, 22.0][..], 12));
    });
}

#[test]
fn dropped_call_small_path() {
    dropped_call(SMALL);
}

#[test]
fn dropped_call_sliced_path() {
    dropped_call(SLICED);
}

#[test]
fn copies_of_one_member_take_turns() {
    model(|| {
        let mut g = members(2, SMALL);
        let m1 = g.pop().unwrap();
        let m0 = g.pop().unwrap();
        let m0b = m0.clone();
        let t = thread::spawn(move || sum_int(&m0b, 1));
        let u = thread::spawn(move || sum_int(&m1, 10) + sum_int(&m1, 100));
        let mine = sum_int(&m0, 2);
        let theirs = t.join().unwrap();
        // m1's two calls (10, then 100) pair with m0's two calls, in the
        // order these deposit.
        assert!(
            [(12, 101), (102, 11)].contains(&(mine, theirs)),
            "{mine} {theirs}"
        );
        assert_eq!(u.join().unwrap(), mine + theirs);
    });
}
