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

/// Test checks shared by the message catalogues (`check/error.rs`,
/// `syntax_error.rs`).
#[cfg(test)]
pub(crate) mod catalogue_checks {
    use super::Message;

    /// Every variant index below `variants` has exactly one example.
    pub(crate) fn assert_one_example_each(
        indices: impl IntoIterator<Item = usize>,
        variants: usize,
    ) {
        let mut seen = vec![false; variants];
        for i in indices {
            assert!(!seen[i], "variant {i} listed twice");
            seen[i] = true;
        }
        let missing: Vec<usize> = (0..variants).filter(|&i| !seen[i]).collect();
        assert!(
            missing.is_empty(),
            "variants without an example: {missing:?}"
        );
    }

    /// A message (and its help line) reads like the others: non-empty, a
    /// lowercase first letter, no final period, one line.
    pub(crate) fn assert_message_style(e: &(impl Message + std::fmt::Debug)) {
        let m = e.to_string();
        let first = m.chars().next();
        assert!(first.is_some_and(|c| !c.is_uppercase()), "{e:?}: {m:?}");
        assert!(
            !m.ends_with('.') && !m.ends_with(char::is_whitespace),
            "{e:?}: {m:?}"
        );
        assert!(!m.contains('\n'), "{e:?}: {m:?}");
        if let Some(h) = e.help() {
            assert!(
                !h.is_empty() && !h.ends_with('.') && !h.contains('\n'),
                "{e:?}: {h:?}"
            );
        }
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

/// Line and column of byte offsets in a fixed text, each in O(log lines):
/// the line starts, and the number of characters before every 64th byte
/// (so a column costs at most 64 bytes of counting however long the line).
/// The lowering asks for the position of every op; counting characters
/// from the line start each time was quadratic in a long line's length.
pub struct LineIndex<'a> {
    src: &'a str,
    /// Byte offset of the start of each line.
    lines: Vec<u32>,
    /// Characters before byte `64 * i`.
    chars: Vec<u32>,
}

impl<'a> LineIndex<'a> {
    const STEP: usize = 64;

    pub fn new(src: &'a str) -> LineIndex<'a> {
        let bytes = src.as_bytes();
        let mut lines = vec![0];
        lines.extend(memchr_all(bytes, b'\n').map(|i| (i + 1) as u32));
        let mut chars = Vec::with_capacity(bytes.len() / Self::STEP + 1);
        let mut n = 0u32;
        for chunk in bytes.chunks(Self::STEP) {
            chars.push(n);
            n += count_chars(chunk);
        }
        chars.push(n);
        LineIndex { src, lines, chars }
    }

    /// Characters before byte `off` (at a character boundary).
    fn chars_before(&self, off: usize) -> u32 {
        let k = off / Self::STEP;
        self.chars[k] + count_chars(&self.src.as_bytes()[k * Self::STEP..off])
    }

    /// Line and column (both from 1, columns in characters) of a byte
    /// offset; the same as [`line_col`].
    pub fn line_col(&self, offset: usize) -> (u32, u32) {
        let off = floor_char_boundary(self.src, offset.min(self.src.len()));
        let line = self.lines.partition_point(|&s| s as usize <= off);
        let start = self.lines[line - 1] as usize;
        let col = self.chars_before(off) - self.chars_before(start);
        (line as u32, col + 1)
    }

    /// The byte range of the line holding byte `offset`, without its `\n`.
    pub fn line_range(&self, offset: usize) -> (usize, usize) {
        let off = offset.min(self.src.len());
        let line = self.lines.partition_point(|&s| s as usize <= off);
        let start = self.lines[line - 1] as usize;
        let end = self
            .lines
            .get(line)
            .map_or(self.src.len(), |&next| next as usize - 1);
        (start, end)
    }
}

/// Positions of every `b` in `bytes`.
fn memchr_all(bytes: &[u8], b: u8) -> impl Iterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter(move |(_, &c)| c == b)
        .map(|(i, _)| i)
}

/// The characters starting in `bytes` (every byte but UTF-8 continuations).
fn count_chars(bytes: &[u8]) -> u32 {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count() as u32
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
        let index = LineIndex::new(src);
        for d in &self.items {
            render_one(&mut out, &self.file, &index, d);
        }
        out
    }
}

/// A source line longer than this many characters is shown as a window of
/// `WINDOW` characters around the caret, with `...` where it is cut.
pub const LONG_LINE: usize = 200;
/// The characters of a long line shown around the caret.
pub const WINDOW: usize = 120;
/// How many characters of the window come before the caret (when the line
/// has them).
const BEFORE: usize = 60;

