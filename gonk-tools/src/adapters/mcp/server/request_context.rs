//! [`McpRequestContext`]: what a tool sees of the MCP request it serves —
//! the peer, the request id and progress token, the HTTP head, the era —
//! and the protocol error of a capability the client did not declare.

use rmcp::model::{
    ClientCapabilities, ProgressToken, ProtocolVersion, RequestId, RequestMetaObject,
};
use rmcp::service::Peer;
use rmcp::{ErrorData, RoleServer};

use crate::error::{ErrorCode, ToolError};

/// What a tool sees of the MCP request it serves, through
/// `ctx.host::<McpRequestContext>()`: the peer (for server → client
/// requests such as sampling and elicitation), the request id, the
/// progress token, and — over HTTP — the request head.
///
/// ```no_run
/// # use gonk_tools::prelude::*;
/// use gonk_tools::adapters::mcp::McpRequestContext;
///
/// async fn who_is_calling(ctx: &ToolContext) -> Option<String> {
///     let mcp = ctx.host::<McpRequestContext>()?;
///     Some(mcp.peer().peer_info()?.client_info.name.clone())
/// }
/// ```
#[derive(Clone, Debug)]
pub struct McpRequestContext {
    // The peer, the HTTP head and a stateless request's `_meta` are moved
    // in from rmcp's request context and moved back when the call ends
    // (`call_tool`): a clone of the peer is some twenty reference-count
    // operations, and a copy of the head (its header map, its extensions)
    // cost more than the rest of the context.
    pub(super) peer: Peer<RoleServer>,
    pub(super) request_id: RequestId,
    pub(super) progress_token: Option<ProgressToken>,
    pub(super) http: Option<http::request::Parts>,
    /// The request's own `_meta` in the stateless era (2026-07-28 on),
    /// where it names the protocol version and the client's capabilities;
    /// `None` on a 2025 session, where the session's handshake did.
    pub(super) stateless: Option<RequestMetaObject>,
}

impl McpRequestContext {
    /// The client peer: send it requests (`create_message`,
    /// `create_elicitation`) or notifications.
    ///
    /// A request served over HTTP without a session (the 2026 era, or
    /// `McpHttpOptions::sessions(false)`) has no channel back to its client
    /// outside its own answer: its peer carries the client's protocol
    /// version in `peer_info`, and what is sent on it fails with
    /// `TransportClosed`. Report progress and logs through the
    /// [`ToolContext`](crate::ToolContext), which puts them in the answer,
    /// and ask the client with `ctx.ask` (a 2026 request asks by
    /// `input_required`).
    pub fn peer(&self) -> &Peer<RoleServer> {
        &self.peer
    }

    /// The JSON-RPC id of the `tools/call` request.
    pub fn request_id(&self) -> &RequestId {
        &self.request_id
    }

    /// The request's progress token, when the client sent one.
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.progress_token.as_ref()
    }

    /// The HTTP request head (method, URI, headers, extensions), over the
    /// streamable-HTTP transport.
    pub fn http_request(&self) -> Option<&http::request::Parts> {
        self.http.as_ref()
    }

    /// The protocol version this request speaks: the one its `_meta`
    /// names (stateless era), else the one the session negotiated.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        match &self.stateless {
            Some(meta) => meta.protocol_version(),
            None => self
                .peer
                .peer_info()
                .map(|info| info.protocol_version.clone()),
        }
    }

    /// Whether the request is of the stateless era (`2026-07-28` on): no
    /// session, so server → client requests on the peer are not available
    /// and the tool must not rely on them.
    pub fn is_stateless(&self) -> bool {
        self.stateless.is_some()
    }

    /// The capabilities the client declared: in the request's `_meta`
    /// (stateless era) or at `initialize` (a 2025 session).
    pub fn client_capabilities(&self) -> Option<ClientCapabilities> {
        match &self.stateless {
            Some(meta) => meta.client_capabilities(),
            None => self.peer.peer_info().map(|info| info.capabilities.clone()),
        }
    }

    /// `Ok` when the client declared `capability` (`"sampling"`,
    /// `"elicitation"`, `"roots"`, …); otherwise an `INPUT_UNAVAILABLE`
    /// error naming it, which a stateless-era request receives as the
    /// protocol's missing-capability error (`-32021`, HTTP `400`) and a 2025
    /// session as an error result.
    ///
    /// ```no_run
    /// # use gonk_tools::prelude::*;
    /// use gonk_tools::adapters::mcp::McpRequestContext;
    ///
    /// async fn summarize(ctx: &ToolContext) -> Result<String, ToolError> {
    ///     let mcp = ctx
    ///         .host::<McpRequestContext>()
    ///         .ok_or_else(|| ToolError::internal("not called over MCP"))?;
    ///     mcp.require_client_capability("sampling")?;
    ///     Ok("…ask the client's model…".to_owned())
    /// }
    /// ```
    pub fn require_client_capability(&self, capability: &str) -> Result<(), ToolError> {
        let declared = self
            .client_capabilities()
            .and_then(|caps| serde_json::to_value(caps).ok())
            .is_some_and(|caps| caps.get(capability).is_some_and(|c| !c.is_null()));
        if declared {
            return Ok(());
        }
        Err(ToolError::new(
            ErrorCode::InputUnavailable,
            format!("The client did not declare the `{capability}` capability this tool needs"),
        )
        .with_details(serde_json::json!({ "requiredCapabilities": { capability: {} } })))
    }
}

/// The missing-capability protocol error a stateless-era request gets for
/// an `INPUT_UNAVAILABLE` error that names required client capabilities.
pub(super) fn missing_capability(error: &ToolError) -> Option<ErrorData> {
    let required = error.details.as_ref()?.get("requiredCapabilities")?;
    Some(ErrorData::new(
        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        error.message.clone(),
        Some(serde_json::json!({ "requiredCapabilities": required })),
    ))
}
