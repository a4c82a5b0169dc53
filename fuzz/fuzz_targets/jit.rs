//! Fuzz target: bytes drive `weft_fuzz::gen::loop_program`, Weft source of
//! integer loops (every int operator, division by zero and odd shift
//! counts included, `break`, `continue`, nested loops); the program run
//! with the loop JIT on and with it off must print the same and end the
//! same way (docs/interpreter.md, "The loop JIT").
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use weft_fuzz::gen::loop_program;
use weft_fuzz::{expect_verified, run_watched_with};

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(src) = loop_program(&mut u) else {
        return;
    };
    // A constant division by zero or an overflowing constant is a compile
    // error: nothing to compare.
    let Ok(p) = weft_lang::compile("t.weft", &src) else {
        return;
    };
    expect_verified(&p);
    let on = run_watched_with(&p, 1, 1, true);
    let off = run_watched_with(&p, 1, 1, false);
    if on != off {
        panic!("the JIT on and off disagree\n--- on:\n{on:?}\n--- off:\n{off:?}\n--- program:\n{src}");
    }
});
