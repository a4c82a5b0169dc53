//! Weft: a CSP-style concurrent dataflow engine.

pub mod device;
pub mod tensor;
