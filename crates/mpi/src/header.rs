//! A collective over `world()` starts with every process sharing a
//! fixed-size *header* (an all-gather of [`SLOT`] bytes each): the op, the
//! root, the kind of value, hashes of its type name and shape, and the
//! payload's length, with the payload itself inline when it is small (an
//! `int`, a `float`, a short value). From the headers every process decides
//! the same thing: the members agree, or they do not (the error of
//! docs/language.md, "Collectives", with the same precedence as the
//! in-process groups: op, root, type, shape), and whether a second step
//! must move the payloads. A type or shape mismatch needs the names, which
//! the header only hashes: a further all-gather of the [`Desc`]s fetches
//! them (a failing program only).

use std::borrow::Cow;
use std::sync::Arc;

use weft_coll::{CollError, Data, Op, Reduce};

use crate::Bytes;

/// Bytes of one process's header.
pub(crate) const SLOT: usize = 128;
/// Bytes of the header before the inline payload.
const FIXED: usize = 40;
/// The largest payload carried inline.
pub(crate) const INLINE: usize = SLOT - FIXED;

/// The kind of value, as the in-process groups compare it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Int = 0,
    Float = 1,
    F32 = 2,
    Value = 3,
    Shaped = 4,
    Unit = 5,
}

impl Kind {
    pub fn of(d: &Data<Bytes>) -> Kind {
        match d {
            Data::Int(_) => Kind::Int,
            Data::Float(_) => Kind::Float,
            // A list is refused before it is sent (`check_local`).
            Data::F32 { .. } | Data::F32s(_) => Kind::F32,
            Data::Value(_) => Kind::Value,
            Data::Shaped { .. } => Kind::Shaped,
            Data::Unit => Kind::Unit,
        }
    }

    fn from_byte(b: u8) -> Option<Kind> {
        Some(match b {
            0 => Kind::Int,
            1 => Kind::Float,
            2 => Kind::F32,
            3 => Kind::Value,
            4 => Kind::Shaped,
            5 => Kind::Unit,
            _ => return None,
        })
    }
}

/// One process's header.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Header {
    pub op: Op,
    pub kind: Kind,
    pub desc_len: u32,
    pub ty_hash: u64,
    pub shape_hash: u64,
    pub payload_len: u64,
    /// The payload, when `payload_len <= INLINE`.
    pub inline: Option<Vec<u8>>,
}

/// What the header hashes: the type name and the shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Desc {
    pub ty: Cow<'static, str>,
    pub shape: Option<Arc<[usize]>>,
}

impl Desc {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&(self.ty.len() as u64).to_le_bytes());
        b.extend_from_slice(self.ty.as_bytes());
        if let Some(s) = &self.shape {
            b.extend_from_slice(&(s.len() as u64).to_le_bytes());
            for d in s.iter() {
                b.extend_from_slice(&(*d as u64).to_le_bytes());
            }
        }
        b
    }

    pub fn decode(b: &[u8]) -> Option<Desc> {
        let u64_at = |at: usize| -> Option<u64> {
            Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
        };
        let n = usize::try_from(u64_at(0)?).ok()?;
        let ty = std::str::from_utf8(b.get(8..8usize.checked_add(n)?)?).ok()?;
        let mut at = 8 + n;
        let shape = if at == b.len() {
            None
        } else {
            let dims = usize::try_from(u64_at(at)?).ok()?;
            at += 8;
            let mut s = Vec::with_capacity(dims.min(64));
            for _ in 0..dims {
                s.push(usize::try_from(u64_at(at)?).ok()?);
                at += 8;
            }
            Some(Arc::from(s))
        };
        Some(Desc {
            ty: Cow::Owned(ty.to_string()),
            shape,
        })
    }
}

/// FNV-1a: the same on every process of one program (all run one binary).
fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

fn shape_hash(shape: Option<&Arc<[usize]>>) -> u64 {
    match shape {
        None => 0,
        Some(s) => {
            let mut b = Vec::with_capacity(8 * (s.len() + 1));
            b.extend_from_slice(&(s.len() as u64).to_le_bytes());
            for d in s.iter() {
                b.extend_from_slice(&(*d as u64).to_le_bytes());
            }
            fnv(&b)
        }
    }
}

/// The shape members must agree on, if the data has one.
pub(crate) fn shape_of(d: &Data<Bytes>) -> Option<&Arc<[usize]>> {
    match d {
        Data::F32 { shape, .. } | Data::Shaped { shape, .. } => Some(shape),
        _ => None,
    }
}

