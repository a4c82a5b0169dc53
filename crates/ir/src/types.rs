//! Helpers on the generated [`Type`]: constructors (`Type::int()`,
//! `Type::chan(Type::int())`, ...), accessors, structural equality and the
//! printed form used by `dump` and by verifier messages.
//!
//! Printed forms follow the surface language: `int`, `float`, `bool`,
//! `string`, `tensor` (with known dims: `tensor[2,3]`), `chan T`, `[]T`,
//! `comm`, a struct's name, `map[K]V`, `func(P, Q) R`; a type with no kind
//! set prints as `<unset>`.
//! Equality ([`Type::same`]) ignores tensor shapes: a shape is a hint, and
//! every tensor value has type `tensor`.

use std::fmt;

use crate::pb::{r#type::Kind, Comm, ElemType, FuncType, MapType, Scalar, TensorType, Type};

impl Type {
    /// A type of the given kind.
    pub fn of(kind: Kind) -> Type {
        Type { kind: Some(kind) }
    }
    /// `int`.
    pub fn int() -> Type {
        Type::of(Kind::Scalar(Scalar::Int as i32))
    }
    /// `float`.
    pub fn float() -> Type {
        Type::of(Kind::Scalar(Scalar::Float as i32))
    }
    /// `bool`.
    pub fn bool() -> Type {
        Type::of(Kind::Scalar(Scalar::Bool as i32))
    }
    /// `string`.
    pub fn string() -> Type {
        Type::of(Kind::Scalar(Scalar::String as i32))
    }
    /// `tensor` of f32 with a statically unknown shape.
    pub fn tensor() -> Type {
        Type::tensor_shaped(Vec::new())
    }
    /// `tensor` of f32 with known dimensions.
    pub fn tensor_shaped(shape: Vec<i64>) -> Type {
        Type::of(Kind::Tensor(TensorType {
            elem: ElemType::Float32 as i32,
            shape,
        }))
    }
    /// `chan T`.
    pub fn chan(elem: Type) -> Type {
        Type::of(Kind::Chan(Box::new(elem)))
    }
    /// `[]T`.
    pub fn list(elem: Type) -> Type {
        Type::of(Kind::List(Box::new(elem)))
    }
    /// `map[K]V`.
    pub fn map(key: Type, value: Type) -> Type {
        Type::of(Kind::Map(Box::new(MapType {
            key: Some(Box::new(key)),
            value: Some(Box::new(value)),
        })))
    }
    /// `func(P...) R` (`result` None: no result).
    pub fn func(params: Vec<Type>, result: Option<Type>) -> Type {
        Type::of(Kind::Func(Box::new(FuncType {
            params,
            result: result.map(Box::new),
        })))
    }
    /// `comm`: a member of a collective group.
    pub fn comm() -> Type {
        Type::of(Kind::Comm(Comm {}))
    }
    /// The struct declared under `name` in `ProgramDesc.structs`.
    pub fn struct_named(name: impl Into<String>) -> Type {
        Type::of(Kind::StructName(name.into()))
    }

    /// The scalar kind, if this is a known scalar type.
    pub fn scalar_kind(&self) -> Option<Scalar> {
        match &self.kind {
            Some(Kind::Scalar(s)) => Scalar::try_from(*s)
                .ok()
                .filter(|s| *s != Scalar::Unspecified),
            _ => None,
        }
    }
    /// `int`?
    pub fn is_int(&self) -> bool {
        self.scalar_kind() == Some(Scalar::Int)
    }
    /// `float`?
    pub fn is_float(&self) -> bool {
        self.scalar_kind() == Some(Scalar::Float)
    }
    /// `bool`?
    pub fn is_bool(&self) -> bool {
        self.scalar_kind() == Some(Scalar::Bool)
    }
    /// `string`?
    pub fn is_string(&self) -> bool {
        self.scalar_kind() == Some(Scalar::String)
    }
    /// `tensor`?
    pub fn is_tensor(&self) -> bool {
        matches!(self.kind, Some(Kind::Tensor(_)))
    }
    /// `comm`?
    pub fn is_comm(&self) -> bool {
        matches!(self.kind, Some(Kind::Comm(_)))
    }
    /// The element type of `chan T`.
    pub fn chan_elem(&self) -> Option<&Type> {
        match &self.kind {
            Some(Kind::Chan(t)) => Some(t),
            _ => None,
        }
    }
    /// The element type of `[]T`.
    pub fn list_elem(&self) -> Option<&Type> {
        match &self.kind {
            Some(Kind::List(t)) => Some(t),
            _ => None,
        }
    }
    /// The key and value types of `map[K]V` (None when either is unset).
    pub fn map_kv(&self) -> Option<(&Type, &Type)> {
        match &self.kind {
            Some(Kind::Map(m)) => Some((m.key.as_deref()?, m.value.as_deref()?)),
            _ => None,
        }
    }
    /// The signature of a func type.
    pub fn func_type(&self) -> Option<&FuncType> {
        match &self.kind {
            Some(Kind::Func(f)) => Some(f),
            _ => None,
        }
    }
    /// The struct's name, for a struct type.
    pub fn struct_name(&self) -> Option<&str> {
        match &self.kind {
            Some(Kind::StructName(n)) => Some(n),
            _ => None,
        }
    }

    /// Structural equality that ignores tensor shapes.
    pub fn same(&self, other: &Type) -> bool {
        match (&self.kind, &other.kind) {
            (Some(Kind::Scalar(a)), Some(Kind::Scalar(b))) => a == b,
            (Some(Kind::Tensor(a)), Some(Kind::Tensor(b))) => a.elem == b.elem,
            (Some(Kind::Chan(a)), Some(Kind::Chan(b))) => a.same(b),
            (Some(Kind::List(a)), Some(Kind::List(b))) => a.same(b),
            (Some(Kind::StructName(a)), Some(Kind::StructName(b))) => a == b,
            (Some(Kind::Map(a)), Some(Kind::Map(b))) => {
                same_opt(a.key.as_deref(), b.key.as_deref())
                    && same_opt(a.value.as_deref(), b.value.as_deref())
            }
            (Some(Kind::Func(a)), Some(Kind::Func(b))) => {
                a.params.len() == b.params.len()
                    && a.params.iter().zip(&b.params).all(|(x, y)| x.same(y))
                    && match (&a.result, &b.result) {
                        (None, None) => true,
                        (Some(x), Some(y)) => x.same(y),
                        _ => false,
                    }
            }
            (Some(Kind::Comm(_)), Some(Kind::Comm(_))) => true,
            _ => false,
        }
    }
}

fn same_opt(a: Option<&Type>, b: Option<&Type>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x.same(y),
        _ => false,
    }
}

