//! The lexer's and parser's errors: one [`SyntaxError`] variant per kind
//! of problem, carrying its data, so that the same problem always reads the
//! same. Its `Display` is the message (lowercase, no final period; Go's
//! `syntax error: ...` wording where Go has the same rule); [`Message::help`]
//! adds the `help:` line some kinds have. The checker's counterpart is
//! [`crate::check::CheckError`].

use crate::diag::Message;

/// What the lexer and the parser report.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SyntaxError {
    // ---- lexical ----
    /// `/*` without `*/`.
    #[error("comment not terminated")]
    CommentNotTerminated,
    /// A character that starts no token.
    #[error("invalid character {ch:?} in source")]
    InvalidChar {
        /// The character.
        ch: char,
    },
    /// `0x` with no digits after it.
    #[error("hexadecimal literal has no digits")]
    HexNoDigits,
    /// `e` or `E` in a number with no digits after it.
    #[error("exponent has no digits")]
    ExponentNoDigits,
    /// Letters straight after a number.
    #[error("invalid suffix {suffix:?} on number")]
    InvalidSuffix {
        /// The letters.
        suffix: String,
    },
    /// A backslash escape the language does not have.
    #[error("unknown escape sequence")]
    UnknownEscape,
    /// A character that is not a digit where an octal (`\101`) or
    /// hexadecimal (`\x41`, `\u00e9`) escape needs one (Go's words).
    #[error("invalid character {ch:?} in {base} escape")]
    EscapeDigit {
        /// The character.
        ch: char,
        /// `octal` or `hexadecimal`.
        base: &'static str,
    },
    /// An octal escape above `\377`.
    #[error("octal escape value {value} > 255")]
    OctalEscapeTooLarge {
        /// Its value.
        value: u32,
    },
    /// A `\u` or `\U` escape that is a surrogate or above U+10FFFF.
    #[error("escape is invalid Unicode code point U+{value:04X}")]
    EscapeNotCodePoint {
        /// Its value.
        value: u32,
    },
    /// A string literal that reaches the end of its line.
    #[error("string literal not terminated")]
    StringNotTerminated,

    // ---- grammar ----
    /// A token the grammar does not allow here.
    #[error("syntax error: unexpected {found}, expected {expected}")]
    Unexpected {
        /// The token, as `Parser::describe_current` words it.
        found: String,
        /// What the grammar allows.
        expected: &'static str,
    },
    /// A token after a complete statement on the same line.
    #[error("syntax error: unexpected {found} at end of statement")]
    UnexpectedAtEndOfStatement {
        /// The token.
        found: String,
    },
    /// A comma in a place that takes one expression.
    #[error("syntax error: unexpected comma in expression list")]
    UnexpectedComma,
    /// Parameter names without a type after the last.
    #[error("syntax error: missing parameter type")]
    MissingParamType,
    /// Nesting past `MAX_DEPTH`.
    #[error("program is nested too deeply")]
    TooDeep,
    /// `var` at the top level.
    #[error("top-level variables are not allowed")]
    TopLevelVar,
    /// `struct { ... }` as a type expression.
    #[error("struct types must be declared with a name")]
    AnonymousStruct,
    /// `type` inside a function.
    #[error("types must be declared at the top level")]
    LocalType,
    /// `func` inside a function.
    #[error("functions must be declared at the top level")]
    LocalFunc,
    /// `defer x` where `x` is not a call.
    #[error("expression in defer must be a function call")]
    DeferNotCall,
    /// `go x` where `x` is not a call.
    #[error("expression in go must be a function call")]
    GoNotCall,
    /// Something other than a name before `:=`.
    #[error("non-name on left side of :=")]
    DefineNonName,
    /// `op=` with more than one target or value.
    #[error("assignment operation requires single-valued expressions")]
    CompoundAssignMulti,
    /// `for a, b, c := range x`.
    #[error("range clause permits at most two iteration variables")]
    RangeTooManyVars,
    /// `for k = range x`.
    #[error("range with = is not supported")]
    RangeAssign,
    /// `if { ... }`.
    #[error("missing condition in if statement")]
    MissingIfCondition,
    /// `if x = y { ... }`.
    #[error("cannot use assignment {stmt} as value")]
    AssignAsValue {
        /// The assignment.
        stmt: String,
    },
    /// A statement where an `if` condition belongs.
    #[error("cannot use {stmt} as value")]
    StmtAsValue {
        /// The statement.
        stmt: String,
    },
    /// A statement where a `for` condition belongs.
    #[error("expected for loop condition")]
    ExpectedForCondition,
    /// `:=` as the post statement of a `for`.
    #[error("cannot declare in post statement of for loop")]
    DeclareInForPost,
    /// A statement where a `switch` tag belongs.
    #[error("switch expression must be an expression")]
    SwitchNotExpr,
    /// `case a, b, c := <-ch` in a select.
    #[error("a receive case takes at most two variables")]
    RecvCaseTooManyVars,
    /// A select case that neither sends nor receives.
    #[error("select case must be a receive or a send")]
    SelectCaseNotComm,
    /// `expr: value` in a composite literal where `expr` is not a name.
    #[error("field name in struct literal must be a name")]
    FieldKeyNotName,
    /// A character literal that reaches the end of its line.
    #[error("rune literal not terminated")]
    RuneNotTerminated,
    /// `''`.
    #[error("empty rune literal or unescaped ' in rune literal")]
    RuneEmpty,
    /// `'ab'`.
    #[error("more than one character in rune literal")]
    RuneTooLong,

    // ---- Go features Weft leaves out (docs/language.md, "Not in Weft") ----
    /// `goto L`.
    #[error("goto is not supported in Weft")]
    Goto,
    /// `*T`, `*p` or `&x`.
    #[error("pointers are not supported in Weft")]
    Pointers,
    /// `func (r T) m()`.
    #[error("methods are not supported in Weft")]
    Methods,
    /// `interface{}` or `type I interface { ... }`.
    #[error("interfaces are not supported in Weft")]
    Interfaces,
    /// `func f[T any]()` or `type S[T any] struct`.
    #[error("generics are not supported in Weft")]
    Generics,
}

