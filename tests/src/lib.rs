//! Integration tests live in `tests/`.
//!
//! The workspace README's Rust code is compiled and run here, as doc tests,
//! so it cannot drift from the crates.

/// The workspace `README.md`.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct Readme;
