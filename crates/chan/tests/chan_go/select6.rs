//! Port of golang/go `test/chan/select6.go` (issue 2075): a select that
//! fired on one channel must leave no waiter behind on another, or a later
//! send on that channel would be taken by the finished select.

use weft_chan::{Chan, Outcome, Select};

use crate::{run, Go};

#[test]
fn select6() {
    run(|go: Go| async move {
        let c1 = Chan::<bool>::new(0);
        let c2 = Chan::<bool>::new(0);
        let c3 = Chan::<bool>::new(0);
        go.go({
            let c1 = c1.clone();
            async move {
                c1.recv().await;
            }
        });
        go.go({
            let (c1, c2, c3) = (c1.clone(), c2.clone(), c3.clone());
            async move {
                let mut s = Select::new();
                s.recv(Some(c1.clone()));
                let on_c2 = s.recv(Some(c2));
                let got = s.select(&mut fastrand::Rng::with_seed(6)).await;
                assert_eq!(got.index, on_c2, "dummy");
                assert_eq!(got.outcome, Outcome::Received(Some(true)));
                c3.send(true).await.unwrap();
                c1.recv().await;
            }
        });
        go.go({
            let c2 = c2.clone();
            async move { c2.send(true).await.unwrap() }
        });
        c3.recv().await;
        c1.send(true).await.unwrap();
        c1.send(true).await.unwrap();
    });
}
