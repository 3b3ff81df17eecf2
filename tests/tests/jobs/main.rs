//! Detached calls: the detach-with-wait combinator, and the embedded job
//! runner with its `jobs.*` tools.

mod detach;
mod lifecycle;
mod nats;
mod telemetry;
