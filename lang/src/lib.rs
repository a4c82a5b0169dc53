//! The Weft block DSL front end.