/// The bytes a value moves as (all-reduces of tensors and their payload
/// steps use the `f32` buffer itself instead).
pub(crate) fn payload_bytes(d: &Data<Bytes>) -> Cow<'_, [u8]> {
    match d {
        Data::Int(i) => Cow::Owned(i.to_le_bytes().to_vec()),
        Data::Float(f) => Cow::Owned(f.to_bits().to_le_bytes().to_vec()),
        Data::F32 { data, .. } => Cow::Owned(
            data.iter()
                .flat_map(|x| x.to_bits().to_le_bytes())
                .collect(),
        ),
        Data::F32s(parts) => Cow::Owned(
            parts
                .iter()
                .flat_map(|p| p.data.iter())
                .flat_map(|x| x.to_bits().to_le_bytes())
                .collect(),
        ),
        Data::Value(v) | Data::Shaped { value: v, .. } => Cow::Borrowed(v.as_slice()),
        Data::Unit => Cow::Borrowed(&[]),
    }
}

/// The payload's length in bytes, without making it.
pub(crate) fn payload_len(d: &Data<Bytes>) -> u64 {
    match d {
        Data::Int(_) | Data::Float(_) => 8,
        Data::F32 { data, .. } => 4 * data.len() as u64,
        Data::F32s(parts) => parts.iter().map(|p| 4 * p.data.len() as u64).sum(),
        Data::Value(v) | Data::Shaped { value: v, .. } => v.len() as u64,
        Data::Unit => 0,
    }
}

impl Header {
    /// This process's header for calling `op` with `data`.
    pub fn new(op: Op, ty: &str, data: &Data<Bytes>, desc: &Desc) -> Header {
        let payload_len = payload_len(data);
        let inline = (payload_len as usize <= INLINE).then(|| payload_bytes(data).into_owned());
        Header {
            op,
            kind: Kind::of(data),
            desc_len: desc.encode().len() as u32,
            ty_hash: fnv(ty.as_bytes()),
            shape_hash: shape_hash(shape_of(data)),
            payload_len,
            inline,
        }
    }

    pub fn encode(&self) -> [u8; SLOT] {
        let mut b = [0u8; SLOT];
        let (code, reduce, root) = match self.op {
            Op::AllReduce(r) => (0u8, r, 0usize),
            Op::Broadcast { root } => (1, Reduce::Sum, root),
            Op::AllGather => (2, Reduce::Sum, 0),
            Op::Barrier => (3, Reduce::Sum, 0),
        };
        b[0] = 1; // format version
        b[1] = code;
        b[2] = match reduce {
            Reduce::Sum => 0,
            Reduce::Max => 1,
            Reduce::Min => 2,
            Reduce::Prod => 3,
        };
        b[3] = self.kind as u8;
        b[4..8].copy_from_slice(&self.desc_len.to_le_bytes());
        b[8..16].copy_from_slice(&(root as u64).to_le_bytes());
        b[16..24].copy_from_slice(&self.ty_hash.to_le_bytes());
        b[24..32].copy_from_slice(&self.shape_hash.to_le_bytes());
        b[32..40].copy_from_slice(&self.payload_len.to_le_bytes());
        if let Some(p) = &self.inline {
            b[FIXED..FIXED + p.len()].copy_from_slice(p);
        }
        b
    }

    pub fn decode(b: &[u8]) -> Option<Header> {
        if b.len() != SLOT || b[0] != 1 {
            return None;
        }
        let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]));
        let reduce = match b[2] {
            0 => Reduce::Sum,
            1 => Reduce::Max,
            2 => Reduce::Min,
            3 => Reduce::Prod,
            _ => return None,
        };
        let op = match b[1] {
            0 => Op::AllReduce(reduce),
            1 => Op::Broadcast {
                root: usize::try_from(u64_at(8)).ok()?,
            },
            2 => Op::AllGather,
            3 => Op::Barrier,
            _ => return None,
        };
        let payload_len = u64_at(32);
        let inline = (payload_len as usize <= INLINE)
            .then(|| b[FIXED..FIXED + payload_len as usize].to_vec());
        Some(Header {
            op,
            kind: Kind::from_byte(b[3])?,
            desc_len: u32::from_le_bytes(b[4..8].try_into().ok()?),
            ty_hash: u64_at(16),
            shape_hash: u64_at(24),
            payload_len,
            inline,
        })
    }
}

