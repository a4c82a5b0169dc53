#![doc = include_str!("../README.md")]
//!
//! # Inside the crate
//!
//! Table of contents:
//!
//! | file            | what |
//! |-----------------|------|
//! | `types.rs`      | `Op`, `Reduce`, `Data`, `Outcome`: the values of the interface |
//! | `error.rs`      | `CollError`, whose `Display` is the language's panic message |
//! | `kernel.rs`     | the arithmetic (public): int/float reductions and the `f32` buffer kernel |
//! | `step.rs`       | one step without waiting: deposits, checks, the small path's result |
//! | `job.rs`        | the sliced path: a shared output buffer cut into claimable chunks |
//! | `group.rs`      | `group`, `Member`, `Call`: the rendezvous (deposit, park, last arriver, delivery) |
//! | `loom_tests.rs` | loom model checks of the rendezvous and the sliced job (`cfg(all(test, loom))`) |
//!
//! Layering: a module imports only from the modules on its line (and
//! `crate::loom`, the loom facade `weft_chan::loom`, for every lock,
//! atomic, `Arc` of shared state and `UnsafeCell`):
//!
//! | module | may import |
//! |--------|------------|
//! | `types`, `error` | nothing of the crate |
//! | `kernel` | `types` |
//! | `step` | `types`, `error`, `kernel` |
//! | `job` | `types`, `kernel` |
//! | `group` | everything above |
//!
//! Design, invariants and measurements: `docs/collectives.md`.
#![deny(missing_docs)]

mod error;
mod group;
mod job;
pub mod kernel;
#[cfg(all(test, loom))]
mod loom_tests;
mod step;
mod types;

/// The loom facade shared by every Weft crate.
use weft_chan::loom;

pub use error::{CollError, Dims, ListDims};
pub use group::{group, group_tuned, Call, Member, Tuning};
pub use types::{Data, F32Part, Op, Outcome, Reduce};
