//! Statement parsing: simple statements, control flow, `select`, `go`.

use super::{PResult, Parser, Reported, SyntaxError};
use crate::ast::*;
use crate::diag::Span;
use crate::lexer::Tok;

/// What a simple statement may be in its context.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Plain,
    /// The header of a `for`: `k, v := range x` is allowed.
    ForHeader,
}

impl<'a> Parser<'a> {
    /// Statements up to `}`, `case`, `default` or end of file.
    pub(crate) fn stmt_list(&mut self) -> Vec<Stmt> {
        let mut out = Vec::new();
        let base = self.brace;
        loop {
            match self.peek() {
                Tok::RBrace | Tok::Eof | Tok::Case | Tok::Default => return out,
                Tok::Semi => {
                    self.bump();
                    continue;
                }
                _ => {}
            }
            match self.stmt() {
                Ok(s) => {
                    out.push(s);
                    match self.peek() {
                        Tok::Semi => {
                            self.bump();
                        }
                        Tok::RBrace | Tok::Eof | Tok::Case | Tok::Default => {}
                        _ => {
                            let err = SyntaxError::UnexpectedAtEndOfStatement {
                                found: self.describe_current(),
                            };
                            let _ = self.error::<()>(self.span(), err);
                            self.sync_stmt(base);
                        }
                    }
                }
                Err(Reported) => self.sync_stmt(base),
            }
        }
    }

    /// The placement after a `go` call or block: `on DEV`. `on` is not a
    /// reserved word: it means placement only right there, so a variable
    /// may still be called `on` (docs/language.md, "Placement").
    fn go_placement(&mut self) -> PResult<Option<Expr>> {
        if self.peek() != Tok::Ident || self.text(self.span()) != "on" {
            return Ok(None);
        }
        self.bump();
        Ok(Some(self.expr()?))
    }

    fn mk(&mut self, kind: StmtKind, span: Span) -> Stmt {
        Stmt {
            id: self.id(),
            kind,
            span,
        }
    }

    pub(crate) fn stmt(&mut self) -> PResult<Stmt> {
        self.enter()?;
        let r = self.stmt_inner();
        self.leave();
        r
    }

    fn stmt_inner(&mut self) -> PResult<Stmt> {
        let start = self.span();
        match self.peek() {
            Tok::Var => self.var_stmt(),
            Tok::Const => {
                let specs = self.const_decl()?;
                let end = self.prev_end();
                Ok(self.mk(StmtKind::Const(specs), start.to(end)))
            }
            Tok::Type => self.error(start, SyntaxError::LocalType),
            Tok::Func if self.peek_at(1) == Tok::Ident => self.error(start, SyntaxError::LocalFunc),
            Tok::Defer => {
                self.bump();
                let e = self.expr()?;
                if !matches!(e.kind, ExprKind::Call { .. }) {
                    return self.error(e.span, SyntaxError::DeferNotCall);
                }
                let span = start.to(e.span);
                Ok(self.mk(StmtKind::Defer(e), span))
            }
            Tok::LBrace => {
                let b = self.block()?;
                let span = b.span;
                Ok(self.mk(StmtKind::Block(b), span))
            }
            Tok::If => self.if_stmt(),
            Tok::For => self.for_stmt(),
            Tok::Switch => self.switch_stmt(),
            Tok::Select => self.select_stmt(),
            Tok::Go => {
                self.bump();
                if self.peek() == Tok::LBrace {
                    let b = self.block()?;
                    let on = self.go_placement()?;
                    let span = start.to(on.as_ref().map_or(b.span, |d| d.span));
                    return Ok(self.mk(StmtKind::GoBlock(b, on), span));
                }
                let e = self.expr()?;
                if !matches!(e.kind, ExprKind::Call { .. }) {
                    return self.error(e.span, SyntaxError::GoNotCall);
                }
                let on = self.go_placement()?;
                let span = start.to(on.as_ref().map_or(e.span, |d| d.span));
                Ok(self.mk(StmtKind::GoCall(e, on), span))
            }
            Tok::Return => {
                self.bump();
                let value = if matches!(self.peek(), Tok::Semi | Tok::RBrace | Tok::Eof) {
                    Vec::new()
                } else {
                    self.expr_list()?
                };
                let span = start.to(value.last().map_or(start, |e| e.span));
                Ok(self.mk(StmtKind::Return(value), span))
            }
            Tok::Break | Tok::Continue => {
                let is_break = self.bump().tok == Tok::Break;
                let label = if self.peek() == Tok::Ident {
                    Some(self.ident()?)
                } else {
                    None
                };
                let span = start.to(label.as_ref().map_or(start, |l| l.span));
                let kind = if is_break {
                    StmtKind::Break(label)
                } else {
                    StmtKind::Continue(label)
                };
                Ok(self.mk(kind, span))
            }
            Tok::Ident if self.peek_at(1) == Tok::Ident && self.text(start) == "goto" => {
                self.error(start, SyntaxError::Goto)
            }
            Tok::Ident if self.peek_at(1) == Tok::Colon => {
                let label = self.ident()?;
                self.bump();
                while self.eat(Tok::Semi) {}
                if matches!(self.peek(), Tok::RBrace | Tok::Eof) {
                    let span = label.span;
                    let stmt = Box::new(self.empty(span));
                    return Ok(self.mk(StmtKind::Labeled { label, stmt }, span));
                }
                let stmt = self.stmt()?;
                let span = label.span.to(stmt.span);
                Ok(self.mk(
                    StmtKind::Labeled {
                        label,
                        stmt: Box::new(stmt),
                    },
                    span,
                ))
            }
            _ => self.simple_stmt(Ctx::Plain),
        }
    }

