//! The Weft program IR.
