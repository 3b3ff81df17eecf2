//! Resource, prompt and completion requests on the server's side: each
//! starts from the same base context as a tool call (so what is listed is
//! what is readable), a read or get may ask its client as a tool call
//! does, and a 2025 session hears of the updates it subscribed to.

use std::sync::Arc;

use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use super::asking::{declared_kinds, kinds_in_meta, ElicitationModes, Round, SessionAsker};
use super::mcp_server::McpServer;
use super::request_context::missing_capability;
use super::resources::{self};
use crate::adapters::mcp::http::security::RequestState;
use crate::context::ToolContext;
use crate::error::{ErrorCode, ToolError};
use crate::jobs;
use crate::registry::ResourceUpdates;

/// Resources, prompts and completion: each request starts from the same
/// base context as a tool call (so what is listed is what is readable),
/// and a read or get may ask its client the way a tool call does.
impl McpServer {
    pub(super) fn request_base(&self, context: &RequestContext<RoleServer>) -> ToolContext {
        let request_state = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<RequestState>());
        self.base_context(request_state, context.ct.child_token())
    }

    /// `base`, able to ask the client: a stateless-era request by replay
    /// (a round bound to `binding` and `arguments`), a 2025 session on
    /// the session.
    #[allow(clippy::too_many_arguments)]
    async fn with_asking(
        &self,
        base: ToolContext,
        context: &RequestContext<RoleServer>,
        stateless: bool,
        binding: impl FnOnce() -> (String, Value),
        request_state: Option<&str>,
        input_responses: Option<rmcp::model::InputResponses>,
    ) -> Result<(ToolContext, Option<Round>), ErrorData> {
        if stateless {
            let kinds = kinds_in_meta(&context.meta);
            if request_state.is_none() && kinds.is_empty() {
                return Ok((base, None));
            }
            let caller = jobs::owner_of(base.auth());
            let (binding, arguments) = binding();
            let round = Round::open(
                &self.shared.sealer,
                &binding,
                &arguments,
                caller.as_deref().unwrap_or("anonymous"),
                kinds,
                request_state,
                input_responses,
            )
            .await?;
            let base = base.with_asker(round.asker(ElicitationModes::in_meta(&context.meta)));
            return Ok((base, Some(round)));
        }
        let info = context.peer.peer_info();
        let kinds = declared_kinds(info.as_ref().map(|info| &info.capabilities));
        if kinds.is_empty() {
            return Ok((base, None));
        }
        let asker = SessionAsker::new(context.peer.clone(), kinds, self.shared.options.ask_timeout);
        Ok((base.with_asker(Arc::new(asker)), None))
    }

    /// One read or get that may ask its client: `run` gets the context
    /// (asking by replay in 2026, on the session in 2025); a run that
    /// stopped at a question answers `input_required`, a failed one the
    /// era's error, a finished one what `answer` makes of it (told whether
    /// the caller is authenticated).
    async fn asking_request<T, R, Fut>(
        &self,
        context: &RequestContext<RoleServer>,
        binding: impl FnOnce() -> (String, Value),
        asked: (Option<String>, Option<rmcp::model::InputResponses>),
        run: impl FnOnce(ToolContext) -> Fut,
        answer: impl FnOnce(T, bool) -> Result<R, ErrorData>,
    ) -> Result<R, ErrorData>
    where
        Fut: std::future::Future<Output = Result<T, ToolError>>,
        R: From<rmcp::model::InputRequiredResult>,
    {
        let stateless = is_stateless(context);
        let base = self.request_base(context);
        let authenticated = base.is_authenticated();
        let (request_state, input_responses) = asked;
        let (ctx, round) = self
            .with_asking(
                base,
                context,
                stateless,
                binding,
                request_state.as_deref(),
                input_responses,
            )
            .await?;
        let outcome = run(ctx).await;
        if let Some(round) = round.filter(|round| round.replay.is_pending()) {
            return round.input_required(&self.shared.sealer).map(Into::into);
        }
        match outcome {
            Ok(value) => answer(value, authenticated),
            Err(error) => Err(protocol_error(&error, stateless)),
        }
    }

    pub(super) async fn read_resource_in(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let registry = &self.shared.registry;
        self.asking_request(
            context,
            || {
                (
                    format!("resources/read {uri}"),
                    serde_json::json!({ "uri": uri }),
                )
            },
            (request.request_state, request.input_responses),
            |ctx| registry.read_resource(&uri, ctx),
            |contents, authenticated| {
                resources::read_result(contents, authenticated).map(Into::into)
            },
        )
        .await
    }

    pub(super) async fn get_prompt_in(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        let name = request.name;
        let arguments = request.arguments.unwrap_or_default();
        let bound = Value::Object(arguments.clone());
        let registry = &self.shared.registry;
        self.asking_request(
            context,
            || (format!("prompts/get {name}"), bound),
            (request.request_state, request.input_responses),
            |ctx| registry.get_prompt(&name, arguments, ctx),
            |result, _| resources::prompt_result(result).map(Into::into),
        )
        .await
    }

    /// Notifies a 2025 session of resource updates it subscribed to and of
    /// changes to the resource and prompt lists, until it closes. The
    /// registry's updates are received only while the session has a
    /// subscription.
    pub(super) fn follow_primitives(&self, peer: Peer<RoleServer>) {
        let registry = &self.shared.registry;
        let mut changes = registry.primitive_changes();
        let closed = self.closed.clone();
        let subscriptions = Arc::clone(&self.subscriptions);
        let (has_resources, has_prompts) = (
            !registry.resources().is_empty(),
            !registry.prompts().is_empty(),
        );
        tokio::spawn(async move {
            let mut updates: Option<ResourceUpdates> = None;
            loop {
                let sent = tokio::select! {
                    _ = closed.cancelled() => return,
                    handed = subscriptions.handed_over(), if updates.is_none() => {
                        updates = Some(handed);
                        true
                    }
                    uri = next_update(&mut updates), if updates.is_some() => match uri {
                        None => return,
                        Some(uri) => match subscriptions.wants(&uri) {
                            (true, _) => peer
                                .notify_resource_updated(
                                    rmcp::model::ResourceUpdatedNotificationParam::new(uri),
                                )
                                .await
                                .is_ok(),
                            (false, keep) => {
                                if !keep {
                                    updates = None;
                                }
                                true
                            }
                        },
                    },
                    changed = changes.changed() => match changed {
                        None => return,
                        Some(_) => {
                            (!has_resources || peer.notify_resource_list_changed().await.is_ok())
                                && (!has_prompts || peer.notify_prompt_list_changed().await.is_ok())
                        }
                    },
                };
                if !sent {
                    return;
                }
            }
        });
    }
}

/// The next update of a follower's receiver (polled only while it has one).
async fn next_update(updates: &mut Option<ResourceUpdates>) -> Option<String> {
    match updates {
        Some(updates) => updates.next().await,
        None => std::future::pending().await,
    }
}

/// Whether a request is of the stateless era (its `_meta` names a version
/// without `initialize`).
pub(super) fn is_stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .meta
        .protocol_version()
        .is_some_and(|version| !version.has_initialize())
}

/// A failed read or get: the missing-capability error of a stateless
/// request that cannot ask, else the era's error for the code.
fn protocol_error(error: &ToolError, stateless: bool) -> ErrorData {
    if stateless && error.code == ErrorCode::InputUnavailable {
        if let Some(protocol_error) = missing_capability(error) {
            return protocol_error;
        }
    }
    resources::error_data(error, stateless)
}