    fn empty(&mut self, span: Span) -> Stmt {
        self.mk(StmtKind::Empty, span)
    }

    fn var_stmt(&mut self) -> PResult<Stmt> {
        let start = self.bump().span;
        let mut names = vec![self.ident()?];
        while self.eat(Tok::Comma) {
            names.push(self.ident()?);
        }
        let ty = if self.peek() == Tok::Assign {
            None
        } else {
            Some(self.type_expr()?)
        };
        let values = if self.eat(Tok::Assign) {
            self.expr_list()?
        } else {
            Vec::new()
        };
        let end = self.prev_end();
        Ok(self.mk(StmtKind::Var { names, ty, values }, start.to(end)))
    }

    /// Assignment, definition, send, `++`/`--`, label or expression.
    fn simple_stmt(&mut self, ctx: Ctx) -> PResult<Stmt> {
        let start = self.span();
        if ctx == Ctx::ForHeader && self.peek() == Tok::Range {
            self.bump();
            let expr = self.expr()?;
            return self.finish_range(start, None, None, expr);
        }
        let lhs = self.expr_list()?;
        match self.peek() {
            Tok::Define => {
                let op = self.bump().span;
                let mut names = Vec::new();
                for e in &lhs {
                    match &e.kind {
                        ExprKind::Ident(n) => names.push(Ident {
                            id: e.id,
                            name: n.clone(),
                            span: e.span,
                        }),
                        _ => {
                            return self.error(e.span, SyntaxError::DefineNonName);
                        }
                    }
                }
                if ctx == Ctx::ForHeader && self.peek() == Tok::Range {
                    self.bump();
                    if names.len() > 2 {
                        return self.error(lhs[2].span, SyntaxError::RangeTooManyVars);
                    }
                    let expr = self.expr()?;
                    let mut it = names.into_iter();
                    let key = it.next();
                    let value = it.next();
                    return self.finish_range(start, key, value, expr);
                }
                let values = self.expr_list()?;
                let span = start.to(values.last().map_or(op, |e| e.span));
                Ok(self.mk(StmtKind::Define { names, values }, span))
            }
            Tok::Assign
            | Tok::PlusAssign
            | Tok::MinusAssign
            | Tok::StarAssign
            | Tok::SlashAssign
            | Tok::PercentAssign => {
                let op = match self.bump().tok {
                    Tok::PlusAssign => Some(BinOp::Add),
                    Tok::MinusAssign => Some(BinOp::Sub),
                    Tok::StarAssign => Some(BinOp::Mul),
                    Tok::SlashAssign => Some(BinOp::Div),
                    Tok::PercentAssign => Some(BinOp::Rem),
                    _ => None,
                };
                if ctx == Ctx::ForHeader && self.peek() == Tok::Range {
                    return self.error(self.span(), SyntaxError::RangeAssign);
                }
                let rhs = self.expr_list()?;
                if op.is_some() && (lhs.len() != 1 || rhs.len() != 1) {
                    return self.error(start, SyntaxError::CompoundAssignMulti);
                }
                let span = start.to(rhs.last().map_or(start, |e| e.span));
                Ok(self.mk(StmtKind::Assign { lhs, op, rhs }, span))
            }
            Tok::Inc | Tok::Dec => {
                let t = self.bump();
                let target = self.single(lhs)?;
                let span = target.span.to(t.span);
                Ok(self.mk(
                    StmtKind::IncDec {
                        target,
                        inc: t.tok == Tok::Inc,
                    },
                    span,
                ))
            }
            Tok::Arrow => {
                self.bump();
                let chan = self.single(lhs)?;
                let value = self.expr()?;
                let span = chan.span.to(value.span);
                Ok(self.mk(StmtKind::Send { chan, value }, span))
            }
            _ => {
                let e = self.single(lhs)?;
                let span = e.span;
                Ok(self.mk(StmtKind::Expr(e), span))
            }
        }
    }

