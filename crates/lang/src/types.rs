//! Types and constant values of the checker.
//!
//! `Invalid` is the type of an expression that already produced an error: it
//! is accepted everywhere without a further message, so one mistake yields
//! one error. `Untyped*` are Go's untyped constants; they become typed when
//! used where a type is known, or take their default type (`int`, `float`,
//! `bool`, `string`) otherwise.

use std::fmt;
use std::sync::Arc;

pub type StructId = u32;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ty {
    Invalid,
    /// The "type" of a call to a function without a result.
    Void,
    Int,
    Float,
    Bool,
    Str,
    Tensor,
    /// A member of a collective group (docs/language.md, "Collectives").
    Comm,
    Chan(Arc<Ty>),
    List(Arc<Ty>),
    Struct(StructId),
    /// `map[K]V`.
    Map(Arc<Ty>, Arc<Ty>),
    /// `func(P...) R`.
    Func(Arc<FuncSig>),
    /// The results of a call of a function with several results (at
    /// least two); never the type of a variable.
    Tuple(Arc<[Ty]>),
    UntypedInt,
    UntypedFloat,
    UntypedBool,
    UntypedStr,
    UntypedNil,
}

/// The signature of a function type: parameter types and the result
/// (`None`: no result; a `Ty::Tuple` for several).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FuncSig {
    pub params: Vec<Ty>,
    pub result: Option<Ty>,
}

impl FuncSig {
    /// The results as a list (empty, one, or the tuple's).
    pub fn results(&self) -> Vec<Ty> {
        match &self.result {
            None => Vec::new(),
            Some(Ty::Tuple(ts)) => ts.to_vec(),
            Some(t) => vec![t.clone()],
        }
    }
}

impl Ty {
    pub fn map(key: Ty, value: Ty) -> Ty {
        Ty::Map(Arc::new(key), Arc::new(value))
    }

    pub fn func(params: Vec<Ty>, result: Option<Ty>) -> Ty {
        Ty::Func(Arc::new(FuncSig { params, result }))
    }

    pub fn chan(elem: Ty) -> Ty {
        Ty::Chan(Arc::new(elem))
    }

    pub fn list(elem: Ty) -> Ty {
        Ty::List(Arc::new(elem))
    }

    pub fn is_untyped(&self) -> bool {
        matches!(
            self,
            Ty::UntypedInt | Ty::UntypedFloat | Ty::UntypedBool | Ty::UntypedStr | Ty::UntypedNil
        )
    }

    /// Whether `nil` is a value of this type (channels, comms, func values
    /// and maps).
    pub fn is_nilable(&self) -> bool {
        matches!(self, Ty::Chan(_) | Ty::Comm | Ty::Func(_) | Ty::Map(..))
    }

    pub fn is_invalid(&self) -> bool {
        matches!(self, Ty::Invalid)
    }

    /// The type an untyped constant takes where no type is expected.
    pub fn default_type(&self) -> Ty {
        match self {
            Ty::UntypedInt => Ty::Int,
            Ty::UntypedFloat => Ty::Float,
            Ty::UntypedBool => Ty::Bool,
            Ty::UntypedStr => Ty::Str,
            other => other.clone(),
        }
    }

    pub fn is_numeric(&self) -> bool {
        matches!(
            self,
            Ty::Int | Ty::Float | Ty::UntypedInt | Ty::UntypedFloat
        )
    }

    pub fn is_intlike(&self) -> bool {
        matches!(self, Ty::Int | Ty::UntypedInt)
    }

    pub fn is_boollike(&self) -> bool {
        matches!(self, Ty::Bool | Ty::UntypedBool)
    }

    pub fn is_strlike(&self) -> bool {
        matches!(self, Ty::Str | Ty::UntypedStr)
    }

    pub fn elem(&self) -> Option<&Ty> {
        match self {
            Ty::Chan(e) | Ty::List(e) => Some(e),
            _ => None,
        }
    }
}

/// One struct declaration.
#[derive(Debug, Clone)]
pub struct StructInfo {
    pub name: String,
    pub fields: Vec<(String, Ty)>,
    /// True for the predeclared `Dataset`.
    pub predeclared: bool,
}

/// Formats a type as written in source (`chan []int`, `Batch`).
pub struct TyName<'a>(pub &'a Ty, pub &'a [StructInfo]);

impl fmt::Display for TyName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Ty::Invalid => write!(f, "invalid type"),
            Ty::Void => write!(f, "no value"),
            Ty::Int => write!(f, "int"),
            Ty::Float => write!(f, "float"),
            Ty::Bool => write!(f, "bool"),
            Ty::Str => write!(f, "string"),
            Ty::Tensor => write!(f, "tensor"),
            Ty::Comm => write!(f, "comm"),
            Ty::Chan(e) => write!(f, "chan {}", TyName(e, self.1)),
            Ty::List(e) => write!(f, "[]{}", TyName(e, self.1)),
            Ty::Map(k, v) => write!(f, "map[{}]{}", TyName(k, self.1), TyName(v, self.1)),
            Ty::Func(sig) => {
                write!(f, "func(")?;
                for (i, p) in sig.params.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{}", TyName(p, self.1))?;
                }
                write!(f, ")")?;
                match &sig.result {
                    Some(r) => write!(f, " {}", TyName(r, self.1)),
                    None => Ok(()),
                }
            }
            Ty::Tuple(ts) => {
                write!(f, "(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{}", TyName(t, self.1))?;
                }
                write!(f, ")")
            }
            Ty::Struct(id) => match self.1.get(*id as usize) {
                Some(s) => write!(f, "{}", s.name),
                None => write!(f, "struct"),
            },
            Ty::UntypedInt => write!(f, "untyped int"),
            Ty::UntypedFloat => write!(f, "untyped float"),
            Ty::UntypedBool => write!(f, "untyped bool"),
            Ty::UntypedStr => write!(f, "untyped string"),
            Ty::UntypedNil => write!(f, "untyped nil"),
        }
    }
}

