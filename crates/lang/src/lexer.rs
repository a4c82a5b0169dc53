//! The lexer: source text to tokens, with Go's semicolon insertion.
//!
//! Invariants: never panics on any input; every token has a span into the
//! source; a `Semi` token is inserted at a newline (or at end of file) after
//! an identifier, a literal, `)`, `]`, `}`, `++`, `--`, `break`, `continue`,
//! `return`, `true`, `false` or `nil` (docs/language.md, "Lexical rules", after Go's rule).
//! Inserted semicolons have an empty span at the newline and the text "\n".

use crate::diag::{Diagnostics, Span};
use crate::syntax_error::SyntaxError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tok {
    Ident,
    Int,
    Float,
    Str,
    /// A character literal `'a'` (an untyped int constant).
    Char,
    // keywords
    Func,
    Go,
    Chan,
    Select,
    Switch,
    Case,
    Default,
    For,
    Range,
    If,
    Else,
    Break,
    Continue,
    Return,
    Var,
    Const,
    Type,
    Struct,
    True,
    False,
    Nil,
    Map,
    Defer,
    // punctuation
    LParen,
    RParen,
    LBrack,
    RBrack,
    LBrace,
    RBrace,
    Comma,
    Semi,
    Colon,
    Dot,
    Ellipsis,
    Define,
    Assign,
    Arrow,
    Inc,
    Dec,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Amp,
    Pipe,
    Caret,
    Shl,
    Shr,
    AndAnd,
    OrOr,
    Not,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    PlusAssign,
    MinusAssign,
    StarAssign,
    SlashAssign,
    PercentAssign,
    Eof,
}

impl Tok {
    /// How the token reads in an error message.
    pub fn describe(self) -> &'static str {
        use Tok::*;
        match self {
            Ident => "name",
            Int | Float => "number",
            Str => "string",
            Char => "character",
            Func => "func",
            Go => "go",
            Chan => "chan",
            Select => "select",
            Switch => "switch",
            Case => "case",
            Default => "default",
            For => "for",
            Range => "range",
            If => "if",
            Else => "else",
            Break => "break",
            Continue => "continue",
            Return => "return",
            Var => "var",
            Const => "const",
            Type => "type",
            Struct => "struct",
            True => "true",
            False => "false",
            Nil => "nil",
            Map => "map",
            Defer => "defer",
            LParen => "(",
            RParen => ")",
            LBrack => "[",
            RBrack => "]",
            LBrace => "{",
            RBrace => "}",
            Comma => ",",
            Semi => ";",
            Colon => ":",
            Dot => ".",
            Ellipsis => "...",
            Define => ":=",
            Assign => "=",
            Arrow => "<-",
            Inc => "++",
            Dec => "--",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Amp => "&",
            Pipe => "|",
            Caret => "^",
            Shl => "<<",
            Shr => ">>",
            AndAnd => "&&",
            OrOr => "||",
            Not => "!",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            PlusAssign => "+=",
            MinusAssign => "-=",
            StarAssign => "*=",
            SlashAssign => "/=",
            PercentAssign => "%=",
            Eof => "end of file",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

fn keyword(s: &str) -> Option<Tok> {
    use Tok::*;
    Some(match s {
        "func" => Func,
        "go" => Go,
        "chan" => Chan,
        "select" => Select,
        "switch" => Switch,
        "case" => Case,
        "default" => Default,
        "for" => For,
        "range" => Range,
        "if" => If,
        "else" => Else,
        "break" => Break,
        "continue" => Continue,
        "return" => Return,
        "var" => Var,
        "const" => Const,
        "type" => Type,
        "struct" => Struct,
        "true" => True,
        "false" => False,
        "nil" => Nil,
        "map" => Map,
        "defer" => Defer,
        _ => return None,
    })
}

fn ends_statement(t: Tok) -> bool {
    use Tok::*;
    matches!(
        t,
        Ident
            | Int
            | Float
            | Str
            | Char
            | RParen
            | RBrack
            | RBrace
            | Inc
            | Dec
            | Break
            | Continue
            | Return
            | True
            | False
            | Nil
    )
}

/// Splits `src` into tokens, ending with `Eof`. Errors go to `diags`; the
/// offending characters are skipped.
pub fn lex(src: &str, diags: &mut Diagnostics) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out: Vec<Token> = Vec::with_capacity(src.len() / 3 + 1);
    // a UTF-8 byte order mark at the start is not part of the program
    let mut i = if src.starts_with('\u{feff}') { 3 } else { 0 };
    let semi_here = |out: &mut Vec<Token>, at: usize| {
        if out.last().is_some_and(|t| ends_statement(t.tok)) {
            out.push(Token {
                tok: Tok::Semi,
                span: Span::new(at, at),
            });
        }
    };
    while i < b.len() {
        let c = b[i];
        let start = i;
        match c {
            b'\n' => {
                semi_here(&mut out, i);
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let body_start = i + 2;
                match src[body_start..].find("*/") {
                    Some(k) => {
                        let end = body_start + k + 2;
                        if src[start..end].contains('\n') {
                            semi_here(&mut out, start);
                        }
                        i = end;
                    }
                    None => {
                        diags.report(
                            Span::new(start, start + 2),
                            &SyntaxError::CommentNotTerminated,
                        );
                        i = b.len();
                    }
                }
                continue;
            }
            _ => {}
        }
        let tok = if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            keyword(&src[start..i]).unwrap_or(Tok::Ident)
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            lex_number(src, &mut i, diags)
        } else if c == b'"' {
            lex_string(src, &mut i, diags);
            Tok::Str
        } else if c == b'\'' {
            lex_char(src, &mut i, diags);
            Tok::Char
        } else if let Some((t, n)) = punct(&b[i..]) {
            i += n;
            t
        } else {
            let ch = src[i..].chars().next().unwrap_or('?');
            i += ch.len_utf8();
            diags.report(Span::new(start, i), &SyntaxError::InvalidChar { ch });
            continue;
        };
        out.push(Token {
            tok,
            span: Span::new(start, i),
        });
    }
    // End of file reads best at the end of the last line with text.
    let end = src.trim_end().len();
    semi_here(&mut out, end);
    out.push(Token {
        tok: Tok::Eof,
        span: Span::new(end, end),
    });
    out
}

