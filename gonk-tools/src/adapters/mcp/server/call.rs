//! One `tools/call`, start to end: the tool's context made for the
//! request (cancellation, auth, asking, logger and notify sink, the host
//! value), the call run through the registry, its events relayed to the
//! client while it is there, and its outcome mapped to the result (or the
//! protocol error) of the era.

use std::any::Any;
use std::sync::Arc;

use futures::{FutureExt, StreamExt};
use rmcp::model::{CallToolRequestParams, ProgressToken, RequestMetaObject};
use rmcp::service::Peer;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::asking::{declared_kinds, kinds_in_meta, ElicitationModes, Round, SessionAsker};
use super::content::{error_result, success_result, unknown_tool, ErrorPlacement};
use super::mcp_server::McpServer;
use super::notify::{
    tracing_log, AnswerStream, Delivery, LevelFilter, Notifier, Outbound, OutboundQueue,
};
use super::request_context::{missing_capability, McpRequestContext};
use super::tools;
use crate::adapters::mcp::http::security::RequestState;
use crate::context::{LogSink, NotifySink, ToolContext};
use crate::definition::ToolDefinition;
use crate::error::{ErrorCode, ToolError};
use crate::event::ToolEvent;
use crate::event::ToolOutput;
use crate::jobs;

impl McpServer {
    /// Runs one `tools/call` through the registry and maps the outcome.
    /// A stateless-era request's `_meta` is lent to the tool's context
    /// while it runs and is back in `context` when this returns.
    ///
    /// The future is boxed per call, so it is kept under the allocator's
    /// small-size cache: what only a call that waits or sends needs (the
    /// wait loop, a send, the notifier) is boxed when it is needed.
    // Not an `async fn`: its request would be kept beside the fields it
    // is taken apart into, a second copy in the boxed state.
    #[allow(clippy::manual_async_fn)]
    pub(super) fn call<'a>(
        &'a self,
        request: CallToolRequestParams,
        lent: Lent<'a>,
    ) -> impl std::future::Future<Output = Result<Called, ErrorData>> + Send + 'a {
        let CallToolRequestParams {
            name,
            arguments,
            input_responses,
            request_state: sealed_state,
            ..
        } = request;
        let Lent {
            session_meta,
            ct,
            mcp,
            answer,
        } = lent;
        async move {
            let progress_token = mcp.progress_token.clone();
            let name: &str = &name;
            let shared = &self.shared;
            let Some(def) = tools::resolve(&shared.registry, name, &shared.options, shared.policy)
            else {
                return Ok(Called::Complete(error_result(
                    &unknown_tool(name),
                    ErrorPlacement::Structured,
                )));
            };
            let request_state = mcp
                .http
                .as_ref()
                .and_then(|parts| parts.extensions.get::<RequestState>());
            let stateless = mcp.stateless.as_ref();
            let level = match stateless {
                // No `logLevel`, no log notifications.
                Some(meta) => match meta.log_level() {
                    Some(level) => Arc::new(LevelFilter::at(Some(&level))),
                    // The common case shares one filter instead of allocating.
                    None => LevelFilter::silent(),
                },
                None => Arc::clone(&self.level),
            };
            // A queue for what the tool logs and reports, only when some of it
            // can reach the client: a progress token to report against, or a
            // level that lets log lines through (a 2025 session's always may:
            // `logging/setLevel` can lower it while the call runs).
            let outbound =
                (progress_token.is_some() || !level.is_silent()).then(OutboundQueue::for_call);
            let is_stateless = stateless.is_some();
            // The tool's context, and the round of a call that may ask, are
            // made in a block: what they are made of is gone before the call
            // runs, and takes no room in its state.
            let (mut events, round) = {
                let arguments = arguments.unwrap_or_default();
                // What a sealed state is bound to: the arguments as the client sent
                // them. Kept only when the call may ask (or brings a state).
                // (A stateless request's `_meta` was moved out of `context`.)
                let meta = stateless.unwrap_or(session_meta);
                let meta_kinds = kinds_in_meta(meta);
                let bound_arguments = (sealed_state.is_some() || !meta_kinds.is_empty())
                    .then(|| Value::Object(arguments.clone()));
                let mut input = Value::Object(arguments);
                if tools::input_is_wrapped(&def) {
                    input = input
                        .get_mut("value")
                        .map(Value::take)
                        .unwrap_or(Value::Null);
                }

                let base = self.base_context_shared(request_state, Arc::clone(ct));
                // How this call may ask its client: a 2026 request by replay (the
                // answers come with the retry), a 2025 session on the session.
                let mut round = None;
                // Whether the client renders MCP Apps, for `ctx.ui_supported()`:
                // a host value only for a client that declared the extension.
                // A 2025 session's client declared its capabilities at `initialize`.
                let info = stateless.is_none().then(|| mcp.peer.peer_info()).flatten();
                let declared = info.as_ref().map(|info| &info.capabilities);
                let ui = match stateless {
                    Some(meta) => super::apps::in_meta(meta),
                    None => super::apps::declared(declared),
                };
                let base = match ui {
                    Some(ui) => base.with_host(ui),
                    None => base,
                };
                let base = match stateless {
                    Some(_) => match bound_arguments {
                        Some(arguments) => {
                            let caller = jobs::owner_of(base.auth());
                            // Boxed: only a call that may ask opens a round, and
                            // inline its state would size every call's (boxed) state.
                            let opened = Box::pin(Round::open(
                                &shared.sealer,
                                &def.name,
                                &arguments,
                                caller.as_deref().unwrap_or("anonymous"),
                                meta_kinds,
                                sealed_state.as_deref(),
                                input_responses,
                            ))
                            .await;
                            let opened = match opened {
                                Ok(opened) => opened,
                                Err(refused) => return Err(refused),
                            };
                            let base =
                                base.with_asker(opened.asker(ElicitationModes::in_meta(meta)));
                            round = Some(opened);
                            base
                        }
                        None => base,
                    },
                    None => {
                        let kinds = declared_kinds(declared);
                        if kinds.is_empty() {
                            base
                        } else {
                            base.with_asker(Arc::new(SessionAsker::new(
                                mcp.peer.clone(),
                                kinds,
                                shared.options.ask_timeout,
                            )))
                        }
                    }
                };
                let base = match &outbound {
                    // The queue is the logger and the notify sink: one allocation.
                    Some(outbound) => base
                        .with_shared_logger(Arc::clone(outbound) as Arc<dyn LogSink>)
                        .with_notify_sink(Arc::clone(outbound) as Arc<dyn NotifySink>),
                    // Nothing would reach the client: the lines go to `tracing`
                    // only, and notifications nowhere, as the queue would drop them.
                    None => base.with_shared_logger(tracing_log()).without_notify(),
                };
                let ctx: ToolContext =
                    base.with_shared_host(Arc::clone(mcp) as Arc<dyn Any + Send + Sync>);

                let events = shared.registry.invoke_definition(def.clone(), input, ctx);
                (events, round)
            };
            let mut relay = Relay {
                notifier: None,
                peer: &mcp.peer,
                answer,
                progress_token,
                level,
                def: &def,
                closed: &self.closed,
                disconnected: request_state.map(|state| &state.disconnected),
            };
            let shutdown = shared.inflight.abort_token();
            let mut outcome = Outcome::default();
            // Most calls answer without waiting: their events are read at once,
            // in the loop's order (queued notifications first), and the
            // watchers of the loop below are armed only for a call that waits.
            let mut finished = false;
            if !relay.is_gone() && !shared.inflight.is_aborted() {
                loop {
                    while let Some(out) = try_recv(outbound.as_deref()) {
                        relay.send(out.tool.as_deref(), &out.event).await;
                    }
                    match events.next().now_or_never() {
                        None => break,
                        Some(None) => {
                            finished = true;
                            break;
                        }
                        Some(Some(event)) => {
                            if let Some(event) = outcome.take(event) {
                                relay.send(None, &event).await;
                            }
                        }
                    }
                }
            }
            // Boxed: only a call that waits has a loop to keep.
            let cancelled_by_shutdown = !finished
                && Box::pin(wait(
                    &mut relay,
                    &mut events,
                    &mut outcome,
                    outbound.as_deref(),
                    ct,
                    shutdown,
                ))
                .await;
            let (result, mut error) = outcome.into_parts();
            drop(events);
            while let Some(out) = try_recv(outbound.as_deref()) {
                relay.send(out.tool.as_deref(), &out.event).await;
            }
            drop(relay);
            if let Some(outbound) = outbound {
                OutboundQueue::recycle(outbound);
            }

            // A run that stopped at a question ends with the question, whatever
            // the body made of it.
            if let Some(round) = round.filter(|round| round.replay.is_pending()) {
                return round
                    .input_required(&shared.sealer)
                    .map(Called::InputRequired);
            }
            if cancelled_by_shutdown {
                if let Some(aborted) = error.as_mut().filter(|e| e.code == ErrorCode::Aborted) {
                    aborted.message =
                        "The server is shutting down: the call was cancelled before it finished"
                            .to_owned();
                }
            }
            Ok(Called::Complete(match (error, result) {
                (Some(error), _)
                    if error.code == ErrorCode::ToolNotFound
                        && error.message == ToolError::not_found(&def.name).message =>
                {
                    error_result(&unknown_tool(name), ErrorPlacement::Structured)
                }
                (Some(error), _) if is_stateless && error.code == ErrorCode::InputUnavailable => {
                    match missing_capability(&error) {
                        Some(protocol_error) => return Err(protocol_error),
                        None => error_result(&error, placement(&def)),
                    }
                }
                (Some(error), _) => error_result(&error, placement(&def)),
                (None, Some(output)) => success_result(output),
                (None, None) => error_result(
                    &ToolError::new(ErrorCode::NoResult, "Tool produced no result"),
                    placement(&def),
                ),
            }))
        }
    }
}

