//! Pure operations on values: arithmetic, comparisons, conversions, lists,
//! strings and structs. Each returns the new value or the `RuntimeError`
//! whose message is the panic of docs/language.md, "Errors and exit codes"
//! (`integer divide by zero`, `index out of range [I] with length L`, ...);
//! the executor adds the location.
//!
//! The ops that allocate (`slice`, `append`, `set_index` of a shared list)
//! check the memory ceiling first, with the bytes they are about to
//! allocate (docs/interpreter.md, "Memory").
//!
//! Operand types were checked before the program ran; a value of an
//! unexpected kind gives an internal error (an engine bug), never a Rust
//! panic.

use std::sync::Arc;

use weft_rt::memlimit::Ceiling;

use super::code::{CmpKind, CmpOp, FloatOp, IntOp};
use super::error::{InternalError, RuntimeError};
use super::value::{values_equal, Value, VALUE_BYTES};

#[inline]
pub fn int_op(op: IntOp, x: i64, y: i64) -> Result<i64, RuntimeError> {
    Ok(match op {
        IntOp::Add => x.wrapping_add(y),
        IntOp::Sub => x.wrapping_sub(y),
        IntOp::Mul => x.wrapping_mul(y),
        IntOp::Div => {
            if y == 0 {
                return Err(RuntimeError::DivideByZero);
            }
            x.wrapping_div(y)
        }
        IntOp::Mod => {
            if y == 0 {
                return Err(RuntimeError::DivideByZero);
            }
            x.wrapping_rem(y)
        }
        IntOp::And => x & y,
        IntOp::Or => x | y,
        IntOp::Xor => x ^ y,
        IntOp::Shl => {
            if y < 0 {
                return Err(RuntimeError::NegativeShift);
            }
            if y >= 64 {
                0
            } else {
                x << y
            }
        }
        IntOp::Shr => {
            if y < 0 {
                return Err(RuntimeError::NegativeShift);
            }
            x >> y.min(63)
        }
    })
}

pub fn float_op(op: FloatOp, x: f64, y: f64) -> f64 {
    match op {
        FloatOp::Add => x + y,
        FloatOp::Sub => x - y,
        FloatOp::Mul => x * y,
        FloatOp::Div => x / y,
    }
}

#[inline]
pub fn ord<T: PartialOrd + PartialEq>(op: CmpOp, a: T, b: T) -> bool {
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
    }
}

pub fn compare(op: CmpOp, kind: CmpKind, x: &Value, y: &Value) -> Result<bool, RuntimeError> {
    Ok(match (kind, x, y) {
        (CmpKind::Int, Value::Int(a), Value::Int(b)) => ord(op, a, b),
        (CmpKind::Float, Value::Float(a), Value::Float(b)) => ord(op, a, b),
        (CmpKind::Str, Value::Str(a), Value::Str(b)) => ord(op, &**a, &**b),
        (_, a, b) => match op {
            CmpOp::Eq => values_equal(a, b),
            CmpOp::Ne => !values_equal(a, b),
            _ => return Err(kind_error("comparison", a)),
        },
    })
}

/// An operand of an unexpected kind (unreachable for verified programs):
/// an engine bug.
#[inline(always)]
pub fn kind_error(what: &'static str, v: &Value) -> RuntimeError {
    RuntimeError::unexpected(what, v)
}

pub fn to_int(v: &Value) -> Result<Value, RuntimeError> {
    Ok(Value::Int(match v {
        Value::Int(i) => *i,
        Value::Float(f) => float_to_int(*f)?,
        Value::Bool(b) => *b as i64,
        Value::Str(s) => std::str::from_utf8(s)
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
            .ok_or_else(|| RuntimeError::InvalidInt(lossy(s)))?,
        other => return Err(kind_error("int", other)),
    }))
}

/// `int(x)` of a float: truncates toward zero.
pub fn float_to_int(f: f64) -> Result<i64, RuntimeError> {
    // 2^63 is exactly representable; every float in [-2^63, 2^63) fits.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || !(-TWO_63..TWO_63).contains(&f) {
        return Err(RuntimeError::FloatOutOfIntRange);
    }
    Ok(f.trunc() as i64)
}

pub fn to_float(v: &Value) -> Result<Value, RuntimeError> {
    Ok(Value::Float(match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Str(s) => std::str::from_utf8(s)
            .ok()
            .and_then(parse_float)
            .ok_or_else(|| RuntimeError::InvalidFloat(lossy(s)))?,
        other => return Err(kind_error("float", other)),
    }))
}