fn punct(b: &[u8]) -> Option<(Tok, usize)> {
    use Tok::*;
    let two = |x: u8| b.get(1) == Some(&x);
    Some(match b[0] {
        b'(' => (LParen, 1),
        b')' => (RParen, 1),
        b'[' => (LBrack, 1),
        b']' => (RBrack, 1),
        b'{' => (LBrace, 1),
        b'}' => (RBrace, 1),
        b',' => (Comma, 1),
        b';' => (Semi, 1),
        b'.' if b.get(1) == Some(&b'.') && b.get(2) == Some(&b'.') => (Ellipsis, 3),
        b'.' => (Dot, 1),
        b':' if two(b'=') => (Define, 2),
        b':' => (Colon, 1),
        b'=' if two(b'=') => (Eq, 2),
        b'=' => (Assign, 1),
        b'<' if two(b'-') => (Arrow, 2),
        b'<' if two(b'<') => (Shl, 2),
        b'<' if two(b'=') => (Le, 2),
        b'<' => (Lt, 1),
        b'>' if two(b'>') => (Shr, 2),
        b'>' if two(b'=') => (Ge, 2),
        b'>' => (Gt, 1),
        b'+' if two(b'+') => (Inc, 2),
        b'+' if two(b'=') => (PlusAssign, 2),
        b'+' => (Plus, 1),
        b'-' if two(b'-') => (Dec, 2),
        b'-' if two(b'=') => (MinusAssign, 2),
        b'-' => (Minus, 1),
        b'*' if two(b'=') => (StarAssign, 2),
        b'*' => (Star, 1),
        b'/' if two(b'=') => (SlashAssign, 2),
        b'/' => (Slash, 1),
        b'%' if two(b'=') => (PercentAssign, 2),
        b'%' => (Percent, 1),
        b'&' if two(b'&') => (AndAnd, 2),
        b'&' => (Amp, 1),
        b'|' if two(b'|') => (OrOr, 2),
        b'|' => (Pipe, 1),
        b'^' => (Caret, 1),
        b'!' if two(b'=') => (Ne, 2),
        b'!' => (Not, 1),
        _ => return None,
    })
}

