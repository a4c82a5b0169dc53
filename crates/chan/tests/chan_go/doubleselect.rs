//! Port of golang/go `test/chan/doubleselect.go`: two cases of one select
//! must never both run. A sender selects over four unbuffered channels; four
//! muxes forward to one channel; the receiver checks for duplicates. Runs on
//! real threads, since the original bug was a race.

use std::collections::HashSet;
use std::thread;

use weft_chan::{Chan, Outcome, Select};

const ITERATIONS: u32 = 3_000;

fn sender(n: u32, cs: [Chan<u32>; 4]) {
    let mut rng = fastrand::Rng::with_seed(7);
    for i in 0..n {
        let mut s = Select::new();
        for c in &cs {
            s.send(Some(c.clone()), i);
        }
        assert_eq!(s.select_blocking(&mut rng).outcome, Outcome::Sent);
    }
    for c in &cs {
        c.close().unwrap();
    }
}

fn mux(out: Chan<u32>, input: Chan<u32>, done: Chan<()>) {
    while let Some(v) = input.recv_blocking() {
        out.send_blocking(v).unwrap();
    }
    done.send_blocking(()).unwrap();
}

#[test]
fn doubleselect() {
    let cs: [Chan<u32>; 4] = std::array::from_fn(|_| Chan::new(0));
    let cmux = Chan::new(0);
    let done = Chan::new(4);
    let s = {
        let cs = cs.clone();
        thread::spawn(move || sender(ITERATIONS, cs))
    };
    for c in &cs {
        let (out, input, done) = (cmux.clone(), c.clone(), done.clone());
        thread::spawn(move || mux(out, input, done));
    }
    // The closer: once all four muxes are done, close cmux.
    {
        let (cmux, done) = (cmux.clone(), done.clone());
        thread::spawn(move || {
            for _ in 0..4 {
                done.recv_blocking().unwrap();
            }
            cmux.close().unwrap();
        });
    }
    let mut seen = HashSet::new();
    while let Some(v) = cmux.recv_blocking() {
        assert!(seen.insert(v), "got duplicate value: {v}");
    }
    assert_eq!(seen.len(), ITERATIONS as usize);
    s.join().unwrap();
}
