//! Port of golang/go `test/chan/select3.go`: which operations and selects
//! block and which panic (here: fail). Go checks blocking with a 0.1 s
//! timer; here a future "blocks" when, with no other party alive, polling
//! it leaves it pending: exact, and no timing involved.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use weft_chan::{block_forever, Chan, Outcome, Select};

/// True if `f` cannot complete on its own.
fn blocks<F: Future>(f: F) -> bool {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    (0..3).all(|_| matches!(f.as_mut().poll(&mut cx), Poll::Pending))
}

fn rng() -> fastrand::Rng {
    fastrand::Rng::with_seed(3)
}

#[test]
fn select3() {
    let closedch = Chan::<i32>::new(0);
    closedch.close().unwrap();

    // Sending/receiving on a nil channel blocks.
    assert!(blocks(block_forever()));
    // ... and inside a select it is never selected.
    let mut s = Select::new();
    s.send(None, 7);
    assert!(s.try_select(&mut rng()).is_none());
    let mut s = Select::<i32>::new();
    s.recv(None);
    assert!(s.try_select(&mut rng()).is_none());

    // Sending to a buffered channel with room never blocks.
    let ch = Chan::new(1);
    assert!(!blocks(ch.send(7)));

    // Receiving from a closed channel never blocks; it yields zero, !ok.
    for _ in 0..10 {
        assert!(!blocks(closedch.recv()));
        assert_eq!(closedch.recv_blocking(), None);
    }

    // Sending to a closed channel fails ("panics").
    let e = closedch.send_blocking(7).unwrap_err();
    assert_eq!(e.to_string(), "send on closed channel");

    // Receiving from a non-ready channel blocks.
    let ch = Chan::<i32>::new(0);
    assert!(blocks(ch.recv()));

    // Empty selects and selects of nil channels block.
    assert!(blocks(Select::<i32>::new().select(&mut rng())));
    let mut s = Select::<i32>::new();
    s.recv(None);
    assert!(blocks(s.select(&mut rng())));
    let mut s = Select::<i32>::new();
    s.send(None, 7);
    assert!(blocks(s.select(&mut rng())));
    let mut s = Select::<i32>::new();
    s.recv(None);
    s.send(None, 7);
    assert!(blocks(s.select(&mut rng())));

    // Selects on non-ready channels block.
    let ch = Chan::<i32>::new(0);
    let mut s = Select::new();
    s.recv(Some(ch.clone()));
    assert!(blocks(s.select(&mut rng())));

    // Selects with default do not block (default is `None`).
    assert!(Select::<i32>::new().try_select(&mut rng()).is_none());

    // Selects with ready channels do not block.
    let ch = Chan::new(1);
    let mut s = Select::new();
    s.send(Some(ch.clone()), 7);
    assert_eq!(s.try_select(&mut rng()).unwrap().outcome, Outcome::Sent);
    let mut s = Select::new();
    s.recv(Some(ch.clone()));
    assert_eq!(
        s.try_select(&mut rng()).unwrap().outcome,
        Outcome::Received(Some(7))
    );

    // Selects with closed channels behave like ordinary operations.
    let mut s = Select::new();
    s.recv(Some(closedch.clone()));
    assert!(!blocks(s.select(&mut rng())));
    let mut s = Select::new();
    s.send(Some(closedch.clone()), 7);
    assert_eq!(
        s.select_blocking(&mut rng()).outcome,
        Outcome::SendClosed(7)
    );

    // A select must not get confused if it sees itself.
    let c = Chan::new(0);
    let mut s = Select::new();
    s.send(Some(c.clone()), 1);
    s.recv(Some(c.clone()));
    assert!(blocks(s.select(&mut rng())));
    assert_eq!(c.queued(), (0, 0));
}
