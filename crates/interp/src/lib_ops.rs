//! The library builtins of docs/language.md, "Numbers", "Strings",
//! "Lists" and "Files": pure functions of their operands (in argument
//! order) that return the result or the `RuntimeError` whose message is the
//! panic. `run` dispatches on `LibOp`; the executor calls it out of line
//! (`Instr::Lib`), so none of this is in the dispatch loop's hot arms.
//!
//! Strings are bytes (`Value::Str` is a thin shared `[u8]`), as in Go: the
//! operations here work on bytes and decode UTF-8 as Go's `unicode/utf8`
//! does (`decode_rune`: a byte that does not start a valid encoding is
//! U+FFFD of width 1), so their results match Go's `strings` package also
//! on text that is not UTF-8.
//!
//! Memory: every result that may be large (a string built from others, a
//! list, a file read) is charged to the run's ceiling before it is built.
//!
//! Files are read and written with ordinary blocking calls on the worker
//! that runs the task (`read_file` of a regular file does not wait on
//! anything but the disk, as in Go); streaming input is `lines`
//! (`stream.rs`), which waits on the poller.

use std::cmp::Ordering;
use std::io::Write;

use weft_rt::memlimit::Ceiling;

use super::code::{LibOp, Slot};
use super::error::RuntimeError;
use super::ops::{as_int, decode_rune, kind_error, lossy};
use super::sprintf::sprintf;
use super::value::{values_equal, Str, Value, VALUE_BYTES};

/// Runs `op` on the operands in slots `ins` of the frame `fs`. `Tick` and
/// `Lines` are not here (they need the runtime: `stream.rs`).
pub fn run(mem: Ceiling, op: LibOp, fs: &[Value], ins: &[Slot]) -> Result<Value, RuntimeError> {
    let arg = |k: usize| -> Result<&Value, RuntimeError> {
        ins.get(k)
            .and_then(|s| fs.get(*s as usize))
            .ok_or_else(|| RuntimeError::unexpected("builtin operand", &op))
    };
    let s = |k: usize| -> Result<&[u8], RuntimeError> {
        match arg(k)? {
            Value::Str(s) => Ok(s),
            other => Err(kind_error("string operand", other)),
        }
    };
    let fl = |k: usize| -> Result<f64, RuntimeError> {
        match arg(k)? {
            Value::Float(x) => Ok(*x),
            other => Err(kind_error("float operand", other)),
        }
    };
    let boolv = Value::Bool;
    let float = Value::Float;
    Ok(match op {
        LibOp::Abs => match arg(0)? {
            Value::Int(i) => Value::Int(i.wrapping_abs()),
            Value::Float(x) => float(x.abs()),
            other => return Err(kind_error("abs", other)),
        },
        LibOp::Min | LibOp::Max => {
            let vals: Vec<&Value> = (0..ins.len()).map(arg).collect::<Result<_, _>>()?;
            min_max(op == LibOp::Min, &vals)?
        }
        LibOp::Sqrt => float(fl(0)?.sqrt()),
        LibOp::Pow => float(fl(0)?.powf(fl(1)?)),
        LibOp::Floor => float(fl(0)?.floor()),
        LibOp::Ceil => float(fl(0)?.ceil()),
        LibOp::Exp => float(fl(0)?.exp()),
        LibOp::Log => float(fl(0)?.ln()),
        LibOp::Inf => float(f64::INFINITY),
        LibOp::Nan => float(f64::NAN),
        LibOp::IsNan => boolv(fl(0)?.is_nan()),
        LibOp::Split => strs(mem, split(s(0)?, s(1)?))?,
        LibOp::Fields => strs(mem, fields(s(0)?))?,
        LibOp::Join => join(mem, arg(0)?, s(1)?)?,
        LibOp::Contains => match arg(0)? {
            Value::Str(x) => boolv(find(x, s(1)?).is_some()),
            Value::List(l) => {
                let v = arg(1)?;
                boolv(l.iter().any(|e| values_equal(e, v)))
            }
            other => return Err(kind_error("contains", other)),
        },
        LibOp::Index => Value::Int(find(s(0)?, s(1)?).map_or(-1, |i| i as i64)),
        LibOp::HasPrefix => boolv(s(0)?.starts_with(s(1)?)),
        LibOp::HasSuffix => boolv(s(0)?.ends_with(s(1)?)),
        LibOp::Replace => replace(mem, arg(0)?, s(1)?, s(2)?)?,
        LibOp::Trim => {
            let x = s(0)?;
            let t = trim(x);
            if t.len() == x.len() {
                arg(0)?.clone()
            } else {
                Value::bytes(t)
            }
        }
        LibOp::Lower => map_case(mem, arg(0)?, false)?,
        LibOp::Upper => map_case(mem, arg(0)?, true)?,
        LibOp::Repeat => repeat(mem, s(0)?, as_int(arg(1)?)?)?,
        LibOp::Chr => {
            let c = u32::try_from(as_int(arg(0)?)?)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or(char::REPLACEMENT_CHARACTER);
            Value::str(c.encode_utf8(&mut [0; 4]))
        }
        LibOp::Sprintf => {
            let args: Vec<&Value> = (1..ins.len()).map(arg).collect::<Result<_, _>>()?;
            let out = sprintf(s(0)?, &args, mem.headroom() / 3).ok_or_else(|| mem.exceeded())?;
            mem.check(out.len())?;
            Value::Str(Str::from(out))
        }
        LibOp::Sort => sort(mem, arg(0)?)?,
        LibOp::Reverse => match arg(0)? {
            Value::List(l) => {
                mem.check(l.len() * VALUE_BYTES)?;
                Value::list(l.iter().rev().cloned().collect())
            }
            other => return Err(kind_error("reverse", other)),
        },
        LibOp::ReadFile => read_file(mem, s(0)?)?,
        LibOp::WriteFile | LibOp::AppendFile => {
            let (path, data) = (s(0)?, s(1)?);
            write_file(path, data, op == LibOp::AppendFile)?;
            Value::Int(0)
        }
        LibOp::Exists => boolv(std::fs::metadata(os_path(s(0)?)).is_ok()),
        LibOp::Env => {
            let name = os_path(s(0)?);
            match std::env::var_os(name) {
                Some(v) => {
                    use std::os::unix::ffi::OsStrExt;
                    Value::bytes(v.as_bytes())
                }
                None => Value::empty_str(),
            }
        }
        LibOp::Tick | LibOp::Lines => {
            return Err(RuntimeError::unexpected("lib_ops::run", &op));
        }
    })
}

