//! The resource server (`adapters::http::oauth`): OAuth access tokens from
//! a mock issuer this process serves (metadata under a tenant path, a JWKS
//! it can take down or rotate, introspection) accepted on MCP in both eras
//! and on the WebSocket upgrade, each as its principal in the receipts;
//! hostile tokens refused with nothing run; the key cache's refetch rule;
//! protected resource metadata; scope step-up; no token in any log line;
//! and `notes serve --auth-issuer`.

mod support;

mod accepted;
mod cache;
mod hostile;
mod introspection;
mod keys;
mod logs;
mod metadata;
mod notes;
mod step_up;
mod tls;
