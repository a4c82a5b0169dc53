//! Reading and writing `.pb` program files: protobuf bytes of a [`ProgramDesc`].
//!
//! Invariant: [`decode`] never panics, whatever the bytes; it returns a
//! [`DecodeError`] for malformed protobuf (prost's decoder checks lengths, wire
//! types, UTF-8 and nesting depth) and for a format version this build does not
//! read. It checks only the envelope: run [`crate::verify()`] before executing a
//! decoded program.

use prost::Message;

use crate::pb::ProgramDesc;

/// The IR format version this build writes and reads. Bump it when a change
/// to `program.proto` or to the meaning of an op would make old readers
/// misread new programs.
pub const FORMAT_VERSION: u32 = 1;

/// How deep protobuf messages may nest for [`decode`]: prost's recursion
/// limit (fixed at 100 in prost), the top-level `ProgramDesc` counting one.
pub const DECODE_DEPTH_LIMIT: usize = 100;

/// The most levels of `[]` and `chan` one type may nest. The front end and
/// [`crate::verify()`] reject deeper types, so that every program they accept
/// fits within [`DECODE_DEPTH_LIMIT`]: such a type is `MAX_TYPE_NESTING + 1`
/// `Type` messages, inside at most 4 others (`ProgramDesc`, `BlockDesc`,
/// `OpDesc`, `Attr`). Whatever `weft build` writes, `weft run` reads.
pub const MAX_TYPE_NESTING: usize = 64;

/// Why bytes could not be read as a program.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The bytes are not a well-formed `ProgramDesc` (truncated, corrupt, or
    /// not protobuf): prost's reason, with the fields it was reading, on one
    /// line (a run of the same field is written once with its count).
    #[error("malformed program file: {0}")]
    Malformed(String),
    /// Messages nested deeper than [`DECODE_DEPTH_LIMIT`] (prost's recursion
    /// limit): a type nested more than [`MAX_TYPE_NESTING`] levels, which
    /// nothing that verifies contains.
    #[error(
        "malformed program file: messages nested more than {limit} deep (the decoder's limit; \
         a type nests at most {types} levels of [] and chan)",
        limit = DECODE_DEPTH_LIMIT,
        types = MAX_TYPE_NESTING
    )]
    TooDeep,
    /// The file carries no version: it is empty or not a Weft program.
    #[error("missing format version (empty file or not a weft program)")]
    MissingVersion,
    /// The file was written for another format version.
    #[error("unsupported format version {found} (this build reads version {expected})")]
    UnsupportedVersion {
        /// The version found in the file.
        found: u32,
        /// [`FORMAT_VERSION`].
        expected: u32,
    },
}

/// Encodes a program as protobuf bytes (the `weft build` output).
pub fn encode(program: &ProgramDesc) -> Vec<u8> {
    program.encode_to_vec()
}

/// Decodes protobuf bytes into a program and checks its format version.
pub fn decode(bytes: &[u8]) -> Result<ProgramDesc, DecodeError> {
    let program = ProgramDesc::decode(bytes).map_err(malformed)?;
    match program.version {
        0 => Err(DecodeError::MissingVersion),
        FORMAT_VERSION => Ok(program),
        found => Err(DecodeError::UnsupportedVersion {
            found,
            expected: FORMAT_VERSION,
        }),
    }
}

/// A prost error as one short line. prost writes `failed to decode Protobuf
/// message: ` then every field on its way down (`Type.kind: ` once per
/// level: 97 times for a 97-deep type) then the reason.
fn malformed(e: prost::DecodeError) -> DecodeError {
    let text = e.to_string();
    let text = text
        .strip_prefix("failed to decode Protobuf message: ")
        .unwrap_or(&text);
    if text.ends_with("recursion limit reached") {
        return DecodeError::TooDeep;
    }
    let mut parts: Vec<(&str, usize)> = Vec::new();
    for part in text.split(": ") {
        match parts.last_mut() {
            Some((last, n)) if *last == part => *n += 1,
            _ => parts.push((part, 1)),
        }
    }
    let line: Vec<String> = parts
        .into_iter()
        .map(|(p, n)| match n {
            1 => p.to_string(),
            n => format!("{p} (x{n})"),
        })
        .collect();
    DecodeError::Malformed(line.join(": "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_version_checks() {
        let p = ProgramDesc {
            version: FORMAT_VERSION,
            entry: "main".into(),
            ..Default::default()
        };
        assert_eq!(decode(&encode(&p)).unwrap(), p);
        let err = decode(&[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "missing format version (empty file or not a weft program)"
        );
        let v9 = ProgramDesc {
            version: 9,
            ..Default::default()
        };
        let err = decode(&encode(&v9)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unsupported format version 9 (this build reads version 1)"
        );
        let bytes = encode(&p);
        let err = decode(&bytes[..bytes.len() - 1]).unwrap_err();
        assert!(
            err.to_string().starts_with("malformed program file: "),
            "{err}"
        );
    }
}
