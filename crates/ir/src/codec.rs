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

/// Why bytes could not be read as a program.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The bytes are not a well-formed `ProgramDesc` (truncated, corrupt, or not protobuf).
    #[error("malformed program file: {0}")]
    Malformed(#[from] prost::DecodeError),
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
    let program = ProgramDesc::decode(bytes)?;
    match program.version {
        0 => Err(DecodeError::MissingVersion),
        FORMAT_VERSION => Ok(program),
        found => Err(DecodeError::UnsupportedVersion {
            found,
            expected: FORMAT_VERSION,
        }),
    }
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
