//! Front-end benchmark: lex, parse and type-check (and, separately, compile
//! to verified IR) a generated 10,000-line program. The goal is a check in
//! under 100 ms. Compiled in CI, never timed there.

use criterion::{criterion_group, criterion_main, Criterion};

mod genprog;

fn bench(c: &mut Criterion) {
    let src = genprog::program(10_000);
    assert!(src.lines().count() >= 10_000);
    c.bench_function("check 10k lines", |b| {
        b.iter(|| weft_lang::check("big.weft", &src).expect("generated program checks"))
    });
    c.bench_function("compile 10k lines", |b| {
        b.iter(|| weft_lang::compile("big.weft", &src).expect("generated program compiles"))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
