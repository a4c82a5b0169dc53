//! Weft: a CSP-style concurrent dataflow engine.
