//! Expression parsing: precedence climbing over Go's five binary levels.
//!
//! Levels (high to low): `* / % << >> &`, `+ - | ^`, `== != < <= > >=`,
//! `&&`, `||`. Unary operators `- + ! ^ <-` bind tighter than any binary one.

use super::{PResult, Parser, Reported, SyntaxError};
use crate::ast::*;
use crate::lexer::{char_value, unquote, Tok};

fn binop(t: Tok) -> Option<(BinOp, u8)> {
    use BinOp::*;
    Some(match t {
        Tok::OrOr => (LogOr, 1),
        Tok::AndAnd => (LogAnd, 2),
        Tok::Eq => (Eq, 3),
        Tok::Ne => (Ne, 3),
        Tok::Lt => (Lt, 3),
        Tok::Le => (Le, 3),
        Tok::Gt => (Gt, 3),
        Tok::Ge => (Ge, 3),
        Tok::Plus => (Add, 4),
        Tok::Minus => (Sub, 4),
        Tok::Pipe => (Or, 4),
        Tok::Caret => (Xor, 4),
        Tok::Star => (Mul, 5),
        Tok::Slash => (Div, 5),
        Tok::Percent => (Rem, 5),
        Tok::Shl => (Shl, 5),
        Tok::Shr => (Shr, 5),
        Tok::Amp => (And, 5),
        _ => return None,
    })
}