/// `make([]T, n)`: `n` copies of `zero` (negative, or more than memory
/// could hold, panics as Go's `makeslice`).
pub fn make_list(mem: Ceiling, n: i64, zero: &Value) -> Result<Value, RuntimeError> {
    // Go's limit: the bytes must fit in the address space it allocates from.
    const MAX_BYTES: u64 = 1 << 47;
    if n < 0 || n as u64 > MAX_BYTES / VALUE_BYTES as u64 {
        return Err(RuntimeError::Builtin("makeslice: len out of range".into()));
    }
    mem.check(n as usize * VALUE_BYTES)?;
    Ok(Value::list(vec![zero.clone(); n as usize]))
}

/// `min` / `max` of ints or floats: for floats a NaN wins, and `-0.0` is
/// less than `0.0` (Go's builtin `min` and `max`).
fn min_max(is_min: bool, vals: &[&Value]) -> Result<Value, RuntimeError> {
    let Some(first) = vals.first() else {
        return Err(RuntimeError::unexpected("min/max of nothing", &vals.len()));
    };
    let mut acc = (*first).clone();
    for v in &vals[1..] {
        acc = match (&acc, v) {
            (Value::Int(a), Value::Int(b)) => {
                Value::Int(if is_min { *a.min(b) } else { *a.max(b) })
            }
            (Value::Float(a), Value::Float(b)) => {
                let (a, b) = (*a, *b);
                Value::Float(if a.is_nan() || b.is_nan() {
                    f64::NAN
                } else if a == b {
                    // Only zeros of opposite signs differ here.
                    if is_min == a.is_sign_negative() {
                        a
                    } else {
                        b
                    }
                } else if (b < a) == is_min {
                    b
                } else {
                    a
                })
            }
            (a, _) => return Err(kind_error("min/max", a)),
        };
    }
    Ok(acc)
}

/// Go's `unicode.IsSpace`.
fn is_space(c: u32) -> bool {
    match c {
        0x09..=0x0D | 0x20 | 0x85 | 0xA0 => true,
        c if c < 0x100 => false,
        c => char::from_u32(c).is_some_and(char::is_whitespace),
    }
}

