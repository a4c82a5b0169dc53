//! Statement checking: declarations, assignments and their targets (with
//! the go-block capture rule), control flow, labels, `switch` and `select`.

use super::error::{CaseStmt, Jump, NameKind};
use super::{BreakKind, Breakable, CheckError, Checker, Context, Res, VarId};
use crate::ast::*;
use crate::types::{comparable, Ty};

/// What an assignment writes to.
enum Target {
    Blank,
    Place(Ty),
}

fn strip_parens(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Paren(inner) => strip_parens(inner),
        _ => e,
    }
}

pub(crate) fn is_recv(e: &Expr) -> bool {
    matches!(strip_parens(e).kind, ExprKind::Unary(UnOp::Recv, _))
}

/// Whether `e` may give several values: a call (several results) or an
/// index (a map's `v, ok`).
pub(crate) fn is_multi_source(e: &Expr) -> bool {
    matches!(
        strip_parens(e).kind,
        ExprKind::Call { .. } | ExprKind::Index(..)
    )
}

impl<'a> Checker<'a> {
    pub(crate) fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s, None);
        }
    }

    fn block(&mut self, b: &Block) {
        self.push_scope();
        self.stmts(&b.stmts);
        self.pop_scope();
    }

    /// An `if` and its `else if` links, in a loop (a chain does not nest
    /// the checker's recursion). Each link's scope holds its init
    /// statement's names and encloses the rest of the chain, as in Go.
    fn if_chain(&mut self, s: &Stmt) {
        let mut scopes = 0;
        let mut cur = s;
        while let StmtKind::If {
            init,
            cond,
            then,
            els,
        } = &cur.kind
        {
            self.push_scope();
            scopes += 1;
            if let Some(i) = init {
                self.stmt(i, None);
            }
            self.condition(cond, Context::IfStatement);
            self.block(then);
            match els.as_deref() {
                Some(e) if matches!(e.kind, StmtKind::If { .. }) => cur = e,
                Some(e) => {
                    self.stmt(e, None);
                    break;
                }
                None => break,
            }
        }
        for _ in 0..scopes {
            self.pop_scope();
        }
    }

    fn with_breakable(&mut self, kind: BreakKind, label: Option<&str>, f: impl FnOnce(&mut Self)) {
        self.breakables.push(Breakable {
            kind,
            label: label.map(str::to_string),
        });
        f(self);
        self.breakables.pop();
    }

    fn stmt(&mut self, s: &Stmt, label: Option<&str>) {
        match &s.kind {
            StmtKind::Empty => {}
            StmtKind::Var { names, ty, values } => self.var_stmt(s, names, ty.as_ref(), values),
            StmtKind::Const(specs) => {
                for spec in specs {
                    match self.const_value(spec) {
                        Some((v, t)) => self.declare_local_const(&spec.name, v, t),
                        None => self.declare_local_const(
                            &spec.name,
                            crate::types::ConstVal::Int(0),
                            Ty::Invalid,
                        ),
                    }
                }
            }
            StmtKind::Define { names, values } => self.define(s, names, values),
            StmtKind::Assign { lhs, op, rhs } => self.assign(s, lhs, *op, rhs),
            StmtKind::IncDec { target, inc } => {
                if let Target::Place(t) = self.target(target) {
                    if !matches!(t, Ty::Int | Ty::Float | Ty::Invalid) {
                        let err = CheckError::IncDecNonNumeric {
                            expr: self.text(target.span),
                            inc: *inc,
                            ty: self.tyname(&t),
                        };
                        self.error(s.span, err);
                    }
                } else {
                    self.error(target.span, CheckError::BlankAsValue);
                }
            }
            StmtKind::Expr(e) => self.expr_stmt(e),
            StmtKind::Send { chan, value } => self.send(chan, value),
            StmtKind::GoCall(call, on) => {
                if let ExprKind::Call { func, .. } = &call.kind {
                    self.expr(call);
                    if let Some(Res::Builtin(b)) = self.info.uses.get(&func.id) {
                        let name = b.name().to_string();
                        self.error(func.span, CheckError::GoBuiltin { name });
                    }
                }
                if let Some(d) = on {
                    self.value_to(d, &Ty::Str, &Context::Placement);
                }
            }
            StmtKind::GoBlock(b, on) => {
                // The device is evaluated by the parent, at the `go`.
                if let Some(d) = on {
                    self.value_to(d, &Ty::Str, &Context::Placement);
                }
                self.go_block(s.id, b);
            }
            StmtKind::Defer(call) => {
                if let ExprKind::Call { func, .. } = &call.kind {
                    self.expr(call);
                    if let Some(Res::Builtin(b)) = self.info.uses.get(&func.id) {
                        if !b.may_be_statement() {
                            let name = b.name().to_string();
                            self.error(func.span, CheckError::DeferBuiltin { name });
                        }
                    }
                }
            }
            StmtKind::Return(values) => self.return_stmt(s, values),
            StmtKind::Break(l) => self.break_stmt(s, l.as_ref()),
            StmtKind::Continue(l) => self.continue_stmt(s, l.as_ref()),
            StmtKind::Block(b) => self.block(b),
            StmtKind::If { .. } => self.if_chain(s),
            StmtKind::For {
                init,
                cond,
                post,
                body,
            } => {
                self.push_scope();
                if let Some(i) = init {
                    self.stmt(i, None);
                }
                if let Some(c) = cond {
                    self.condition(c, Context::ForStatement);
                }
                if let Some(p) = post {
                    self.stmt(p, None);
                }
                self.with_breakable(BreakKind::Loop, label, |c| c.block(body));
                self.pop_scope();
            }
            StmtKind::ForRange {
                key,
                value,
                expr,
                body,
            } => self.for_range(key.as_ref(), value.as_ref(), expr, body, label),
            StmtKind::Switch { init, tag, cases } => {
                self.switch(init.as_deref(), tag.as_ref(), cases, label)
            }
            StmtKind::Select(cases) => self.select(cases, label),
            StmtKind::Labeled { label: l, stmt } => {
                if self.labels.contains(&l.name) {
                    self.error(
                        l.span,
                        CheckError::LabelRedefined {
                            label: l.name.clone(),
                        },
                    );
                } else {
                    self.labels.push(l.name.clone());
                }
                self.stmt(stmt, Some(&l.name));
            }
        }
    }

    fn condition(&mut self, cond: &Expr, ctx: Context) {
        let mut op = self.value(cond);
        if op.ty.is_invalid() {
            return;
        }
        if !op.ty.is_boollike() {
            let err = CheckError::NonBoolCondition {
                ctx,
                expr: self.text(cond.span),
                ty: self.tyname(&op.ty),
            };
            self.error(cond.span, err);
            return;
        }
        self.convert(cond, &mut op, &Ty::Bool, &ctx);
    }

    /// `v, ok` from a receive: the element type and bool.
    fn comma_ok(&mut self, e: &Expr) -> (Ty, Ty) {
        let op = self.value(e);
        if op.ty.is_invalid() {
            (Ty::Invalid, Ty::Invalid)
        } else {
            (op.ty, Ty::Bool)
        }
    }

    fn mismatch(&mut self, s: &Stmt, vars: usize, vals: usize) {
        self.error(s.span, CheckError::AssignMismatch { vars, vals });
    }

    /// The types of the `n` (at least two) values one expression gives to
    /// `n` variables: a call with `n` results, or `v, ok` of a map index.
    /// After an error, `n` invalid types.
    pub(crate) fn multi_value(&mut self, s: &Stmt, n: usize, e: &Expr) -> Vec<Ty> {
        let invalid = vec![Ty::Invalid; n];
        match &strip_parens(e).kind {
            ExprKind::Index(x, _) => {
                let op = self.value(e);
                match self.info.ty(x) {
                    Ty::Map(..) if n == 2 => vec![op.ty, Ty::Bool],
                    Ty::Invalid => invalid,
                    _ if op.ty.is_invalid() => invalid,
                    _ => {
                        self.mismatch(s, n, 1);
                        invalid
                    }
                }
            }
            _ => {
                let op = self.expr(e);
                match &op.ty {
                    Ty::Tuple(ts) if ts.len() == n => ts.to_vec(),
                    Ty::Tuple(ts) => {
                        self.mismatch(s, n, ts.len());
                        invalid
                    }
                    Ty::Invalid => invalid,
                    Ty::Void => {
                        let err = CheckError::NoValue {
                            expr: self.text(e.span),
                        };
                        self.error(e.span, err);
                        invalid
                    }
                    _ => {
                        self.mismatch(s, n, 1);
                        invalid
                    }
                }
            }
        }
    }

    /// Reports a value of type `have` (from `e`) that cannot go where a
    /// `want` is needed.
    pub(crate) fn must_fit(&mut self, e: &Expr, have: &Ty, want: &Ty, ctx: &Context) {
        if have.is_invalid() || want.is_invalid() || have == want {
            return;
        }
        let err = CheckError::CannotUse {
            expr: self.text(e.span),
            ty: self.tyname(have),
            constant: false,
            target: self.tyname(want),
            ctx: ctx.clone(),
            numeric: have.is_numeric() && want.is_numeric(),
        };
        self.error(e.span, err);
    }

    fn var_stmt(&mut self, s: &Stmt, names: &[Ident], ty: Option<&TypeExpr>, values: &[Expr]) {
        let declared = ty.map(|t| self.resolve_type(t));
        let mut types: Vec<Ty> = Vec::new();
        if values.is_empty() {
            types = vec![declared.clone().unwrap_or(Ty::Invalid); names.len()];
        } else if names.len() == 2 && values.len() == 1 && is_recv(&values[0]) {
            let (v, ok) = self.comma_ok(&values[0]);
            if let Some(d) = &declared {
                let mut op = super::expr::Operand { ty: v, val: None };
                self.convert(&values[0], &mut op, d, &Context::VariableDeclaration);
                if *d != Ty::Bool && !d.is_invalid() && !op.ty.is_invalid() {
                    let err = CheckError::OkNotBool {
                        ty: self.tyname(d),
                        ctx: Context::VariableDeclaration,
                    };
                    self.error(names[1].span, err);
                }
                types = vec![d.clone(), d.clone()];
            } else {
                types = vec![v, ok];
            }
        } else if names.len() >= 2 && values.len() == 1 && is_multi_source(&values[0]) {
            types = self.multi_value(s, names.len(), &values[0]);
            if let Some(d) = &declared {
                for t in &mut types {
                    self.must_fit(&values[0], t, d, &Context::VariableDeclaration);
                    *t = d.clone();
                }
            }
        } else {
            if values.len() != names.len() {
                self.mismatch(s, names.len(), values.len());
            }
            for (i, v) in values.iter().enumerate() {
                let t = match &declared {
                    Some(d) => {
                        self.value_to(v, d, &Context::VariableDeclaration);
                        d.clone()
                    }
                    None => self.value_default(v, &Context::VariableDeclaration).ty,
                };
                if i < names.len() {
                    types.push(t);
                }
            }
        }
        types.resize(names.len(), Ty::Invalid);
        for (n, t) in names.iter().zip(types) {
            self.declare_var(n, t);
        }
    }

    fn define(&mut self, s: &Stmt, names: &[Ident], values: &[Expr]) {
        // names already declared in this block are assigned, not declared
        let existing: Vec<Option<VarId>> = names
            .iter()
            .map(|n| {
                if n.is_blank() || !self.in_current_scope(&n.name) {
                    return None;
                }
                self.var_depth(&n.name).map(|(id, _)| id)
            })
            .collect();
        let types: Vec<Ty> = if names.len() == 2 && values.len() == 1 && is_recv(&values[0]) {
            let (v, ok) = self.comma_ok(&values[0]);
            let mut vop = super::expr::Operand {
                ty: v.clone(),
                val: None,
            };
            if let Some(id) = existing[0] {
                let vt = self.info.vars[id as usize].ty.clone();
                self.convert(&values[0], &mut vop, &vt, &Context::Assignment);
            }
            if let Some(id) = existing[1] {
                let vt = self.info.vars[id as usize].ty.clone();
                if !matches!(vt, Ty::Bool | Ty::Invalid) {
                    let err = CheckError::OkNotBool {
                        ty: self.tyname(&vt),
                        ctx: Context::Assignment,
                    };
                    self.error(names[1].span, err);
                }
            }
            vec![v, ok]
        } else if names.len() >= 2 && values.len() == 1 && is_multi_source(&values[0]) {
            let types = self.multi_value(s, names.len(), &values[0]);
            for (t, old) in types.iter().zip(&existing) {
                if let Some(id) = old {
                    let vt = self.info.vars[*id as usize].ty.clone();
                    self.must_fit(&values[0], t, &vt, &Context::Assignment);
                }
            }
            types
        } else {
            let mut types: Vec<Ty> = Vec::new();
            for (i, v) in values.iter().enumerate() {
                let t = match existing.get(i).copied().flatten() {
                    Some(id) => {
                        let vt = self.info.vars[id as usize].ty.clone();
                        self.value_to(v, &vt, &Context::Assignment);
                        vt
                    }
                    None => self.value_default(v, &Context::Assignment).ty,
                };
                types.push(t);
            }
            if values.len() != names.len() {
                self.mismatch(s, names.len(), values.len());
                types = vec![Ty::Invalid; names.len()];
            }
            types
        };
        let mut any_new = false;
        for ((n, t), old) in names.iter().zip(types).zip(existing) {
            if n.is_blank() {
                continue;
            }
            match old {
                Some(id) => {
                    self.info.uses.insert(n.id, Res::Var(id));
                }
                None => {
                    any_new = true;
                    self.declare_var(n, t);
                }
            }
        }
        if !any_new {
            self.error(s.span, CheckError::NoNewVariables);
        }
    }

    fn assign(&mut self, s: &Stmt, lhs: &[Expr], op: Option<BinOp>, rhs: &[Expr]) {
        if let Some(op) = op {
            let (x, y) = (&lhs[0], &rhs[0]);
            match self.target(x) {
                Target::Blank => {
                    self.error(x.span, CheckError::BlankAsValue);
                    self.value(y);
                }
                Target::Place(t) => {
                    if t.is_invalid() {
                        self.value(y);
                        return;
                    }
                    let whole = Expr {
                        id: u32::MAX,
                        kind: ExprKind::Bad,
                        span: s.span,
                    };
                    let r = self.binary_op(&whole, op, x, y);
                    if !r.ty.is_invalid() && r.ty != t {
                        let err = CheckError::CompoundAssignType {
                            value_ty: self.tyname(&r.ty),
                            expr: self.text(x.span),
                            ty: self.tyname(&t),
                        };
                        self.error(s.span, err);
                    }
                }
            }
            return;
        }
        if lhs.len() == 2 && rhs.len() == 1 && is_recv(&rhs[0]) {
            let targets: Vec<Target> = lhs.iter().map(|l| self.target(l)).collect();
            let (v, _) = self.comma_ok(&rhs[0]);
            let mut vop = super::expr::Operand { ty: v, val: None };
            if let Target::Place(t) = &targets[0] {
                self.convert(&rhs[0], &mut vop, t, &Context::Assignment);
            }
            if let Target::Place(t) = &targets[1] {
                if !matches!(t, Ty::Bool | Ty::Invalid) {
                    let err = CheckError::OkNotBool {
                        ty: self.tyname(t),
                        ctx: Context::Assignment,
                    };
                    self.error(lhs[1].span, err);
                }
            }
            return;
        }
        if lhs.len() >= 2 && rhs.len() == 1 && is_multi_source(&rhs[0]) {
            let targets: Vec<Target> = lhs.iter().map(|l| self.target(l)).collect();
            let types = self.multi_value(s, lhs.len(), &rhs[0]);
            for (t, vt) in targets.iter().zip(&types) {
                if let Target::Place(t) = t {
                    self.must_fit(&rhs[0], vt, t, &Context::Assignment);
                }
            }
            return;
        }
        let targets: Vec<Target> = lhs.iter().map(|l| self.target(l)).collect();
        if lhs.len() != rhs.len() {
            self.mismatch(s, lhs.len(), rhs.len());
            for r in rhs {
                self.value(r);
            }
            return;
        }
        for (t, r) in targets.iter().zip(rhs) {
            match t {
                Target::Blank => {
                    self.value_default(r, &Context::Assignment);
                }
                Target::Place(t) => {
                    self.value_to(r, t, &Context::Assignment);
                }
            }
        }
    }

    /// Checks an assignment target and returns its type.
    fn target(&mut self, e: &Expr) -> Target {
        let t = self.target_inner(e);
        if let Target::Place(ty) = &t {
            self.record(e, ty);
        }
        t
    }

    fn target_inner(&mut self, e: &Expr) -> Target {
        match &e.kind {
            ExprKind::Paren(inner) => self.target(inner),
            ExprKind::Ident(name) if name == "_" => Target::Blank,
            ExprKind::Ident(name) => {
                if let Some((id, depth)) = self.var_depth(name) {
                    self.info.uses.insert(e.id, Res::Var(id));
                    if depth < self.go_depth() {
                        let name = name.clone();
                        let err = if self.in_func_lit() {
                            CheckError::AssignCapturedInFunc { name }
                        } else {
                            CheckError::AssignCaptured { name }
                        };
                        self.error(e.span, err);
                        return Target::Place(Ty::Invalid);
                    }
                    return Target::Place(self.info.vars[id as usize].ty.clone());
                }
                let what = match self.resolve(name) {
                    Some((Res::Const(_), _)) => NameKind::Constant,
                    Some((Res::Func(_), _)) => NameKind::Function,
                    Some((Res::Builtin(_), _)) => NameKind::Builtin,
                    _ => {
                        self.expr(e);
                        return Target::Place(Ty::Invalid);
                    }
                };
                self.error(
                    e.span,
                    CheckError::AssignNotVariable {
                        name: name.clone(),
                        what,
                    },
                );
                Target::Place(Ty::Invalid)
            }
            ExprKind::Index(x, i) => {
                let xt = match self.target(x) {
                    Target::Blank => {
                        self.error(x.span, CheckError::BlankAsValue);
                        Ty::Invalid
                    }
                    Target::Place(t) => t,
                };
                if let Ty::Map(k, v) = &xt {
                    self.value_to(i, k, &Context::MapIndex);
                    return Target::Place((**v).clone());
                }
                if xt.is_invalid() {
                    self.value(i);
                    return Target::Place(Ty::Invalid);
                }
                self.value_to(i, &Ty::Int, &Context::Index);
                match xt {
                    Ty::List(elem) => Target::Place((*elem).clone()),
                    Ty::Invalid => Target::Place(Ty::Invalid),
                    Ty::Str => {
                        let err = CheckError::AssignString {
                            expr: self.text(e.span),
                        };
                        self.error(e.span, err);
                        Target::Place(Ty::Invalid)
                    }
                    t => {
                        let err = CheckError::CannotIndex {
                            expr: self.text(x.span),
                            ty: self.tyname(&t),
                            hint_get: false,
                        };
                        self.error(x.span, err);
                        Target::Place(Ty::Invalid)
                    }
                }
            }
            ExprKind::Field(x, name) => {
                let xt = match self.target(x) {
                    Target::Blank => {
                        self.error(x.span, CheckError::BlankAsValue);
                        Ty::Invalid
                    }
                    Target::Place(t) => t,
                };
                Target::Place(self.field_type(x, &xt, name).unwrap_or(Ty::Invalid))
            }
            _ => {
                let op = self.expr(e);
                if !op.ty.is_invalid() {
                    let err = CheckError::AssignNonPlace {
                        expr: self.text(e.span),
                    };
                    self.error(e.span, err);
                }
                Target::Place(Ty::Invalid)
            }
        }
    }

    fn expr_stmt(&mut self, e: &Expr) {
        let inner = strip_parens(e);
        let op = self.expr(e);
        let ok = match &inner.kind {
            ExprKind::Call { func, .. } => match self.info.uses.get(&func.id) {
                Some(Res::Builtin(b)) => b.may_be_statement(),
                _ => true,
            },
            ExprKind::Unary(UnOp::Recv, _) => true,
            _ => false,
        };
        if !ok && !op.ty.is_invalid() {
            let err = CheckError::Unused {
                expr: self.text(e.span),
                ty: self.tyname(&op.ty),
            };
            self.error(e.span, err);
        }
    }

    fn send(&mut self, chan: &Expr, value: &Expr) {
        let c = self.value(chan);
        match &c.ty {
            Ty::Chan(elem) => {
                let elem = (**elem).clone();
                self.value_to(value, &elem, &Context::Send);
            }
            Ty::Invalid => {
                self.value(value);
            }
            t => {
                let err = CheckError::SendNonChan {
                    expr: self.text(chan.span),
                    ty: self.tyname(t),
                };
                self.error(chan.span, err);
                self.value(value);
            }
        }
    }

    fn return_stmt(&mut self, s: &Stmt, values: &[Expr]) {
        let Some(result) = self.result.clone() else {
            for v in values {
                self.value(v);
            }
            if let Some(v) = values.first() {
                let err = if self.in_go {
                    CheckError::ReturnValueInGo
                } else {
                    CheckError::TooManyReturnValues
                };
                self.error(v.span, err);
            }
            return;
        };
        let want: Vec<Ty> = match &result {
            Ty::Tuple(ts) => ts.to_vec(),
            t => vec![t.clone()],
        };
        if values.is_empty() {
            let want = self.tyname(&result);
            self.error(s.span, CheckError::NotEnoughReturnValues { want });
        } else if values.len() == want.len() {
            for (v, t) in values.iter().zip(&want) {
                self.value_to(v, t, &Context::ReturnStatement);
            }
        } else if values.len() == 1 && want.len() > 1 && is_multi_source(&values[0]) {
            // `return f(x)` with f's results the function's
            let op = self.expr(&values[0]);
            match &op.ty {
                Ty::Invalid => {}
                t if *t == result => {}
                t => {
                    let have = match t {
                        Ty::Tuple(ts) => ts.len(),
                        _ => 1,
                    };
                    if have == want.len() {
                        self.must_fit(&values[0], t, &result, &Context::ReturnStatement);
                    } else {
                        let want = self.tyname(&result);
                        self.error(s.span, CheckError::ReturnCount { have, want });
                    }
                }
            }
        } else {
            for v in values {
                self.value(v);
            }
            let have = values.len();
            let want = self.tyname(&result);
            self.error(s.span, CheckError::ReturnCount { have, want });
        }
    }

    fn break_stmt(&mut self, s: &Stmt, label: Option<&Ident>) {
        match label {
            None => {
                if self.breakables.is_empty() {
                    self.error(s.span, CheckError::BreakOutside);
                }
            }
            Some(l) => {
                if !self
                    .breakables
                    .iter()
                    .any(|b| b.label.as_deref() == Some(&l.name))
                {
                    self.bad_label(l, Jump::Break);
                }
            }
        }
    }

    fn continue_stmt(&mut self, s: &Stmt, label: Option<&Ident>) {
        match label {
            None => {
                if !self.breakables.iter().any(|b| b.kind == BreakKind::Loop) {
                    self.error(s.span, CheckError::ContinueOutside);
                }
            }
            Some(l) => match self
                .breakables
                .iter()
                .find(|b| b.label.as_deref() == Some(&l.name))
            {
                Some(b) if b.kind == BreakKind::Loop => {}
                Some(_) => self.error(
                    l.span,
                    CheckError::InvalidLabel {
                        stmt: Jump::Continue,
                        label: l.name.clone(),
                    },
                ),
                None => self.bad_label(l, Jump::Continue),
            },
        }
    }

    fn bad_label(&mut self, l: &Ident, stmt: Jump) {
        let label = l.name.clone();
        let err = if self.labels.contains(&l.name) {
            CheckError::InvalidLabel { stmt, label }
        } else {
            CheckError::LabelUndefined { stmt, label }
        };
        self.error(l.span, err);
    }

    fn for_range(
        &mut self,
        key: Option<&Ident>,
        value: Option<&Ident>,
        expr: &Expr,
        body: &Block,
        label: Option<&str>,
    ) {
        let mut op = self.value(expr);
        if op.ty == Ty::UntypedInt {
            self.convert(expr, &mut op, &Ty::Int, &Context::Range);
        }
        if op.ty == Ty::UntypedStr {
            self.convert(expr, &mut op, &Ty::Str, &Context::Range);
        }
        let (kt, vt) = match &op.ty {
            Ty::Int => (Ty::Int, None),
            Ty::Str => (Ty::Int, Some(Ty::Int)),
            Ty::List(elem) => (Ty::Int, Some((**elem).clone())),
            Ty::Chan(elem) => ((**elem).clone(), None),
            Ty::Map(k, v) => ((**k).clone(), Some((**v).clone())),
            Ty::Invalid => (Ty::Invalid, Some(Ty::Invalid)),
            t => {
                let err = CheckError::CannotRange {
                    expr: self.text(expr.span),
                    ty: self.tyname(t),
                };
                self.error(expr.span, err);
                (Ty::Invalid, Some(Ty::Invalid))
            }
        };
        self.push_scope();
        if let Some(k) = key {
            self.declare_var(k, kt);
        }
        if let Some(v) = value {
            match vt {
                Some(t) => {
                    self.declare_var(v, t);
                }
                None => {
                    let err = CheckError::RangeOneVariable {
                        expr: self.text(expr.span),
                    };
                    self.error(v.span, err);
                    self.declare_var(v, Ty::Invalid);
                }
            }
        }
        self.with_breakable(BreakKind::Loop, label, |c| c.block(body));
        self.pop_scope();
    }

    fn switch(
        &mut self,
        init: Option<&Stmt>,
        tag: Option<&Expr>,
        cases: &[CaseClause],
        label: Option<&str>,
    ) {
        self.push_scope();
        if let Some(i) = init {
            self.stmt(i, None);
        }
        let tag_ty = match tag {
            Some(t) => {
                let op = self.value_default(t, &Context::SwitchExpression);
                if !comparable(&op.ty, &self.info.structs) {
                    let err = CheckError::SwitchNotComparable {
                        expr: self.text(t.span),
                        ty: self.tyname(&op.ty),
                    };
                    self.error(t.span, err);
                    Ty::Invalid
                } else {
                    op.ty
                }
            }
            None => Ty::Bool,
        };
        let mut seen_default = false;
        self.with_breakable(BreakKind::Switch, label, |c| {
            for case in cases {
                if case.is_default {
                    if seen_default {
                        c.error(
                            case.span,
                            CheckError::MultipleDefaults {
                                stmt: CaseStmt::Switch,
                            },
                        );
                    }
                    seen_default = true;
                }
                for e in &case.exprs {
                    let mut op = c.value(e);
                    if op.ty.is_invalid() || tag_ty.is_invalid() {
                        continue;
                    }
                    let fits = op.ty == tag_ty
                        || (op.ty == Ty::UntypedNil && tag_ty.is_nilable())
                        || matches!(
                            (&op.ty, &tag_ty),
                            (Ty::UntypedInt | Ty::UntypedFloat, Ty::Int | Ty::Float)
                                | (Ty::UntypedBool, Ty::Bool)
                                | (Ty::UntypedStr, Ty::Str)
                        );
                    if !fits {
                        let err = CheckError::InvalidCase {
                            case: c.text(e.span),
                            tag: tag.map(|t| c.text(t.span)),
                            case_ty: c.tyname(&op.ty),
                            tag_ty: c.tyname(&tag_ty),
                        };
                        c.error(e.span, err);
                        continue;
                    }
                    c.convert(e, &mut op, &tag_ty, &Context::SwitchCase);
                }
                c.push_scope();
                c.stmts(&case.body);
                c.pop_scope();
            }
        });
        self.pop_scope();
    }

    fn select(&mut self, cases: &[SelectCase], label: Option<&str>) {
        let mut seen_default = false;
        self.with_breakable(BreakKind::Select, label, |c| {
            for case in cases {
                c.push_scope();
                match &case.comm {
                    Comm::Default => {
                        if seen_default {
                            c.error(
                                case.span,
                                CheckError::MultipleDefaults {
                                    stmt: CaseStmt::Select,
                                },
                            );
                        }
                        seen_default = true;
                    }
                    Comm::Send { chan, value } => c.send(chan, value),
                    Comm::Recv { lhs, chan } => {
                        let op = c.value(chan);
                        let elem = match &op.ty {
                            Ty::Chan(e) => (**e).clone(),
                            Ty::Invalid => Ty::Invalid,
                            t => {
                                let err = CheckError::RecvNonChan {
                                    expr: c.text(chan.span),
                                    ty: c.tyname(t),
                                };
                                c.error(chan.span, err);
                                Ty::Invalid
                            }
                        };
                        match lhs {
                            RecvLhs::None => {}
                            RecvLhs::Define(names) => {
                                let types = [elem.clone(), Ty::Bool];
                                for (n, t) in names.iter().zip(types) {
                                    c.declare_var(n, t);
                                }
                            }
                            RecvLhs::Assign(targets) => {
                                let types = [elem.clone(), Ty::Bool];
                                for (x, want) in targets.iter().zip(types) {
                                    if let Target::Place(t) = c.target(x) {
                                        if !t.is_invalid() && !want.is_invalid() && t != want {
                                            let err = CheckError::RecvAssignType {
                                                value_ty: c.tyname(&want),
                                                ty: c.tyname(&t),
                                            };
                                            c.error(x.span, err);
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                c.stmts(&case.body);
                c.pop_scope();
            }
        });
    }
}
