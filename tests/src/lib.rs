//! What the integration tests share. They live in `tests/`, one binary per
//! area (`tests/tests/<area>/main.rs`); this library holds what more than
//! one area uses, so each binary links it instead of compiling its own copy.
//!
//! The Rust code of the workspace's Markdown — the README, `CONTRIBUTING.md`,
//! the examples' READMEs and the pages of `docs/` — is compiled and run
//! here, as doc tests, so it cannot drift from the crates. A fenced block
//! without a language would be compiled as Rust too, so every other block
//! names its language.

pub mod clients;
pub mod golden;
pub mod log_capture;
pub mod mcp_clients;
pub mod mock_issuer;
pub mod mock_oauth;
pub mod oidc_provider;
pub mod pi;
pub mod process;
pub mod pty;
pub mod security;
pub mod services;
pub mod span_capture;
pub mod subscriber;
pub mod tls;
pub mod workspace;

/// The workspace `README.md`.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct Readme;

/// `CONTRIBUTING.md`.
#[cfg(doctest)]
#[doc = include_str!("../../CONTRIBUTING.md")]
pub struct Contributing;

/// The examples' READMEs.
#[cfg(doctest)]
pub mod examples {
    /// `examples/notes/README.md`.
    #[doc = include_str!("../../examples/notes/README.md")]
    pub struct Notes;

    /// `examples/deploy/README.md`.
    #[doc = include_str!("../../examples/deploy/README.md")]
    pub struct Deploy;

    /// `examples/gateway/README.md`.
    #[doc = include_str!("../../examples/gateway/README.md")]
    pub struct Gateway;
}

/// The pages of `docs/`.
#[cfg(doctest)]
pub mod docs {
    /// `docs/architecture.md`.
    #[doc = include_str!("../../docs/architecture.md")]
    pub struct Architecture;

    /// `docs/apps.md`.
    #[doc = include_str!("../../docs/apps.md")]
    pub struct Apps;

    /// `docs/asking.md`.
    #[doc = include_str!("../../docs/asking.md")]
    pub struct Asking;

    /// `docs/benchmarks.md`.
    #[doc = include_str!("../../docs/benchmarks.md")]
    pub struct Benchmarks;

    /// `docs/oauth-server.md`.
    #[doc = include_str!("../../docs/oauth-server.md")]
    pub struct OauthServer;

    /// `docs/contract.md`.
    #[doc = include_str!("../../docs/contract.md")]
    pub struct Contract;

    /// `docs/features.md`.
    #[doc = include_str!("../../docs/features.md")]
    pub struct Features;

    /// `docs/jobs.md`.
    #[doc = include_str!("../../docs/jobs.md")]
    pub struct Jobs;

    /// `docs/mcp.md`.
    #[doc = include_str!("../../docs/mcp.md")]
    pub struct Mcp;

    /// `docs/providers.md`.
    #[doc = include_str!("../../docs/providers.md")]
    pub struct Providers;

    /// `docs/rate-limits.md`.
    #[doc = include_str!("../../docs/rate-limits.md")]
    pub struct RateLimits;

    /// `docs/resources.md`.
    #[doc = include_str!("../../docs/resources.md")]
    pub struct Resources;

    /// `docs/skills.md`.
    #[doc = include_str!("../../docs/skills.md")]
    pub struct Skills;

    /// `docs/snapshots.md`.
    #[doc = include_str!("../../docs/snapshots.md")]
    pub struct Snapshots;

    /// `docs/telemetry.md`.
    #[doc = include_str!("../../docs/telemetry.md")]
    pub struct Telemetry;

    /// `docs/tools.md`.
    #[doc = include_str!("../../docs/tools.md")]
    pub struct Tools;

    /// `docs/websocket.md`.
    #[doc = include_str!("../../docs/websocket.md")]
    pub struct Websocket;
}