/// Whether `==` and `!=` apply to values of this type.
pub fn comparable(ty: &Ty, structs: &[StructInfo]) -> bool {
    comparable_depth(ty, structs, 0)
}

fn comparable_depth(ty: &Ty, structs: &[StructInfo], depth: u32) -> bool {
    match ty {
        Ty::Int | Ty::Float | Ty::Bool | Ty::Str | Ty::Chan(_) | Ty::Comm | Ty::Invalid => true,
        Ty::UntypedInt | Ty::UntypedFloat | Ty::UntypedBool | Ty::UntypedStr | Ty::UntypedNil => {
            true
        }
        Ty::List(_) | Ty::Tensor | Ty::Void | Ty::Map(..) | Ty::Func(_) | Ty::Tuple(_) => false,
        Ty::Struct(id) => {
            depth < 64
                && structs.get(*id as usize).is_some_and(|s| {
                    s.fields
                        .iter()
                        .all(|(_, t)| comparable_depth(t, structs, depth + 1))
                })
        }
    }
}

/// Whether `< <= > >=` apply.
pub fn ordered(ty: &Ty) -> bool {
    matches!(
        ty,
        Ty::Int
            | Ty::Float
            | Ty::Str
            | Ty::UntypedInt
            | Ty::UntypedFloat
            | Ty::UntypedStr
            | Ty::Invalid
    )
}

/// An exact float constant (docs/language.md, "Constants"): a rational of
/// big integers (`num-rational`), so `0.1 + 0.2 == 0.3` as in Go.
pub type Rat = num_rational::BigRational;

/// The largest numerator or denominator, in bits, that constant arithmetic
/// may produce; past it the expression is an overflow (Go's compilers
/// bound their constants too). Far beyond any float64 (about 1100 bits).
pub const MAX_CONST_BITS: u64 = 8192;

/// The value of a constant expression.
#[derive(Debug, Clone, PartialEq)]
pub enum ConstVal {
    Int(i128),
    /// Exact; its float64 value is `as_f64`.
    Float(Rat),
    Bool(bool),
    /// A string's bytes (UTF-8 or not: `"\xff"`).
    Str(Arc<[u8]>),
}

impl ConstVal {
    /// The exact value of a finite `f64` (None for NaN or an infinity).
    pub fn float(v: f64) -> Option<ConstVal> {
        Rat::from_float(v).map(ConstVal::Float)
    }

    pub fn is_zero(&self) -> bool {
        use num_traits::Zero;
        match self {
            ConstVal::Int(v) => *v == 0,
            ConstVal::Float(v) => v.is_zero(),
            _ => false,
        }
    }

    /// The nearest float64 (rounded to even, as Go rounds a constant).
    pub fn as_f64(&self) -> Option<f64> {
        use num_traits::ToPrimitive;
        match self {
            ConstVal::Int(v) => Some(*v as f64),
            ConstVal::Float(v) => v.to_f64(),
            _ => None,
        }
    }

    /// The exact value of a numeric constant.
    pub fn as_rat(&self) -> Option<Rat> {
        match self {
            ConstVal::Int(v) => Some(Rat::from_integer((*v).into())),
            ConstVal::Float(v) => Some(v.clone()),
            _ => None,
        }
    }
}

/// The exact value of a float literal's text (`1.5`, `.5`, `1e-3`,
/// `1_000.5`); None when it does not read as one or its exponent is
/// beyond any float64.
pub fn parse_float_literal(text: &str) -> Option<Rat> {
    use num_bigint::BigInt;
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let (mant, exp) = match clean.find(['e', 'E']) {
        Some(i) => (&clean[..i], clean[i + 1..].parse::<i64>().ok()?),
        None => (clean.as_str(), 0),
    };
    let (int_part, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits = format!("{int_part}{frac}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let scale = exp.checked_sub(frac.len() as i64)?;
    if scale.abs() > 1000 {
        return None;
    }
    let n: BigInt = digits.parse().ok()?;
    let ten = BigInt::from(10);
    let p = num_traits::pow(ten, scale.unsigned_abs() as usize);
    Some(if scale >= 0 {
        Rat::from_integer(n * p)
    } else {
        Rat::new(n, p)
    })
}

/// Whether a constant fits the bounds of constant arithmetic.
pub fn rat_fits(r: &Rat) -> bool {
    r.numer().bits() <= MAX_CONST_BITS && r.denom().bits() <= MAX_CONST_BITS
}

impl fmt::Display for ConstVal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConstVal::Int(v) => write!(f, "{v}"),
            ConstVal::Float(_) => write!(f, "{:?}", self.as_f64().unwrap_or(f64::NAN)),
            ConstVal::Bool(v) => write!(f, "{v}"),
            ConstVal::Str(v) => write!(f, "{:?}", String::from_utf8_lossy(v)),
        }
    }
}
