//! Tensors in and out of files (docs/language.md, "Input and output"):
//! `load_csv` (a numeric CSV as a `[rows, cols]` tensor; a first line that
//! is not numeric is a header and skipped), `load_npy` / `save_npy` (NumPy
//! `.npy`, format versions 1 to 3, `f4` or `f8` of either byte order, C or
//! Fortran order; saved as little-endian `f4`, version 1.0) and `values`
//! (a tensor's elements as floats).
//!
//! The `.npy` format is a magic string, a version, a header length and a
//! Python dict literal (`{'descr': '<f4', 'fortran_order': False,
//! 'shape': (2, 3), }`) padded to a multiple of 64 bytes, then the raw
//! values; it is small enough to read here without a dependency. Every
//! failure is `TensorError::File`, whose message names the builtin, the
//! path and the reason.

use std::io::Write;

use super::{Tensor, TensorError};

fn file_err(op: &'static str, path: &str, reason: impl Into<String>) -> TensorError {
    TensorError::File {
        op,
        path: path.to_string(),
        reason: reason.into(),
    }
}

/// An I/O error's reason as Go words it (`no such file or directory`).
fn io_reason(e: &std::io::Error) -> String {
    let text = match e.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
        None => e.to_string(),
    };
    let text = text.split(" (os error").next().unwrap_or_default();
    let mut c = text.chars();
    match c.next() {
        Some(first) => first.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

fn read(op: &'static str, path: &str) -> Result<Vec<u8>, TensorError> {
    std::fs::read(path).map_err(|e| file_err(op, path, io_reason(&e)))
}

/// `load_csv(path)`.
pub fn load_csv(path: &str) -> Result<Tensor, TensorError> {
    let bytes = read("load_csv", path)?;
    parse_csv(path, &bytes)
}

/// The tensor of a numeric CSV's text (see `load_csv`).
pub fn parse_csv(path: &str, bytes: &[u8]) -> Result<Tensor, TensorError> {
    let err = |r: String| file_err("load_csv", path, r);
    let text = std::str::from_utf8(bytes).map_err(|_| err("not UTF-8 text".into()))?;
    let mut values: Vec<f32> = Vec::new();
    let mut cols: Option<usize> = None;
    let mut rows = 0usize;
    for (k, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let parsed: Result<Vec<f32>, &str> = fields
            .iter()
            .map(|f| f.parse::<f64>().map(|v| v as f32).map_err(|_| *f))
            .collect();
        let row = match parsed {
            Ok(r) => r,
            Err(_) if rows == 0 && cols.is_none() && k == 0 => {
                // A header: its width still fixes the columns.
                cols = Some(fields.len());
                continue;
            }
            Err(bad) => return Err(err(format!("line {}: invalid number {bad:?}", k + 1))),
        };
        match cols {
            Some(c) if c != row.len() => {
                return Err(err(format!(
                    "line {}: {} fields, want {c}",
                    k + 1,
                    row.len()
                )))
            }
            _ => cols = Some(row.len()),
        }
        values.extend_from_slice(&row);
        rows += 1;
    }
    Tensor::from_vec(&[rows, cols.unwrap_or(0)], values)
}

/// `load_npy(path)`.
pub fn load_npy(path: &str) -> Result<Tensor, TensorError> {
    let bytes = read("load_npy", path)?;
    parse_npy(path, &bytes)
}

/// The tensor of a `.npy` file's bytes.
pub fn parse_npy(path: &str, b: &[u8]) -> Result<Tensor, TensorError> {
    let err = |r: &str| file_err("load_npy", path, r);
    if b.len() < 10 || &b[..6] != b"\x93NUMPY" {
        return Err(err("not a .npy file"));
    }
    let (header_len, start) = match b[6] {
        1 => (u16::from_le_bytes([b[8], b[9]]) as usize, 10),
        2 | 3 if b.len() >= 12 => (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12),
        _ => return Err(err("unsupported .npy version")),
    };
    let header = b
        .get(start..start + header_len)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or_else(|| err("truncated header"))?;
    let descr = dict_value(header, "descr").ok_or_else(|| err("header has no descr"))?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    let (little, size) = match descr {
        "<f4" | "|f4" | "f4" => (true, 4),
        ">f4" => (false, 4),
        "<f8" | "|f8" | "f8" => (true, 8),
        ">f8" => (false, 8),
        other => {
            return Err(err(&format!(
                "dtype {other} is not supported (want f4 or f8)"
            )))
        }
    };
    let fortran = dict_value(header, "fortran_order").is_some_and(|v| v.starts_with("True"));
    let shape_text = dict_value(header, "shape").ok_or_else(|| err("header has no shape"))?;
    let inner = shape_text
        .trim()
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| err("bad shape"))?;
    let mut dims = Vec::new();
    for d in inner.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        dims.push(d.parse::<usize>().map_err(|_| err("bad shape"))?);
    }
    let n = dims
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| err("shape too large"))?;
    let data = &b[start + header_len..];
    if data.len() < n.saturating_mul(size) {
        return Err(err(&format!(
            "{} bytes of data, want {}",
            data.len(),
            n * size
        )));
    }
    let mut values: Vec<f32> = data[..n * size]
        .chunks_exact(size)
        .map(|c| match (size, little) {
            (4, true) => f32::from_le_bytes([c[0], c[1], c[2], c[3]]),
            (4, false) => f32::from_be_bytes([c[0], c[1], c[2], c[3]]),
            (_, true) => {
                f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) as f32
            }
            (_, false) => {
                f64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) as f32
            }
        })
        .collect();
    if fortran && dims.len() > 1 {
        values = fortran_to_c(&values, &dims);
    }
    Tensor::from_vec(&dims, values)
}

