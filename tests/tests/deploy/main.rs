//! The deployment recipe of `examples/deploy/`, run for real: its script
//! starts three `notes serve` replicas on one PostgreSQL database (the
//! machine's server, a database per test) and HAProxy (Debian's package,
//! installed by `.ci/install-haproxy`) on loopback ports, and the tests go
//! through the balancer — round robin with no stickiness, each answer
//! naming its replica (`x-notes-replica`) — with the official Python SDK
//! and raw HTTP: nothing lost or doubled, one rate-limit budget across the
//! replicas on the machine's Redis, an asking call's retry verified by
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
