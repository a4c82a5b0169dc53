//! Expression checking: operands, untyped constants, operators, literals.
//!
//! Untyped constants follow Go: integer constants are exact (i128 here) and
//! convert to `float` where one is expected; float constants convert to `int`
//! only when integral. Constant expressions are folded, and division by a
//! constant zero is an error. Every expression's final type is recorded in
//! `Info::types` (after any conversion) and constant values in `Info::consts`.

use super::convert::{compare, fold};
use super::{CheckError, Checker, Context, Res};
use crate::ast::*;
use crate::types::{comparable, ordered, ConstVal, Ty};

#[derive(Debug, Clone)]
pub(crate) struct Operand {
    pub ty: Ty,
    pub val: Option<ConstVal>,
}

impl Operand {
    pub fn invalid() -> Operand {
        Operand {
            ty: Ty::Invalid,
            val: None,
        }
    }

    pub(crate) fn of(ty: Ty) -> Operand {
        Operand { ty, val: None }
    }
}

impl<'a> Checker<'a> {
    /// Checks `e` where a value is needed: errors for no-value calls, types,
    /// functions and builtins used as values.
    pub(crate) fn value(&mut self, e: &Expr) -> Operand {
        self.value_hint(e, None)
    }

    pub(crate) fn value_hint(&mut self, e: &Expr, hint: Option<&Ty>) -> Operand {
        let op = self.expr_hint(e, hint);
        if op.ty == Ty::Void {
            self.error(
                e.span,
                CheckError::NoValue {
                    expr: self.text(e.span),
                },
            );
            self.record(e, &Ty::Invalid);
            return Operand::invalid();
        }
        if let Ty::Tuple(_) = op.ty {
            let err = CheckError::MultiValue {
                expr: self.text(e.span),
                ty: self.tyname(&op.ty),
            };
            self.error(e.span, err);
            self.record(e, &Ty::Invalid);
            return Operand::invalid();
        }
        op
    }

    /// Checks `e` and converts it to `target`, reporting a mismatch as
    /// `cannot use ... in CTX`.
    pub(crate) fn value_to(&mut self, e: &Expr, target: &Ty, ctx: &Context) -> Operand {
        let mut op = self.value_hint(e, Some(target));
        self.convert(e, &mut op, target, ctx);
        op
    }

    /// Checks `e` and gives an untyped constant its default type.
    pub(crate) fn value_default(&mut self, e: &Expr, ctx: &Context) -> Operand {
        let mut op = self.value(e);
        self.defaulted(e, &mut op, ctx);
        op
    }

    pub(crate) fn expr(&mut self, e: &Expr) -> Operand {
        self.expr_hint(e, None)
    }

    fn expr_hint(&mut self, e: &Expr, hint: Option<&Ty>) -> Operand {
        let op = self.expr_inner(e, hint);
        self.record(e, &op.ty);
        if let Some(v) = &op.val {
            self.info.consts.insert(e.id, v.clone());
        }
        op
    }

