//! Weft: a CSP-style concurrent dataflow engine.

pub mod tracesvg;
pub mod chan;
pub mod netpoll;
pub mod runtime;
pub mod device;
pub mod tensor;
pub mod interp;
