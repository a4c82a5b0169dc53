//! Weft: a CSP-style concurrent dataflow engine.

pub mod chan;
pub mod cli;
pub mod device;
pub mod interp;
pub mod memlimit;
pub mod netpoll;
pub mod runtime;
pub mod tensor;
pub mod tracesvg;