/// Two ops are the same collective when they agree but for the root.
fn same_kind(a: Op, b: Op) -> bool {
    match (a, b) {
        (Op::Broadcast { .. }, Op::Broadcast { .. }) => true,
        _ => a == b,
    }
}

/// What the headers say.
#[derive(Debug, PartialEq)]
pub(crate) enum Check {
    /// The members agree: go on.
    Agree,
    /// They do not, and the headers tell how.
    Fail(CollError),
    /// Types or shapes differ: fetch the descriptors to name them.
    NeedDescs,
}

/// The checks of the in-process groups, in their order, on the headers.
pub(crate) fn check(hs: &[Header]) -> Check {
    let Some((first, rest)) = hs.split_first() else {
        return Check::Agree;
    };
    let others = || rest.iter().enumerate().map(|(i, h)| (i + 1, h));
    if let Some((rank, h)) = others().find(|(_, h)| !same_kind(h.op, first.op)) {
        return Check::Fail(CollError::OpMismatch {
            first: first.op.name(),
            rank,
            other: h.op.name(),
        });
    }
    if let Some((rank, h)) = others().find(|(_, h)| h.op != first.op) {
        if let (Op::Broadcast { root: a }, Op::Broadcast { root: b }) = (first.op, h.op) {
            return Check::Fail(CollError::RootMismatch {
                first: a,
                rank,
                other: b,
            });
        }
    }
    if first.op == Op::Barrier {
        return Check::Agree;
    }
    if others().any(|(_, h)| {
        h.kind != first.kind || h.ty_hash != first.ty_hash || h.shape_hash != first.shape_hash
    }) {
        return Check::NeedDescs;
    }
    Check::Agree
}

/// The type or shape error, from every member's header and descriptor
/// (after [`check`] said [`Check::NeedDescs`]).
pub(crate) fn mismatch(hs: &[Header], descs: &[Desc]) -> CollError {
    let name = hs[0].op.name();
    let first = &descs[0];
    let ty_differs = |r: usize| descs[r].ty != first.ty || hs[r].kind != hs[0].kind;
    if let Some(rank) = (1..hs.len()).find(|&r| ty_differs(r)) {
        return CollError::TypeMismatch {
            op: name,
            first: first.ty.clone(),
            rank,
            other: descs[rank].ty.clone(),
        };
    }
    let s0 = first.shape.clone().unwrap_or_else(|| Arc::from([]));
    let rank = (1..hs.len())
        .find(|&r| descs[r].shape.as_deref() != Some(&s0[..]))
        .unwrap_or(1);
    CollError::ShapeMismatch {
        op: name,
        first: s0,
        rank,
        other: descs
            .get(rank)
            .and_then(|d| d.shape.clone())
            .unwrap_or_else(|| Arc::from([])),
    }
}

