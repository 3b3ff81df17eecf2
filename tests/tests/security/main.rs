//! Authenticated dispatch: principals and the security context, the gates
//! in the order `docs/contract.md` gives with their receipts, the wire
//! shape other languages read, and redaction of secrets.

mod dispatch;
mod identity;
mod redaction;
mod wire;
