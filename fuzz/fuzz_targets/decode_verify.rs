//! Fuzz target: arbitrary bytes → `weft_ir::decode`. Decoding never panics;
//! a decoded program always dumps, and re-encoding it, decoding that and
//! encoding again gives the same bytes (compared as bytes, not with `==`:
//! a float attribute may be NaN, which is not equal to itself); one
//! that verifies also lowers for the interpreter (the verifier's promise in
//! docs/architecture.md).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(p) = weft_ir::decode(data) else {
        return;
    };
    let _ = weft_ir::dump(&p);
    let bytes = weft_ir::encode(&p);
    let again = weft_ir::decode(&bytes).expect("re-encoded program decodes");
    assert_eq!(weft_ir::encode(&again), bytes, "encode/decode round trip");
    if weft_ir::verify(&p).is_ok() {
        if let Err(e) = weft_interp::lower(&p) {
            panic!(
                "verified program does not lower: {e}\n{}",
                weft_ir::dump(&p)
            );
        }
    }
});
