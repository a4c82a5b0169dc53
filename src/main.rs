//! The `weft` command line; see `weft::cli`.
use clap::Parser;

fn main() {
    let cli = weft::cli::Cli::parse();
    let code = weft::cli::main_with(cli);
    std::process::exit(code);
}
