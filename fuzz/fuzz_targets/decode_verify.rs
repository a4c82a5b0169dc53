//! Fuzz target: arbitrary bytes → `weft_ir::decode`. Decoding never panics;
//! a decoded program always dumps and re-encodes to an equal program; one
//! that verifies also lowers for the interpreter (the verifier's promise in
//! docs/architecture.md).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(p) = weft_ir::decode(data) else {
        return;
    };
    let _ = weft_ir::dump(&p);
    let again = weft_ir::decode(&weft_ir::encode(&p)).expect("re-encoded program decodes");
    assert_eq!(again, p, "encode/decode round trip");
    if weft_ir::verify(&p).is_ok() {
        if let Err(e) = weft::interp::lower(&p) {
            panic!(
                "verified program does not lower: {e}\n{}",
                weft_ir::dump(&p)
            );
        }
    }
});