/// A string's bytes as text for a message (U+FFFD for bytes that are
/// not UTF-8).
pub fn lossy(s: &[u8]) -> Box<str> {
    String::from_utf8_lossy(s).into()
}

/// `float(s)`: a decimal number as Go's `strconv.ParseFloat` reads it
/// (digits with `_` between them are not accepted), also `inf`,
/// `+Inf`, `-infinity` and `NaN` in any case.
fn parse_float(t: &str) -> Option<f64> {
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    let word = body.to_ascii_lowercase();
    if matches!(word.as_str(), "inf" | "infinity" | "nan") {
        return t.parse().ok();
    }
    // Rust also reads "infinity" spelt other ways; Go's grammar is digits,
    // one point and an exponent.
    if !body
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    t.parse().ok()
}

/// The character at byte `i` of `s` and its width, as Go's
/// `utf8.DecodeRune`: a byte that does not start a valid encoding (or an
/// encoding cut short) is U+FFFD of width 1.
pub fn decode_rune(s: &[u8], i: usize) -> (u32, usize) {
    let Some(&b0) = s.get(i) else {
        return (0xFFFD, 0);
    };
    if b0 < 0x80 {
        return (b0 as u32, 1);
    }
    let w = match b0 {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return (0xFFFD, 1),
    };
    match s.get(i..i + w).and_then(|b| std::str::from_utf8(b).ok()) {
        Some(t) => (t.chars().next().map_or(0xFFFD, |c| c as u32), w),
        None => (0xFFFD, 1),
    }
}

fn check_index(i: i64, len: usize) -> Result<usize, RuntimeError> {
    if i < 0 || i as u64 >= len as u64 {
        return Err(RuntimeError::IndexOutOfRange { index: i, len });
    }
    Ok(i as usize)
}

pub fn index(x: &Value, i: &Value, byte_str: bool) -> Result<Value, RuntimeError> {
    let i = as_int(i)?;
    match x {
        Value::List(l) => Ok(l[check_index(i, l.len())?].clone()),
        Value::Str(s) => {
            let b = s[check_index(i, s.len())?];
            if byte_str {
                Ok(Value::bytes(&[b]))
            } else {
                Ok(Value::Int(b as i64))
            }
        }
        other => Err(kind_error("index", other)),
    }
}

/// `x[i] = v` on a list held in `x` (copy-on-write: a list shared with
/// another variable is copied first, if the copy fits under `mem`).
pub fn set_index(x: &mut Value, i: &Value, v: Value, mem: Ceiling) -> Result<(), RuntimeError> {
    let i = as_int(i)?;
    match x {
        Value::List(l) => {
            let at = check_index(i, l.len())?;
            if let Some(items) = Arc::get_mut(l) {
                items[at] = v;
                return Ok(());
            }
            mem.check(l.len() * VALUE_BYTES)?;
            Arc::make_mut(l)[at] = v;
            Ok(())
        }
        other => Err(kind_error("set_index", other)),
    }
}

/// `x[lo:hi]`: a copy of the part of a list or string, if it fits under
/// `mem` (the whole of `x` is `x` itself, no copy).
pub fn slice(
    x: &Value,
    lo: Option<&Value>,
    hi: Option<&Value>,
    mem: Ceiling,
) -> Result<Value, RuntimeError> {
    let len = match x {
        Value::List(l) => l.len(),
        Value::Str(s) => s.len(),
        other => return Err(kind_error("slice", other)),
    };
    let lo = match lo {
        Some(v) => as_int(v)?,
        None => 0,
    };
    let hi = match hi {
        Some(v) => as_int(v)?,
        None => len as i64,
    };
    if lo < 0 || hi < lo || hi as u64 > len as u64 {
        return Err(RuntimeError::slice_bounds(lo, hi, len));
    }
    let (lo, hi) = (lo as usize, hi as usize);
    Ok(match x {
        Value::List(l) => {
            if lo == 0 && hi == len {
                x.clone()
            } else {
                mem.check((hi - lo) * VALUE_BYTES)?;
                Value::list(l[lo..hi].to_vec())
            }
        }
        Value::Str(s) => {
            if lo == 0 && hi == len {
                return Ok(x.clone());
            }
            mem.check(hi - lo)?;
            Value::bytes(&s[lo..hi])
        }
        other => return Err(kind_error("slice", other)),
    })
}

