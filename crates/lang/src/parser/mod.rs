//! The parser: tokens to a syntax tree, recursive descent after Go's parser.
//!
//! Invariants: never fails and never panics; it returns a (possibly partial)
//! `File` plus diagnostics. After an error inside a statement the parser
//! skips to the next statement (past a `;` or newline at the same brace
//! depth, or up to the closing `}`), so each broken statement yields one
//! error and every later error in the file is still found. Nesting deeper
//! than `MAX_DEPTH` is an error, which bounds the recursion.
//!
//! Composite literals `Name{...}` are not recognised in the header of `if`,
//! `for` and `switch` (Go's rule: `if x == T{}` needs parentheses); `no_lit`
//! tracks that and is cleared inside parentheses and brackets.
//!
//! Files: `mod.rs` (the parser's state, tokens, recovery, declarations),
//! `stmt.rs` (statements), `expr.rs` (expressions, precedence climbing);
//! messages come from `crate::syntax_error`.

mod expr;
mod stmt;

pub use crate::syntax_error::SyntaxError;

use crate::ast::*;
use std::collections::HashSet;

use crate::diag::{Diagnostics, LineIndex, Span};
use crate::lexer::{lex, Tok, Token};

/// The deepest nesting accepted: parentheses, blocks, unary operators,
/// postfix chains (`f(x)[i].g`), composite literals and types, one level
/// each. Binary operator chains (`a + b + c ...`) and `else if` chains do
/// not count: they are parsed, checked and lowered in loops, so they may be
/// as long as the source makes them (issue 26). The checker and lowering
/// recurse this deep on a thread with a large stack (see `lib.rs`).
pub const MAX_DEPTH: u32 = 1000;

/// Parses a whole file. Errors are appended to `diags`.
pub fn parse(src: &str, diags: &mut Diagnostics) -> File {
    let mut lex_diags = Diagnostics::new(diags.file());
    let toks = lex(src, &mut lex_diags);
    let mut parse_diags = Diagnostics::new(diags.file());
    let mut p = Parser {
        src,
        toks,
        pos: 0,
        diags: &mut parse_diags,
        next_id: 0,
        no_lit: false,
        depth: 0,
        brace: 0,
    };
    let decls = p.file();
    let node_count = p.next_id;
    // A syntax error on a line with a lexical error is usually caused by it.
    let index = LineIndex::new(src);
    let bad_lines: HashSet<u32> = lex_diags
        .items()
        .iter()
        .map(|d| index.line_col(d.span.start as usize).0)
        .collect();
    for d in parse_diags.items() {
        if bad_lines.is_empty() || !bad_lines.contains(&index.line_col(d.span.start as usize).0) {
            match &d.help {
                Some(h) => lex_diags.error_help(d.span, d.message.clone(), h.clone()),
                None => lex_diags.error(d.span, d.message.clone()),
            }
        }
    }
    diags.extend(lex_diags);
    File { decls, node_count }
}

/// An error that has already been reported.
pub(crate) struct Reported;

pub(crate) type PResult<T> = Result<T, Reported>;

pub(crate) struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    diags: &'a mut Diagnostics,
    next_id: NodeId,
    no_lit: bool,
    depth: u32,
    /// Open `{` not yet closed, counted as tokens are consumed.
    brace: u32,
}

impl<'a> Parser<'a> {
    fn id(&mut self) -> NodeId {
        self.next_id += 1;
        self.next_id - 1
    }

    fn peek(&self) -> Tok {
        self.toks[self.pos].tok
    }

    fn peek_at(&self, n: usize) -> Tok {
        self.toks.get(self.pos + n).map_or(Tok::Eof, |t| t.tok)
    }

    fn span(&self) -> Span {
        self.toks[self.pos].span
    }

    fn prev_end(&self) -> Span {
        let end = if self.pos == 0 {
            0
        } else {
            self.toks[self.pos - 1].span.end
        };
        Span { start: end, end }
    }