fn opt_name(t: Option<&Type>) -> String {
    t.map_or_else(|| "<unset>".to_string(), |t| t.to_string())
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            None => f.write_str("<unset>"),
            Some(Kind::Scalar(s)) => match Scalar::try_from(*s) {
                Ok(Scalar::Int) => f.write_str("int"),
                Ok(Scalar::Float) => f.write_str("float"),
                Ok(Scalar::Bool) => f.write_str("bool"),
                Ok(Scalar::String) => f.write_str("string"),
                Ok(Scalar::Unspecified) | Err(_) => write!(f, "<scalar {s}>"),
            },
            Some(Kind::Tensor(t)) => {
                f.write_str("tensor")?;
                if t.elem != ElemType::Float32 as i32 {
                    write!(f, "<elem {}>", t.elem)?;
                }
                if !t.shape.is_empty() {
                    let dims: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
                    write!(f, "[{}]", dims.join(","))?;
                }
                Ok(())
            }
            Some(Kind::Chan(t)) => write!(f, "chan {t}"),
            Some(Kind::List(t)) => write!(f, "[]{t}"),
            Some(Kind::StructName(n)) => f.write_str(n),
            Some(Kind::Map(m)) => write!(
                f,
                "map[{}]{}",
                opt_name(m.key.as_deref()),
                opt_name(m.value.as_deref())
            ),
            Some(Kind::Func(ft)) => {
                f.write_str("func(")?;
                for (i, p) in ft.params.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{p}")?;
                }
                f.write_str(")")?;
                match &ft.result {
                    Some(r) => write!(f, " {r}"),
                    None => Ok(()),
                }
            }
            Some(Kind::Comm(_)) => f.write_str("comm"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_forms() {
        assert_eq!(
            Type::chan(Type::list(Type::int())).to_string(),
            "chan []int"
        );
        assert_eq!(Type::tensor_shaped(vec![2, 3]).to_string(), "tensor[2,3]");
        assert_eq!(Type::struct_named("Batch").to_string(), "Batch");
        assert_eq!(Type::list(Type::comm()).to_string(), "[]comm");
        assert_eq!(Type::default().to_string(), "<unset>");
        assert_eq!(Type::of(Kind::Scalar(0)).to_string(), "<scalar 0>");
    }

    #[test]
    fn same_ignores_tensor_shape() {
        assert!(Type::tensor().same(&Type::tensor_shaped(vec![4])));
        assert!(!Type::chan(Type::int()).same(&Type::chan(Type::float())));
        assert!(!Type::default().same(&Type::default()));
        assert!(Type::comm().same(&Type::comm()));
        assert!(!Type::comm().same(&Type::int()));
    }
}
