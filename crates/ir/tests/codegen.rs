//! Drift check for the checked-in generated protobuf code, and the codegen command.
//!
//! `src/pb/weft.ir.rs` is generated from `program.proto` by `protox` (a pure-Rust
//! protobuf compiler) and `prost-build`, so building `weft-ir` needs neither `protoc`
//! nor a build script (the tonic model). This test regenerates the code in memory and
//! fails when the checked-in file differs. To regenerate after editing the schema:
//!
//! ```text
//! WEFT_BLESS=1 cargo test -p weft-ir --test codegen
//! ```

use std::path::PathBuf;

fn generate() -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let fds = protox::compile(["program.proto"], [&dir]).expect("program.proto compiles");
    let requests = fds
        .file
        .into_iter()
        .map(|fd| {
            (
                prost_build::Module::from_protobuf_package_name(fd.package()),
                fd,
            )
        })
        .collect();
    let modules = prost_build::Config::new()
        .generate(requests)
        .expect("prost-build generates code");
    assert_eq!(modules.len(), 1, "program.proto holds one package");
    modules.into_values().next().unwrap_or_default()
}

#[test]
fn generated_code_matches_schema() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/pb/weft.ir.rs");
    let fresh = generate();
    if std::env::var("WEFT_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, &fresh).expect("write generated code");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == fresh,
        "src/pb/weft.ir.rs is stale; run: WEFT_BLESS=1 cargo test -p weft-ir --test codegen"
    );
}
