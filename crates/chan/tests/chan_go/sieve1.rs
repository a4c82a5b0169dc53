//! Port of golang/go `test/chan/sieve1.go`: the classic concurrent prime
//! sieve, a chain of filter tasks; checks the primes below 100. The
//! generator and filters never end: dropping the pool cancels them.

use weft_chan::Chan;

use crate::{run, Go};

pub const PRIMES: [u32; 25] = [
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97,
];

async fn generate(ch: Chan<u32>) {
    let mut i = 2;
    while ch.send(i).await.is_ok() {
        i += 1;
    }
}

async fn filter(input: Chan<u32>, out: Chan<u32>, prime: u32) {
    while let Some(i) = input.recv().await {
        if i % prime != 0 && out.send(i).await.is_err() {
            return;
        }
    }
}

async fn sieve(go: Go, primes: Chan<u32>) {
    let mut ch = Chan::new(0);
    go.go(generate(ch.clone()));
    loop {
        let Some(prime) = ch.recv().await else { return };
        if primes.send(prime).await.is_err() {
            return;
        }
        let ch1 = Chan::new(0);
        go.go(filter(ch, ch1.clone(), prime));
        ch = ch1;
    }
}

#[test]
fn sieve1() {
    run(|go: Go| async move {
        let primes = Chan::new(0);
        go.go(sieve(go.clone(), primes.clone()));
        for p in PRIMES {
            assert_eq!(primes.recv().await, Some(p));
        }
    });
}
