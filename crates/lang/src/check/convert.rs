//! Untyped constants and conversions: making an operand a value of a
//! given type (Go's assignability with untyped constants), constant folding
//! and constant declarations.
//!
//! Integer constants are exact (i128 here) and convert to `float` where one
//! is expected; float constants convert to `int` only when integral; typed
//! `int` constants must fit in 64 bits. Folding follows Go: `/` truncates
//! toward zero and `%` takes the dividend's sign.

use super::expr::Operand;
use super::{CheckError, Checker, Context, Unrepresentable};
use crate::ast::*;
use crate::types::{ConstVal, Ty};

const I64_MIN: i128 = i64::MIN as i128;
const I64_MAX: i128 = i64::MAX as i128;

impl<'a> Checker<'a> {
    pub(crate) fn defaulted(&mut self, e: &Expr, op: &mut Operand, ctx: &Context) {
        if op.ty == Ty::UntypedNil {
            self.error(e.span, CheckError::UntypedNil { ctx: ctx.clone() });
            *op = Operand::invalid();
            self.record(e, &Ty::Invalid);
        } else if op.ty.is_untyped() {
            let t = op.ty.default_type();
            self.convert(e, op, &t, ctx);
        }
    }

    /// Makes `op` (the operand of `e`) a value of type `target`, or reports
    /// why it cannot be. Returns false after an error.
    pub(crate) fn convert(
        &mut self,
        e: &Expr,
        op: &mut Operand,
        target: &Ty,
        ctx: &Context,
    ) -> bool {
        if op.ty.is_invalid() || target.is_invalid() {
            return true;
        }
        if op.ty == *target {
            return true;
        }
        let ok = match (&op.ty, target) {
            (Ty::UntypedNil, t) if t.is_nilable() => true,
            (Ty::UntypedBool, Ty::Bool) | (Ty::UntypedStr, Ty::Str) => true,
            (Ty::UntypedInt | Ty::UntypedFloat, Ty::Int | Ty::Float) => {
                match self.represent(op.val.as_ref(), target) {
                    Ok(v) => {
                        op.val = v;
                        true
                    }
                    Err(why) => {
                        let err = CheckError::Unrepresentable {
                            value: op.val.as_ref().map(|v| v.to_string()).unwrap_or_default(),
                            ty: self.tyname(&op.ty),
                            target: self.tyname(target),
                            ctx: ctx.clone(),
                            why,
                        };
                        self.error(e.span, err);
                        *op = Operand::invalid();
                        self.record(e, &Ty::Invalid);
                        return false;
                    }
                }
            }
            _ => false,
        };
        if !ok {
            let err = CheckError::CannotUse {
                expr: self.text(e.span),
                ty: self.tyname(&op.ty),
                constant: op.ty.is_untyped() && op.ty != Ty::UntypedNil,
                target: self.tyname(target),
                ctx: ctx.clone(),
                numeric: op.ty.is_numeric() && target.is_numeric(),
            };
            self.error(e.span, err);
            *op = Operand::invalid();
            self.record(e, &Ty::Invalid);
            return false;
        }
        op.ty = target.clone();
        self.record(e, target);
        if let Some(v) = &op.val {
            self.info.consts.insert(e.id, v.clone());
        }
        true
    }

    /// The value of constant `v` as a `target` (int or float) constant.
    pub(crate) fn represent(
        &self,
        v: Option<&ConstVal>,
        target: &Ty,
    ) -> Result<Option<ConstVal>, Unrepresentable> {
        let Some(v) = v else { return Ok(None) };
        match (v, target) {
            (ConstVal::Int(i), Ty::Int) => {
                if (I64_MIN..=I64_MAX).contains(i) {
                    Ok(Some(v.clone()))
                } else {
                    Err(Unrepresentable::OverflowsInt)
                }
            }
            (ConstVal::Float(f), Ty::Int) => {
                use num_traits::ToPrimitive;
                if !f.is_integer() {
                    return Err(Unrepresentable::Truncated);
                }
                match f.to_integer().to_i128() {
                    Some(i) if (I64_MIN..=I64_MAX).contains(&i) => Ok(Some(ConstVal::Int(i))),
                    _ => Err(Unrepresentable::OverflowsInt),
                }
            }
            // A typed float constant is the float64 nearest the exact
            // value, as Go rounds it.
            (ConstVal::Int(_) | ConstVal::Float(_), Ty::Float) => {
                match v.as_f64().filter(|f| f.is_finite()) {
                    Some(f) => Ok(ConstVal::float(f)),
                    None => Err(Unrepresentable::OverflowsFloat),
                }
            }
            _ => Ok(Some(v.clone())),
        }
    }

    /// A constant result of type `ty`: typed int constants must fit in 64 bits.
    /// Typed float constants are rounded to float64.
    pub(crate) fn typed_const(&mut self, e: &Expr, ty: Ty, val: Option<ConstVal>) -> Operand {
        if let (Ty::Int, Some(ConstVal::Int(v))) = (&ty, &val) {
            if !(I64_MIN..=I64_MAX).contains(v) {
                self.error(e.span, CheckError::ConstOverflowsInt { value: *v });
                return Operand::invalid();
            }
        }
        if let (Ty::Float, Some(c @ ConstVal::Float(_))) = (&ty, &val) {
            let val = c.as_f64().and_then(ConstVal::float);
            return Operand { ty, val };
        }
        Operand { ty, val }
    }