/// `append(x, elems...)` into `x` (copy-on-write: a list shared with
/// another variable is copied first, with room for `elems`). The memory
/// ceiling is checked only when storage is allocated: a copy, or growth
/// past the list's capacity (which at least doubles it).
pub fn append(
    x: &mut Value,
    elems: impl ExactSizeIterator<Item = Value>,
    mem: Ceiling,
) -> Result<(), RuntimeError> {
    match x {
        Value::List(l) => {
            let need = l.len() + elems.len();
            if let Some(items) = Arc::get_mut(l) {
                if need > items.capacity() {
                    mem.check(need.max(2 * items.capacity()) * VALUE_BYTES)?;
                }
                items.extend(elems);
                return Ok(());
            }
            mem.check(need * VALUE_BYTES)?;
            let mut items = Vec::with_capacity(need);
            items.extend_from_slice(l);
            items.extend(elems);
            *l = Arc::new(items);
            Ok(())
        }
        other => Err(kind_error("append", other)),
    }
}

pub fn len(x: &Value) -> Result<i64, RuntimeError> {
    Ok(match x {
        Value::Str(s) => s.len() as i64,
        Value::List(l) => l.len() as i64,
        Value::Chan(c) => match (&c.ch, &c.far) {
            (Some(ch), _) => ch.len() as i64,
            // Another process's channel: ask its owner (docs/distributed.md).
            (None, Some(far)) => far.procs.world.len(far.r).wait().map_or(0, |n| n as i64),
            (None, None) => 0,
        },
        Value::Map(m) => m.entries.len() as i64,
        other => return Err(kind_error("len", other)),
    })
}

pub fn cap(x: &Value) -> Result<i64, RuntimeError> {
    Ok(match x {
        Value::Chan(c) => match (&c.ch, &c.far) {
            (Some(ch), _) => ch.cap() as i64,
            (None, Some(far)) => far.r.cap as i64,
            (None, None) => 0,
        },
        other => return Err(kind_error("cap", other)),
    })
}

pub fn field(x: &Value, idx: u32) -> Result<Value, RuntimeError> {
    match x {
        Value::Struct(f) => f
            .get(idx as usize)
            .cloned()
            .ok_or_else(|| InternalError::FieldOutOfRange { op: "field", idx }.into()),
        other => Err(kind_error("field", other)),
    }
}

pub fn set_field(x: &mut Value, idx: u32, v: Value) -> Result<(), RuntimeError> {
    match x {
        Value::Struct(f) => match Arc::make_mut(f).get_mut(idx as usize) {
            Some(slot) => {
                *slot = v;
                Ok(())
            }
            None => Err(InternalError::FieldOutOfRange {
                op: "set_field",
                idx,
            }
            .into()),
        },
        other => Err(kind_error("set_field", other)),
    }
}

pub fn as_int(v: &Value) -> Result<i64, RuntimeError> {
    match v {
        Value::Int(i) => Ok(*i),
        other => Err(kind_error("int operand", other)),
    }
}