/// Where an error result of `def` puts its error object: asked only when
/// a call fails (it reads the output schema).
fn placement(def: &ToolDefinition) -> ErrorPlacement {
    if tools::advertises_output_schema(def) {
        ErrorPlacement::Meta
    } else {
        ErrorPlacement::Structured
    }
}

/// The next queued notification, if there is a queue.
fn try_recv(outbound: Option<&OutboundQueue>) -> Option<Outbound> {
    outbound.and_then(OutboundQueue::try_recv)
}

/// The next queued notification; never, without a queue.
async fn recv(outbound: Option<&OutboundQueue>) -> Outbound {
    match outbound {
        Some(outbound) => outbound.recv().await,
        None => std::future::pending().await,
    }
}

/// What `McpServer::call` borrows of the request's context.
pub(super) struct Lent<'a> {
    /// A 2025 session's request's `_meta` (a stateless request's is in
    /// `mcp`).
    pub(super) session_meta: &'a RequestMetaObject,
    /// The token rmcp made for this handler alone (a child of the
    /// request's, which a client's cancellation fires): the call's own, so
    /// no child of it is made per call. Moved behind one `Arc` shared with
    /// the tool's context, and back: a token's own clone and drop take its
    /// lock.
    pub(super) ct: &'a Arc<CancellationToken>,
    /// What the tool sees of the request, shared with its context.
    pub(super) mcp: &'a Arc<McpRequestContext>,
    /// The answer the call's notifications go into, when it runs in its
    /// HTTP request (else they go through the peer).
    pub(super) answer: Option<&'a AnswerStream>,
}

