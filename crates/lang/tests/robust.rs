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

/// Long operator chains nest the tree one level per link: 900 terms
/// compile, 1200 exceed `MAX_DEPTH` and give one clear error.
#[test]
fn long_chains_compile_up_to_the_limit() {
    let chain = |n: usize| {
        let sum = vec!["x"; n].join(" + ");
        format!("func main() {{\n\tx := 1\n\ty := {sum}\n\tprint(y)\n}}\n")
    };
    let src = chain(900);
    weft_lang::compile("long.weft", &src).unwrap_or_else(|d| panic!("{}", d.render(&src)));
    let src = chain(1200);
    let d = weft_lang::compile("long.weft", &src).expect_err("too deep");
    assert_eq!(d.len(), 1);
    assert_eq!(d.items()[0].message, "program is nested too deeply");
}