/// The first index of `needle` in `hay` (0 for an empty needle).
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    if needle.len() > hay.len() {
        return None;
    }
    let first = needle[0];
    let last = hay.len() - needle.len();
    let mut i = 0;
    while i <= last {
        match hay[i..=last].iter().position(|&b| b == first) {
            None => return None,
            Some(k) => {
                i += k;
                if &hay[i..i + needle.len()] == needle {
                    return Some(i);
                }
                i += 1;
            }
        }
    }
    None
}

/// Go's `strings.Split(s, sep)`: an empty `sep` splits after each UTF-8
/// sequence (each invalid byte on its own).
fn split<'a>(s: &'a [u8], sep: &[u8]) -> Vec<&'a [u8]> {
    let mut parts = Vec::new();
    if sep.is_empty() {
        let mut i = 0;
        while i < s.len() {
            let (_, w) = decode_rune(s, i);
            parts.push(&s[i..i + w]);
            i += w;
        }
        return parts;
    }
    let mut rest = s;
    while let Some(k) = find(rest, sep) {
        parts.push(&rest[..k]);
        rest = &rest[k + sep.len()..];
    }
    parts.push(rest);
    parts
}

/// Go's `strings.Fields`: the runs between white space.
fn fields(s: &[u8]) -> Vec<&[u8]> {
    let mut parts = Vec::new();
    let mut start = None;
    let mut i = 0;
    while i < s.len() {
        let (c, w) = decode_rune(s, i);
        if is_space(c) {
            if let Some(st) = start.take() {
                parts.push(&s[st..i]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
        i += w;
    }
    if let Some(st) = start {
        parts.push(&s[st..]);
    }
    parts
}

/// Go's `strings.TrimSpace`.
fn trim(s: &[u8]) -> &[u8] {
    let mut start = s.len();
    let mut end = 0;
    let mut i = 0;
    while i < s.len() {
        let (c, w) = decode_rune(s, i);
        if !is_space(c) {
            start = start.min(i);
            end = i + w;
        }
        i += w;
    }
    if start >= end {
        return &s[..0];
    }
    &s[start..end]
}

/// A `[]string` of the parts, charged to the ceiling.
fn strs(mem: Ceiling, parts: Vec<&[u8]>) -> Result<Value, RuntimeError> {
    let bytes: usize = parts.iter().map(|p| p.len() + 16).sum();
    mem.check(parts.len() * VALUE_BYTES + bytes)?;
    Ok(Value::list(parts.into_iter().map(Value::bytes).collect()))
}

fn join(mem: Ceiling, list: &Value, sep: &[u8]) -> Result<Value, RuntimeError> {
    let Value::List(l) = list else {
        return Err(kind_error("join", list));
    };
    let mut n = sep.len().saturating_mul(l.len().saturating_sub(1));
    for v in l.iter() {
        match v {
            Value::Str(s) => n = n.saturating_add(s.len()),
            other => return Err(kind_error("join element", other)),
        }
    }
    mem.check(n)?;
    let mut out = Vec::with_capacity(n);
    for (k, v) in l.iter().enumerate() {
        if k > 0 {
            out.extend_from_slice(sep);
        }
        if let Value::Str(s) = v {
            out.extend_from_slice(s);
        }
    }
    Ok(Value::Str(Str::from(out)))
}

/// Go's `strings.ReplaceAll`: an empty `old` matches at the start and
/// after each UTF-8 sequence.
fn replace(mem: Ceiling, x: &Value, old: &[u8], new: &[u8]) -> Result<Value, RuntimeError> {
    let Value::Str(s) = x else {
        return Err(kind_error("replace", x));
    };
    if old == new {
        return Ok(x.clone());
    }
    // The match positions first, so the result's size is known.
    let mut at = Vec::new();
    if old.is_empty() {
        let mut i = 0;
        at.push(0);
        while i < s.len() {
            i += decode_rune(s, i).1;
            at.push(i);
        }
    } else {
        let mut i = 0;
        while let Some(k) = find(&s[i..], old) {
            at.push(i + k);
            i += k + old.len();
        }
    }
    if at.is_empty() {
        return Ok(x.clone());
    }
    let n = (s.len() - at.len() * old.len()).saturating_add(at.len().saturating_mul(new.len()));
    mem.check(n)?;
    let mut out = Vec::with_capacity(n);
    let mut prev = 0;
    for k in at {
        out.extend_from_slice(&s[prev..k]);
        out.extend_from_slice(new);
        prev = k + old.len();
    }
    out.extend_from_slice(&s[prev..]);
    Ok(Value::Str(Str::from(out)))
}

/// Go's `strings.ToLower` / `ToUpper`: each character mapped on its own
/// (a character whose case has several characters, like `ß`, stays), a
/// byte that is not UTF-8 becomes U+FFFD.
fn map_case(mem: Ceiling, x: &Value, upper: bool) -> Result<Value, RuntimeError> {
    let Value::Str(s) = x else {
        return Err(kind_error("lower/upper", x));
    };
    if s.is_ascii() {
        let changes = s.iter().any(|b| {
            if upper {
                b.is_ascii_lowercase()
            } else {
                b.is_ascii_uppercase()
            }
        });
        if !changes {
            return Ok(x.clone());
        }
        mem.check(s.len())?;
        let out: Vec<u8> = if upper {
            s.to_ascii_uppercase()
        } else {
            s.to_ascii_lowercase()
        };
        return Ok(Value::Str(Str::from(out)));
    }
    mem.check(s.len().saturating_mul(2))?;
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let (c, w) = decode_rune(s, i);
        let ch = char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER);
        let mapped = if upper {
            let mut m = ch.to_uppercase();
            match (m.next(), m.next()) {
                (Some(u), None) => u,
                _ => ch,
            }
        } else {
            // Only U+0130 lowers to two characters; Go takes the first.
            ch.to_lowercase().next().unwrap_or(ch)
        };
        out.extend_from_slice(mapped.encode_utf8(&mut [0; 4]).as_bytes());
        i += w;
    }
    Ok(Value::Str(Str::from(out)))
}

fn repeat(mem: Ceiling, s: &[u8], n: i64) -> Result<Value, RuntimeError> {
    if n < 0 {
        return Err(RuntimeError::Builtin(
            "strings: negative Repeat count".into(),
        ));
    }
    let Some(len) = s
        .len()
        .checked_mul(n as usize)
        .filter(|&l| l < isize::MAX as usize)
    else {
        return Err(RuntimeError::Builtin(
            "strings: Repeat output length overflow".into(),
        ));
    };
    mem.check(len)?;
    Ok(Value::Str(Str::from(s.repeat(n as usize))))
}

/// `sort(list)`: ints and strings ascending, floats ascending with NaNs
/// first (Go's `sort.Float64s`); stable.
fn sort(mem: Ceiling, x: &Value) -> Result<Value, RuntimeError> {
    let Value::List(l) = x else {
        return Err(kind_error("sort", x));
    };
    mem.check(l.len() * VALUE_BYTES)?;
    let mut v: Vec<Value> = l.to_vec();
    let mut bad = None;
    v.sort_by(|a, b| match (a, b) {
        (Value::Int(a), Value::Int(b)) => a.cmp(b),
        (Value::Str(a), Value::Str(b)) => a.cmp(b),
        (Value::Float(a), Value::Float(b)) => match (a.is_nan(), b.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => a.partial_cmp(b).unwrap_or(Ordering::Equal),
        },
        (a, _) => {
            bad.get_or_insert_with(|| kind_error("sort element", a));
            Ordering::Equal
        }
    });
    match bad {
        Some(e) => Err(e),
        None => Ok(Value::list(v)),
    }
}

/// A path operand as an OS path (Unix paths are bytes).
pub fn os_path(p: &[u8]) -> &std::path::Path {
    use std::os::unix::ffi::OsStrExt;
    std::path::Path::new(std::ffi::OsStr::from_bytes(p))
}

/// An I/O error's reason as Go words it: the system's message in lower
/// case without Rust's `(os error N)`.
pub fn reason(e: &std::io::Error) -> String {
    let text = match e.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
        None => e.to_string(),
    };
    let text = match text.find(" (os error") {
        Some(k) => &text[..k],
        None => &text,
    };
    let mut c = text.chars();
    match c.next() {
        Some(first) => first.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The panic of a file builtin: `NAME: PATH: REASON`.
pub fn file_error(name: &str, path: &[u8], e: &std::io::Error) -> RuntimeError {
    RuntimeError::Builtin(format!("{name}: {}: {}", lossy(path), reason(e)).into())
}

fn read_file(mem: Ceiling, path: &[u8]) -> Result<Value, RuntimeError> {
    use std::io::Read;
    let err = |e: std::io::Error| file_error("read_file", path, &e);
    let mut f = std::fs::File::open(os_path(path)).map_err(err)?;
    let size = f.metadata().map(|m| m.len() as usize).unwrap_or(0);
    mem.check(size)?;
    let mut buf = Vec::with_capacity(size);
    // Read in steps, so that a file that grows (or a device without a
    // size) is still charged to the ceiling as it arrives.
    loop {
        let n = (&mut f).take(1 << 20).read_to_end(&mut buf).map_err(err)?;
        if n == 0 {
            break;
        }
        mem.check(buf.len())?;
    }
    Ok(Value::Str(Str::from(buf)))
}

fn write_file(path: &[u8], data: &[u8], append: bool) -> Result<(), RuntimeError> {
    let name = if append { "append_file" } else { "write_file" };
    let err = |e: std::io::Error| file_error(name, path, &e);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .append(append)
        .truncate(!append)
        .open(os_path(path))
        .map_err(err)?;
    f.write_all(data).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(v: Vec<&[u8]>) -> Vec<String> {
        v.into_iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect()
    }

    #[test]
    fn decode_like_go() {
        assert_eq!(decode_rune("é".as_bytes(), 0), (0xE9, 2));
        assert_eq!(decode_rune(b"\xC3", 0), (0xFFFD, 1));
        assert_eq!(decode_rune(b"\xE2\x82x", 0), (0xFFFD, 1));
        assert_eq!(decode_rune(b"\xED\xA0\x80", 0), (0xFFFD, 1)); // a surrogate
        assert_eq!(decode_rune(b"\xC0\x80", 0), (0xFFFD, 1)); // overlong
        assert_eq!(decode_rune("😀".as_bytes(), 0), (0x1F600, 4));
    }

    #[test]
    fn split_fields_trim() {
        assert_eq!(st(split(b"a,b,,c", b",")), ["a", "b", "", "c"]);
        assert_eq!(st(split(b"", b",")), [""]);
        assert_eq!(st(split("hé".as_bytes(), b"")), ["h", "é"]);
        assert!(split(b"", b"").is_empty());
        assert_eq!(st(fields(b"  a \t b\n c  ")), ["a", "b", "c"]);
        assert!(fields(b"   ").is_empty());
        assert_eq!(trim(b"  a b \n"), b"a b");
        assert_eq!(trim(b" \t "), b"");
        assert_eq!(trim("\u{a0}x\u{3000}".as_bytes()), b"x");
    }

    #[test]
    fn find_and_replace() {
        assert_eq!(find(b"hello", b"ll"), Some(2));
        assert_eq!(find(b"hello", b"lo!"), None);
        assert_eq!(find(b"aab", b"ab"), Some(1));
        assert_eq!(find(b"x", b""), Some(0));
        let r = |s: &str, o: &str, n: &str| {
            replace(Ceiling::NONE, &Value::str(s), o.as_bytes(), n.as_bytes())
                .unwrap()
                .to_display()
        };
        assert_eq!(r("a-b-c", "-", "+"), "a+b+c");
        assert_eq!(r("aaa", "aa", "b"), "ba");
        assert_eq!(r("hé", "", "."), ".h.é.");
        assert_eq!(r("abc", "x", "y"), "abc");
    }

    #[test]
    fn floats_min_max_and_sort() {
        let f = |x: f64| Value::Float(x);
        let m = min_max(true, &[&f(0.0), &f(-0.0)]).unwrap();
        assert!(matches!(m, Value::Float(x) if x == 0.0 && x.is_sign_negative()));
        let m = min_max(false, &[&f(-0.0), &f(0.0)]).unwrap();
        assert!(matches!(m, Value::Float(x) if x == 0.0 && x.is_sign_positive()));
        assert!(
            matches!(min_max(true, &[&f(1.0), &f(f64::NAN)]).unwrap(), Value::Float(x) if x.is_nan())
        );
        let l = Value::list(vec![f(2.0), f(f64::NAN), f(-1.0)]);
        assert_eq!(
            sort(Ceiling::NONE, &l).unwrap().to_display(),
            "[NaN -1.0 2.0]"
        );
    }

    #[test]
    fn io_reasons_read_as_go() {
        let e = std::io::Error::from_raw_os_error(2);
        assert_eq!(reason(&e), "no such file or directory");
        let err = read_file(Ceiling::NONE, b"/nonexistent/x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "read_file: /nonexistent/x: no such file or directory"
        );
    }
}
