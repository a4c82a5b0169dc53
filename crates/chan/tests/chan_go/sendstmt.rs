//! Port of golang/go `test/chan/sendstmt.go`: sending on a channel that was
//! itself received from a channel of channels, in a select with default,
//! and a send of a computed value.

use weft_chan::{Chan, Outcome, Select};

#[test]
fn chanchan() {
    let cc = Chan::<Chan<bool>>::new(1);
    let c = Chan::<bool>::new(1);
    cc.try_send(c.clone()).unwrap();
    // select { case <-cc <- 2 > 1: default: panic("nonblock") }
    let inner = cc.try_recv().unwrap();
    let mut s = Select::new();
    s.send(Some(inner), 2 > 1);
    let got = s.try_select(&mut fastrand::Rng::with_seed(1));
    assert_eq!(got.map(|s| s.outcome), Some(Outcome::Sent), "nonblock");
    assert_eq!(c.try_recv(), Ok(true), "first value");
}

#[test]
fn sendprec() {
    let c = Chan::<bool>::new(1);
    #[allow(clippy::nonminimal_bool, clippy::overly_complex_bool_expr)]
    c.send_blocking(false || true).unwrap();
    assert_eq!(c.recv_blocking(), Some(true), "sent false");
}
