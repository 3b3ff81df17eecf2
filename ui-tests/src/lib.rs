//! UI tests live in `tests/`: `tests/ui/fail` (each with its `.stderr`)
//! and `tests/ui/pass`.