    fn expr_inner(&mut self, e: &Expr, hint: Option<&Ty>) -> Operand {
        match &e.kind {
            ExprKind::Bad => Operand::invalid(),
            ExprKind::Int(v) => Operand {
                ty: Ty::UntypedInt,
                val: Some(ConstVal::Int(*v as i128)),
            },
            ExprKind::BigInt => {
                self.error(
                    e.span,
                    CheckError::IntTooLarge {
                        lit: self.text(e.span),
                    },
                );
                Operand::invalid()
            }
            ExprKind::Float(v) => {
                if !v.is_finite() {
                    self.error(e.span, CheckError::FloatTooLarge);
                    return Operand::invalid();
                }
                // The exact value of the literal's text (its f64 is rounded).
                let text = self
                    .src
                    .get(e.span.start as usize..e.span.end as usize)
                    .unwrap_or("");
                let val = crate::types::parse_float_literal(text)
                    .map(ConstVal::Float)
                    .or_else(|| ConstVal::float(*v));
                Operand {
                    ty: Ty::UntypedFloat,
                    val,
                }
            }
            ExprKind::Str(s) => Operand {
                ty: Ty::UntypedStr,
                val: Some(ConstVal::Str(s.as_slice().into())),
            },
            ExprKind::Bool(b) => Operand {
                ty: Ty::UntypedBool,
                val: Some(ConstVal::Bool(*b)),
            },
            ExprKind::Nil => Operand::of(Ty::UntypedNil),
            ExprKind::Paren(inner) => self.expr_hint(inner, hint),
            ExprKind::Ident(name) => self.ident(e, name),
            ExprKind::Unary(op, x) => self.unary(e, *op, x),
            ExprKind::Binary(..) => self.binary_chain(e),
            ExprKind::Call { func, args, spread } => self.call(e, func, args, *spread),
            ExprKind::Index(x, i) => self.index(x, i),
            ExprKind::Slice { x, lo, hi } => self.slice(x, lo.as_deref(), hi.as_deref()),
            ExprKind::Field(x, name) => self.field(x, name),
            ExprKind::StructLit { name, elems } => {
                let found = self.struct_names.get(&name.name).copied();
                let ty = match found {
                    Some(id) => Ty::Struct(id),
                    None if name.name == "Dataset" => {
                        self.info.uses_dataset = true;
                        Ty::Struct(0)
                    }
                    None => {
                        let err = if self.is_struct_name(&name.name) {
                            CheckError::InvalidCompositeType {
                                ty: name.name.clone(),
                            }
                        } else {
                            CheckError::Undefined {
                                name: name.name.clone(),
                            }
                        };
                        self.error(name.span, err);
                        for el in elems {
                            self.value(&el.value);
                        }
                        return Operand::invalid();
                    }
                };
                self.composite(e, &ty, elems)
            }
            ExprKind::ListLit { ty, elems } => {
                let ty = self.resolve_type(ty);
                self.composite(e, &ty, elems)
            }
            ExprKind::Elided(elems) => match hint {
                Some(t) if matches!(t, Ty::Struct(_) | Ty::List(_)) => {
                    self.composite(e, &t.clone(), elems)
                }
                _ => {
                    self.error(e.span, CheckError::MissingCompositeType);
                    Operand::invalid()
                }
            },
            ExprKind::MapLit { ty, entries } => {
                let ty = self.resolve_type(ty);
                let Ty::Map(k, v) = &ty else {
                    for (k, v) in entries {
                        self.value(k);
                        self.value(v);
                    }
                    return Operand::invalid();
                };
                let mut seen: Vec<(ConstVal, &Expr)> = Vec::new();
                for (ke, ve) in entries {
                    let ko = self.value_to(ke, k, &Context::MapLiteral);
                    self.value_to(ve, v, &Context::MapLiteral);
                    if let Some(c) = ko.val {
                        if seen.iter().any(|(d, _)| *d == c) {
                            let err = CheckError::DuplicateMapKey {
                                key: self.text(ke.span),
                            };
                            self.error(ke.span, err);
                        }
                        seen.push((c, ke));
                    }
                }
                Operand::of(ty)
            }
            ExprKind::FuncLit(lit) => Operand::of(self.func_lit(e, lit)),
            ExprKind::Type(t) => {
                let ty = self.resolve_type(t);
                if !ty.is_invalid() {
                    self.error(
                        e.span,
                        CheckError::TypeAsValue {
                            ty: self.tyname(&ty),
                        },
                    );
                }
                Operand::invalid()
            }
        }
    }

    fn ident(&mut self, e: &Expr, name: &str) -> Operand {
        if name == "_" {
            self.error(e.span, CheckError::BlankAsValue);
            return Operand::invalid();
        }
        match self.resolve(name) {
            Some((Res::Var(id), ty)) => {
                self.info.uses.insert(e.id, Res::Var(id));
                Operand::of(ty)
            }
            Some((Res::Const(v), ty)) => {
                self.info.uses.insert(e.id, Res::Const(v.clone()));
                if ty.is_invalid() {
                    return Operand::invalid();
                }
                Operand { ty, val: Some(v) }
            }
            Some((Res::Func(id), _)) => {
                // a named function as a value
                self.info.uses.insert(e.id, Res::Func(id));
                let f = &self.info.funcs[id as usize];
                let params = f.params.iter().map(|(_, t)| t.clone()).collect();
                Operand::of(Ty::func(params, f.result.clone()))
            }
            Some((Res::Builtin(_), _)) => {
                self.error(e.span, CheckError::BuiltinNotCalled { name: name.into() });
                Operand::invalid()
            }
            None => {
                let err = if self.is_struct_name(name) {
                    CheckError::TypeAsValue { ty: name.into() }
                } else if name == "recover" {
                    CheckError::Recover
                } else {
                    CheckError::Undefined { name: name.into() }
                };
                self.error(e.span, err);
                Operand::invalid()
            }
        }
    }

