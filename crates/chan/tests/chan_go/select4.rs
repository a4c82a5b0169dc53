//! Port of golang/go `test/chan/select4.go`: a select proceeds when one
//! case's value is ready, even though another case can never proceed.

use weft_chan::{Chan, Outcome, Select};

#[test]
fn select4() {
    let c = Chan::new(1);
    let c1 = Chan::<i32>::new(0);
    c.try_send(42).unwrap();
    let mut s = Select::new();
    s.recv(Some(c1));
    let want = s.recv(Some(c));
    let got = s.select_blocking(&mut fastrand::Rng::with_seed(4));
    assert_eq!(got.index, want);
    assert_eq!(got.outcome, Outcome::Received(Some(42)));
}
