//! The Weft program IR: the protobuf schema's generated types, their file codec,
//! and (in later modules) the op registry, builder, verifier and text dump.
//!
//! A program is a [`pb::ProgramDesc`]: a list of blocks of typed variables and
//! ops; ops such as `if`, `loop`, `go` and `select` refer to sub-blocks by index.
//! `docs/ir.md` describes the structure and lists every op.
//!
//! Generated code: `src/pb/weft.ir.rs` is checked in (see [`pb`] for why) and
//! regenerated with `WEFT_BLESS=1 cargo test -p weft-ir --test codegen`.

#[allow(clippy::all, missing_docs)]
pub mod pb;

pub mod builder;
pub mod codec;
pub mod irdoc;
pub mod registry;
pub mod types;
pub mod verify;

pub use codec::{decode, encode, DecodeError, FORMAT_VERSION};
pub use pb::ProgramDesc;
pub use verify::{verify, VerifyError};
