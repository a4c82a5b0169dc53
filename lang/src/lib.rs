//! The Weft block DSL front end: lexer, parser, checker, lowering to the IR.
//!
//! `compile` and `check` run the whole pipeline and return every error of
//! the file at once (`Diagnostics`, in source order); `parse` exposes the
//! syntax tree for tests and tools. This crate knows nothing of the runtime.

pub mod ast;
pub mod diag;
pub mod lexer;
pub mod parser;

pub use diag::{Diagnostic, Diagnostics, Span};

/// Parses `src` into a syntax tree. The tree is complete only when the
/// returned diagnostics are empty.
pub fn parse(file: &str, src: &str) -> (ast::File, Diagnostics) {
    let mut diags = Diagnostics::new(file);
    let tree = parser::parse(src, &mut diags);
    diags.sort();
    (tree, diags)
}

pub mod check;
pub mod lower;
pub mod types;

/// Parses and type-checks `src`; `file` names it in messages.
pub fn check(file: &str, src: &str) -> Result<(), Diagnostics> {
    analyze(file, src).map(|_| ())
}

/// Parses and checks, returning the tree and the checker's tables.
pub fn analyze(file: &str, src: &str) -> Result<(ast::File, check::Info), Diagnostics> {
    let (tree, mut diags) = parse(file, src);
    if !diags.is_empty() {
        return Err(diags);
    }
    let info = check::check_file(&tree, src, &mut diags);
    if diags.is_empty() {
        Ok((tree, info))
    } else {
        diags.sort();
        Err(diags)
    }
}

/// Compiles `src` to a verified IR program, or returns every error.
pub fn compile(file: &str, src: &str) -> Result<weft_ir::ProgramDesc, Diagnostics> {
    let (tree, info) = analyze(file, src)?;
    let program = lower::lower(file, src, &tree, &info);
    if let Err(e) = weft_ir::verify(&program) {
        let mut d = Diagnostics::new(file);
        d.error(
            Span::new(0, 0),
            format!("internal error: the lowered program does not verify: {e}"),
        );
        return Err(d);
    }
    Ok(program)
}
