//! Weft: a CSP-style concurrent dataflow engine.
pub mod chan;
pub mod interp;
pub mod netpoll;
pub mod runtime;
