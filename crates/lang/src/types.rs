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
    UntypedInt,
    UntypedFloat,
    UntypedBool,
    UntypedStr,
    UntypedNil,
}

impl Ty {
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

    /// Whether `nil` is a value of this type (channels and comms).
    pub fn is_nilable(&self) -> bool {
        matches!(self, Ty::Chan(_) | Ty::Comm)
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
        Ty::List(_) | Ty::Tensor | Ty::Void => false,
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

/// The value of a constant expression.
#[derive(Debug, Clone, PartialEq)]
pub enum ConstVal {
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(Arc<str>),
}

impl ConstVal {
    pub fn is_zero(&self) -> bool {
        match self {
            ConstVal::Int(v) => *v == 0,
            ConstVal::Float(v) => *v == 0.0,
            _ => false,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ConstVal::Int(v) => Some(*v as f64),
            ConstVal::Float(v) => Some(*v),
            _ => None,
        }
    }
}

impl fmt::Display for ConstVal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConstVal::Int(v) => write!(f, "{v}"),
            ConstVal::Float(v) => write!(f, "{v:?}"),
            ConstVal::Bool(v) => write!(f, "{v}"),
            ConstVal::Str(v) => write!(f, "{v:?}"),
        }
    }
}