fn lex_number(src: &str, i: &mut usize, diags: &mut Diagnostics) -> Tok {
    let b = src.as_bytes();
    let start = *i;
    let digits = |i: &mut usize, hex: bool| {
        while *i < b.len()
            && (b[*i].is_ascii_digit() || b[*i] == b'_' || (hex && b[*i].is_ascii_hexdigit()))
        {
            *i += 1;
        }
    };
    if b[*i] == b'0' && matches!(b.get(*i + 1), Some(b'x' | b'X')) {
        *i += 2;
        digits(i, true);
        let text = &src[start..*i];
        if text.len() == 2 {
            diags.report(Span::new(start, *i), &SyntaxError::HexNoDigits);
        }
        return Tok::Int;
    }
    let mut tok = Tok::Int;
    digits(i, false);
    if *i < b.len() && b[*i] == b'.' && b.get(*i + 1) != Some(&b'.') {
        tok = Tok::Float;
        *i += 1;
        digits(i, false);
    }
    if *i < b.len() && matches!(b[*i], b'e' | b'E') {
        let save = *i;
        *i += 1;
        if *i < b.len() && matches!(b[*i], b'+' | b'-') {
            *i += 1;
        }
        if *i < b.len() && b[*i].is_ascii_digit() {
            digits(i, false);
            tok = Tok::Float;
        } else {
            *i = save;
            diags.report(Span::new(start, save + 1), &SyntaxError::ExponentNoDigits);
            *i = save + 1;
        }
    }
    if *i < b.len() && (b[*i].is_ascii_alphabetic() || b[*i] == b'_') {
        let bad = *i;
        while *i < b.len() && (b[*i].is_ascii_alphanumeric() || b[*i] == b'_') {
            *i += 1;
        }
        let suffix = src[bad..*i].to_string();
        diags.report(Span::new(bad, *i), &SyntaxError::InvalidSuffix { suffix });
    }
    tok
}

fn lex_string(src: &str, i: &mut usize, diags: &mut Diagnostics) {
    let b = src.as_bytes();
    let start = *i;
    *i += 1;
    while *i < b.len() {
        match b[*i] {
            b'"' => {
                *i += 1;
                return;
            }
            b'\n' => break,
            b'\\' => *i = lex_escape(src, *i, b'"', diags),
            _ => *i += 1,
        }
    }
    diags.report(
        Span::new(start, start + 1),
        &SyntaxError::StringNotTerminated,
    );
}

/// A character literal `'x'`: one character or one escape between single
/// quotes (docs/language.md, "Lexical rules"). Errors are reported as Go
/// words them; the token still ends at the closing quote (or the line).
fn lex_char(src: &str, i: &mut usize, diags: &mut Diagnostics) {
    let b = src.as_bytes();
    let start = *i;
    *i += 1;
    let mut count = 0;
    while *i < b.len() {
        match b[*i] {
            b'\'' => {
                *i += 1;
                match count {
                    0 => diags.report(Span::new(start, *i), &SyntaxError::RuneEmpty),
                    1 => {}
                    _ => diags.report(Span::new(start, *i), &SyntaxError::RuneTooLong),
                }
                return;
            }
            b'\n' => break,
            b'\\' => {
                count += 1;
                *i = lex_escape(src, *i, b'\'', diags);
            }
            _ => {
                let ch = src[*i..].chars().next().unwrap_or('?');
                *i += ch.len_utf8();
                count += 1;
            }
        }
    }
    diags.report(Span::new(start, start + 1), &SyntaxError::RuneNotTerminated);
}

/// Whether `c` is an octal digit.
fn octal(c: Option<&u8>) -> bool {
    matches!(c, Some(b'0'..=b'7'))
}