    fn single(&mut self, mut list: Vec<Expr>) -> PResult<Expr> {
        if list.len() != 1 {
            return self.error(list[1].span, SyntaxError::UnexpectedComma);
        }
        Ok(list.remove(0))
    }

    fn finish_range(
        &mut self,
        start: Span,
        key: Option<Ident>,
        value: Option<Ident>,
        expr: Expr,
    ) -> PResult<Stmt> {
        let saved = std::mem::replace(&mut self.no_lit, false);
        let body = self.block();
        self.no_lit = saved;
        let body = body?;
        let span = start.to(body.span);
        Ok(self.mk(
            StmtKind::ForRange {
                key,
                value,
                expr,
                body,
            },
            span,
        ))
    }

    /// Parses a header statement with composite literals disabled.
    fn header_stmt(&mut self, ctx: Ctx) -> PResult<Stmt> {
        let saved = std::mem::replace(&mut self.no_lit, true);
        let r = self.simple_stmt(ctx);
        self.no_lit = saved;
        r
    }

    fn header_expr(&mut self) -> PResult<Expr> {
        let saved = std::mem::replace(&mut self.no_lit, true);
        let r = self.expr();
        self.no_lit = saved;
        r
    }

    /// `if ... {} else if ... {} else {}`. The links of an `else if` chain
    /// are parsed in a loop and do not count as nesting: a chain is as long
    /// as the source makes it (the passes after the parser walk it in loops
    /// too).
    fn if_stmt(&mut self) -> PResult<Stmt> {
        // Each link: the `if` keyword's span, init, condition, then-block.
        let mut links: Vec<(Span, Option<Box<Stmt>>, Expr, Block)> = Vec::new();
        let last = loop {
            let start = self.bump().span;
            if self.peek() == Tok::LBrace {
                return self.error(self.span(), SyntaxError::MissingIfCondition);
            }
            let mut first = self.header_stmt(Ctx::Plain)?;
            let (init, cond) = if self.eat(Tok::Semi) {
                (Some(Box::new(first)), self.header_expr()?)
            } else {
                match std::mem::take(&mut first.kind) {
                    StmtKind::Expr(e) => (None, e),
                    StmtKind::Assign { op: None, .. } => {
                        let stmt = self.text(first.span).to_string();
                        return self.error(first.span, SyntaxError::AssignAsValue { stmt });
                    }
                    _ => {
                        let stmt = self.text(first.span).to_string();
                        return self.error(first.span, SyntaxError::StmtAsValue { stmt });
                    }
                }
            };
            let then = self.block()?;
            links.push((start, init, cond, then));
            if !self.eat(Tok::Else) {
                break None;
            }
            match self.peek() {
                Tok::If => continue,
                Tok::LBrace => {
                    let b = self.block()?;
                    let span = b.span;
                    break Some(self.mk(StmtKind::Block(b), span));
                }
                _ => return self.unexpected("if statement or block after else"),
            }
        };
        // Build the nested statements from the innermost out.
        let mut els = last.map(Box::new);
        while let Some((start, init, cond, then)) = links.pop() {
            let end = els.as_ref().map_or(then.span, |s| s.span);
            let s = self.mk(
                StmtKind::If {
                    init,
                    cond,
                    then,
                    els,
                },
                start.to(end),
            );
            if links.is_empty() {
                return Ok(s);
            }
            els = Some(Box::new(s));
        }
        Err(Reported)
    }