/// The checks a member makes alone before taking part (the in-process
/// groups make the same): a root out of range, a value the op cannot
/// take, a tensor whose buffer does not match its shape.
pub(crate) fn check_local(
    op: Op,
    ty: &str,
    data: &Data<Bytes>,
    size: usize,
) -> Result<(), CollError> {
    if let Op::Broadcast { root } = op {
        if root >= size {
            return Err(CollError::RootRange { root, size });
        }
    }
    if let Data::F32s(_) = data {
        // A list of tensors crosses processes as one buffer (the
        // interpreter sends its elements one after the other).
        return Err(CollError::Unsupported {
            op: op.name(),
            ty: Cow::Owned(ty.to_string()),
        });
    }
    let kind = Kind::of(data);
    let takes = match op {
        Op::AllReduce(_) => matches!(kind, Kind::Int | Kind::Float | Kind::F32),
        Op::AllGather => matches!(kind, Kind::Value | Kind::Shaped),
        Op::Broadcast { .. } | Op::Barrier => true,
    };
    if !takes {
        return Err(CollError::Unsupported {
            op: op.name(),
            ty: Cow::Owned(ty.to_string()),
        });
    }
    if let Data::F32 { shape, data } = data {
        let numel = shape.iter().try_fold(1usize, |a, d| a.checked_mul(*d));
        if numel != Some(data.len()) {
            return Err(CollError::BadTensor {
                op: op.name(),
                shape: shape.clone(),
                len: data.len(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(op: Op, ty: &str, data: Data<Bytes>) -> (Header, Desc) {
        let desc = Desc {
            ty: Cow::Owned(ty.to_string()),
            shape: shape_of(&data).cloned(),
        };
        (Header::new(op, ty, &data, &desc), desc)
    }

    fn f32s(shape: &[usize]) -> Data<Bytes> {
        let n = shape.iter().product();
        Data::F32 {
            shape: Arc::from(shape),
            data: Arc::new(vec![1.5; n]),
        }
    }

    #[test]
    fn headers_read_back() {
        let (a, _) = h(Op::AllReduce(Reduce::Max), "int", Data::Int(-7));
        assert_eq!(Header::decode(&a.encode()), Some(a));
        let (b, _) = h(Op::Broadcast { root: 3 }, "tensor", f32s(&[30, 2]));
        let back = Header::decode(&b.encode());
        assert_eq!(back.as_ref().map(|b| b.inline.is_none()), Some(true));
        assert_eq!(back, Some(b));
        let d = Desc {
            ty: "[]int".into(),
            shape: Some(Arc::from([2usize, 3])),
        };
        assert_eq!(Desc::decode(&d.encode()), Some(d));
        assert_eq!(Header::decode(&[0u8; 3]), None);
    }

    #[test]
    fn mismatches_are_named_as_the_groups_name_them() {
        let sum = Op::AllReduce(Reduce::Sum);
        let (a, da) = h(sum, "int", Data::Int(1));
        let (b, _) = h(Op::Broadcast { root: 0 }, "int", Data::Int(1));
        assert_eq!(
            check(&[a.clone(), a.clone(), b]),
            Check::Fail(CollError::OpMismatch {
                first: "allreduce_sum",
                rank: 2,
                other: "broadcast"
            })
        );
        let (r0, _) = h(Op::Broadcast { root: 0 }, "int", Data::Int(1));
        let (r1, _) = h(Op::Broadcast { root: 1 }, "int", Data::Int(1));
        assert_eq!(
            check(&[r0, r1]),
            Check::Fail(CollError::RootMismatch {
                first: 0,
                rank: 1,
                other: 1
            })
        );
        let (f, df) = h(sum, "float", Data::Float(1.0));
        let hs = [a.clone(), f];
        assert_eq!(check(&hs), Check::NeedDescs);
        assert_eq!(
            mismatch(&hs, &[da.clone(), df]).to_string(),
            "allreduce_sum: type mismatch: int (rank 0) vs float (rank 1)"
        );
        let (t0, d0) = h(sum, "tensor", f32s(&[2, 3]));
        let (t2, d2) = h(sum, "tensor", f32s(&[3, 2]));
        let hs = [t0.clone(), t0.clone(), t2];
        assert_eq!(check(&hs), Check::NeedDescs);
        assert_eq!(
            mismatch(&hs, &[d0.clone(), d0, d2]).to_string(),
            "allreduce_sum: shape mismatch: [2 3] (rank 0) vs [3 2] (rank 2)"
        );
        assert_eq!(check(&[a.clone(), a]), Check::Agree);
        let (x, _) = h(Op::Barrier, "int", Data::Unit);
        let (y, _) = h(Op::Barrier, "float", Data::Int(2));
        assert_eq!(check(&[x, y]), Check::Agree);
    }

    #[test]
    fn local_checks() {
        assert_eq!(
            check_local(Op::Broadcast { root: 5 }, "int", &Data::Int(1), 4)
                .map_err(|e| e.to_string()),
            Err("broadcast: root 5 out of range for group of size 4".to_string())
        );
        assert!(check_local(Op::AllGather, "int", &Data::Int(1), 2).is_err());
        let bad = Data::F32 {
            shape: Arc::from([2usize, 2]),
            data: Arc::new(vec![0.0; 3]),
        };
        assert!(check_local(Op::AllReduce(Reduce::Sum), "tensor", &bad, 2).is_err());
        assert!(check_local(Op::AllReduce(Reduce::Sum), "tensor", &f32s(&[2, 2]), 2).is_ok());
        // A list of buffers does not cross processes (the interpreter
        // sends a list as one buffer).
        let list = Data::F32s(vec![weft_coll::F32Part {
            shape: Arc::from([2usize]),
            data: Arc::new(vec![0.0; 2]),
        }]);
        assert_eq!(
            check_local(Op::AllReduce(Reduce::Sum), "[]tensor", &list, 2)
                .map_err(|e| e.to_string()),
            Err("allreduce_sum: cannot take a value of type []tensor".to_string())
        );
    }
}