/// Scans the escape whose backslash is at `at`, in a string (`quote` is
/// `"`) or character literal (`'`), as Go's scanner does
/// (docs/language.md, "Lexical rules"): `\a \b \f \n \r \t \v \\`, the
/// literal's own quote (a character literal also takes `\"`), `\NNN`
/// (three octal digits, at most 255), `\xHH`, `\uHHHH`, `\UHHHHHHHH`
/// (a code point: not a surrogate, at most U+10FFFF), and Weft's `\0`
/// (NUL) where no two more octal digits follow. Reports what is wrong,
/// spanning the escape to the offending character, and returns where the
/// escape ends; a character that is not a digit of the escape is left
/// for the literal (it may be the closing quote).
fn lex_escape(src: &str, at: usize, quote: u8, diags: &mut Diagnostics) -> usize {
    let b = src.as_bytes();
    let mut i = at + 1;
    let (n, base) = match b.get(i) {
        // The literal's end: the caller reports it.
        None | Some(b'\n') => return i,
        Some(b'a' | b'b' | b'f' | b'n' | b'r' | b't' | b'v' | b'\\') => return i + 1,
        Some(&c) if c == quote || (quote == b'\'' && c == b'"') => return i + 1,
        Some(b'0') if !(octal(b.get(i + 1)) && octal(b.get(i + 2))) => return i + 1,
        Some(b'0'..=b'7') => (3, 8),
        Some(b'x') => (2, 16),
        Some(b'u') => (4, 16),
        Some(b'U') => (8, 16),
        Some(_) => {
            let ch = src[i..].chars().next().unwrap_or('?');
            i += ch.len_utf8();
            diags.report(Span::new(at, i), &SyntaxError::UnknownEscape);
            return i;
        }
    };
    if base == 16 {
        i += 1;
    }
    let mut x: u32 = 0;
    for _ in 0..n {
        let Some(&c) = b.get(i) else {
            return i;
        };
        match (c as char).to_digit(base) {
            Some(d) => {
                x = x.wrapping_mul(base).wrapping_add(d);
                i += 1;
            }
            None => {
                let ch = src[i..].chars().next().unwrap_or('?');
                let base = if base == 8 { "octal" } else { "hexadecimal" };
                let end = if c == b'\n' { i } else { i + ch.len_utf8() };
                diags.report(Span::new(at, end), &SyntaxError::EscapeDigit { ch, base });
                return i;
            }
        }
    }
    if base == 8 && x > 255 {
        diags.report(
            Span::new(at, i),
            &SyntaxError::OctalEscapeTooLarge { value: x },
        );
    } else if n > 2 && char::from_u32(x).is_none() {
        diags.report(
            Span::new(at, i),
            &SyntaxError::EscapeNotCodePoint { value: x },
        );
    }
    i
}

/// What one escape stands for: a byte (`\xHH`, `\NNN`) or a character.
enum Escape {
    Byte(u8),
    Char(u32),
}

/// The escape at the start of `s` (just after its backslash) and its
/// length. Errors were already reported; an unknown escape reads as its
/// character, a `\x`, `\u` or `\U` without its digits as 0.
fn escape(s: &str) -> (Escape, usize) {
    let digits = |n: usize, radix: u32| {
        s.get(1..1 + n)
            .filter(|d| d.bytes().all(|c| (c as char).is_digit(radix)))
            .and_then(|d| u32::from_str_radix(d, radix).ok())
    };
    let octal3 = s
        .get(..3)
        .filter(|d| d.bytes().all(|c| matches!(c, b'0'..=b'7')))
        .and_then(|d| u32::from_str_radix(d, 8).ok());
    let simple = |c: char| (Escape::Char(c as u32), 1);
    match s.chars().next() {
        None => (Escape::Char(0), 0),
        Some('n') => simple('\n'),
        Some('t') => simple('\t'),
        Some('r') => simple('\r'),
        Some('a') => simple('\u{7}'),
        Some('b') => simple('\u{8}'),
        Some('f') => simple('\u{c}'),
        Some('v') => simple('\u{b}'),
        Some('0'..='7') if octal3.is_some() => {
            (Escape::Byte(octal3.unwrap_or(0).min(255) as u8), 3)
        }
        Some('0') => simple('\0'),
        Some('x') => match digits(2, 16) {
            Some(v) => (Escape::Byte(v as u8), 3),
            None => (Escape::Char(0), 1),
        },
        Some('u') => match digits(4, 16) {
            Some(v) => (Escape::Char(v), 5),
            None => (Escape::Char(0), 1),
        },
        Some('U') => match digits(8, 16) {
            Some(v) => (Escape::Char(v), 9),
            None => (Escape::Char(0), 1),
        },
        Some(c) => (Escape::Char(c as u32), c.len_utf8()),
    }
}

/// The value of a character literal token (quotes included in `text`):
/// the code point of its one character or escape (`'\xff'` and `'\377'`
/// are 255). Errors were already reported; a malformed literal reads as 0.
pub fn char_value(text: &str) -> u64 {
    let inner = text.strip_prefix('\'').unwrap_or(text);
    let inner = inner.strip_suffix('\'').unwrap_or(inner);
    let v = match inner.strip_prefix('\\') {
        Some(esc) => match escape(esc).0 {
            Escape::Byte(b) => u32::from(b),
            Escape::Char(c) => char::from_u32(c).map_or(0, |_| c),
        },
        None => inner.chars().next().map_or(0, |c| c as u32),
    };
    u64::from(v)
}