    fn unary(&mut self, e: &Expr, op: UnOp, x: &Expr) -> Operand {
        let xo = self.value(x);
        if xo.ty.is_invalid() {
            return Operand::invalid();
        }
        let bad = |c: &mut Self, xo: &Operand| {
            let err = CheckError::OperatorNotDefined {
                op: op.symbol(),
                expr: c.text(x.span),
                ty: c.tyname(&xo.ty),
            };
            c.error(e.span, err);
            Operand::invalid()
        };
        match op {
            UnOp::Recv => match &xo.ty {
                Ty::Chan(elem) => Operand::of((**elem).clone()),
                Ty::UntypedNil => {
                    self.error(
                        e.span,
                        CheckError::UntypedNil {
                            ctx: Context::Receive,
                        },
                    );
                    Operand::invalid()
                }
                _ => {
                    self.error(
                        e.span,
                        CheckError::RecvNonChan {
                            expr: self.text(x.span),
                            ty: self.tyname(&xo.ty),
                        },
                    );
                    Operand::invalid()
                }
            },
            UnOp::Neg | UnOp::Pos => {
                if !(xo.ty.is_numeric() || (op == UnOp::Neg && xo.ty == Ty::Tensor)) {
                    return bad(self, &xo);
                }
                let val = match (&xo.val, op) {
                    (Some(ConstVal::Int(v)), UnOp::Neg) => match v.checked_neg() {
                        Some(n) => Some(ConstVal::Int(n)),
                        None => {
                            self.error(e.span, CheckError::ConstOverflow);
                            return Operand::invalid();
                        }
                    },
                    (Some(ConstVal::Float(v)), UnOp::Neg) => Some(ConstVal::Float(-v.clone())),
                    (v, _) => v.clone(),
                };
                self.typed_const(e, xo.ty, val)
            }
            UnOp::Not => {
                if !xo.ty.is_boollike() {
                    return bad(self, &xo);
                }
                let val = match &xo.val {
                    Some(ConstVal::Bool(b)) => Some(ConstVal::Bool(!b)),
                    _ => None,
                };
                Operand { ty: xo.ty, val }
            }
            UnOp::BitNot => {
                if !xo.ty.is_intlike() {
                    return bad(self, &xo);
                }
                let val = match &xo.val {
                    Some(ConstVal::Int(v)) => Some(ConstVal::Int(!v)),
                    _ => None,
                };
                self.typed_const(e, xo.ty, val)
            }
        }
    }

    /// A binary expression and the binary expressions down its left spine
    /// (`a + b + c` is `(a + b) + c`), bottom up in a loop: a chain as long
    /// as the source makes it does not nest the checker's recursion. Each
    /// inner link is recorded as `expr_hint` records an expression; `e`
    /// itself is left to the caller.
    fn binary_chain(&mut self, e: &Expr) -> Operand {
        let mut spine = Vec::new();
        let mut cur = e;
        while let ExprKind::Binary(_, x, _) = &cur.kind {
            spine.push(cur);
            cur = x;
        }
        let mut xo = self.value(cur);
        while let Some(link) = spine.pop() {
            let ExprKind::Binary(op, x, y) = &link.kind else {
                break;
            };
            xo = self.binary_with(link, *op, x, xo, y);
            if spine.is_empty() {
                break;
            }
            self.record(link, &xo.ty);
            if let Some(v) = &xo.val {
                self.info.consts.insert(link.id, v.clone());
            }
        }
        xo
    }

    pub(crate) fn binary_op(&mut self, e: &Expr, op: BinOp, x: &Expr, y: &Expr) -> Operand {
        let xo = self.value(x);
        self.binary_with(e, op, x, xo, y)
    }

