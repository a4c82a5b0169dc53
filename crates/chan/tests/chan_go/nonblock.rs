//! Port of golang/go `test/chan/nonblock.go`: non-blocking receives on
//! empty channels fail, and non-blocking operations succeed once a partner
//! is waiting (or, buffered, once there is room or a value), for values of
//! several types and for buffer sizes 0 and 1. Go polls with sleeps; here a
//! task spins with `try_` forms, yielding to the pool, until its partner
//! has blocked.

use std::fmt::Debug;

use weft_chan::{Chan, TryRecvError, TrySendError};

use crate::{gosched, run, Go};

/// Go's `maxTries`: how many yields a non-blocking op waits for a partner.
const MAX_TRIES: usize = 10_000;

async fn receiver<T: Send + PartialEq + Debug + 'static>(c: Chan<T>, want: T, strobe: Chan<bool>) {
    assert_eq!(c.recv().await, Some(want));
    strobe.send(true).await.unwrap();
}

async fn sender<T: Send + 'static>(c: Chan<T>, v: T, strobe: Chan<bool>) {
    assert!(c.send(v).await.is_ok());
    strobe.send(true).await.unwrap();
}

async fn check<T: Send + Clone + PartialEq + Debug + 'static>(go: &Go, buffer: usize, a: T, b: T) {
    let c = Chan::<T>::new(buffer);
    let sync = Chan::new(0);
    assert_eq!(c.try_recv(), Err(TryRecvError::Empty), "blocked sender");

    go.go(receiver(c.clone(), a.clone(), sync.clone()));
    let mut v = a;
    let mut tries = 0;
    loop {
        match c.try_send(v) {
            Ok(()) => break,
            Err(TrySendError::Full(back)) => v = back,
            Err(TrySendError::Closed(_)) => panic!("closed"),
        }
        tries += 1;
        assert!(
            tries < MAX_TRIES,
            "receiver never blocked (buffer {buffer})"
        );
        gosched().await;
    }
    sync.recv().await;

    go.go(sender(c.clone(), b.clone(), sync.clone()));
    if buffer > 0 {
        sync.recv().await;
    }
    let mut tries = 0;
    let got = loop {
        match c.try_recv() {
            Ok(v) => break v,
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Closed) => panic!("closed"),
        }
        tries += 1;
        assert!(tries < MAX_TRIES, "sender never blocked (buffer {buffer})");
        gosched().await;
    };
    assert_eq!(got, b);
    if buffer == 0 {
        sync.recv().await;
    }
}

#[test]
fn nonblock() {
    run(|go: Go| async move {
        for buffer in 0..2 {
            check(&go, buffer, 123i32, 234).await;
            check(&go, buffer, 123456i64, 234567).await;
            check(&go, buffer, true, true).await;
            check(&go, buffer, "hello".to_string(), "hello again".to_string()).await;
        }
    });
}
