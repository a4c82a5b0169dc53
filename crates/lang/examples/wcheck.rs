//! Compiles a file and prints its diagnostics or "ok" (a development aid):
//! `cargo run -p weft-lang --example wcheck FILE`.
fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let src = std::fs::read_to_string(&path).unwrap_or_default();
    match weft_lang::compile(&path, &src) {
        Ok(p) => println!("ok: {} blocks", p.blocks.len()),
        Err(d) => print!("{}", d.render(&src)),
    }
}
