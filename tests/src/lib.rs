//! What the integration tests share. They live in `tests/`, one binary per
//! area (`tests/tests/<area>/main.rs`); this library holds what more than
//! one area uses, so each binary links it instead of compiling its own copy.
//!
//! The workspace README's Rust code is compiled and run here, as doc tests,
//! so it cannot drift from the crates.

pub mod clients;
pub mod golden;
pub mod log_capture;
pub mod mcp_clients;
pub mod pi;
pub mod postgres;
pub mod process;
pub mod pty;
pub mod security;
pub mod span_capture;
pub mod subscriber;
pub mod workspace;

/// The workspace `README.md`.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct Readme;
