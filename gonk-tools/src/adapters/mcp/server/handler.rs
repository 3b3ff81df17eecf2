//! [`ServerHandler`] for [`McpServer`]: each MCP request rmcp hands the
//! server — listing, calling, tasks, subscriptions, resources, prompts,
//! completion, logging — and what it does with it.
#![allow(deprecated)] // rmcp marks logging (SEP-2577) deprecated; 2025-era clients use it.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetSkillRequestParams,
    GetSkillResult, GetTaskParams, GetTaskResult, ListSkillsResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ServerConfig, SetLevelRequestParams, SubscriptionFilter, Tool,
    UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tracing::Instrument as _;

use super::asking;
use super::call::{Called, Lent};
use super::content::ErrorPlacement;
use super::mcp_server::McpServer;
use super::notify::AnswerStream;
use super::primitives::is_stateless;
use super::request_context::McpRequestContext;
use super::resources::{self};
use super::skills;
use super::tasks;
use super::tools;
use crate::adapters::mcp::http::security::RequestState;
use crate::adapters::mcp::telemetry::ServerSpan;
use crate::error::{ErrorCode, ToolError};
use crate::jobs;

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        self.info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // Sessions, logging and server → client requests are part of the
        // 2025 protocol revisions this adapter serves.
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let request_state = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<RequestState>());
        let base = self.base_context(request_state, context.ct.child_token());
        let telemetry = ServerSpan::start("tools/list", None, &context);
        let listed = self
            .list_in(&base)
            .instrument(telemetry.span().clone())
            .await;
        telemetry.finish(None);
        Ok(listed)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let shared = &self.shared;
        tools::resolve(&shared.registry, name, &shared.options, shared.policy)
            .map(|def| tools::project_tool(&def))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let _permit = self.shared.inflight.admit()?;
        let shared = &self.shared;
        let refused = tasks::required_task(
            &shared.registry,
            &shared.options,
            shared.policy,
            &request.name,
            &context,
        );
        if let Some(refused) = refused {
            return refused.map(Into::into);
        }
        let telemetry = ServerSpan::start("tools/call", Some(&request.name), &context);
        let span = telemetry.span().clone();
        let http = context.extensions.remove::<http::request::Parts>();
        let answer = context.extensions.remove::<AnswerStream>();
        let progress_token = context.meta.get_progress_token();
        // A stateless-era request carries its own protocol version, client
        // capabilities and log level; a 2025 session's are the session's.
        // Moved, not cloned: a deep copy of the map was a fifth of a
        // stateless call's instructions.
        let stateless = context
            .meta
            .protocol_version()
            .is_some_and(|version| !version.has_initialize())
            .then(|| std::mem::take(&mut context.meta));
        // What the tool sees of the request, shared with its context. The
        // peer is moved in, not cloned (a clone is some twenty reference
        // count operations), and handed back with the rest at the end.
        let mcp = Arc::new(McpRequestContext {
            peer: context.peer,
            request_id: context.id.clone(),
            progress_token,
            http,
            stateless,
        });
        let ct = Arc::new(context.ct);
        let lent = Lent {
            session_meta: &context.meta,
            ct: &ct,
            mcp: &mcp,
            answer: answer.as_ref(),
        };
        // Boxed: rmcp moves its request future (sized by its largest
        // handler) into a task several times per request; inline, this
        // call's state made that ~80k instructions of memcpy per HTTP call.
        let called = Box::pin(self.call(request, lent)).instrument(span).await;
        // Back where rmcp keeps them (`as_task` reads the client's
        // capabilities and the HTTP head there). The tool's context is gone
        // with its events unless a job kept it: then they are copied.
        let McpRequestContext {
            peer,
            http,
            stateless,
            ..
        } = Arc::try_unwrap(mcp).unwrap_or_else(|mcp| (*mcp).clone());
        context.peer = peer;
        context.ct = Arc::try_unwrap(ct).unwrap_or_else(|ct| (*ct).clone());
        if let Some(stateless) = stateless {
            context.meta = stateless;
        }
        if let Some(parts) = http {
            context.extensions.insert(parts);
        }
        let result = match called {
            // Questions for the client: the operation ends without an error.
            Ok(Called::InputRequired(questions)) => {
                telemetry.finish_input_required();
                return Ok(CallToolResponse::InputRequired(questions));
            }
            Ok(Called::Complete(result)) => Ok(result),
            Err(error) => Err(error),
        };
        telemetry.finish_call(&result);
        let result = result?;
        let owner = || self.owner(&context);
        Ok(
            match tasks::as_task(&shared.registry, &result, &context, owner).await {
                Some(task) => CallToolResponse::Task(task),
                None => result.into(),
            },
        )
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let runner = jobs::runner(&self.shared.registry)
            .ok_or_else(|| tasks::unknown_task(&request.task_id))?;
        let owner = self.owner(&context);
        let record = tasks::find(&*runner, owner.as_deref(), &request.task_id).await?;
        let placement = match self.shared.registry.get(&record.tool) {
            Some(def) if tools::advertises_output_schema(&def) => ErrorPlacement::Meta,
            _ => ErrorPlacement::Structured,
        };
        Ok(tasks::detailed(record, &*runner, placement))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let runner = jobs::runner(&self.shared.registry)
            .ok_or_else(|| tasks::unknown_task(&request.task_id))?;
        let owner = self.owner(&context);
        let answers = request.input_responses.into_iter().collect();
        tasks::update(&*runner, owner.as_deref(), &request.task_id, answers).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let runner = jobs::runner(&self.shared.registry)
            .ok_or_else(|| tasks::unknown_task(&request.task_id))?;
        let owner = self.owner(&context);
        tasks::cancel(&*runner, owner.as_deref(), &request.task_id).await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // rmcp intersects this with what the client asked for and what
        // `get_info` advertises. Resource subscriptions are to URIs this
        // server serves (a read may still be refused to the caller; an
        // update says only that the URI changed).
        let registry = &self.shared.registry;
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.prompts_list_changed = requested.prompts_list_changed;
        accepted.resources_list_changed = requested.resources_list_changed;
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| registry.resolve_resource(uri).is_some())
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        // One entry of the server's listen-stream table while it is open:
        // evicted (its token fires) when it has gone longest without
        // delivering anything and room is needed; the stream then ends.
        let listening = self.start_listening(context.request_context())?;
        let evicted = listening.evicted().clone();
        let accepted = context.accepted().clone();
        let tools = accepted.tools_list_changed == Some(true);
        let prompts = accepted.prompts_list_changed == Some(true);
        let resources = accepted.resources_list_changed == Some(true);
        let watched = accepted.resource_subscriptions.unwrap_or_default();
        if !tools && !prompts && !resources && watched.is_empty() {
            tokio::select! {
                _ = context.cancelled() => {}
                _ = evicted.cancelled() => {}
            }
            return Ok(());
        }
        let registry = &self.shared.registry;
        let mut changes = registry.catalog_changes();
        let mut primitive_changes = registry.primitive_changes();
        let mut updates = registry.resource_updates();
        let sink = context.sink();
        loop {
            // A send that fails means the stream is gone; the request ends
            // with it.
            let sent = tokio::select! {
                _ = context.cancelled() => return Ok(()),
                _ = self.closed.cancelled() => return Ok(()),
                _ = evicted.cancelled() => return Ok(()),
                changed = changes.changed(), if tools => match changed {
                    None => return Ok(()),
                    Some(_) => sink.notify_tool_list_changed().await.is_ok(),
                },
                changed = primitive_changes.changed(), if prompts || resources => match changed {
                    None => return Ok(()),
                    Some(_) => {
                        (!resources || sink.notify_resource_list_changed().await.is_ok())
                            && (!prompts || sink.notify_prompt_list_changed().await.is_ok())
                    }
                },
                uri = updates.next(), if !watched.is_empty() => match uri {
                    None => return Ok(()),
                    Some(uri) if watched.contains(&uri) => sink.notify_resource_updated(uri).await.is_ok(),
                    Some(_) => true,
                },
            };
            if !sent {
                return Ok(());
            }
            listening.touch();
        }
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        let base = self.request_base(&context);
        let defs = self.shared.registry.list_resources_for(&base).await;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let skill_files = skills::listed(&self.shared.registry);
        resources::list_resources(defs, skill_files, cursor, base.is_authenticated())
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData> {
        let base = self.request_base(&context);
        let defs = self.shared.registry.list_resources_for(&base).await;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        resources::list_templates(defs, cursor, base.is_authenticated())
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        let telemetry = ServerSpan::start("resources/read", None, &context);
        if let Some(read) = skills::read(&self.shared.registry, &request.uri) {
            telemetry.finish(read.as_ref().err().map(|_| "resource_error"));
            return read.map(Into::into);
        }
        let span = telemetry.span().clone();
        let read = self
            .read_resource_in(request, &context)
            .instrument(span)
            .await;
        telemetry.finish(read.as_ref().err().map(|_| "resource_error"));
        read
    }

    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Only what the caller may read can be watched: a hidden resource
        // is as missing here as on a read.
        let base = self.request_base(&context);
        let visible = match self.shared.registry.resolve_resource(&request.uri) {
            Some((def, _)) => self
                .shared
                .registry
                .list_resources_for(&base)
                .await
                .iter()
                .any(|d| d.uri() == def.uri()),
            None => false,
        };
        if !visible {
            let missing = ToolError::new(
                ErrorCode::ResourceNotFound,
                format!("Resource not found: {}", request.uri),
            )
            .with_details(serde_json::json!({ "uri": request.uri }));
            return Err(resources::error_data(&missing, is_stateless(&context)));
        }
        let registry = &self.shared.registry;
        self.subscriptions
            .add(request.uri, || registry.resource_updates());
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.remove(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        let base = self.request_base(&context);
        let defs = self.shared.registry.list_prompts_for(&base).await;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        resources::list_prompts(defs, cursor, base.is_authenticated())
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        let telemetry = ServerSpan::start("prompts/get", Some(&request.name), &context);
        let span = telemetry.span().clone();
        let got = self.get_prompt_in(request, &context).instrument(span).await;
        telemetry.finish(got.as_ref().err().map(|_| "prompt_error"));
        got
    }

    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, ErrorData> {
        let (target, asked) = resources::completion_request(&request)?;
        let base = self.request_base(&context);
        match self.shared.registry.complete(&target, asked, base).await {
            Ok(completion) => Ok(resources::complete_result(completion)),
            Err(error) => Err(resources::error_data(&error, is_stateless(&context))),
        }
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        skills::list(&self.shared.registry, cursor)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        skills::get(&self.shared.registry, &request.uri)
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let cursor = request.cursor.as_deref();
        skills::read_directory(&self.shared.registry, &request.uri, cursor)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A 2025 session hears of catalog changes until it closes.
        let mut changes = self.shared.registry.catalog_changes();
        let closed = self.closed.clone();
        let peer = context.peer;
        // Over HTTP, a session whose client cannot be asked may have its
        // calls run in their own requests (see `sessions`).
        let session = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|id| id.to_str().ok());
        // Held by the task below, which ends when the session closes.
        let opened = session.and_then(|id| {
            let info = peer.peer_info();
            asking::declared_kinds(info.as_ref().map(|info| &info.capabilities))
                .is_empty()
                .then(|| self.open_sessions().open(id, self, peer.clone()))
        });
        self.follow_primitives(peer.clone());
        tokio::spawn(async move {
            // Dropped with the task: a session gone, or one that can no
            // longer be told anything, takes rmcp's path (`sessions`).
            let _opened = opened;
            loop {
                tokio::select! {
                    _ = closed.cancelled() => return,
                    changed = changes.changed() => {
                        if changed.is_none() || peer.notify_tool_list_changed().await.is_err() {
                            return;
                        }
                    }
                }
            }
        });
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.level.set(&request.level);
        Ok(())
    }
}
