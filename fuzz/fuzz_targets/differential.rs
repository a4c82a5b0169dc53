//! Fuzz target: bytes drive `weft_fuzz::gen::kahn_program`, a program whose
//! behaviour cannot depend on scheduling; a run on one worker and a run on
//! several (different seeds too) must print the same and end the same way.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use weft_fuzz::gen::{kahn_program, Limits};
use weft_fuzz::{expect_verified, run_watched};

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let (Ok(workers), Ok(seed)) = (u.int_in_range(2..=4usize), u.arbitrary::<u64>()) else {
        return;
    };
    let Ok(p) = kahn_program(&mut u, Limits::default()) else {
        return;
    };
    expect_verified(&p);
    let one = run_watched(&p, 1, seed);
    let many = run_watched(&p, workers, seed.wrapping_add(1));
    if one != many {
        panic!(
            "1 worker and {workers} workers disagree\n--- 1 worker:\n{one:?}\n--- {workers} workers:\n{many:?}\n--- program:\n{}",
            weft_ir::dump(&p)
        );
    }
});
