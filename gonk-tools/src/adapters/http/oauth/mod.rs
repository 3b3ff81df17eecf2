//! Every HTTP surface as an OAuth 2.1 resource server (feature `oauth`):
//! access tokens from the host's authorization server become principals.
//!
//! * [`TokenVerifier`] — the seam: a bearer token and this server's
//!   canonical URI in, a [`VerifiedToken`] (issuer, subject, client id,
//!   scopes, expiry) or a [`TokenRejection`] out. Implemented by
//!   [`JwtVerifier`] (signed JWTs against the issuer's JWKS),
//!   [`IntrospectionVerifier`] (RFC 7662, opaque tokens) and
//!   [`ApiKeyVerifier`] (one static key).
//! * [`ProtectedResource`] — the verifier as the
//!   [`HttpAuthenticator`](super::HttpAuthenticator) of
//!   [`HttpServerOptions`](super::HttpServerOptions), so MCP (both eras),
//!   the WebSocket upgrade and any router built on the options take the
//!   same tokens; the `WWW-Authenticate` challenges; the protected resource
//!   metadata (RFC 9728). Over MCP, a `tools/call` whose tool needs a scope
//!   the token lacks answers `403 insufficient_scope` and runs nothing.
//!
//! ```no_run
//! use gonk_tools::prelude::*;
//! use gonk_tools::adapters::http::HttpServerOptions;
//! use gonk_tools::adapters::http::oauth::{JwtVerifier, ProtectedResource};
//! use gonk_tools::adapters::mcp::{serve_http, McpHttpOptions, McpServerOptions};
//!
//! # async fn run(registry: ToolRegistry) -> Result<(), Box<dyn std::error::Error>> {
//! let issuer = "https://idp.example";
//! let resource = ProtectedResource::new(JwtVerifier::new(issuer)?)
//!     .resource("https://notes.example/mcp")?
//!     .authorization_server(issuer)
//!     .scopes_supported(["notes:read", "notes:write"]);
//! let options = McpHttpOptions::new(McpServerOptions::new("notes", "1.0.0"))
//!     .http(HttpServerOptions::new().protected_resource(resource));
//! let server = serve_http("0.0.0.0:8808".parse()?, registry, options).await?;
//! server.wait().await?;
//! # Ok(()) }
//! ```
//!
//! The long form: [serving behind OAuth](crate::docs) (`docs/oauth-server.md`).

mod api_key;
mod introspection;
mod issuer;
mod jwks;
mod jwt;
mod resource;
mod token_cache;
mod verifier;

pub use api_key::ApiKeyVerifier;
pub use introspection::IntrospectionVerifier;
pub use issuer::OAuthConfigError;
pub use jsonwebtoken::Algorithm;
pub use jwt::{JwtVerifier, DEFAULT_ALGORITHMS};
pub use resource::{ProtectedResource, DEFAULT_MAX_TOKEN_BYTES, METADATA_PATH};
pub use verifier::{TokenRejection, TokenRejectionKind, TokenVerifier, VerifiedToken};
