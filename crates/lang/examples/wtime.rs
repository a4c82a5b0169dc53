//! Times the front-end passes on a generated program (a development aid):
//! `cargo run --release -p weft-lang --example wtime [LINES]`.
#[path = "../benches/genprog.rs"]
mod genprog;

use std::time::Instant;

fn main() {
    let lines = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let src = genprog::program(lines);
    for _ in 0..3 {
        let t = Instant::now();
        let (tree, info) = weft_lang::analyze("big.weft", &src).expect("checks");
        let checked = t.elapsed();
        let t = Instant::now();
        let program = weft_lang::lower::lower("big.weft", &src, &tree, &info);
        let lowered = t.elapsed();
        let t = Instant::now();
        weft_ir::verify(&program).expect("verifies");
        let verified = t.elapsed();
        println!("{lines} lines: parse+check {checked:?}, lower {lowered:?}, verify {verified:?}");
    }
}
