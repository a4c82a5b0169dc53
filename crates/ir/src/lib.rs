//! The Weft program IR (crate `weft-ir`): the protobuf schema's generated
//! types and everything that only reads or builds the IR.
//!
//! | module | what it is |
//! |---|---|
//! | [`pb`] | generated prost types of `program.proto` (`ProgramDesc`, `BlockDesc`, `OpDesc`, ...) |
//! | [`types`] | `Type` constructors (`Type::int()`, `Type::chan(..)`), equality, printed form |
//! | [`codec`] | [`encode`] / [`decode`] of `.pb` files, [`FORMAT_VERSION`]; decode never panics |
//! | [`registry`] | every op type: slots, attributes, sub-blocks, one-line meaning ([`registry::lookup`]) |
//! | [`builder`] | [`builder::ProgramBuilder`]: build programs from Rust |
//! | [`verify`](mod@verify) | [`verify()`]: every rule of `docs/ir.md`, all errors at once |
//! | [`dump`](mod@dump) | [`dump()`]: the stable text form |
//! | [`irdoc`] | renders `docs/ir.md` from the registry |
//!
//! A program is a [`pb::ProgramDesc`]: a tree of blocks holding typed
//! variables and ops; ops such as `if`, `loop`, `go` and `select` own
//! sub-blocks by index. `docs/ir.md` describes the structure and lists every op.
//!
//! Generated code: `src/pb/weft.ir.rs` is checked in (see [`pb`] for why) and
//! regenerated with `WEFT_BLESS=1 cargo test -p weft-ir --test codegen`;
//! `docs/ir.md` likewise with `WEFT_BLESS=1 cargo test -p weft-ir --test ir_doc`.

#[allow(clippy::all, missing_docs)]
pub mod pb;

pub mod builder;
pub mod codec;
pub mod dump;
pub mod irdoc;
pub mod registry;
pub mod types;
pub mod verify;

pub use codec::{
    decode, encode, DecodeError, DECODE_DEPTH_LIMIT, FORMAT_VERSION, MAX_TYPE_NESTING,
};
pub use dump::dump;
pub use pb::ProgramDesc;
pub use verify::{verify, VerifyError};