    pub(crate) fn shift(
        &mut self,
        e: &Expr,
        op: BinOp,
        x: &Expr,
        y: &Expr,
        mut xo: Operand,
        mut yo: Operand,
    ) -> Operand {
        if !yo.ty.is_intlike() {
            let err = CheckError::ShiftCountNotInt {
                count: self.text(y.span),
                ty: self.tyname(&yo.ty),
            };
            self.error(y.span, err);
            return Operand::invalid();
        }
        if let Some(ConstVal::Int(n)) = &yo.val {
            if *n < 0 {
                let err = CheckError::NegativeShift {
                    count: self.text(y.span),
                };
                self.error(y.span, err);
                return Operand::invalid();
            }
        }
        if yo.ty.is_untyped() {
            self.convert(y, &mut yo, &Ty::Int, &Context::Shift);
        }
        if !xo.ty.is_intlike() {
            let err = CheckError::OperatorNotDefined {
                op: op.symbol(),
                expr: self.text(x.span),
                ty: self.tyname(&xo.ty),
            };
            self.error(e.span, err);
            return Operand::invalid();
        }
        match (&xo.val, &yo.val) {
            (Some(ConstVal::Int(a)), Some(ConstVal::Int(n))) => {
                let v = if op == BinOp::Shl {
                    if *n >= 126 || a.checked_shl(*n as u32).is_none_or(|r| r >> *n != *a) {
                        None
                    } else {
                        Some(a << n)
                    }
                } else {
                    Some(if *n >= 127 {
                        if *a < 0 {
                            -1
                        } else {
                            0
                        }
                    } else {
                        a >> n
                    })
                };
                match v {
                    Some(v) => self.typed_const(e, xo.ty, Some(ConstVal::Int(v))),
                    None => {
                        self.error(e.span, CheckError::ShiftOverflow);
                        Operand::invalid()
                    }
                }
            }
            _ => {
                if xo.ty.is_untyped() {
                    self.convert(x, &mut xo, &Ty::Int, &Context::Shift);
                }
                Operand::of(Ty::Int)
            }
        }
    }

    /// The value of a constant declaration, converted to its declared type.
    pub(crate) fn const_value(&mut self, spec: &ConstSpec) -> Option<(ConstVal, Ty)> {
        let declared = spec.ty.as_ref().map(|t| self.resolve_type(t));
        let mut op = self.value(&spec.value);
        if op.ty.is_invalid() {
            return None;
        }
        if op.val.is_none() {
            let err = CheckError::NotConstant {
                expr: self.text(spec.value.span),
                ty: self.tyname(&op.ty),
            };
            self.error(spec.value.span, err);
            return None;
        }
        if let Some(t) = declared {
            if !matches!(t, Ty::Int | Ty::Float | Ty::Bool | Ty::Str | Ty::Invalid) {
                self.error(
                    spec.ty.as_ref().map_or(spec.name.span, |t| t.span),
                    CheckError::InvalidConstType {
                        ty: self.tyname(&t),
                    },
                );
                return None;
            }
            if !self.convert(&spec.value, &mut op, &t, &Context::ConstantDeclaration) {
                return None;
            }
        }
        op.val.map(|v| (v, op.ty))
    }
}

pub(crate) fn compare(op: BinOp, a: &ConstVal, b: &ConstVal) -> Option<bool> {
    use std::cmp::Ordering;
    let ord = match (a, b) {
        (ConstVal::Int(x), ConstVal::Int(y)) => x.cmp(y),
        (ConstVal::Str(x), ConstVal::Str(y)) => x.cmp(y),
        (ConstVal::Bool(x), ConstVal::Bool(y)) => x.cmp(y),
        _ => a.as_rat()?.cmp(&b.as_rat()?),
    };
    Some(match op {
        BinOp::Eq => ord == Ordering::Equal,
        BinOp::Ne => ord != Ordering::Equal,
        BinOp::Lt => ord == Ordering::Less,
        BinOp::Le => ord != Ordering::Greater,
        BinOp::Gt => ord == Ordering::Greater,
        BinOp::Ge => ord != Ordering::Less,
        _ => return None,
    })
}

/// Folds arithmetic on constants; None on overflow.
pub(crate) fn fold(op: BinOp, a: &ConstVal, b: &ConstVal) -> Option<ConstVal> {
    match (a, b) {
        (ConstVal::Int(x), ConstVal::Int(y)) => Some(ConstVal::Int(match op {
            BinOp::Add => x.checked_add(*y)?,
            BinOp::Sub => x.checked_sub(*y)?,
            BinOp::Mul => x.checked_mul(*y)?,
            BinOp::Div => x.checked_div(*y)?,
            BinOp::Rem => x.checked_rem(*y)?,
            BinOp::And => x & y,
            BinOp::Or => x | y,
            BinOp::Xor => x ^ y,
            _ => return None,
        })),
        (ConstVal::Str(x), ConstVal::Str(y)) if op == BinOp::Add => {
            Some(ConstVal::Str([&x[..], &y[..]].concat().into()))
        }
        // Exact (docs/language.md, "Constants"): rationals, bounded by
        // `MAX_CONST_BITS` (float64's range applies when the constant
        // becomes a typed value, in `represent`).
        _ => {
            use num_traits::Zero;
            let (x, y) = (a.as_rat()?, b.as_rat()?);
            let v = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div if !y.is_zero() => x / y,
                _ => return None,
            };
            let c = ConstVal::Float(v);
            let fits = match &c {
                ConstVal::Float(r) => crate::types::rat_fits(r),
                _ => false,
            };
            fits.then_some(c)
        }
    }
}
