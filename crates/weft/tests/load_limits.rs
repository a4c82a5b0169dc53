//! Issue 26, run as a user runs `weft`: programs long in every direction
//! load, and the limits that remain are the same for every command.
//! - long programs (20,000 statements, a 20,000-element list literal, a
//!   10,000-term sum, 5,000-link `else if` chains and 5,000-case switches)
//!   check, build, and run from source and from the built `.pb` file
//!   (loading is linear: `scripts/bench-load.sh` times it; no timings here);
//! - a type nests at most `weft_ir::MAX_TYPE_NESTING` levels of `[]` and
//!   `chan`: the deepest builds and runs from its `.pb`; one level more is
//!   the same single error from `check`, `build` and `run`; a `.pb` nested
//!   past the decoder's limit is one line naming the limit;
//! - a diagnostic on a long line shows a window of it, not the whole line;
//! - a file with no declarations is an empty program.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

fn weft() -> Command {
    Command::new(env!("CARGO_BIN_EXE_weft"))
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-load-test-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn run(args: &[&str]) -> Output {
    weft().args(args).output().expect("weft runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Checks, builds and runs `src` from source and from the built file;
/// both runs print `want`.
fn round_trip(name: &str, src: &str, want: &str) {
    let path = tmp(&format!("{name}.weft"));
    let pb = tmp(&format!("{name}.pb"));
    fs::write(&path, src).unwrap();
    let (path, pb) = (path.to_str().unwrap(), pb.to_str().unwrap());
    let check = run(&["check", path]);
    assert!(check.status.success(), "{name}: {}", text(&check.stderr));
    let build = run(&["build", path, "-o", pb]);
    assert!(build.status.success(), "{name}: {}", text(&build.stderr));
    for file in [path, pb] {
        let out = run(&["run", file]);
        assert!(out.status.success(), "{name} {file}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), want, "{name} {file}");
    }
}

#[test]
fn long_programs_check_build_and_run() {
    let n = 20_000;
    let mut src = String::from("func main() {\n\tx := 0\n");
    for i in 0..n {
        src += &format!("\tx = x + {}\n", i % 7 + 1);
    }
    src += "\tprint(x)\n}\n";
    let sum: usize = (0..n).map(|i| i % 7 + 1).sum();
    round_trip("stmts", &src, &format!("{sum}\n"));

    let elems: Vec<String> = (0..n).map(|i| (i % 10).to_string()).collect();
    let src = format!(
        "func main() {{\n\tl := []int{{{}}}\n\tprint(len(l), l[{}])\n}}\n",
        elems.join(", "),
        n - 1
    );
    round_trip("list", &src, &format!("{n} 9\n"));

    let terms = vec!["1"; 10_000].join(" + ");
    let xs = vec!["x"; 10_000].join(" + ");
    let src = format!("func main() {{\n\tx := 2\n\tprint({terms}, {xs})\n}}\n");
    round_trip("chain", &src, "10000 20000\n");

    let m = 5_000;
    let mut src = format!(
        "func main() {{\n\tx := {}\n\tif x == 0 {{\n\t\tprint(0)\n\t}}",
        m - 1
    );
    for i in 1..m {
        src += &format!(
            " else if y := x * 2; y == {} {{\n\t\tprint({i})\n\t}}",
            2 * i
        );
    }
    src += " else {\n\t\tprint(-1)\n\t}\n\tswitch {\n";
    for i in 0..m {
        src += &format!("\tcase x == {i}:\n\t\tprint(-{i})\n");
    }
    src += "\t}\n}\n";
    round_trip("elseif", &src, &format!("{}\n-{}\n", m - 1, m - 1));
}

fn nested(n: usize) -> String {
    format!(
        "func main() {{\n\tvar x {}int\n\tprint(len(x))\n}}\n",
        "[]".repeat(n)
    )
}

#[test]
fn type_nesting_is_limited_alike_everywhere() {
    round_trip("deep64", &nested(weft_ir::MAX_TYPE_NESTING), "0\n");
    let path = tmp("deep65.weft");
    fs::write(&path, nested(weft_ir::MAX_TYPE_NESTING + 1)).unwrap();
    let path = path.to_str().unwrap();
    let pb = tmp("deep65.pb");
    let pb = pb.to_str().unwrap();
    let want =
        format!("{path}:2:8: error: type nested too deeply: more than 64 levels of [] and chan\n");
    for args in [
        vec!["check", path],
        vec!["build", path, "-o", pb],
        vec!["run", path],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with(&want), "{args:?}: {err}");
        assert_eq!(err.matches("error:").count(), 1, "{err}");
    }
    // A `.pb` written by some other tool with a 98-deep type: one line,
    // naming the limit once.
    let mut b = weft_ir::builder::ProgramBuilder::new();
    let main = b.func("main").finish();
    let ty = (0..98).fold(weft_ir::pb::Type::int(), |t, _| weft_ir::pb::Type::list(t));
    b.var(main, "x", ty);
    let bad = tmp("deep98.pb");
    fs::write(&bad, weft_ir::encode(&b.build())).unwrap();
    let out = run(&["run", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.ends_with(
            "malformed program file: messages nested more than 100 deep (the decoder's limit; \
             a type nests at most 64 levels of [] and chan)\n"
        ),
        "{err}"
    );
}

#[test]
fn a_diagnostic_on_a_long_line_shows_a_window() {
    let terms = vec!["1"; 100_000].join(" + ");
    let src = format!("func main() {{\n\tx := {terms} + nope\n\tprint(x)\n}}\n");
    let path = tmp("longline.weft");
    fs::write(&path, &src).unwrap();
    let out = run(&["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.len() < 600, "{} bytes: {}", err.len(), &err[..600]);
    let col = src.lines().nth(1).unwrap().find("nope").unwrap() + 1;
    assert!(
        err.contains(&format!(":2:{col}: error: undefined: nope\n")),
        "{err}"
    );
    let lines: Vec<&str> = err.lines().collect();
    let caret = lines[2].find('^').unwrap();
    assert_eq!(&lines[1][caret..caret + 4], "nope", "{err}");
}

#[test]
fn an_empty_file_is_an_empty_program() {
    for (name, src) in [("empty.weft", ""), ("comment.weft", "// nothing yet\n")] {
        let path = tmp(name);
        fs::write(&path, src).unwrap();
        let path = path.to_str().unwrap();
        let out = run(&["check", path]);
        assert_eq!(out.status.code(), Some(1));
        let err = text(&out.stderr);
        assert!(
            err.starts_with(&format!(
                "{path}:1:1: error: empty program: no function main\n"
            )),
            "{err}"
        );
    }
}
