//! The `weft` command line.
fn main() {}
