//! Weft: a CSP-style concurrent dataflow engine.

pub mod netpoll;
pub mod runtime;
