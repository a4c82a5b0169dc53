//! Port of golang/go `test/chan/select7.go`: a send and a receive meet
//! whether each side is a plain operation, a one-case select or a two-case
//! select, in all nine combinations.

use weft_chan::{Chan, Outcome, Select};

use crate::{gosched, run, Go};

fn rng() -> fastrand::Rng {
    fastrand::Rng::with_seed(7)
}

async fn recv(kind: u8, c: Chan<i32>) {
    match kind {
        1 => assert_eq!(c.recv().await, Some(1)),
        2 => {
            let mut s = Select::new();
            s.recv(Some(c));
            assert_eq!(
                s.select(&mut rng()).await.outcome,
                Outcome::Received(Some(1))
            );
        }
        _ => {
            let c2 = Chan::new(0);
            let mut s = Select::new();
            s.recv(Some(c));
            s.recv(Some(c2));
            let got = s.select(&mut rng()).await;
            assert_eq!((got.index, got.outcome), (0, Outcome::Received(Some(1))));
        }
    }
}

async fn send(go: &Go, kind: u8, recv_kind: u8) {
    let c = Chan::new(0);
    go.go(recv(recv_kind, c.clone()));
    gosched().await;
    match kind {
        1 => c.send(1).await.unwrap(),
        2 => {
            let mut s = Select::new();
            s.send(Some(c), 1);
            assert_eq!(s.select(&mut rng()).await.outcome, Outcome::Sent);
        }
        _ => {
            let c2 = Chan::new(0);
            let mut s = Select::new();
            s.send(Some(c), 1);
            s.send(Some(c2), 1);
            let got = s.select(&mut rng()).await;
            assert_eq!((got.index, got.outcome), (0, Outcome::Sent));
        }
    }
}

#[test]
fn select7() {
    run(|go: Go| async move {
        for s in 1..=3 {
            for r in 1..=3 {
                send(&go, s, r).await;
            }
        }
    });
}