impl<'a> Parser<'a> {
    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.binary(1);
        self.leave();
        r
    }

    pub(crate) fn expr_list(&mut self) -> PResult<Vec<Expr>> {
        let mut out = vec![self.expr()?];
        while self.eat(Tok::Comma) {
            out.push(self.expr()?);
        }
        Ok(out)
    }

    fn node(&mut self, kind: ExprKind, span: crate::diag::Span) -> Expr {
        Expr {
            id: self.id(),
            kind,
            span,
        }
    }

    /// A chain `a + b - c ...` at precedence `min` and above. The links of
    /// a chain are parsed in a loop and do not count as nesting (Go accepts
    /// `1 + 1 + ... + 1` of any length); the right operand of a link binds
    /// tighter, so the recursion here is at most one call per precedence
    /// level. The tree leans left, and every pass after the parser walks a
    /// left spine in a loop.
    fn binary(&mut self, min: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        while let Some((op, prec)) = binop(self.peek()) {
            if prec < min {
                break;
            }
            self.bump();
            let rhs = self.binary(prec + 1)?;
            let span = lhs.span.to(rhs.span);
            lhs = self.node(ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span);
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Expr> {
        let op = match self.peek() {
            Tok::Minus => UnOp::Neg,
            Tok::Plus => UnOp::Pos,
            Tok::Not => UnOp::Not,
            Tok::Caret => UnOp::BitNot,
            Tok::Arrow => UnOp::Recv,
            Tok::Star | Tok::Amp => return self.error(self.span(), SyntaxError::Pointers),
            _ => return self.primary(),
        };
        let start = self.bump().span;
        self.enter()?;
        let x = self.unary();
        self.leave();
        let x = x?;
        let span = start.to(x.span);
        Ok(self.node(ExprKind::Unary(op, Box::new(x)), span))
    }

    fn primary(&mut self) -> PResult<Expr> {
        let x = self.operand()?;
        // each postfix (`.f`, `[i]`, `(args)`) nests the tree one level deeper
        let depth = self.depth;
        let r = self.postfix(x);
        self.depth = depth;
        r
    }

    fn postfix(&mut self, mut x: Expr) -> PResult<Expr> {
        loop {
            if matches!(
                self.peek(),
                Tok::Dot | Tok::LBrack | Tok::LParen | Tok::LBrace
            ) {
                self.enter()?;
            }
            match self.peek() {
                Tok::Dot => {
                    self.bump();
                    let name = self.ident()?;
                    let span = x.span.to(name.span);
                    x = self.node(ExprKind::Field(Box::new(x), name), span);
                }
                Tok::LBrack => {
                    self.bump();
                    let saved = std::mem::replace(&mut self.no_lit, false);
                    let r = self.index_or_slice(x);
                    self.no_lit = saved;
                    x = r?;
                }
                Tok::LParen => {
                    self.bump();
                    let saved = std::mem::replace(&mut self.no_lit, false);
                    let r = self.call_args();
                    self.no_lit = saved;
                    let (args, spread) = r?;
                    let end = self.expect(Tok::RParen)?.span;
                    let span = x.span.to(end);
                    x = self.node(
                        ExprKind::Call {
                            func: Box::new(x),
                            args,
                            spread,
                        },
                        span,
                    );
                }
                Tok::LBrace if !self.no_lit && matches!(x.kind, ExprKind::Ident(_)) => {
                    let name = match &x.kind {
                        ExprKind::Ident(n) => Ident {
                            id: x.id,
                            name: n.clone(),
                            span: x.span,
                        },
                        _ => return Err(Reported),
                    };
                    let (elems, end) = self.lit_body()?;
                    let span = x.span.to(end);
                    x = self.node(ExprKind::StructLit { name, elems }, span);
                }
                _ => return Ok(x),
            }
        }
    }

    fn index_or_slice(&mut self, x: Expr) -> PResult<Expr> {
        let lo = if self.peek() == Tok::Colon {
            None
        } else {
            Some(Box::new(self.expr()?))
        };
        if self.eat(Tok::Colon) {
            let hi = if self.peek() == Tok::RBrack {
                None
            } else {
                Some(Box::new(self.expr()?))
            };
            let end = self.expect(Tok::RBrack)?.span;
            let span = x.span.to(end);
            return Ok(self.node(
                ExprKind::Slice {
                    x: Box::new(x),
                    lo,
                    hi,
                },
                span,
            ));
        }
        let end = self.expect(Tok::RBrack)?.span;
        let span = x.span.to(end);
        match lo {
            Some(i) => Ok(self.node(ExprKind::Index(Box::new(x), i), span)),
            None => self.unexpected("index"),
        }
    }

    fn call_args(&mut self) -> PResult<(Vec<Expr>, bool)> {
        let mut args = Vec::new();
        let mut spread = false;
        while self.peek() != Tok::RParen {
            args.push(self.expr()?);
            if self.eat(Tok::Ellipsis) {
                spread = true;
                self.eat(Tok::Comma);
                break;
            }
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        Ok((args, spread))
    }

    /// `{ elems }` of a composite literal; returns the elements and the `}` span.
    fn lit_body(&mut self) -> PResult<(Vec<Element>, crate::diag::Span)> {
        self.expect(Tok::LBrace)?;
        self.enter()?;
        let saved = std::mem::replace(&mut self.no_lit, false);
        let r = self.elements();
        self.no_lit = saved;
        self.leave();
        let elems = r?;
        let end = self.expect(Tok::RBrace)?.span;
        Ok((elems, end))
    }

    fn elements(&mut self) -> PResult<Vec<Element>> {
        let mut out = Vec::new();
        loop {
            if self.peek() == Tok::RBrace {
                return Ok(out);
            }
            let mut value = self.element_value()?;
            if self.eat(Tok::Colon) {
                let key = match std::mem::take(&mut value.kind) {
                    ExprKind::Ident(name) => Ident {
                        id: value.id,
                        name,
                        span: value.span,
                    },
                    _ => {
                        return self.error(value.span, SyntaxError::FieldKeyNotName);
                    }
                };
                let value = self.element_value()?;
                out.push(Element {
                    key: Some(key),
                    value,
                });
            } else {
                out.push(Element { key: None, value });
            }
            if !self.eat(Tok::Comma) {
                if self.peek() == Tok::Semi {
                    return self.unexpected("comma or } (add a comma before the newline)");
                }
                return Ok(out);
            }
        }
    }

    /// `{ k: v, ... }` of a map literal; returns the entries and the `}` span.
    fn map_body(&mut self) -> PResult<(Vec<(Expr, Expr)>, crate::diag::Span)> {
        self.expect(Tok::LBrace)?;
        self.enter()?;
        let saved = std::mem::replace(&mut self.no_lit, false);
        let r = self.map_entries();
        self.no_lit = saved;
        self.leave();
        let entries = r?;
        let end = self.expect(Tok::RBrace)?.span;
        Ok((entries, end))
    }

    fn map_entries(&mut self) -> PResult<Vec<(Expr, Expr)>> {
        let mut out = Vec::new();
        loop {
            if self.peek() == Tok::RBrace {
                return Ok(out);
            }
            let key = self.element_value()?;
            self.expect(Tok::Colon)?;
            let value = self.element_value()?;
            out.push((key, value));
            if !self.eat(Tok::Comma) {
                if self.peek() == Tok::Semi {
                    return self.unexpected("comma or } (add a comma before the newline)");
                }
                return Ok(out);
            }
        }
    }

    fn element_value(&mut self) -> PResult<Expr> {
        if self.peek() == Tok::LBrace {
            let start = self.span();
            let (elems, end) = self.lit_body()?;
            return Ok(self.node(ExprKind::Elided(elems), start.to(end)));
        }
        self.expr()
    }

    fn operand(&mut self) -> PResult<Expr> {
        let t = self.toks[self.pos];
        let text = self.text(t.span);
        let kind = match t.tok {
            Tok::Ident => ExprKind::Ident(text.to_string()),
            Tok::Int => match parse_int(text) {
                Some(v) => ExprKind::Int(v),
                None => ExprKind::BigInt,
            },
            Tok::Float => ExprKind::Float(text.replace('_', "").parse().unwrap_or(f64::INFINITY)),
            Tok::Str => ExprKind::Str(unquote(text)),
            Tok::Char => ExprKind::Int(char_value(text)),
            Tok::True => ExprKind::Bool(true),
            Tok::False => ExprKind::Bool(false),
            Tok::Nil => ExprKind::Nil,
            Tok::LParen => {
                self.bump();
                let saved = std::mem::replace(&mut self.no_lit, false);
                let r = self.expr();
                self.no_lit = saved;
                let inner = r?;
                let end = self.expect(Tok::RParen)?.span;
                return Ok(self.node(ExprKind::Paren(Box::new(inner)), t.span.to(end)));
            }
            Tok::Chan => {
                let ty = self.type_expr()?;
                let span = ty.span;
                return Ok(self.node(ExprKind::Type(ty), span));
            }
            Tok::LBrack => {
                let ty = self.type_expr()?;
                if self.peek() == Tok::LBrace {
                    let (elems, end) = self.lit_body()?;
                    let span = ty.span.to(end);
                    return Ok(self.node(ExprKind::ListLit { ty, elems }, span));
                }
                let span = ty.span;
                return Ok(self.node(ExprKind::Type(ty), span));
            }
            Tok::Map => {
                let ty = self.type_expr()?;
                if self.peek() == Tok::LBrace && !self.no_lit {
                    let (entries, end) = self.map_body()?;
                    let span = ty.span.to(end);
                    return Ok(self.node(ExprKind::MapLit { ty, entries }, span));
                }
                let span = ty.span;
                return Ok(self.node(ExprKind::Type(ty), span));
            }
            Tok::Func => {
                self.bump();
                self.expect(Tok::LParen)?;
                let params = self.params()?;
                let result = self.result_type()?;
                let saved = std::mem::replace(&mut self.no_lit, false);
                let body = self.block();
                self.no_lit = saved;
                let body = body?;
                let span = t.span.to(body.span);
                let lit = FuncLit {
                    params,
                    result,
                    body,
                };
                return Ok(self.node(ExprKind::FuncLit(Box::new(lit)), span));
            }
            _ => return self.unexpected("expression"),
        };
        self.bump();
        Ok(self.node(kind, t.span))
    }
}

/// The value of an integer literal (`42`, `0x2A`, `1_000`), None past u64.
fn parse_int(text: &str) -> Option<u64> {
    let clean = text.replace('_', "");
    if let Some(hex) = clean
        .strip_prefix("0x")
        .or_else(|| clean.strip_prefix("0X"))
    {
        if hex.is_empty() {
            return Some(0); // reported by the lexer
        }
        u64::from_str_radix(hex, 16).ok()
    } else {
        clean.parse().ok()
    }
}
