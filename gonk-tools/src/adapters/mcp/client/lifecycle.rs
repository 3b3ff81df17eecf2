//! How a connection starts: `2026-07-28` first (`server/discover`, then
//! every request self-describing), the `initialize` handshake of the 2025
//! revisions when the server does not speak it. rmcp runs both lifecycles;
//! this module picks between them.

use std::sync::Arc;

use rmcp::model::ProtocolVersion;
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RunningService, RxJsonRpcMessage,
    TxJsonRpcMessage,
};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use tokio::sync::oneshot;

use super::routes::{Inbox, RoutingTransport};
use super::{ClientState, McpClientError};
use crate::adapters::http::error_chain;

/// The generation of the protocol a connection speaks, which decides how
/// its lifecycle works.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum McpEra {
    /// `2026-07-28` and later: no handshake and no session. The client
    /// asked `server/discover`; every request carries the protocol version,
    /// client capabilities and log level in its `_meta` (over HTTP also the
    /// `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers), and every result
    /// says its `resultType`.
    Stateless,
    /// `2025-11-25` and earlier: an `initialize` handshake opened a
    /// session (over HTTP, an `Mcp-Session-Id`), and the log level is the
    /// session's (`logging/setLevel`).
    Session,
}

impl McpEra {
    /// The era of a negotiated protocol version.
    pub fn of(version: &ProtocolVersion) -> McpEra {
        if version.has_initialize() {
            McpEra::Session
        } else {
            McpEra::Stateless
        }
    }
}

/// A transport that, dropped before the connection starts, hands its inner
/// transport back, so a refused `server/discover` can be followed by
/// `initialize` on the same stream (a stdio server is one process).
struct Reclaim<T> {
    // `Some` until dropped; `Drop` takes it to hand it back.
    inner: Option<T>,
    back: Option<oneshot::Sender<T>>,
}

impl<T> Reclaim<T> {
    fn inner(&mut self) -> &mut T {
        self.inner
            .as_mut()
            .expect("the inner transport is only taken on drop")
    }
}

impl<T> Drop for Reclaim<T> {
    fn drop(&mut self) {
        if let (Some(inner), Some(back)) = (self.inner.take(), self.back.take()) {
            // Nobody waits once the connection has started: the transport
            // is then simply dropped.
            let _ = back.send(inner);
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Reclaim<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner().send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.inner().receive().await
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner().close()
    }
}

/// A started connection and the inbox its transport fills.
pub(super) struct Started {
    pub(super) service: RunningService<RoleClient, ClientState>,
    pub(super) inbox: Arc<Inbox>,
}

/// Starts a connection over `transport`, `2026-07-28` first.
///
/// rmcp's `Auto` lifecycle asks `server/discover` and falls back to
/// `initialize` itself when the server answers it with an error (a 2025
/// server does not know the method) or not at all. A server that does know
/// `server/discover` but supports only handshake revisions answers it with
/// those versions, which rmcp reports as no common version: then the
/// connection starts again with `initialize` at the newest of them, over
/// `again(transport)` (the same stream, or a fresh one over HTTP). So does
/// a server that answers `server/discover` with a result that is not a
/// discovery result (a 2025 server answering unknown methods with `{}`),
/// at `2025-11-25`.
///
/// A connection pinned to one era ([`McpClientBuilder::era`](super::McpClientBuilder::era))
/// starts with that era's lifecycle only.
pub(super) async fn start<T>(
    state: ClientState,
    transport: T,
    again: impl FnOnce(T) -> T + Send,
    era: Option<McpEra>,
) -> Result<Started, McpClientError>
where
    T: Transport<RoleClient> + 'static,
{
    let inbox: Arc<Inbox> = Arc::default();
    if let Some(era) = era {
        let mode = match era {
            McpEra::Session => ClientLifecycleMode::Initialize,
            McpEra::Stateless => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        };
        let routed = RoutingTransport {
            inner: transport,
            inbox: Arc::clone(&inbox),
        };
        let service = state
            .serve_with_lifecycle(routed, mode)
            .await
            .map_err(|e| McpClientError::Connect(error_chain(&e)))?;
        return Ok(Started { service, inbox });
    }
    let (back, reclaimed) = oneshot::channel();
    let first = RoutingTransport {
        inner: Reclaim {
            inner: Some(transport),
            back: Some(back),
        },
        inbox: Arc::clone(&inbox),
    };
    let auto = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    };
    let error = match state.clone().serve_with_lifecycle(first, auto).await {
        Ok(service) => return Ok(Started { service, inbox }),
        Err(error) => error,
    };
    let version = match &error {
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => newest_with_handshake(server_supported),
        // A 2025 server that answers every method it does not know with an
        // empty result (the suite's `sse-retry` server does) answered
        // `server/discover` with something that is not a discovery result:
        // it does not speak the stateless protocol.
        ClientInitializeError::ExpectedInitResult(Some(_)) => Some(ProtocolVersion::V_2025_11_25),
        _ => None,
    };
    let Some(version) = version else {
        return Err(McpClientError::Connect(error_chain(&error)));
    };
    let Ok(transport) = reclaimed.await else {
        return Err(McpClientError::Connect(error_chain(&error)));
    };
    tracing::debug!(
        target: "gonk_tools::mcp::client",
        %version,
        %error,
        "the server speaks no stateless protocol version; connecting with initialize"
    );
    let retry = RoutingTransport {
        inner: again(transport),
        inbox: Arc::clone(&inbox),
    };
    let mut state = state;
    state.info.protocol_version = version;
    let service = state
        .serve_with_lifecycle(retry, ClientLifecycleMode::Initialize)
        .await
        .map_err(|e| McpClientError::Connect(error_chain(&e)))?;
    Ok(Started { service, inbox })
}

/// The newest of `versions` that opens with an `initialize` handshake.
fn newest_with_handshake(versions: &[ProtocolVersion]) -> Option<ProtocolVersion> {
    versions
        .iter()
        .filter(|version| version.has_initialize())
        .max_by(|a, b| a.as_str().cmp(b.as_str()))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_era_follows_the_handshake() {
        assert_eq!(
            McpEra::of(&ProtocolVersion::V_2026_07_28),
            McpEra::Stateless
        );
        assert_eq!(McpEra::of(&ProtocolVersion::V_2025_11_25), McpEra::Session);
        assert_eq!(McpEra::of(&ProtocolVersion::V_2024_11_05), McpEra::Session);
    }

    #[test]
    fn the_fallback_picks_the_newest_handshake_version() {
        let versions = [
            ProtocolVersion::V_2025_03_26,
            ProtocolVersion::V_2026_07_28,
            ProtocolVersion::V_2025_06_18,
        ];
        assert_eq!(
            newest_with_handshake(&versions),
            Some(ProtocolVersion::V_2025_06_18)
        );
        assert_eq!(
            newest_with_handshake(&[ProtocolVersion::V_2026_07_28]),
            None
        );
    }
}