/// The value text after `'key':` in a header dict (up to the next
/// top-level comma).
fn dict_value<'h>(header: &'h str, key: &str) -> Option<&'h str> {
    let at = header
        .find(&format!("'{key}'"))
        .or_else(|| header.find(&format!("\"{key}\"")))?;
    let rest = &header[at + key.len() + 2..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let mut depth = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    Some(rest.trim())
}

/// Values stored column-major (first index fastest) in row-major order.
fn fortran_to_c(values: &[f32], dims: &[usize]) -> Vec<f32> {
    let n = values.len();
    let mut out = vec![0.0; n];
    let mut idx = vec![0usize; dims.len()];
    for v in out.iter_mut() {
        // The column-major offset of the row-major index `idx`.
        let mut off = 0;
        let mut stride = 1;
        for (k, &d) in dims.iter().enumerate() {
            off += idx[k] * stride;
            stride *= d;
        }
        *v = values[off];
        for k in (0..dims.len()).rev() {
            idx[k] += 1;
            if idx[k] < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

/// The bytes of `t` as a version 1.0 `.npy` file of little-endian `f4`.
pub fn npy_bytes(t: &Tensor) -> Result<Vec<u8>, TensorError> {
    let values = t.to_vec()?;
    let dims: Vec<String> = t.dims().iter().map(|d| d.to_string()).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6), version (2), length (2), header, newline: a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + 4 * values.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
    Ok(out)
}

/// `save_npy(path, t)`.
pub fn save_npy(path: &str, t: &Tensor) -> Result<(), TensorError> {
    let bytes = npy_bytes(t)?;
    let err = |e: std::io::Error| file_err("save_npy", path, io_reason(&e));
    let mut f = std::fs::File::create(path).map_err(err)?;
    f.write_all(&bytes).map_err(err)
}

/// `values(t)`: the elements in row-major order.
pub fn values(t: &Tensor) -> Result<Vec<f64>, TensorError> {
    Ok(t.to_vec()?.into_iter().map(f64::from).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_and_without_header() {
        let t = parse_csv("a.csv", b"x,y\n1,2\n3,4.5\n").unwrap();
        assert_eq!(t.dims(), &[2, 2]);
        assert_eq!(t.to_vec().unwrap(), vec![1.0, 2.0, 3.0, 4.5]);
        let t = parse_csv("a.csv", b"1, 2 ,3\n\n4,5,6").unwrap();
        assert_eq!(t.dims(), &[2, 3]);
        let e = parse_csv("a.csv", b"1,2\n3,x\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "load_csv: a.csv: line 2: invalid number \"x\""
        );
        let e = parse_csv("a.csv", b"1,2\n3\n").unwrap_err();
        assert_eq!(e.to_string(), "load_csv: a.csv: line 2: 1 fields, want 2");
    }

    #[test]
    fn npy_round_trip_and_f8() {
        let t = Tensor::from_vec(&[2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, -6.5]).unwrap();
        let b = npy_bytes(&t).unwrap();
        assert_eq!(b.len(), 128 + 24); // a header padded to 128 bytes, then 6 f32s
        let back = parse_npy("t.npy", &b).unwrap();
        assert_eq!(back.dims(), &[2, 3]);
        assert_eq!(back.to_vec().unwrap(), t.to_vec().unwrap());
        // f8, Fortran order, as numpy writes np.asfortranarray(...).
        let header = "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }";
        let mut f = b"\x93NUMPY\x01\x00".to_vec();
        f.extend_from_slice(&(header.len() as u16).to_le_bytes());
        f.extend_from_slice(header.as_bytes());
        for v in [1.0f64, 3.0, 2.0, 4.0] {
            f.extend_from_slice(&v.to_le_bytes());
        }
        let t = parse_npy("f.npy", &f).unwrap();
        assert_eq!(t.to_vec().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        let e = parse_npy("x.npy", b"hello world").unwrap_err();
        assert_eq!(e.to_string(), "load_npy: x.npy: not a .npy file");
    }
}
