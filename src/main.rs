//! The `weft` command line; see `weft::cli`.
use clap::Parser;

/// Counts allocated bytes so `weft run --max-memory` can stop a program
/// that allocates without end (see `weft::memlimit`).
#[global_allocator]
static ALLOC: weft::memlimit::CountingAlloc = weft::memlimit::CountingAlloc;

fn main() {
    let cli = weft::cli::Cli::parse();
    let code = weft::cli::main_with(cli);
    std::process::exit(code);
}
