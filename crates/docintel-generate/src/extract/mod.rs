//! Deterministic value finders, one module per value type. Each works on one
//! line of text and returns byte ranges into it, so the caller can quote the
//! line and the quote verifies.

pub mod amount;
pub mod date;
pub mod names;
pub mod number;
pub mod pattern;
pub mod phone;