    fn for_stmt(&mut self) -> PResult<Stmt> {
        let start = self.bump().span;
        let mut init = None;
        let mut cond = None;
        let mut post = None;
        if self.peek() != Tok::LBrace {
            if self.peek() != Tok::Semi {
                let mut first = self.header_stmt(Ctx::ForHeader)?;
                if let StmtKind::ForRange { .. } = first.kind {
                    first.span = start.to(first.span);
                    return Ok(first);
                }
                if self.peek() != Tok::Semi {
                    match std::mem::take(&mut first.kind) {
                        StmtKind::Expr(e) => cond = Some(e),
                        _ => {
                            return self.error(first.span, SyntaxError::ExpectedForCondition);
                        }
                    }
                } else {
                    init = Some(Box::new(first));
                }
            }
            if cond.is_none() && self.eat(Tok::Semi) {
                if self.peek() != Tok::Semi {
                    cond = Some(self.header_expr()?);
                }
                self.expect(Tok::Semi)?;
                if self.peek() != Tok::LBrace {
                    let p = self.header_stmt(Ctx::Plain)?;
                    if matches!(p.kind, StmtKind::Define { .. }) {
                        return self.error(p.span, SyntaxError::DeclareInForPost);
                    }
                    post = Some(Box::new(p));
                }
            }
        }
        let body = self.block()?;
        let span = start.to(body.span);
        Ok(self.mk(
            StmtKind::For {
                init,
                cond,
                post,
                body,
            },
            span,
        ))
    }