impl Message for SyntaxError {
    fn help(&self) -> Option<String> {
        use SyntaxError::*;
        let help = match self {
            UnknownEscape => {
                "escapes are \\n \\t \\r \\\\ \\\" \\0 \\a \\b \\f \\v \\NNN \\xHH \\uHHHH \\UHHHHHHHH"
            }
            TopLevelVar => {
                "tasks share nothing but channels; declare the variable inside a function"
            }
            AnonymousStruct => "declare it with `type Name struct { ... }`",
            LocalFunc => "assign a function literal: `name := func(...) { ... }`",
            DeferNotCall => "write `defer f(args)` or `defer func() { ... }()`",
            GoNotCall => "write `go f(args)` or `go { statements }`",
            RangeAssign => "declare the loop variables with :=",
            AssignAsValue { .. } => "did you mean == ?",
            SelectCaseNotComm => "write `case v := <-ch:` or `case ch <- v:`",
            Goto => "use a labelled `break` or `continue`, or a loop",
            Pointers => {
                "values are copied: return the changed value, or share it through a channel"
            }
            Methods => "write a function that takes the value as its first parameter",
            Interfaces => "pass a func value, or use a struct",
            Generics => "write the function for each type it is used with",
            _ => return None,
        };
        Some(help.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::catalogue_checks::{assert_message_style, assert_one_example_each};

    /// The position of `e`'s variant in the catalogue. Exhaustive, so that
    /// a new variant must be listed here (and then in `one_of_each`).
    fn variant(e: &SyntaxError) -> usize {
        use SyntaxError::*;
        match e {
            CommentNotTerminated => 0,
            InvalidChar { .. } => 1,
            HexNoDigits => 2,
            ExponentNoDigits => 3,
            InvalidSuffix { .. } => 4,
            UnknownEscape => 5,
            StringNotTerminated => 6,
            Unexpected { .. } => 7,
            UnexpectedAtEndOfStatement { .. } => 8,
            UnexpectedComma => 9,
            MissingParamType => 10,
            TooDeep => 11,
            TopLevelVar => 12,
            DeferNotCall => 13,
            AnonymousStruct => 14,
            LocalType => 15,
            LocalFunc => 16,
            Generics => 17,
            GoNotCall => 18,
            DefineNonName => 19,
            CompoundAssignMulti => 20,
            RangeTooManyVars => 21,
            RangeAssign => 22,
            MissingIfCondition => 23,
            AssignAsValue { .. } => 24,
            StmtAsValue { .. } => 25,
            ExpectedForCondition => 26,
            DeclareInForPost => 27,
            SwitchNotExpr => 28,
            RecvCaseTooManyVars => 29,
            SelectCaseNotComm => 30,
            FieldKeyNotName => 31,
            Goto => 32,
            Pointers => 33,
            Methods => 34,
            Interfaces => 35,
            RuneNotTerminated => 36,
            RuneEmpty => 37,
            RuneTooLong => 38,
            EscapeDigit { .. } => 39,
            OctalEscapeTooLarge { .. } => 40,
            EscapeNotCodePoint { .. } => 41,
        }
    }

    const VARIANTS: usize = 42;

    fn one_of_each() -> Vec<SyntaxError> {
        use SyntaxError::*;
        vec![
            CommentNotTerminated,
            InvalidChar { ch: '@' },
            HexNoDigits,
            ExponentNoDigits,
            InvalidSuffix {
                suffix: "px".into(),
            },
            UnknownEscape,
            StringNotTerminated,
            Unexpected {
                found: "newline".into(),
                expected: "type",
            },
            UnexpectedAtEndOfStatement {
                found: "name y".into(),
            },
            UnexpectedComma,
            MissingParamType,
            TooDeep,
            TopLevelVar,
            DeferNotCall,
            AnonymousStruct,
            LocalType,
            LocalFunc,
            GoNotCall,
            DefineNonName,
            CompoundAssignMulti,
            RangeTooManyVars,
            RangeAssign,
            MissingIfCondition,
            AssignAsValue {
                stmt: "x = 1".into(),
            },
            StmtAsValue {
                stmt: "x := 1".into(),
            },
            ExpectedForCondition,
            DeclareInForPost,
            SwitchNotExpr,
            RecvCaseTooManyVars,
            SelectCaseNotComm,
            FieldKeyNotName,
            Goto,
            Pointers,
            Methods,
            Interfaces,
            Generics,
            RuneNotTerminated,
            RuneEmpty,
            RuneTooLong,
            EscapeDigit {
                ch: 'g',
                base: "hexadecimal",
            },
            OctalEscapeTooLarge { value: 400 },
            EscapeNotCodePoint { value: 0xD800 },
        ]
    }

    #[test]
    fn one_example_of_every_variant() {
        assert_one_example_each(one_of_each().iter().map(variant), VARIANTS);
    }

    #[test]
    fn messages_follow_the_style() {
        one_of_each().iter().for_each(assert_message_style);
    }

    #[test]
    fn data_reads_as_before() {
        assert_eq!(
            SyntaxError::InvalidChar { ch: '@' }.to_string(),
            "invalid character '@' in source"
        );
        assert_eq!(
            SyntaxError::InvalidSuffix {
                suffix: "px".into()
            }
            .to_string(),
            "invalid suffix \"px\" on number"
        );
        assert_eq!(
            SyntaxError::UnknownEscape.help().as_deref(),
            Some(r#"escapes are \n \t \r \\ \" \0 \a \b \f \v \NNN \xHH \uHHHH \UHHHHHHHH"#)
        );
        assert_eq!(
            SyntaxError::EscapeDigit {
                ch: 'g',
                base: "hexadecimal"
            }
            .to_string(),
            "invalid character 'g' in hexadecimal escape"
        );
        assert_eq!(
            SyntaxError::EscapeNotCodePoint { value: 0xD800 }.to_string(),
            "escape is invalid Unicode code point U+D800"
        );
    }
}