/// A duration in milliseconds from an int or float operand (negative: 0).
pub fn millis(v: &Value) -> Result<f64, RuntimeError> {
    let ms = match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        other => return Err(kind_error("milliseconds", other)),
    };
    Ok(if ms.is_nan() || ms < 0.0 { 0.0 } else { ms })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: Ceiling = Ceiling::NONE;

    fn l(v: &[i64]) -> Value {
        Value::list(v.iter().map(|i| Value::Int(*i)).collect())
    }

    #[test]
    fn integer_rules() {
        assert_eq!(int_op(IntOp::Div, -7, 2), Ok(-3));
        assert_eq!(int_op(IntOp::Mod, -7, 2), Ok(-1));
        assert_eq!(int_op(IntOp::Mod, 7, -2), Ok(1));
        assert_eq!(int_op(IntOp::Div, i64::MIN, -1), Ok(i64::MIN));
        assert_eq!(int_op(IntOp::Mod, i64::MIN, -1), Ok(0));
        assert_eq!(int_op(IntOp::Add, i64::MAX, 1), Ok(i64::MIN));
        assert_eq!(int_op(IntOp::Div, 1, 0), Err(RuntimeError::DivideByZero));
        assert_eq!(int_op(IntOp::Mod, 1, 0), Err(RuntimeError::DivideByZero));
        assert_eq!(int_op(IntOp::Shl, 1, 70), Ok(0));
        assert_eq!(int_op(IntOp::Shr, -8, 70), Ok(-1));
        assert_eq!(int_op(IntOp::Shr, -8, 1), Ok(-4));
        assert!(int_op(IntOp::Shl, 1, -1).is_err());
    }

    #[test]
    fn conversions() {
        assert_eq!(to_int(&Value::Float(-2.9)).unwrap().to_display(), "-2");
        assert_eq!(to_int(&Value::str("42")).unwrap().to_display(), "42");
        assert_eq!(
            to_int(&Value::str("abc")).unwrap_err().to_string(),
            "invalid integer \"abc\""
        );
        for f in [f64::NAN, f64::INFINITY, 1e19, -1e19] {
            assert_eq!(
                to_int(&Value::Float(f)).unwrap_err().to_string(),
                "float out of int range"
            );
        }
        assert_eq!(float_to_int(-9_223_372_036_854_775_808.0), Ok(i64::MIN));
        assert_eq!(to_float(&Value::Int(3)).unwrap().to_display(), "3.0");
    }

    #[test]
    fn index_and_slice_messages() {
        let x = l(&[1, 2, 3]);
        assert_eq!(
            index(&x, &Value::Int(3), false).unwrap_err().to_string(),
            "index out of range [3] with length 3"
        );
        assert_eq!(
            index(&x, &Value::Int(-1), false).unwrap_err().to_string(),
            "index out of range [-1] with length 3"
        );
        assert_eq!(
            slice(&x, Some(&Value::Int(2)), Some(&Value::Int(1)), NONE)
                .unwrap_err()
                .to_string(),
            "slice bounds out of range [2:1] with length 3"
        );
        assert_eq!(
            slice(&x, None, Some(&Value::Int(4)), NONE)
                .unwrap_err()
                .to_string(),
            "slice bounds out of range [0:4] with length 3"
        );
        let s = Value::str("hello");
        assert_eq!(
            slice(&s, Some(&Value::Int(1)), Some(&Value::Int(3)), NONE)
                .unwrap()
                .to_display(),
            "el"
        );
        assert_eq!(
            index(&s, &Value::Int(0), false).unwrap().to_display(),
            "104"
        );
        assert_eq!(index(&s, &Value::Int(1), true).unwrap().to_display(), "e");
    }

    #[test]
    fn copy_on_write_keeps_value_semantics() {
        let a = l(&[1, 2, 3]);
        let mut b = a.clone();
        set_index(&mut b, &Value::Int(0), Value::Int(9), NONE).unwrap();
        append(&mut b, [Value::Int(4)].into_iter(), NONE).unwrap();
        assert_eq!(a.to_display(), "[1 2 3]");
        assert_eq!(b.to_display(), "[9 2 3 4]");
        let s = Value::Struct(Arc::new(vec![Value::Int(1)]));
        let mut t = s.clone();
        set_field(&mut t, 0, Value::Int(2)).unwrap();
        assert_eq!(
            (s.to_display(), t.to_display()),
            ("{1}".into(), "{2}".into())
        );
    }

    /// The ops that allocate refuse, before allocating, a copy or growth
    /// that does not fit under the ceiling (here nothing is counted as
    /// held, so only a request past the limit itself is refused).
    #[test]
    fn copies_and_growth_past_the_ceiling_are_refused() {
        let mem = Ceiling::new(Some(1 << 20));
        let oom = "out of memory: the program uses more than 1 MiB (--max-memory)";
        let n = 2 * (1 << 20) / VALUE_BYTES;
        let big = Value::list(vec![Value::Int(0); n]);
        // A slice of all of it shares it; a part of it is a copy.
        assert!(slice(&big, None, None, mem).is_ok());
        let e = slice(
            &big,
            Some(&Value::Int(0)),
            Some(&Value::Int(n as i64 - 1)),
            mem,
        );
        assert_eq!(e.map(|_| ()).unwrap_err().to_string(), oom);
        // Writing into a shared list copies it; into an unshared one not.
        let mut shared = big.clone();
        let e = set_index(&mut shared, &Value::Int(0), Value::Int(1), mem);
        assert_eq!(e.map(|_| ()).unwrap_err().to_string(), oom);
        let mut own = Value::list(vec![Value::Int(0); n]);
        assert!(set_index(&mut own, &Value::Int(0), Value::Int(1), mem).is_ok());
        // Appending to a full list grows it; within its capacity not.
        let e = append(&mut own, [Value::Int(1)].into_iter(), mem);
        assert_eq!(e.map(|_| ()).unwrap_err().to_string(), oom);
        let mut roomy = Value::list(Vec::with_capacity(8));
        assert!(append(&mut roomy, [Value::Int(1)].into_iter(), mem).is_ok());
        let mut shared = big.clone();
        let e = append(&mut shared, [Value::Int(1)].into_iter(), mem);
        assert_eq!(e.map(|_| ()).unwrap_err().to_string(), oom);
        // A long string's part is a copy too.
        let s = Value::str(&"x".repeat((1 << 20) + 2));
        let e = slice(&s, Some(&Value::Int(1)), None, mem);
        assert_eq!(e.map(|_| ()).unwrap_err().to_string(), oom);
    }
}
