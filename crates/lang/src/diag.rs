//! Compile diagnostics and their rendering in the form of docs/language.md, "Compile errors".
//!
//! Each error renders as `FILE:LINE:COL: error: MESSAGE`, the source line as
//! it is (tabs kept), a caret line underlining the token (`^~~~`), and an
//! optional `help:` line. Columns count characters from 1; a tab is one
//! column. The caret line copies the tabs of the source line before the
//! caret so that it lines up in any terminal.
//!
//! Rendered by hand: ariadne, miette and codespan-reporting all draw their
//! own headers and gutters (`error[..]`, `──╮`, `┌─`), and none prints the
//! `FILE:LINE:COL: error:` line that docs/language.md (and Go tooling) fixes.

use std::fmt::Write as _;

/// A byte range `[start, end)` in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The span from the start of `self` to the end of `other`.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start,
            end: other.end.max(self.start),
        }
    }
}

/// One compile error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub span: Span,
    pub message: String,
    pub help: Option<String>,
}

/// A kind of compile error from one of the catalogues
/// ([`crate::check::CheckError`], [`crate::parser::SyntaxError`]): its
/// `Display` is the message, [`Message::help`] the optional `help:` line.
pub trait Message: std::fmt::Display {
    /// The `help:` line, if this kind of error has one.
    fn help(&self) -> Option<String> {
        None
    }
}

/// All compile errors of one file, in source order once finished.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    file: String,
    items: Vec<Diagnostic>,
}

/// Line and column (both from 1, columns in characters) of a byte offset.
pub fn line_col(src: &str, offset: usize) -> (u32, u32) {
    let offset = floor_char_boundary(src, offset.min(src.len()));
    let before = &src[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = src[line_start..offset].chars().count() + 1;
    (line as u32, col as u32)
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl Diagnostics {
    pub fn new(file: &str) -> Diagnostics {
        Diagnostics {
            file: file.to_string(),
            items: Vec::new(),
        }
    }

    /// Records the error `m` at `span`, with its help line if it has one.
    pub fn report(&mut self, span: Span, m: &impl Message) {
        self.items.push(Diagnostic {
            span,
            message: m.to_string(),
            help: m.help(),
        });
    }

    /// Records an error with a free-form message. The front end reports
    /// through [`Diagnostics::report`] and its catalogues instead.
    pub fn error(&mut self, span: Span, message: impl Into<String>) {
        self.items.push(Diagnostic {
            span,
            message: message.into(),
            help: None,
        });
    }

    /// [`Diagnostics::error`] with a `help:` line.
    pub fn error_help(&mut self, span: Span, message: impl Into<String>, help: impl Into<String>) {
        self.items.push(Diagnostic {
            span,
            message: message.into(),
            help: Some(help.into()),
        });
    }

    /// The number of errors.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn items(&self) -> &[Diagnostic] {
        &self.items
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    /// Sorts into source order (stable: errors at one place keep their order).
    pub fn sort(&mut self) {
        self.items.sort_by_key(|d| d.span.start);
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.items.extend(other.items);
    }

    /// Renders every error in the form of docs/language.md, "Compile errors", each ending in a newline.
    pub fn render(&self, src: &str) -> String {
        let mut out = String::new();
        for d in &self.items {
            render_one(&mut out, &self.file, src, d);
        }
        out
    }
}

fn render_one(out: &mut String, file: &str, src: &str, d: &Diagnostic) {
    let start = floor_char_boundary(src, (d.span.start as usize).min(src.len()));
    let (line, col) = line_col(src, start);
    let _ = writeln!(out, "{file}:{line}:{col}: error: {}", d.message);
    let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = src[start..].find('\n').map_or(src.len(), |i| start + i);
    let text = src[line_start..line_end].trim_end_matches('\r');
    out.push_str(text);
    out.push('\n');
    for c in src[line_start..start].chars() {
        out.push(if c == '\t' { '\t' } else { ' ' });
    }
    let end = floor_char_boundary(src, (d.span.end as usize).clamp(start, line_end));
    let width = src[start..end].chars().count().max(1);
    out.push('^');
    for _ in 1..width {
        out.push('~');
    }
    out.push('\n');
    if let Some(help) = &d.help {
        let _ = writeln!(out, "help: {help}");
    }
}

impl std::fmt::Display for Diagnostics {
    /// One `FILE: error: MESSAGE` line per error; positions need the source,
    /// so use [`Diagnostics::render`] for the full form.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for d in &self.items {
            writeln!(f, "{}: error: {}", self.file, d.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_with_tabs_and_underline() {
        let src = "func main() {\n\tx := yy + 1\n}\n";
        let mut d = Diagnostics::new("a.weft");
        let at = src.find("yy").unwrap();
        d.error_help(Span::new(at, at + 2), "undefined: yy", "declare it first");
        assert_eq!(
            d.render(src),
            "a.weft:2:7: error: undefined: yy\n\tx := yy + 1\n\t     ^~\nhelp: declare it first\n"
        );
    }

    #[test]
    fn columns_count_characters() {
        let src = "é\tx";
        assert_eq!(line_col(src, src.find('x').unwrap()), (1, 3));
    }

    #[test]
    fn span_at_end_of_file() {
        let src = "func";
        let mut d = Diagnostics::new("f");
        d.error(Span::new(4, 4), "unexpected end of file");
        assert_eq!(
            d.render(src),
            "f:1:5: error: unexpected end of file\nfunc\n    ^\n"
        );
    }
}
