//! Weft: a CSP-style concurrent dataflow engine.

pub mod tracesvg;