fn render_one(out: &mut String, file: &str, index: &LineIndex<'_>, d: &Diagnostic) {
    let src = index.src;
    let start = floor_char_boundary(src, (d.span.start as usize).min(src.len()));
    let (line, col) = index.line_col(start);
    let _ = writeln!(out, "{file}:{line}:{col}: error: {}", d.message);
    let (line_start, line_end) = index.line_range(start);
    let text = src[line_start..line_end].trim_end_matches('\r');
    let end = floor_char_boundary(src, (d.span.end as usize).clamp(start, line_end));
    let width = src[start..end].chars().count().max(1);
    let before = &src[line_start..start];
    // The window: characters [from, to) of the line, in byte offsets of `text`.
    let long = text.len() > LONG_LINE && text.chars().nth(LONG_LINE).is_some();
    let (from, to) = if long {
        let caret = before.chars().count();
        let total = text.chars().count();
        let first = caret
            .saturating_sub(BEFORE)
            .min(total.saturating_sub(WINDOW));
        let last = (first + WINDOW).min(total);
        (char_offset(text, first), char_offset(text, last))
    } else {
        (0, text.len())
    };
    let cut_left = from > 0;
    if cut_left {
        out.push_str("...");
    }
    out.push_str(&text[from..to]);
    if to < text.len() {
        out.push_str("...");
    }
    out.push('\n');
    if cut_left {
        out.push_str("   ");
    }
    let shown_before = &before[from.min(before.len())..];
    for c in shown_before.chars() {
        out.push(if c == '\t' { '\t' } else { ' ' });
    }
    // Underline no further than the shown text (and at least the caret).
    let room = if long {
        let at = (start - line_start).min(to);
        text[at..to].chars().count().max(1)
    } else {
        width
    };
    out.push('^');
    for _ in 1..width.min(room) {
        out.push('~');
    }
    out.push('\n');
    if let Some(help) = &d.help {
        let _ = writeln!(out, "help: {help}");
    }
}

/// The byte offset of the `n`th character of `s` (its length past the end).
fn char_offset(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
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

    /// `LineIndex` gives what `line_col` gives, on lines long and short,
    /// with multi-byte characters across its 64-byte steps.
    #[test]
    fn line_index_agrees_with_line_col() {
        let mut src = String::new();
        for i in 0..24 {
            src.push_str(&"aé\tz".repeat(i * 5));
            src.push('\n');
        }
        let index = LineIndex::new(&src);
        for off in 0..=src.len() {
            assert_eq!(index.line_col(off), line_col(&src, off), "offset {off}");
        }
    }

    /// A long line shows a window around the caret with `...` where it is
    /// cut; the header keeps the true column and the caret stays under the
    /// token (issue 26: an 800 KB line was echoed whole).
    #[test]
    fn long_lines_show_a_window() {
        let src = format!(
            "x := {} + yy + {}\n",
            "1 + ".repeat(500),
            "2 + ".repeat(500)
        );
        let at = src.find("yy").unwrap();
        let mut d = Diagnostics::new("a.weft");
        d.error(Span::new(at, at + 2), "undefined: yy");
        let out = d.render(&src);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            format!("a.weft:1:{}: error: undefined: yy", at + 1)
        );
        assert!(
            lines[1].starts_with("...") && lines[1].ends_with("..."),
            "{}",
            lines[1]
        );
        assert_eq!(lines[1].chars().count(), WINDOW + 6);
        let caret = lines[2].find('^').unwrap();
        assert_eq!(&lines[1][caret..caret + 2], "yy");
        assert_eq!(lines[2].trim(), "^~");
        // Near either end the window stops at the line's edge.
        for (at, left, right) in [(0, false, true), (src.len() - 2, true, false)] {
            let mut d = Diagnostics::new("a.weft");
            d.error(Span::new(at, at + 1), "here");
            let out = d.render(&src);
            let shown = out.lines().nth(1).unwrap();
            assert_eq!(shown.starts_with("..."), left, "{shown}");
            assert_eq!(shown.ends_with("..."), right, "{shown}");
            assert!(shown.chars().count() <= WINDOW + 6);
        }
        // A line of up to LONG_LINE characters is printed whole.
        let src = format!("{}yy\n", "a".repeat(LONG_LINE - 2));
        let mut d = Diagnostics::new("a.weft");
        d.error(Span::new(LONG_LINE - 2, LONG_LINE), "undefined: yy");
        assert_eq!(d.render(&src).lines().nth(1), Some(src.trim_end()));
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
