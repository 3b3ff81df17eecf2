//! What the HTTP surfaces share (features `mcp` and `ws`): [`HttpGuard`],
//! the checks a request passes before it reaches a surface — the `Host`
//! allow-list against DNS rebinding, the `Origin` allow-list against
//! cross-site requests from browser pages, and the API key as a bearer
//! token, compared in constant time.
//!
//! The MCP endpoint ([`McpHttpOptions`](crate::adapters::mcp::McpHttpOptions))
//! and the WebSocket upgrade ([`WsServerOptions`](crate::adapters::ws::WsServerOptions))
//! both run it, so one request is judged by the same rules on either; an
//! adapter written outside this crate can put the same guard in front of its
//! own routes.
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

mod guard;

pub use guard::{
    bearer_token, GuardFailure, GuardRejection, HttpGuard, LOOPBACK_HOSTS, LOOPBACK_ORIGINS,
};