/// What a `tools/call` came to: a result, or questions for the client
/// (2026: `input_required`).
pub(super) enum Called {
    Complete(rmcp::model::CallToolResult),
    InputRequired(rmcp::model::InputRequiredResult),
}

/// What a call's events amount to: its outcome event, a result or an
/// error (the stream ends with exactly one, last).
#[derive(Default)]
struct Outcome(Option<ToolEvent>);

impl Outcome {
    /// Keeps an outcome event; hands back an event to relay.
    fn take(&mut self, event: ToolEvent) -> Option<ToolEvent> {
        match event {
            ToolEvent::Result { .. } | ToolEvent::Error { .. } => {
                self.0 = Some(event);
                None
            }
            event => Some(event),
        }
    }

    /// The result or the error the call ended with (neither, for a stream
    /// that ended without an outcome).
    fn into_parts(self) -> (Option<ToolOutput<Value>>, Option<ToolError>) {
        match self.0.and_then(ToolEvent::into_outcome) {
            Some(Ok(output)) => (Some(output), None),
            Some(Err(error)) => (None, Some(error)),
            None => (None, None),
        }
    }
}

/// Sends one call's notifications while its client is there. Once the
/// connection is gone (end of stdin, or the HTTP response dropped) nothing
/// more is sent, and a send already waiting is abandoned: rmcp stops
/// servicing sends when its input ends, so awaiting one would hold the
/// call — and its cancellation — until rmcp's own drain timeout. The
/// notifier is made on the first event to relay: most calls have none.
struct Relay<'a> {
    /// Boxed: made only by a call that sends.
    notifier: Option<Box<Notifier>>,
    peer: &'a Peer<RoleServer>,
    answer: Option<&'a AnswerStream>,
    progress_token: Option<ProgressToken>,
    level: Arc<LevelFilter>,
    def: &'a ToolDefinition,
    closed: &'a CancellationToken,
    disconnected: Option<&'a CancellationToken>,
}

