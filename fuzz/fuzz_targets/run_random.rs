//! Fuzz target: bytes drive `weft_fuzz::gen::random_program` (channels, go,
//! select with and without default, close, counted loops); the program must
//! verify and its run must end, whatever way, without a Rust panic and
//! within the watchdog's time, on 1 to 4 workers.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use weft_fuzz::gen::{random_program, Limits};
use weft_fuzz::{expect_verified, run_watched};

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let (Ok(workers), Ok(seed)) = (u.int_in_range(1..=4usize), u.arbitrary::<u64>()) else {
        return;
    };
    let Ok(p) = random_program(&mut u, Limits::default()) else {
        return;
    };
    expect_verified(&p);
    let _ = run_watched(&p, workers, seed);
});
