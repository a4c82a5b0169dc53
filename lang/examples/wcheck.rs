//! Checks a file and prints its diagnostics (a development aid).
fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let src = std::fs::read_to_string(&path).unwrap_or_default();
    match weft_lang::check(&path, &src) {
        Ok(()) => println!("ok"),
        Err(d) => print!("{}", d.render(&src)),
    }
}