impl Relay<'_> {
    fn is_gone(&self) -> bool {
        self.closed.is_cancelled()
            || self
                .disconnected
                .is_some_and(CancellationToken::is_cancelled)
    }

    /// Resolves when the connection is gone.
    async fn gone(&self) {
        gone(self.closed, self.disconnected).await
    }

    /// Sends one event's notification, unless the client is gone. Boxed:
    /// most calls send nothing, and a send's state inline would size every
    /// call's (boxed) state.
    fn send<'s>(
        &'s mut self,
        tool: Option<&'s str>,
        event: &'s ToolEvent,
    ) -> futures::future::BoxFuture<'s, ()> {
        Box::pin(self.send_now(tool, event))
    }

    async fn send_now(&mut self, tool: Option<&str>, event: &ToolEvent) {
        if self.is_gone() {
            return;
        }
        let Relay {
            notifier,
            peer,
            answer,
            progress_token,
            level,
            def,
            closed,
            disconnected,
        } = self;
        let notifier = notifier.get_or_insert_with(|| {
            Box::new(Notifier::new(
                Delivery::of(*answer, peer),
                progress_token.take(),
                Arc::clone(level),
                match tools::mcp_name(def) {
                    mcp_name if mcp_name == def.name => Arc::clone(def.name_arc()),
                    mcp_name => Arc::from(mcp_name),
                },
            ))
        });
        let send = notifier.send(tool, event);
        tokio::select! {
            biased;
            _ = gone(closed, *disconnected) => {}
            _ = send => {}
        }
    }
}

/// The rest of a call that waits: its events and queued notifications
/// relayed as they come, until the outcome; the call cancelled when its
/// client goes away or the server shuts down. `true` when the shutdown
/// cancelled it.
async fn wait(
    relay: &mut Relay<'_>,
    events: &mut crate::ToolEventStream,
    outcome: &mut Outcome,
    outbound: Option<&OutboundQueue>,
    token: &CancellationToken,
    shutdown: &CancellationToken,
) -> bool {
    let mut cancelled_by_shutdown = false;
    loop {
        tokio::select! {
            biased;
            _ = relay.gone(), if !token.is_cancelled() => token.cancel(),
            _ = shutdown.cancelled(), if !token.is_cancelled() => {
                cancelled_by_shutdown = true;
                token.cancel();
            }
            out = recv(outbound) => relay.send(out.tool.as_deref(), &out.event).await,
            event = events.next() => match event {
                None => return cancelled_by_shutdown,
                Some(event) => if let Some(event) = outcome.take(event) {
                    relay.send(None, &event).await;
                },
            },
        }
    }
}

async fn gone(closed: &CancellationToken, disconnected: Option<&CancellationToken>) {
    match disconnected {
        Some(disconnected) => tokio::select! {
            _ = closed.cancelled() => {},
            _ = disconnected.cancelled() => {},
        },
        None => closed.cancelled().await,
    }
}
