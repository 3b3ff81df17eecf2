//! Dispatch, the core every surface calls: definitions and the registry,
//! a call from look-up to its one outcome (schemas, handler forms,
//! cancellation, composition, timeouts, panics of injected components),
//! metrics, and the JSON wire shape of events. The dispatch contract these
//! tests pin is described in `docs/contract.md`.

mod calls;
mod change_bus;
mod definition;
mod host_faults;
mod input_echo;
mod metrics;
mod outcome;
mod rate_limits;
mod registry;
mod telemetry;
mod timeout;
mod timeout_surfaces;
mod wire;
