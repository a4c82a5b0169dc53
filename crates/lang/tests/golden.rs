//! Golden tests: each `tests/golden/**/*.weft` file is a program followed by
//! the output `weft check` prints for it (rendered diagnostics, or `ok`),
//! inside a final `/* expected output:` comment; under `golden/lower/` the
//! output is the lowered IR as `weft_ir::dump` prints it, and under
//! `golden/syntax/` the syntax tree as an S-expression (`sexpr.rs`). The program part is compiled
//! as is (line numbers count from the top of the file).
//!
//! Regenerate the expected outputs with
//! `WEFT_BLESS=1 cargo test -p weft-lang --test golden`.

use std::path::{Path, PathBuf};

#[path = "support/sexpr.rs"]
mod sexpr;

const MARKER: &str = "/* expected output:\n";

fn golden_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("golden dir")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            golden_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "weft") {
            out.push(p);
        }
    }
}

/// What `weft check` (or, with `dump`, `weft dump`) prints for `src` named
/// `name`, or with `tree`, the syntax tree.
fn actual(name: &str, src: &str, dump: bool, tree: bool) -> String {
    if tree {
        let (file, diags) = weft_lang::parse(name, src);
        return format!("{}{}", diags.render(src), sexpr::file(&file));
    }
    match weft_lang::compile(name, src) {
        Ok(p) if dump => weft_ir::dump(&p),
        Ok(_) => "ok\n".to_string(),
        Err(d) => d.render(src),
    }
}

#[test]
fn golden() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut files = Vec::new();
    golden_files(&root, &mut files);
    assert!(files.len() > 20, "golden files missing");
    let bless = std::env::var_os("WEFT_BLESS").is_some();
    let mut failures = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read golden file");
        let (program, expected) = match text.find(MARKER) {
            Some(i) => (
                &text[..i],
                Some(text[i + MARKER.len()..].trim_end().trim_end_matches("*/")),
            ),
            None => (text.as_str(), None),
        };
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("x.weft");
        let dump = path.parent().is_some_and(|p| p.ends_with("lower"));
        let tree = path.parent().is_some_and(|p| p.ends_with("syntax"));
        let got = actual(name, program, dump, tree);
        assert!(!got.contains("*/"), "{name}: output contains */");
        if bless {
            std::fs::write(&path, format!("{program}{MARKER}{got}*/\n")).expect("write golden");
        } else if expected != Some(got.as_str()) {
            failures.push(format!(
                "{}:\n--- expected\n{}\n--- got\n{got}",
                path.display(),
                expected.unwrap_or("(none: run with WEFT_BLESS=1)")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden files differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
