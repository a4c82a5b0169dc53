//! `load_dataset(name)`: datasets that ship inside the binary.
//!
//! `"digits"` is the UCI optical digits test set (data/README.md): 1797
//! rows of 64 pixel values (integers 0..16) and a label 0..9, gzip'd CSV,
//! embedded with `include_bytes!` so the engine finds it from any working
//! directory. Pixels are left unscaled (0..16 as f32); programs scale them.

use std::io::Read;

use flate2::read::GzDecoder;

use super::{Tensor, TensorError};

/// The gzip'd CSV of the digits dataset.
static DIGITS_CSV_GZ: &[u8] = include_bytes!("../../../data/digits.csv.gz");

/// A dataset: features `x` `[samples, features]` and integer labels `y`.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    /// `[samples, features]`, on the CPU.
    pub x: Tensor,
    /// One label per sample.
    pub y: Vec<i64>,
}

/// `load_dataset(name)`; only `"digits"` exists so far.
pub fn load_dataset(name: &str) -> Result<Dataset, TensorError> {
    match name {
        "digits" => parse_csv("digits", DIGITS_CSV_GZ, 64),
        _ => Err(TensorError::UnknownDataset(name.to_string())),
    }
}

/// Parses gzip'd CSV rows of `features` numbers followed by an integer label.
fn parse_csv(name: &str, gz: &[u8], features: usize) -> Result<Dataset, TensorError> {
    let bad = |reason: String| TensorError::BadDataset {
        name: name.to_string(),
        reason,
    };
    let mut text = String::new();
    GzDecoder::new(gz)
        .read_to_string(&mut text)
        .map_err(|e| bad(format!("cannot decompress: {e}")))?;
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (line_no, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let fields: Vec<&str> = line.trim().split(',').collect();
        if fields.len() != features + 1 {
            return Err(bad(format!(
                "line {}: {} fields, want {}",
                line_no + 1,
                fields.len(),
                features + 1
            )));
        }
        for f in &fields[..features] {
            let v: f32 = f
                .parse()
                .map_err(|_| bad(format!("line {}: bad number {f:?}", line_no + 1)))?;
            x.push(v);
        }
        let label: i64 = fields[features].parse().map_err(|_| {
            bad(format!(
                "line {}: bad label {:?}",
                line_no + 1,
                fields[features]
            ))
        })?;
        y.push(label);
    }
    let x = Tensor::from_vec(&[y.len(), features], x)?;
    Ok(Dataset { x, y })
}
