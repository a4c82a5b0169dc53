//! The `weft` command line (`cli.rs`); `weft trace` draws with `tracesvg.rs`.

mod cli;
mod tracesvg;

use clap::Parser;

/// Counts allocated bytes so `weft run --max-memory` can stop a program
/// that allocates without end (see `weft_rt::memlimit`).
#[global_allocator]
static ALLOC: weft_rt::memlimit::CountingAlloc = weft_rt::memlimit::CountingAlloc;

fn main() {
    let cli = cli::Cli::parse();
    let code = cli::main_with(cli);
    std::process::exit(code);
}