/// The bytes of a string literal token (quotes included in `text`): a
/// `\xHH` or octal escape is that byte (so the string may not be UTF-8,
/// as in Go), `\uHHHH` and `\UHHHHHHHH` the character's UTF-8. Unknown
/// escapes were already reported; they decode as themselves.
pub fn unquote(text: &str) -> Vec<u8> {
    let inner = text.strip_prefix('"').unwrap_or(text);
    let inner = inner.strip_suffix('"').unwrap_or(inner);
    let mut out = Vec::with_capacity(inner.len());
    let mut rest = inner;
    while let Some(k) = rest.find('\\') {
        out.extend_from_slice(&rest.as_bytes()[..k]);
        let (e, n) = escape(&rest[k + 1..]);
        match e {
            Escape::Byte(b) => out.push(b),
            Escape::Char(c) => {
                let c = char::from_u32(c).unwrap_or('\u{fffd}');
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            }
        }
        rest = rest.get(k + 1 + n..).unwrap_or("");
    }
    out.extend_from_slice(rest.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        let mut d = Diagnostics::new("t");
        let t = lex(src, &mut d).into_iter().map(|t| t.tok).collect();
        assert!(d.is_empty(), "{d:?}");
        t
    }

    #[test]
    fn semicolons_are_inserted_as_in_go() {
        use Tok::*;
        assert_eq!(toks("x++\ny"), vec![Ident, Inc, Semi, Ident, Semi, Eof]);
        assert_eq!(toks("a +\nb"), vec![Ident, Plus, Ident, Semi, Eof]);
        assert_eq!(toks("return\n"), vec![Return, Semi, Eof]);
        assert_eq!(toks("f(\n)"), vec![Ident, LParen, RParen, Semi, Eof]);
    }

    #[test]
    fn numbers() {
        use Tok::*;
        assert_eq!(
            toks("42 0x2A 1_000 1.0 .5 1e-3 2.5E+4"),
            vec![Int, Int, Int, Float, Float, Float, Float, Semi, Eof]
        );
    }

    #[test]
    fn crlf_and_bom() {
        use Tok::*;
        assert_eq!(toks("\u{feff}x\r\ny"), vec![Ident, Semi, Ident, Semi, Eof]);
    }

    #[test]
    fn strings_unquote() {
        assert_eq!(unquote(r#""a\tb\n\"\\\0""#), b"a\tb\n\"\\\0");
        assert_eq!(
            unquote(r#""\x41\101\u00e9\U0001F600\xff\377\012\0x""#),
            "AA\u{e9}\u{1F600}"
                .bytes()
                .chain(*b"\xff\xff\n\0x")
                .collect::<Vec<u8>>()
        );
        for (lit, v) in [
            (r"'\x41'", 65),
            (r"'\101'", 65),
            (r"'\377'", 255),
            (r"'\u00e9'", 0xe9),
            (r"'\U0001F600'", 0x1F600),
            (r"'\''", 39),
            (r"'\v'", 11),
            (r"'\0'", 0),
            ("'é'", 0xe9),
        ] {
            assert_eq!(char_value(lit), v, "{lit}");
        }
    }

    #[test]
    fn bad_escapes_are_reported_at_their_backslash() {
        for (src, at) in [
            (r#""ab\x4g""#, 3),
            (r#""\400""#, 1),
            (r#""\uD800""#, 1),
            (r#""\U00110000""#, 1),
            (r#""\9""#, 1),
            (r#""\'""#, 1),
            (r#""\12""#, 1),
        ] {
            let mut d = Diagnostics::new("t");
            lex(src, &mut d);
            assert_eq!(d.len(), 1, "{src}: {d:?}");
            let got = format!("{d:?}");
            assert!(got.contains(&format!("start: {at}")), "{src}: {got}");
        }
    }

    #[test]
    fn bad_input_does_not_panic() {
        let mut d = Diagnostics::new("t");
        lex("\"abc\n 1e @ 0x é /*", &mut d);
        assert_eq!(d.len(), 6);
    }
}
