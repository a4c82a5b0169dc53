//! The `weft` command line (`cli.rs`); `weft test` is `testing.rs`, and
//! `weft trace` draws with `tracesvg.rs`.

mod cli;
mod testing;
mod tracesvg;

/// Counts allocated bytes so `weft run --max-memory` can stop a program
/// that allocates without end (see `weft_rt::memlimit`).
#[global_allocator]
static ALLOC: weft_rt::memlimit::CountingAlloc = weft_rt::memlimit::CountingAlloc;

fn main() {
    let code = match cli::parse() {
        Ok(cli) => cli::main_with(cli),
        Err(code) => code,
    };
    std::process::exit(code);
}
