//! The terminating-statement rule behind `missing return` (docs/language.md,
//! "Details", after the Go specification's "Terminating statements"): `return`,
//! `panic(...)`, `exit(...)`, `for { }` without a `break` that leaves it,
//! `select` and `switch` (with `default`) whose every case terminates and
//! does not break out, `if`/`else` with both branches terminating, blocks
//! and labelled statements ending in one.

use super::{Builtin, Checker, Res};
use crate::ast::*;

fn strip_parens(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Paren(inner) => strip_parens(inner),
        _ => e,
    }
}

impl<'a> Checker<'a> {
    pub(crate) fn terminates_list(&self, stmts: &[Stmt]) -> bool {
        stmts
            .iter()
            .rev()
            .find(|s| !matches!(s.kind, StmtKind::Empty))
            .is_some_and(|s| self.terminates(s, None))
    }

    fn terminates(&self, s: &Stmt, label: Option<&str>) -> bool {
        match &s.kind {
            StmtKind::Return(_) => true,
            StmtKind::Expr(e) => match &strip_parens(e).kind {
                ExprKind::Call { func, .. } => matches!(
                    self.info.uses.get(&func.id),
                    Some(Res::Builtin(Builtin::Panic | Builtin::Exit))
                ),
                _ => false,
            },
            StmtKind::Block(b) => self.terminates_list(&b.stmts),
            StmtKind::If { .. } => {
                // An `else if` chain, link by link: every branch terminates.
                let mut cur = s;
                loop {
                    let StmtKind::If { then, els, .. } = &cur.kind else {
                        return self.terminates(cur, None);
                    };
                    match els {
                        Some(e) if self.terminates_list(&then.stmts) => cur = e,
                        _ => return false,
                    }
                }
            }
            StmtKind::For {
                cond: None, body, ..
            } => !has_break(&body.stmts, label, true),
            StmtKind::Labeled { label, stmt } => self.terminates(stmt, Some(&label.name)),
            StmtKind::Switch { cases, .. } => {
                cases.iter().any(|c| c.is_default)
                    && cases
                        .iter()
                        .all(|c| self.terminates_list(&c.body) && !has_break(&c.body, label, true))
            }
            StmtKind::Select(cases) => cases
                .iter()
                .all(|c| self.terminates_list(&c.body) && !has_break(&c.body, label, true)),
            _ => false,
        }
    }
}

/// Whether `stmts` contain a `break` that leaves the statement they belong
/// to: an unlabelled one outside nested breakables (`plain`), or `break label`.
fn has_break(stmts: &[Stmt], label: Option<&str>, plain: bool) -> bool {
    stmts.iter().any(|s| stmt_breaks(s, label, plain))
}

fn stmt_breaks(s: &Stmt, label: Option<&str>, plain: bool) -> bool {
    match &s.kind {
        StmtKind::Break(None) => plain,
        StmtKind::Break(Some(l)) => label == Some(l.name.as_str()),
        StmtKind::Block(b) => has_break(&b.stmts, label, plain),
        StmtKind::If { .. } => {
            // An `else if` chain, link by link.
            let mut cur = s;
            loop {
                let StmtKind::If { then, els, .. } = &cur.kind else {
                    return stmt_breaks(cur, label, plain);
                };
                if has_break(&then.stmts, label, plain) {
                    return true;
                }
                match els {
                    Some(e) => cur = e,
                    None => return false,
                }
            }
        }
        StmtKind::Labeled { stmt, .. } => stmt_breaks(stmt, label, plain),
        StmtKind::For { body, .. } | StmtKind::ForRange { body, .. } => {
            has_break(&body.stmts, label, false)
        }
        StmtKind::Switch { cases, .. } => cases.iter().any(|c| has_break(&c.body, label, false)),
        StmtKind::Select(cases) => cases.iter().any(|c| has_break(&c.body, label, false)),
        _ => false,
    }
}
