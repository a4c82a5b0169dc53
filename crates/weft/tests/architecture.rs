//! Keeps `docs/architecture.md` and the code's own maps true:
//!
//! - every crate of the workspace has a section in `docs/architecture.md`,
//!   and every path that document names exists;
//! - every source file is listed in the table of contents of its module
//!   (the `//!` header of the `lib.rs` or `mod.rs` beside it);
//! - inside each crate, the sibling modules' imports form no circle (the
//!   layering each crate's table of contents states).
//!
//! These are text checks over the repository, run by `cargo test`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The crate directories under `crates/`, with their package names.
fn crates() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for e in fs::read_dir(root().join("crates")).unwrap() {
        let dir = e.unwrap().path();
        let manifest = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let name = manifest
            .lines()
            .find_map(|l| l.strip_prefix("name = \""))
            .and_then(|l| l.strip_suffix('"'))
            .unwrap_or_else(|| panic!("{}: no package name", dir.display()))
            .to_string();
        out.push((name, dir));
    }
    out.sort();
    out
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The `//!` lines at the top of a file.
fn header(path: &Path) -> String {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with("//!") || l.trim().is_empty() || l.starts_with("#!"))
        .filter_map(|l| l.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_crate_has_a_section_and_every_named_path_exists() {
    let doc = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let mut missing = Vec::new();
    for (name, _) in crates() {
        if !doc.contains(&format!("## `{name}`")) {
            missing.push(format!("no section \"## `{name}`\""));
        }
    }
    // Every `crates/...`, `docs/...`, `scripts/...` or `examples/...` path
    // in backticks must exist.
    for piece in doc.split('`').skip(1).step_by(2) {
        let p = piece.split_whitespace().next().unwrap_or("");
        let p = p
            .split("::")
            .next()
            .unwrap_or(p)
            .trim_end_matches([',', ':']);
        let known = [
            "crates/",
            "docs/",
            "scripts/",
            "examples/",
            "fuzz/",
            "data/",
        ];
        if known.iter().any(|k| p.starts_with(k)) && !p.contains('*') && !root().join(p).exists() {
            missing.push(format!("names `{p}`, which does not exist"));
        }
    }
    assert!(
        missing.is_empty(),
        "docs/architecture.md:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_source_file_is_in_its_modules_table_of_contents() {
    let mut missing = Vec::new();
    for (_, dir) in crates() {
        let mut files = Vec::new();
        rs_files(&dir.join("src"), &mut files);
        for f in files {
            let stem = f.file_stem().unwrap().to_str().unwrap();
            if stem == "lib" || stem == "main" || stem == "mod" {
                continue;
            }
            let parent = f.parent().unwrap();
            let toc = ["lib.rs", "mod.rs", "main.rs"]
                .iter()
                .map(|n| parent.join(n))
                .find(|p| p.exists());
            let Some(toc) = toc else {
                // A file of a module directory without mod.rs (`foo.rs` beside
                // `foo/`): its table of contents is `foo.rs`.
                let owner = parent.with_extension("rs");
                if owner.exists() && mentions(&header(&owner), stem) {
                    continue;
                }
                missing.push(format!("{}: no table of contents lists it", f.display()));
                continue;
            };
            if !mentions(&header(&toc), stem) {
                missing.push(format!("{}: not listed in {}", f.display(), toc.display()));
            }
        }
        // A module directory must be listed by its parent too.
        for e in fs::read_dir(dir.join("src")).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                let name = p.file_name().unwrap().to_str().unwrap();
                let lib = ["lib.rs", "main.rs"]
                    .iter()
                    .map(|n| dir.join("src").join(n))
                    .find(|p| p.exists())
                    .unwrap();
                if !mentions(&header(&lib), name) {
                    missing.push(format!("{}: not listed in {}", p.display(), lib.display()));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "files missing from a table of contents:\n{}",
        missing.join("\n")
    );
}

/// Whether a table of contents names module `m`: `m.rs`, `m/` or `` [`m`] ``
/// (or `` `m` ``) in backticks.
fn mentions(toc: &str, m: &str) -> bool {
    [format!("`{m}.rs`"), format!("`{m}/`"), format!("`{m}`")]
        .iter()
        .any(|p| toc.contains(p.as_str()))
}

/// The top-level modules a file imports: `crate::X` anywhere, and
/// `super::X` from a top-level module (in a nested file `super::` names a
/// sibling inside its directory), ignoring comments and the test module.
fn imports(src: &str, nested: bool) -> BTreeSet<String> {
    let code: String = src
        .lines()
        .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    let prefixes: &[&str] = if nested {
        &["crate::"]
    } else {
        &["super::", "crate::"]
    };
    for prefix in prefixes {
        for (i, _) in code.match_indices(prefix) {
            let before = code[..i].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &code[i + prefix.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
                out.insert(name);
            }
        }
    }
    out
}

#[test]
fn no_crate_has_an_import_circle_between_its_top_level_modules() {
    let mut circles = Vec::new();
    for (name, dir) in crates() {
        let src = dir.join("src");
        let mut files = Vec::new();
        rs_files(&src, &mut files);
        // Top-level module of each file, and its imports.
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for f in &files {
            let rel = f.strip_prefix(&src).unwrap();
            let top = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_str()
                .unwrap();
            let top = top.trim_end_matches(".rs").to_string();
            if top == "lib" || top == "main" {
                continue;
            }
            let nested = rel.components().count() > 1;
            let text = fs::read_to_string(f).unwrap();
            let deps = graph.entry(top.clone()).or_default();
            for m in imports(&text, nested) {
                if m != top {
                    deps.insert(m);
                }
            }
        }
        let tops: BTreeSet<String> = graph.keys().cloned().collect();
        for deps in graph.values_mut() {
            deps.retain(|d| tops.contains(d));
        }
        // Any circle: a module that reaches itself.
        for start in graph.keys() {
            let mut seen = BTreeSet::new();
            let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
            while let Some((m, path)) = stack.pop() {
                for d in &graph[&m] {
                    if d == start {
                        let mut c = path.clone();
                        c.push(d.clone());
                        circles.push(format!("{name}: {}", c.join(" -> ")));
                    } else if seen.insert(d.clone()) {
                        let mut p = path.clone();
                        p.push(d.clone());
                        stack.push((d.clone(), p));
                    }
                }
            }
        }
    }
    circles.sort();
    circles.dedup();
    assert!(
        circles.is_empty(),
        "import circles between sibling modules:\n{}",
        circles.join("\n")
    );
}