    /// `binary_op` with the left operand already checked (`xo`).
    fn binary_with(&mut self, e: &Expr, op: BinOp, x: &Expr, xo: Operand, y: &Expr) -> Operand {
        let mut xo = xo;
        let mut yo = self.value(y);
        if xo.ty.is_invalid() || yo.ty.is_invalid() {
            return Operand::invalid();
        }
        if matches!(op, BinOp::Shl | BinOp::Shr) {
            return self.shift(e, op, x, y, xo, yo);
        }
        // tensor ⊕ float (either order): the float side may be an untyped constant
        if matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div) {
            if xo.ty == Ty::Tensor && yo.ty.is_numeric() {
                self.convert(y, &mut yo, &Ty::Float, &Context::TensorOperation);
                return if yo.ty.is_invalid() {
                    Operand::invalid()
                } else {
                    Operand::of(Ty::Tensor)
                };
            }
            if yo.ty == Ty::Tensor && xo.ty.is_numeric() {
                self.convert(x, &mut xo, &Ty::Float, &Context::TensorOperation);
                return if xo.ty.is_invalid() {
                    Operand::invalid()
                } else {
                    Operand::of(Ty::Tensor)
                };
            }
        }
        let nil_side = xo.ty == Ty::UntypedNil || yo.ty == Ty::UntypedNil;
        // bring both sides to one type
        if xo.ty.is_untyped() && !yo.ty.is_untyped() {
            if !self.convert_operand(x, &mut xo, &yo.ty, e, true) {
                return Operand::invalid();
            }
        } else if yo.ty.is_untyped() && !xo.ty.is_untyped() {
            if !self.convert_operand(y, &mut yo, &xo.ty, e, false) {
                return Operand::invalid();
            }
        } else if xo.ty.is_untyped() && yo.ty.is_untyped() {
            let num = |t: &Ty| matches!(t, Ty::UntypedInt | Ty::UntypedFloat);
            if num(&xo.ty) && num(&yo.ty) && xo.ty != yo.ty {
                xo.ty = Ty::UntypedFloat;
                yo.ty = Ty::UntypedFloat;
            }
        }
        if xo.ty != yo.ty {
            let err = CheckError::MismatchedTypes {
                expr: self.text(e.span),
                left: self.tyname(&xo.ty),
                right: self.tyname(&yo.ty),
                numeric: xo.ty.is_numeric() && yo.ty.is_numeric(),
            };
            self.error(e.span, err);
            return Operand::invalid();
        }
        let ty = xo.ty.clone();
        let not_defined = |c: &mut Self| {
            let err = CheckError::OperatorNotDefined {
                op: op.symbol(),
                expr: c.text(x.span),
                ty: c.tyname(&ty),
            };
            c.error(e.span, err);
            Operand::invalid()
        };
        match op {
            BinOp::LogAnd | BinOp::LogOr => {
                if !ty.is_boollike() {
                    return not_defined(self);
                }
                let val = match (&xo.val, &yo.val) {
                    (Some(ConstVal::Bool(a)), Some(ConstVal::Bool(b))) => {
                        Some(ConstVal::Bool(if op == BinOp::LogAnd {
                            *a && *b
                        } else {
                            *a || *b
                        }))
                    }
                    _ => None,
                };
                Operand { ty, val }
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let is_eq = matches!(op, BinOp::Eq | BinOp::Ne);
                if ty == Ty::UntypedNil {
                    self.error(
                        e.span,
                        CheckError::NilOperator {
                            expr: self.text(e.span),
                            op: op.symbol(),
                        },
                    );
                    return Operand::invalid();
                }
                if is_eq && matches!(ty, Ty::Func(_) | Ty::Map(..)) {
                    // a func value or a map compares only with nil
                    if !nil_side {
                        let err = CheckError::FuncCompare {
                            expr: self.text(e.span),
                            kind: if matches!(ty, Ty::Map(..)) {
                                "map"
                            } else {
                                "func"
                            },
                        };
                        self.error(e.span, err);
                        return Operand::invalid();
                    }
                    return Operand::of(Ty::Bool);
                }
                if is_eq && !comparable(&ty, &self.info.structs) {
                    self.error(
                        e.span,
                        CheckError::NotComparable {
                            expr: self.text(e.span),
                            ty: self.tyname(&ty),
                        },
                    );
                    return Operand::invalid();
                }
                if !is_eq && !ordered(&ty) {
                    return not_defined(self);
                }
                match (&xo.val, &yo.val) {
                    (Some(a), Some(b)) => Operand {
                        ty: Ty::UntypedBool,
                        val: compare(op, a, b).map(ConstVal::Bool),
                    },
                    _ => {
                        if ty.is_untyped() {
                            let d = ty.default_type();
                            self.convert(x, &mut xo, &d, &Context::Comparison);
                            self.convert(y, &mut yo, &d, &Context::Comparison);
                        }
                        Operand::of(Ty::Bool)
                    }
                }
            }
            _ => {
                let allowed = match op {
                    BinOp::Add => ty.is_numeric() || ty.is_strlike() || ty == Ty::Tensor,
                    BinOp::Sub | BinOp::Mul | BinOp::Div => ty.is_numeric() || ty == Ty::Tensor,
                    BinOp::Rem | BinOp::And | BinOp::Or | BinOp::Xor => ty.is_intlike(),
                    _ => false,
                };
                if !allowed {
                    return not_defined(self);
                }
                if matches!(op, BinOp::Div | BinOp::Rem)
                    && yo.val.as_ref().is_some_and(ConstVal::is_zero)
                {
                    self.error(y.span, CheckError::DivisionByZero);
                    return Operand::invalid();
                }
                match (&xo.val, &yo.val) {
                    (Some(a), Some(b)) => match fold(op, a, b) {
                        Some(v) => self.typed_const(e, ty, Some(v)),
                        None => {
                            self.error(e.span, CheckError::ConstOverflow);
                            Operand::invalid()
                        }
                    },
                    _ => Operand::of(ty),
                }
            }
        }
    }

    /// Converts an untyped operand to the other operand's type, reporting
    /// a mismatch in the binary expression `e` (types in source order).
    fn convert_operand(
        &mut self,
        x: &Expr,
        xo: &mut Operand,
        target: &Ty,
        e: &Expr,
        x_is_left: bool,
    ) -> bool {
        let fits = (xo.ty == Ty::UntypedNil && target.is_nilable())
            || matches!(
                (&xo.ty, target),
                (Ty::UntypedBool, Ty::Bool)
                    | (Ty::UntypedStr, Ty::Str)
                    | (Ty::UntypedInt | Ty::UntypedFloat, Ty::Int | Ty::Float)
            );
        if !fits {
            let (left, right) = if x_is_left {
                (&xo.ty, target)
            } else {
                (target, &xo.ty)
            };
            let err = CheckError::MismatchedTypes {
                expr: self.text(e.span),
                left: self.tyname(left),
                right: self.tyname(right),
                numeric: left.is_numeric() && right.is_numeric(),
            };
            self.error(e.span, err);
            return false;
        }
        self.convert(x, xo, target, &Context::Operation)
    }

    pub(crate) fn index(&mut self, x: &Expr, i: &Expr) -> Operand {
        let xo = self.value(x);
        if let Ty::Map(k, v) = &xo.ty {
            self.value_to(i, k, &Context::MapIndex);
            return Operand::of((**v).clone());
        }
        let io = self.value_to(i, &Ty::Int, &Context::Index);
        if let Some(ConstVal::Int(v)) = &io.val {
            if *v < 0 {
                self.error(i.span, CheckError::NegativeIndex { index: *v });
            }
        }
        match &xo.ty {
            Ty::Invalid => Operand::invalid(),
            Ty::List(elem) => Operand::of((**elem).clone()),
            Ty::Str | Ty::UntypedStr => Operand::of(Ty::Int),
            t => {
                let err = CheckError::CannotIndex {
                    expr: self.text(x.span),
                    ty: self.tyname(t),
                    hint_get: *t == Ty::Tensor,
                };
                self.error(x.span, err);
                Operand::invalid()
            }
        }
    }

    fn slice(&mut self, x: &Expr, lo: Option<&Expr>, hi: Option<&Expr>) -> Operand {
        let mut xo = self.value(x);
        for b in [lo, hi].into_iter().flatten() {
            let bo = self.value_to(b, &Ty::Int, &Context::SliceIndex);
            if let Some(ConstVal::Int(v)) = &bo.val {
                if *v < 0 {
                    self.error(b.span, CheckError::NegativeIndex { index: *v });
                }
            }
        }
        if xo.ty == Ty::UntypedStr {
            self.convert(x, &mut xo, &Ty::Str, &Context::Slice);
        }
        match &xo.ty {
            Ty::Invalid => Operand::invalid(),
            Ty::List(_) | Ty::Str => Operand::of(xo.ty.clone()),
            t => {
                let err = CheckError::CannotSlice {
                    expr: self.text(x.span),
                    ty: self.tyname(t),
                };
                self.error(x.span, err);
                Operand::invalid()
            }
        }
    }

    pub(crate) fn field(&mut self, x: &Expr, name: &Ident) -> Operand {
        let xo = self.value(x);
        match self.field_type(x, &xo.ty, name) {
            Some(t) => Operand::of(t),
            None => Operand::invalid(),
        }
    }

    /// The type of field `name` of `x`, whose type is `xt` (for reads and
    /// for assignment targets alike); `None`, with an error reported unless
    /// `xt` is already invalid, when there is no such field.
    pub(crate) fn field_type(&mut self, x: &Expr, xt: &Ty, name: &Ident) -> Option<Ty> {
        match xt {
            Ty::Invalid => None,
            Ty::Struct(id) => {
                let s = &self.info.structs[*id as usize];
                if let Some((_, t)) = s.fields.iter().find(|(n, _)| *n == name.name) {
                    return Some(t.clone());
                }
                let ty = s.name.clone();
                let err = CheckError::NoField {
                    expr: self.text(x.span),
                    field: name.name.clone(),
                    ty,
                };
                self.error(name.span, err);
                None
            }
            t => {
                let err = CheckError::NoFields {
                    expr: self.text(x.span),
                    field: name.name.clone(),
                    ty: self.tyname(t),
                };
                self.error(name.span, err);
                None
            }
        }
    }

    fn composite(&mut self, e: &Expr, ty: &Ty, elems: &[Element]) -> Operand {
        match ty {
            Ty::Invalid => {
                for el in elems {
                    self.value(&el.value);
                }
                Operand::invalid()
            }
            Ty::List(elem) => {
                for el in elems {
                    if let Some(k) = &el.key {
                        self.error(k.span, CheckError::KeyInListLiteral);
                    }
                    self.value_to(&el.value, elem, &Context::ListLiteral);
                }
                Operand::of(ty.clone())
            }
            Ty::Struct(id) => {
                let fields = self.info.structs[*id as usize].fields.clone();
                let sname = self.info.structs[*id as usize].name.clone();
                let keyed = elems.first().is_some_and(|el| el.key.is_some());
                if elems.iter().any(|el| el.key.is_some() != keyed) {
                    self.error(e.span, CheckError::MixedStructLiteral);
                    for el in elems {
                        self.value(&el.value);
                    }
                    return Operand::of(ty.clone());
                }
                if keyed {
                    let mut seen: Vec<&str> = Vec::new();
                    for el in elems {
                        let Some(k) = &el.key else { continue };
                        match fields.iter().find(|(n, _)| *n == k.name) {
                            Some((_, ft)) => {
                                if seen.contains(&k.name.as_str()) {
                                    self.error(
                                        k.span,
                                        CheckError::DuplicateField {
                                            field: k.name.clone(),
                                        },
                                    );
                                }
                                seen.push(&k.name);
                                self.value_to(&el.value, ft, &Context::StructLiteral);
                            }
                            None => {
                                self.error(
                                    k.span,
                                    CheckError::UnknownField {
                                        field: k.name.clone(),
                                        ty: sname.clone(),
                                    },
                                );
                                self.value(&el.value);
                            }
                        }
                    }
                } else {
                    for (el, (_, ft)) in elems.iter().zip(&fields) {
                        self.value_to(&el.value, ft, &Context::StructLiteral);
                    }
                    if elems.len() > fields.len() {
                        for el in &elems[fields.len()..] {
                            self.value(&el.value);
                        }
                        self.error(
                            elems[fields.len()].value.span,
                            CheckError::TooManyValues { ty: sname },
                        );
                    } else if !elems.is_empty() && elems.len() < fields.len() {
                        self.error(e.span, CheckError::TooFewValues { ty: sname });
                    }
                }
                if *id == 0 {
                    self.info.uses_dataset = true;
                }
                Operand::of(ty.clone())
            }
            t => {
                self.error(
                    e.span,
                    CheckError::InvalidCompositeType { ty: self.tyname(t) },
                );
                for el in elems {
                    self.value(&el.value);
                }
                Operand::invalid()
            }
        }
    }
}
