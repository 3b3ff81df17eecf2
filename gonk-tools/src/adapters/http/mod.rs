//! What the HTTP surfaces share (features `mcp` and `ws`):
//!
//! * [`HttpServerOptions`] — the options every HTTP surface takes: the
//!   endpoint's path, the guard's rules, the authentication hook
//!   ([`HttpAuthenticator`]), the insecure-remote opt-in and the shutdown
//!   token. The MCP endpoint
//!   ([`McpHttpOptions`](crate::adapters::mcp::McpHttpOptions)) and the
//!   WebSocket endpoint ([`WsServerOptions`](crate::adapters::ws::WsServerOptions))
//!   each hold one beside their own settings, so who may connect is
//!   configured once for both.
//! * [`HttpServer`] — the handle both standalone servers return, and
//!   [`HttpServeError`], why one did not start.
//! * [`HttpGuard`] — the checks a request passes before it reaches a
//!   surface: the `Host` allow-list against DNS rebinding, the `Origin`
//!   allow-list against cross-site requests from browser pages, and the API
//!   key as a bearer token, compared in constant time. Both surfaces run it,
//!   so one request is judged by the same rules on either; an adapter
//!   written outside this crate can put the same guard in front of its own
//!   routes.
//! * [`OutboundHttp`] (features `mcp` and `oauth`) — the other direction:
//!   how the crate's own HTTP clients (issuer metadata, JWKS,
//!   introspection, `McpClient` upstreams) reach servers, HTTPS included,
//!   and which roots they trust.
//! * [`oauth`] (feature `oauth`) — the server as an OAuth resource server:
//!   access tokens verified (JWT against the issuer's keys, introspection,
//!   or a static key) into principals, protected resource metadata,
//!   `WWW-Authenticate` challenges.
//!
//! ```
//! use gonk_tools::adapters::http::{GuardFailure, HttpGuard};
//!
//! let guard = HttpGuard::new()
//!     .allowed_hosts(["notes.internal"])
//!     .allowed_origins(["https://notes.example.com"])
//!     .api_key("s3cret")
//!     .bound("127.0.0.1:8808".parse().unwrap());
//!
//! let request = http::Request::post("/rpc")
//!     .header("host", "notes.internal:8808")
//!     .header("origin", "https://notes.example.com")
//!     .header("authorization", "Bearer s3cret")
//!     .body(())
//!     .unwrap();
//! assert!(guard.check(request.uri(), request.headers()).is_ok());
//!
//! let rebound = http::Request::post("/rpc")
//!     .header("host", "attacker.example:8808")
//!     .body(())
//!     .unwrap();
//! let rejection = guard.check(rebound.uri(), rebound.headers()).unwrap_err();
//! assert_eq!(rejection.failure(), GuardFailure::HostNotAllowed);
//! assert_eq!(rejection.status(), http::StatusCode::FORBIDDEN);
//! ```

mod authenticate;
mod guard;
#[cfg(feature = "oauth")]
pub mod oauth;
mod options;
#[cfg(any(feature = "mcp", feature = "oauth"))]
mod outbound;
mod server;
pub(crate) mod session_table;

pub use authenticate::{HttpAuthRejection, HttpAuthenticator, HttpRequestParts};
pub use guard::{
    bearer_token, GuardFailure, GuardRejection, HttpGuard, LOOPBACK_HOSTS, LOOPBACK_ORIGINS,
};
pub use options::HttpServerOptions;
#[cfg(any(feature = "mcp", feature = "oauth"))]
pub(crate) use outbound::error_chain;
#[cfg(any(feature = "mcp", feature = "oauth"))]
pub use outbound::{install_default_provider, OutboundHttp, OutboundHttpError};
pub use server::{HttpServeError, HttpServer};
