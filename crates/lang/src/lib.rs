//! The Weft block DSL front end: lexer, parser, checker, lowering to the IR.
//!
//! | module | does |
//! |---|---|
//! | [`lexer`] | source to tokens, Go's semicolon insertion |
//! | [`parser`] | tokens to the syntax tree ([`ast`]), recovering at the next statement |
//! | [`check`](mod@check) | every typing rule of docs/language.md; tables for the lowering |
//! | [`lower`] | the checked tree to a verified `ProgramDesc` through `weft_ir::builder` |
//! | [`diag`] | errors and their rendering in the form of docs/language.md, "Compile errors" |
//! | [`syntax_error`] | the catalogue of the lexer's and parser's messages |
//! | [`types`] | the checker's types and their names in messages |
//!
//! Layering (each module may import only those listed; checked by
//! `crates/weft/tests/architecture.rs`): `diag` and `types` nothing;
//! `ast` and `syntax_error` `diag`; `lexer` `diag`, `syntax_error`;
//! `parser` `ast`, `diag`, `lexer`, `syntax_error`; `check` `ast`, `diag`,
//! `types`; `lower` `ast`, `check`, `diag`, `types`.
//!
//! Every message comes from a catalogue: [`SyntaxError`](syntax_error::SyntaxError)
//! for the lexer and parser, [`check::CheckError`] for the checker.
//!
//! `compile` and `check` run the whole pipeline and return every error of
//! the file at once (`Diagnostics`, in source order); `parse` exposes the
//! syntax tree for tests and tools. This crate knows nothing of the runtime.
//!
//! The passes recurse over the tree, whose nesting the parser bounds
//! (`parser::MAX_DEPTH`); they run on a thread with a large stack so that
//! any accepted tree fits, whatever the caller's stack. Chains, which are
//! as long as the source makes them (binary operators, `else if`, `switch`
//! cases), are walked in loops by every pass, dropping the tree included
//! (`ast`). Every pass is linear in the size of the source.

pub mod ast;
pub mod check;
pub mod diag;
pub mod lexer;
pub mod lower;
pub mod parser;
pub mod syntax_error;
pub mod types;

pub use diag::{Diagnostic, Diagnostics, Span};

/// Stack for the front-end passes: enough for `parser::MAX_DEPTH` levels
/// in a debug build (about 5 KiB a level) with a wide margin. Only the
/// pages touched are ever committed.
const STACK: usize = 256 << 20;

/// Runs `f` on a thread with a `STACK`-sized stack (inline if none can be made).
fn with_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let mut f = Some(f);
    let spawned = std::thread::scope(|s| {
        let job = &mut f;
        std::thread::Builder::new()
            .name("weft-front-end".into())
            .stack_size(STACK)
            .spawn_scoped(s, move || job.take().map(|f| f()))
            .ok()
            .and_then(|h| h.join().ok())
            .flatten()
    });
    match (spawned, f) {
        (Some(v), _) => v,
        (None, Some(f)) => f(),
        (None, None) => std::panic::resume_unwind(Box::new("weft front end failed")),
    }
}

/// Parses `src` into a syntax tree. The tree is complete only when the
/// returned diagnostics are empty.
pub fn parse(file: &str, src: &str) -> (ast::File, Diagnostics) {
    with_stack(|| parse_here(file, src))
}

fn parse_here(file: &str, src: &str) -> (ast::File, Diagnostics) {
    let mut diags = Diagnostics::new(file);
    let tree = parser::parse(src, &mut diags);
    diags.sort();
    (tree, diags)
}

/// Parses and type-checks `src`; `file` names it in messages.
pub fn check(file: &str, src: &str) -> Result<(), Diagnostics> {
    with_stack(|| analyze_here(file, src).map(|_| ()))
}

/// Parses and checks, returning the tree and the checker's tables.
pub fn analyze(file: &str, src: &str) -> Result<(ast::File, check::Info), Diagnostics> {
    with_stack(|| analyze_here(file, src))
}

fn analyze_here(file: &str, src: &str) -> Result<(ast::File, check::Info), Diagnostics> {
    analyze_as(file, src, false)
}

fn analyze_as(file: &str, src: &str, tests: bool) -> Result<(ast::File, check::Info), Diagnostics> {
    let (tree, mut diags) = parse_here(file, src);
    if !diags.is_empty() {
        return Err(diags);
    }
    let info = check::check_file_as(&tree, src, &mut diags, tests);
    if diags.is_empty() {
        Ok((tree, info))
    } else {
        diags.sort();
        Err(diags)
    }
}

/// A file compiled for `weft test` (docs/language.md, "Testing programs").
#[derive(Debug)]
pub struct TestFile {
    /// The tests: top-level functions named `test_...` with no parameters
    /// and no result, in source order.
    pub tests: Vec<String>,
    /// The verified program (entry `main`, or the first test); `None` when
    /// there are no tests.
    pub program: Option<weft_ir::ProgramDesc>,
}

/// Compiles `src` for `weft test`: as `compile`, except that `main` is not
/// required. Returns every error, or the program and its tests.
pub fn compile_tests(file: &str, src: &str) -> Result<TestFile, Diagnostics> {
    with_stack(|| {
        let (tree, info) = analyze_as(file, src, true)?;
        let tests: Vec<String> = tree
            .decls
            .iter()
            .filter_map(|d| match d {
                ast::Decl::Func(f)
                    if f.name.name.starts_with("test_")
                        && f.params.is_empty()
                        && f.result.is_none() =>
                {
                    Some(f.name.name.clone())
                }
                _ => None,
            })
            .collect();
        let has_main = tree
            .decls
            .iter()
            .any(|d| matches!(d, ast::Decl::Func(f) if f.name.name == "main"));
        let Some(first) = tests.first().cloned() else {
            return Ok(TestFile {
                tests,
                program: None,
            });
        };
        let mut program = lower::lower_consuming(file, src, tree, &info);
        drop(info);
        if !has_main {
            program.entry = first;
        }
        if let Err(e) = weft_ir::verify(&program) {
            let mut d = Diagnostics::new(file);
            d.report(
                Span::new(0, 0),
                &check::CheckError::LoweringInvalid {
                    error: e.to_string(),
                },
            );
            return Err(d);
        }
        Ok(TestFile {
            tests,
            program: Some(program),
        })
    })
}

/// Compiles `src` to a verified IR program, or returns every error.
pub fn compile(file: &str, src: &str) -> Result<weft_ir::ProgramDesc, Diagnostics> {
    with_stack(|| {
        let (tree, info) = analyze_here(file, src)?;
        // Each function's tree is freed once lowered; the tables after.
        let program = lower::lower_consuming(file, src, tree, &info);
        drop(info);
        if let Err(e) = weft_ir::verify(&program) {
            let mut d = Diagnostics::new(file);
            d.report(
                Span::new(0, 0),
                &check::CheckError::LoweringInvalid {
                    error: e.to_string(),
                },
            );
            return Err(d);
        }
        Ok(program)
    })
}
