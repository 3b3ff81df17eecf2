//! The deployment recipe of `examples/deploy/`, run for real: its script
//! starts three `notes serve` replicas on one PostgreSQL database (a
//! database per test on this binary's own server, `gonk_tools_tests::services`)
//! and HAProxy (Debian's package, installed by `.ci/install-services`) on
//! loopback ports, and the tests go
//! through the balancer — round robin with no stickiness, each answer
//! naming its replica (`x-notes-replica`) — with the official Python SDK
//! and raw HTTP: nothing lost or doubled, one rate-limit budget across the
//! replicas on the binary's Redis, an asking call's retry verified by
//! another replica, a 2025 session kept on its replica, a replica killed
//! without a failed call, `notes-load`'s exactly-once check on PostgreSQL,
//! and PostgreSQL, Redis or NATS (servers of the test's own) stopped and
//! started again under running replicas.

mod support;

mod balancer;
mod failover;
mod jobs;
mod load;
mod notifications;
mod outage;
mod postgres_restart;
mod rate_limit;
mod request_state;
mod sessions;
