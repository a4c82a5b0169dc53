//! The `handoff` hook of `Tuning`: called by the member that completes a
//! step once it has woken the members that waited for it (so a runtime can
//! offer them to idle threads at once), and only then.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use weft_coll::{group_tuned, Data, Op, Outcome, Reduce, Tuning};

/// One counter per test (the hook is a plain `fn`).
static SMALL: AtomicUsize = AtomicUsize::new(0);
static SLICED: AtomicUsize = AtomicUsize::new(0);
static ALONE: AtomicUsize = AtomicUsize::new(0);

fn small_hook() {
    SMALL.fetch_add(1, Ordering::SeqCst);
}
fn sliced_hook() {
    SLICED.fetch_add(1, Ordering::SeqCst);
}
fn alone_hook() {
    ALONE.fetch_add(1, Ordering::SeqCst);
}

const STEPS: usize = 50;

/// Runs `STEPS` all-reduces of `n`-element tensors among `members`
/// threads; every result must be the sum.
fn run(members: usize, n: usize, tuning: Tuning) {
    let group = group_tuned::<()>(members, 1, tuning).unwrap();
    std::thread::scope(|s| {
        for m in group {
            s.spawn(move || {
                for step in 0..STEPS {
                    let x = vec![(m.rank() + step) as f32; n];
                    let data = Data::F32 {
                        shape: Arc::from([n]),
                        data: Arc::new(x),
                    };
                    let out = m
                        .call_blocking(Op::AllReduce(Reduce::Sum), "tensor".into(), data)
                        .unwrap();
                    let Outcome::F32 { data, .. } = out else {
                        panic!("not a tensor")
                    };
                    let want: usize = (0..members).map(|r| r + step).sum();
                    assert!(data.iter().all(|&v| v == want as f32), "step {step}");
                }
            });
        }
    });
}

/// On the small path exactly one member of a step wakes another (the first
/// to arrive always parks): one call a step.
#[test]
fn the_member_that_completes_a_small_step_calls_the_hook_once() {
    let tuning = Tuning {
        handoff: Some(small_hook),
        ..Tuning::default()
    };
    run(2, 16, tuning);
    assert_eq!(SMALL.load(Ordering::SeqCst), STEPS);
}

/// On the sliced path the member that starts the job wakes the others to
/// help (one call), and the finisher may wake some more.
#[test]
fn a_sliced_step_calls_the_hook_when_it_wakes_helpers() {
    let tuning = Tuning {
        small_elems: 1,
        chunk_elems: 4,
        handoff: Some(sliced_hook),
        ..Tuning::default()
    };
    run(3, 64, tuning);
    let calls = SLICED.load(Ordering::SeqCst);
    assert!(
        (STEPS..=2 * STEPS).contains(&calls),
        "{calls} calls for {STEPS} steps"
    );
}

/// A group of one wakes nobody.
#[test]
fn a_member_alone_never_calls_the_hook() {
    let tuning = Tuning {
        handoff: Some(alone_hook),
        ..Tuning::default()
    };
    run(1, 16, tuning);
    assert_eq!(ALONE.load(Ordering::SeqCst), 0);
}
