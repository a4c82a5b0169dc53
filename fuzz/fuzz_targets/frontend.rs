//! Fuzz target: text → `weft_lang::compile`. The result is a program that
//! verifies, or diagnostics that render; never a panic. (Hangs are caught by
//! libFuzzer's `-timeout`.) Bytes that are not UTF-8 are skipped: source is
//! UTF-8 by docs/language.md and the CLI rejects other bytes before compiling.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    match weft_lang::compile("fuzz.weft", src) {
        Ok(p) => {
            if let Err(e) = weft_ir::verify(&p) {
                panic!(
                    "compiled program does not verify: {e}\n{}",
                    weft_ir::dump(&p)
                );
            }
        }
        Err(d) => {
            assert!(!d.is_empty(), "compile failed without a diagnostic");
            let _ = d.render(src);
        }
    }
});
