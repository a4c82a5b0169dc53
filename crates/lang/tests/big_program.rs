//! The benchmark's generated 10,000-line program checks and compiles
//! without errors (so the benchmark measures a successful check).

#[path = "../benches/genprog.rs"]
mod genprog;

#[test]
fn generated_program_compiles() {
    let src = genprog::program(10_000);
    assert!(src.lines().count() >= 10_000);
    let program =
        weft_lang::compile("big.weft", &src).unwrap_or_else(|d| panic!("{}", d.render(&src)));
    assert!(program.functions.len() > 200);
}
