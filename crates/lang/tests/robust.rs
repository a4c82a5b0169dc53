//! The front end never panics: every test program, cut short at many
//! places and mutated at random (deterministically seeded), goes through
//! `compile` and `parse` without a panic, and a broken program always
//! yields at least one diagnostic that renders in the form of docs/language.md, "Compile errors".

use std::path::Path;

/// xorshift64*: a tiny deterministic generator for mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const PIECES: &[&str] = &[
    "{", "}", "(", ")", "[", "]", ";", "\n", ",", ":", ":=", "=", "<-", "go", "select", "case",
    "default", "for", "range", "func", "chan", "\"", "/*", "1e", "0x", ".", "...", "nil", "_", "x",
    "é", "\t", "break", "return", "type", "struct", "-", "!", "^",
];

fn run(name: &str, src: &str) {
    let result = weft_lang::compile(name, src);
    let (_, parse_diags) = weft_lang::parse(name, src);
    if let Err(d) = result {
        assert!(!d.is_empty(), "{name}: an error result without diagnostics");
        for item in d.items() {
            assert!(
                !item.message.starts_with("internal error"),
                "{name}: {}\n{src}",
                item.message
            );
        }
        let out = d.render(src);
        let first = out.lines().next().unwrap_or("");
        assert!(
            first.starts_with(&format!("{name}:")) && first.contains(": error: "),
            "{name}: bad header {first:?}"
        );
    }
    let _ = parse_diags.render(src);
}

fn programs() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("programs")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "weft"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).expect("read"),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn truncated_programs_do_not_panic() {
    for (name, src) in programs() {
        let bytes = src.as_bytes();
        for cut in (0..bytes.len()).step_by(17) {
            run(&name, &String::from_utf8_lossy(&bytes[..cut]));
        }
    }
}

#[test]
fn mutated_programs_do_not_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for (name, src) in programs() {
        for _ in 0..150 {
            let mut b = src.as_bytes().to_vec();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(b.len());
                match rng.below(3) {
                    0 => {
                        let end = (at + 1 + rng.below(12)).min(b.len());
                        b.drain(at..end);
                    }
                    1 => {
                        let piece = PIECES[rng.below(PIECES.len())].as_bytes();
                        b.splice(at..at, piece.iter().copied());
                    }
                    _ => {
                        let from = rng.below(b.len());
                        let end = (from + 1 + rng.below(30)).min(b.len());
                        let chunk: Vec<u8> = b[from..end].to_vec();
                        b.splice(at..at, chunk);
                    }
                }
            }
            run(&name, &String::from_utf8_lossy(&b));
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    for (open, close) in [
        ("(", ")"),
        ("f(", ")"),
        ("[]int{", "}"),
        ("[]", ""),
        ("- ", ""),
        ("!", ""),
        ("<-", ""),
    ] {
        let src = format!(
            "func main() {{\n\tx := {}1{}\n}}\n",
            open.repeat(5000),
            close.repeat(5000)
        );
        let d = weft_lang::check("deep.weft", &src).expect_err("too deep");
        assert!(
            d.items()
                .iter()
                .any(|x| x.message == "program is nested too deeply"),
            "{open}"
        );
    }
    let src = format!("func main() {{\n{}\n}}\n", "{".repeat(5000));
    assert!(weft_lang::check("deep.weft", &src).is_err());
}

/// `compile`, failing with the rendered errors (never the program's
/// `Debug`, which is huge for these programs).
fn compiles(name: &str, src: &str) -> weft_ir::ProgramDesc {
    match weft_lang::compile(name, src) {
        Ok(p) => p,
        Err(d) => panic!(
            "{name}: {}",
            d.render(src).chars().take(2000).collect::<String>()
        ),
    }
}

/// Long operator chains and `else if` chains are not nesting (issue 26):
/// Go accepts `1 + 1 + ... + 1` of any length, and so does Weft. Every
/// pass walks them in loops; these compile and verify, and dropping their
/// trees does not recurse either.
#[test]
fn long_chains_compile() {
    let main = |body: String| format!("func main() {{\n\tx := 1\n{body}\n}}\n");
    let n = 10_000;
    for (term, op) in [("x", " + "), ("x == 1", " || "), ("x == 1", " && ")] {
        let terms = vec![term; n].join(op);
        compiles(op, &main(format!("\ty := {terms}\n\tprint(y)")));
    }
    let ones = vec!["1"; n].join(" + ");
    compiles("ones", &main(format!("\tprint(x + {ones})")));
    // An else-if chain of 5,000 links, and a switch of 5,000 cases.
    let mut chain = String::from("\tif x == 0 {\n\t\tprint(0)\n\t}");
    for i in 1..5000 {
        chain += &format!(" else if y := x; y == {i} {{\n\t\tprint(y)\n\t}}");
    }
    chain += " else {\n\t\tprint(-1)\n\t}";
    compiles("elseif", &main(chain));
    let mut sw = String::from("\tswitch x {");
    for i in 0..5000 {
        sw += &format!("\n\tcase {i}, {}:\n\t\tprint({i})", i + 5000);
    }
    sw += "\n\tdefault:\n\t}";
    compiles("switch", &main(sw));
    let (tree, d) = weft_lang::parse("ones", &main(format!("\tprint({ones})")));
    assert!(d.is_empty());
    drop(tree);
}
