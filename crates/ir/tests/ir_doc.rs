//! Drift check for `docs/ir.md`, which is generated from the op registry and
//! `crates/ir/src/ir_intro.md` by `weft_ir::irdoc::render_ir_doc`.
//!
//! To regenerate after changing the registry or the intro:
//!
//! ```text
//! WEFT_BLESS=1 cargo test -p weft-ir --test ir_doc
//! ```

use std::path::PathBuf;

#[test]
fn docs_ir_md_matches_registry() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/ir.md");
    let fresh = weft_ir::irdoc::render_ir_doc();
    if std::env::var("WEFT_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, &fresh).expect("write docs/ir.md");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == fresh,
        "docs/ir.md is stale; run: WEFT_BLESS=1 cargo test -p weft-ir --test ir_doc"
    );
}