    fn text(&self, span: Span) -> &'a str {
        &self.src[span.start as usize..span.end as usize]
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos];
        match t.tok {
            Tok::Eof => return t,
            Tok::LBrace => self.brace += 1,
            Tok::RBrace => self.brace = self.brace.saturating_sub(1),
            _ => {}
        }
        self.pos += 1;
        t
    }

    fn eat(&mut self, tok: Tok) -> bool {
        if self.peek() == tok {
            self.bump();
            true
        } else {
            false
        }
    }

    fn describe_current(&self) -> String {
        let t = self.toks[self.pos];
        match t.tok {
            Tok::Semi if t.span.start == t.span.end => {
                if t.span.start as usize >= self.src.trim_end().len() {
                    "end of file".into()
                } else {
                    "newline".into()
                }
            }
            Tok::Ident => format!("name {}", self.text(t.span)),
            Tok::Int | Tok::Float | Tok::Str | Tok::Char => {
                format!("literal {}", self.text(t.span))
            }
            Tok::Eof => "end of file".into(),
            other => {
                let d = other.describe();
                if d.chars().all(|c| c.is_ascii_alphabetic()) {
                    format!("keyword {d}")
                } else {
                    d.to_string()
                }
            }
        }
    }

    /// Reports `syntax error: unexpected X, expected WHAT` at the current token.
    fn unexpected<T>(&mut self, what: &'static str) -> PResult<T> {
        let err = SyntaxError::Unexpected {
            found: self.describe_current(),
            expected: what,
        };
        self.error(self.span(), err)
    }

    /// Reports `e` at `span`.
    pub(crate) fn error<T>(&mut self, span: Span, e: SyntaxError) -> PResult<T> {
        self.diags.report(span, &e);
        Err(Reported)
    }

    fn expect(&mut self, tok: Tok) -> PResult<Token> {
        if self.peek() == tok {
            Ok(self.bump())
        } else {
            self.unexpected(tok.describe())
        }
    }

    fn ident(&mut self) -> PResult<Ident> {
        if self.peek() != Tok::Ident {
            return self.unexpected("name");
        }
        let t = self.bump();
        Ok(Ident {
            id: self.id(),
            name: self.text(t.span).to_string(),
            span: t.span,
        })
    }

    fn enter(&mut self) -> PResult<()> {
        if self.depth >= MAX_DEPTH {
            return self.error(self.span(), SyntaxError::TooDeep);
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Skips to the start of the next statement of the block whose brace
    /// depth is `base`: past a `;` at that depth, or up to (not past) the `}`
    /// that closes the block, or a `case`/`default` at that depth.
    pub(crate) fn sync_stmt(&mut self, base: u32) {
        loop {
            let at_base = self.brace == base;
            match self.peek() {
                Tok::Eof => return,
                Tok::RBrace if self.brace <= base => return,
                Tok::Semi if at_base => {
                    self.bump();
                    return;
                }
                Tok::Case | Tok::Default if at_base => return,
                _ => {}
            }
            self.bump();
        }
    }

    /// Skips to the next top-level declaration keyword outside any braces.
    fn sync_decl(&mut self) {
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Func | Tok::Type | Tok::Const | Tok::Var if self.brace == 0 => return,
                _ => {}
            }
            self.bump();
        }
    }

    fn file(&mut self) -> Vec<Decl> {
        let mut decls = Vec::new();
        loop {
            let r = match self.peek() {
                Tok::Eof => break,
                Tok::Semi => {
                    self.bump();
                    continue;
                }
                Tok::Func => self.func_decl().map(|f| decls.push(Decl::Func(f))),
                Tok::Type => self.type_decl().map(|t| decls.push(Decl::Type(t))),
                Tok::Const => self
                    .const_decl()
                    .map(|cs| decls.extend(cs.into_iter().map(Decl::Const))),
                Tok::Var => self.error(self.span(), SyntaxError::TopLevelVar),
                _ => self.unexpected("func, type or const"),
            };
            if r.is_ok() {
                if !matches!(self.peek(), Tok::Semi | Tok::Eof) {
                    let _ = self.unexpected::<()>("newline after declaration");
                    self.bump();
                    self.sync_decl();
                }
            } else {
                if self.peek() != Tok::Eof {
                    self.bump();
                }
                self.sync_decl();
            }
        }
        decls
    }

    fn func_decl(&mut self) -> PResult<FuncDecl> {
        let start = self.bump().span;
        if self.peek() == Tok::LParen {
            return self.error(self.span(), SyntaxError::Methods);
        }
        let name = self.ident()?;
        if self.peek() == Tok::LBrack {
            return self.error(self.span(), SyntaxError::Generics);
        }
        self.expect(Tok::LParen)?;
        let params = self.params()?;
        let result = self.result_type()?;
        let body = self.block()?;
        Ok(FuncDecl {
            name,
            params,
            result,
            span: start.to(body.span),
            body,
        })
    }

    /// A function's result, if one comes next: a type, or `(T1, T2)`.
    pub(crate) fn result_type(&mut self) -> PResult<Option<TypeExpr>> {
        match self.peek() {
            Tok::LParen => {
                let start = self.bump().span;
                let mut types = vec![self.type_expr()?];
                while self.eat(Tok::Comma) {
                    if self.peek() == Tok::RParen {
                        break;
                    }
                    types.push(self.type_expr()?);
                }
                if self.peek() != Tok::RParen {
                    return self.unexpected(", or ) (results are types, without names)");
                }
                let end = self.bump().span;
                if types.len() == 1 {
                    return Ok(types.pop());
                }
                Ok(Some(TypeExpr {
                    kind: TypeKind::Tuple(types),
                    span: start.to(end),
                }))
            }
            Tok::Ident | Tok::Chan | Tok::LBrack | Tok::Map | Tok::Func | Tok::Star => {
                Ok(Some(self.type_expr()?))
            }
            _ => Ok(None),
        }
    }

    /// Parameters after `(` through `)`: `a int, b, c float`.
    fn params(&mut self) -> PResult<Vec<FieldDecl>> {
        let mut out = Vec::new();
        let mut pending: Vec<Ident> = Vec::new();
        while self.peek() != Tok::RParen {
            let name = self.ident()?;
            pending.push(name);
            if self.peek() == Tok::Comma {
                self.bump();
                continue;
            }
            if self.peek() == Tok::RParen {
                break;
            }
            let ty = self.type_expr()?;
            for name in pending.drain(..) {
                out.push(FieldDecl {
                    name,
                    ty: ty.clone(),
                });
            }
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        if let Some(last) = pending.last() {
            return self.error(last.span, SyntaxError::MissingParamType);
        }
        self.expect(Tok::RParen)?;
        Ok(out)
    }

    fn type_decl(&mut self) -> PResult<TypeDecl> {
        let start = self.bump().span;
        let name = self.ident()?;
        if self.peek() == Tok::LBrack {
            return self.error(self.span(), SyntaxError::Generics);
        }
        if self.peek() == Tok::Ident && self.text(self.span()) == "interface" {
            return self.error(self.span(), SyntaxError::Interfaces);
        }
        if self.peek() != Tok::Struct {
            return self.unexpected("struct (only struct types can be declared)");
        }
        self.bump();
        self.expect(Tok::LBrace)?;
        let mut fields = Vec::new();
        loop {
            while self.eat(Tok::Semi) {}
            if self.peek() == Tok::RBrace {
                break;
            }
            let mut names = vec![self.ident()?];
            while self.eat(Tok::Comma) {
                names.push(self.ident()?);
            }
            let ty = self.type_expr()?;
            for name in names {
                fields.push(FieldDecl {
                    name,
                    ty: ty.clone(),
                });
            }
            if !matches!(self.peek(), Tok::Semi | Tok::RBrace) {
                return self.unexpected("; or } after field");
            }
        }
        let end = self.expect(Tok::RBrace)?.span;
        Ok(TypeDecl {
            name,
            fields,
            span: start.to(end),
        })
    }

    /// `const X = e`, `const X T = e`, or `const ( ... )`.
    fn const_decl(&mut self) -> PResult<Vec<ConstSpec>> {
        self.bump();
        if self.eat(Tok::LParen) {
            let mut out = Vec::new();
            loop {
                while self.eat(Tok::Semi) {}
                if self.eat(Tok::RParen) {
                    return Ok(out);
                }
                out.push(self.const_spec()?);
                if !matches!(self.peek(), Tok::Semi | Tok::RParen) {
                    return self.unexpected("; or )");
                }
            }
        }
        Ok(vec![self.const_spec()?])
    }

    fn const_spec(&mut self) -> PResult<ConstSpec> {
        let name = self.ident()?;
        let ty = if self.peek() == Tok::Assign {
            None
        } else {
            Some(self.type_expr()?)
        };
        self.expect(Tok::Assign)?;
        let value = self.expr()?;
        Ok(ConstSpec {
            span: name.span.to(value.span),
            name,
            ty,
            value,
        })
    }

    pub(crate) fn type_expr(&mut self) -> PResult<TypeExpr> {
        self.enter()?;
        let r = self.type_inner();
        self.leave();
        r
    }

    fn type_inner(&mut self) -> PResult<TypeExpr> {
        let start = self.span();
        match self.peek() {
            Tok::Ident if self.text(start) == "interface" => {
                self.error(start, SyntaxError::Interfaces)
            }
            Tok::Star => self.error(start, SyntaxError::Pointers),
            Tok::Ident => {
                let name = self.ident()?;
                Ok(TypeExpr {
                    span: name.span,
                    kind: TypeKind::Named(name),
                })
            }
            Tok::Chan => {
                self.bump();
                let elem = self.type_expr()?;
                Ok(TypeExpr {
                    span: start.to(elem.span),
                    kind: TypeKind::Chan(Box::new(elem)),
                })
            }
            Tok::LBrack => {
                self.bump();
                self.expect(Tok::RBrack)?;
                let elem = self.type_expr()?;
                Ok(TypeExpr {
                    span: start.to(elem.span),
                    kind: TypeKind::List(Box::new(elem)),
                })
            }
            Tok::Map => {
                self.bump();
                self.expect(Tok::LBrack)?;
                let key = self.type_expr()?;
                self.expect(Tok::RBrack)?;
                let value = self.type_expr()?;
                Ok(TypeExpr {
                    span: start.to(value.span),
                    kind: TypeKind::Map(Box::new(key), Box::new(value)),
                })
            }
            Tok::Func => {
                self.bump();
                self.expect(Tok::LParen)?;
                let mut params = Vec::new();
                while self.peek() != Tok::RParen {
                    let mut t = self.type_expr()?;
                    // `func(a int, b string)`: a name before the type
                    if !matches!(self.peek(), Tok::Comma | Tok::RParen) {
                        t = self.type_expr()?;
                    }
                    params.push(t);
                    if !self.eat(Tok::Comma) {
                        break;
                    }
                }
                let close = self.expect(Tok::RParen)?.span;
                let result = self.result_type()?;
                let end = result.as_ref().map_or(close, |r| r.span);
                Ok(TypeExpr {
                    span: start.to(end),
                    kind: TypeKind::Func {
                        params,
                        result: result.map(Box::new),
                    },
                })
            }
            Tok::Struct => self.error(start, SyntaxError::AnonymousStruct),
            _ => self.unexpected("type"),
        }
    }

    pub(crate) fn block(&mut self) -> PResult<Block> {
        let open = self.expect(Tok::LBrace)?.span;
        self.enter()?;
        let saved = std::mem::replace(&mut self.no_lit, false);
        let stmts = self.stmt_list();
        self.no_lit = saved;
        self.leave();
        let close = self.expect(Tok::RBrace)?.span;
        Ok(Block {
            stmts,
            span: open.to(close),
        })
    }
}