    /// Skips to the next `case`, `default` or the closing `}` of a switch or
    /// select whose body is at brace depth `base`.
    fn sync_case(&mut self, base: u32) {
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Case | Tok::Default if self.brace == base => return,
                Tok::RBrace if self.brace <= base => return,
                _ => {}
            }
            self.bump();
        }
    }

    fn switch_stmt(&mut self) -> PResult<Stmt> {
        let start = self.bump().span;
        let mut init = None;
        let mut tag = None;
        if self.peek() != Tok::LBrace {
            let first = if self.peek() == Tok::Semi {
                None
            } else {
                Some(self.header_stmt(Ctx::Plain)?)
            };
            if self.eat(Tok::Semi) {
                init = first.map(Box::new);
                if self.peek() != Tok::LBrace {
                    tag = Some(self.header_expr()?);
                }
            } else if let Some(mut first) = first {
                match std::mem::take(&mut first.kind) {
                    StmtKind::Expr(e) => tag = Some(e),
                    _ => {
                        return self.error(first.span, SyntaxError::SwitchNotExpr);
                    }
                }
            }
        }
        self.expect(Tok::LBrace)?;
        let base = self.brace;
        let mut cases = Vec::new();
        loop {
            while self.eat(Tok::Semi) {}
            match self.peek() {
                Tok::RBrace => break,
                Tok::Case | Tok::Default => {
                    let kw = self.bump();
                    let is_default = kw.tok == Tok::Default;
                    let head = if is_default {
                        Ok(Vec::new())
                    } else {
                        self.expr_list()
                    };
                    let head = head.and_then(|e| Ok((e, self.expect(Tok::Colon)?.span)));
                    let Ok((exprs, colon)) = head else {
                        self.sync_case(base);
                        continue;
                    };
                    let body = self.stmt_list();
                    cases.push(CaseClause {
                        exprs,
                        is_default,
                        body,
                        span: kw.span.to(colon),
                    });
                }
                _ => return self.unexpected("case or default or }"),
            }
        }
        let end = self.expect(Tok::RBrace)?.span;
        Ok(self.mk(StmtKind::Switch { init, tag, cases }, start.to(end)))
    }

    fn select_stmt(&mut self) -> PResult<Stmt> {
        let start = self.bump().span;
        self.expect(Tok::LBrace)?;
        let base = self.brace;
        let mut cases = Vec::new();
        loop {
            while self.eat(Tok::Semi) {}
            match self.peek() {
                Tok::RBrace => break,
                Tok::Default => {
                    let kw = self.bump().span;
                    let Ok(colon) = self.expect(Tok::Colon).map(|t| t.span) else {
                        self.sync_case(base);
                        continue;
                    };
                    let body = self.stmt_list();
                    cases.push(SelectCase {
                        comm: Comm::Default,
                        body,
                        span: kw.to(colon),
                    });
                }
                Tok::Case => {
                    let kw = self.bump().span;
                    let head = self
                        .comm_clause()
                        .and_then(|c| Ok((c, self.expect(Tok::Colon)?.span)));
                    let Ok((comm, colon)) = head else {
                        self.sync_case(base);
                        continue;
                    };
                    let body = self.stmt_list();
                    cases.push(SelectCase {
                        comm,
                        body,
                        span: kw.to(colon),
                    });
                }
                _ => return self.unexpected("case or default or }"),
            }
        }
        let end = self.expect(Tok::RBrace)?.span;
        Ok(self.mk(StmtKind::Select(cases), start.to(end)))
    }

    fn comm_clause(&mut self) -> PResult<Comm> {
        let lhs = self.expr_list()?;
        match self.peek() {
            Tok::Arrow => {
                self.bump();
                let chan = self.single(lhs)?;
                let value = self.expr()?;
                Ok(Comm::Send { chan, value })
            }
            Tok::Define | Tok::Assign => {
                let define = self.bump().tok == Tok::Define;
                let rhs = self.expr()?;
                let chan = self.recv_operand(rhs)?;
                if lhs.len() > 2 {
                    return self.error(lhs[2].span, SyntaxError::RecvCaseTooManyVars);
                }
                if define {
                    let mut names = Vec::new();
                    for mut e in lhs {
                        match std::mem::take(&mut e.kind) {
                            ExprKind::Ident(name) => names.push(Ident {
                                id: e.id,
                                name,
                                span: e.span,
                            }),
                            _ => {
                                return self.error(e.span, SyntaxError::DefineNonName);
                            }
                        }
                    }
                    Ok(Comm::Recv {
                        lhs: RecvLhs::Define(names),
                        chan,
                    })
                } else {
                    Ok(Comm::Recv {
                        lhs: RecvLhs::Assign(lhs),
                        chan,
                    })
                }
            }
            _ => {
                let e = self.single(lhs)?;
                let chan = self.recv_operand(e)?;
                Ok(Comm::Recv {
                    lhs: RecvLhs::None,
                    chan,
                })
            }
        }
    }

    /// The channel of a receive expression `<-ch` in a select case.
    fn recv_operand(&mut self, e: Expr) -> PResult<Expr> {
        let mut e = e;
        loop {
            match std::mem::take(&mut e.kind) {
                ExprKind::Paren(inner) => e = *inner,
                ExprKind::Unary(UnOp::Recv, ch) => return Ok(*ch),
                _ => return self.error(e.span, SyntaxError::SelectCaseNotComm),
            }
        }
    }
}
