//! [`Call`]: one call's event stream, written out as a state machine.
//!
//! A generator (`async_stream`) kept every step's state in one large
//! block — the gates' futures, the handler's, the streaming rule, the
//! timer — allocated past the allocator's small-size cache and moved as
//! a whole. Here each step holds only what it needs, a call that passes
//! its gates without waiting (no authentication, no rate limit) prepares
//! without a future, and a handler that answers at once is polled once,
//! with no cancellation future made.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::{BoxFuture, CatchUnwind};
use futures::stream::{BoxStream, CatchUnwind as StreamCatchUnwind};
use futures::{FutureExt, Stream, StreamExt};
use serde_json::Value;
use tokio::time::Sleep;
use tokio_util::sync::WaitForCancellationFutureOwned;

use super::metric::CallMetric;
use super::outcome::{returned, settled, Outcome, Step};
use super::{panicked, start, Prepared, TimeLimit};
use crate::context::{Cancellation, ToolContext};
use crate::definition::{HandlerCall, ToolDefinition};
use crate::error::{ErrorCode, ToolError};
use crate::event::ToolEvent;
use crate::registry::ToolRegistry;
use crate::telemetry;

/// The event stream of one call: see [`ToolRegistry::invoke`] for the
/// rule it follows.
pub(super) struct Call {
    // Dropped first: the handler goes before the metric records an
    // abandoned call.
    state: State,
    registry: ToolRegistry,
    metric: CallMetric,
}

enum State {
    /// Not polled yet: a stream does nothing until it is polled.
    Unstarted {
        found: Option<ToolDefinition>,
        input: Value,
        ctx: ToolContext,
    },
    /// Gates that await host components (authentication, a rate limit).
    Preparing(BoxFuture<'static, Result<Prepared, ToolError>>),
    /// A handler with a single result.
    Once(Running<CatchUnwind<AssertUnwindSafe<BoxFuture<'static, HandlerResult>>>>),
    /// A streaming handler, under the outcome rule.
    Streaming(
        Running<StreamCatchUnwind<AssertUnwindSafe<BoxStream<'static, ToolEvent>>>>,
        Outcome,
    ),
    /// Refused before the handler ran: the error to give.
    Refused(ToolEvent),
    /// The outcome was given.
    Done,
}

type HandlerResult = Result<crate::ToolOutput<Value>, ToolError>;

/// A started handler and what may end it early.
struct Running<H> {
    def: ToolDefinition,
    token: Cancellation,
    handler: H,
    limit: Option<TimeLimit>,
    /// Made the first time the handler waits.
    cancelled: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    /// Made the first time the handler waits, when a limit applies.
    timer: Option<Pin<Box<Sleep>>>,
}

impl<H> Running<H> {
    /// The handler is waiting: `Some` with the error that ends the call
    /// when its token fired or its time is up (in that order).
    fn interrupted(&mut self, cx: &mut Context<'_>) -> Option<ToolError> {
        let token = &self.token;
        let cancelled = self
            .cancelled
            .get_or_insert_with(|| Box::pin(token.token().clone().cancelled_owned()));
        if cancelled.as_mut().poll(cx).is_ready() {
            return Some(ToolError::aborted());
        }
        let limit = self.limit.as_ref()?;
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(limit.deadline)));
        timer.as_mut().poll(cx).is_ready().then(|| limit.error())
    }
}

impl Call {
    pub(super) fn new(
        registry: ToolRegistry,
        metric: CallMetric,
        found: Option<ToolDefinition>,
        input: Value,
        ctx: ToolContext,
    ) -> Self {
        Call {
            state: State::Unstarted { found, input, ctx },
            registry,
            metric,
        }
    }

    /// Leaves `Unstarted`: the gates, at once when none waits.
    fn prepare(&mut self, found: Option<ToolDefinition>, input: Value, mut ctx: ToolContext) {
        let registry = &self.registry;
        let prepared = match (found, ctx.auth.take()) {
            (Some(def), None) if !registry.counts_rate(&ctx) => {
                registry.prepare_now(def, input, ctx)
            }
            (Some(def), None) => {
                // The registry is the future's own: no wrapper to move it.
                self.state = State::Preparing(Box::pin(registry.clone().prepare(def, input, ctx)));
                return;
            }
            (Some(def), Some(slot)) => {
                self.state = State::Preparing(Box::pin(
                    registry
                        .clone()
                        .prepare_authenticated(def, input, ctx, slot),
                ));
                return;
            }
            (None, _) => Err(ToolError::not_found(self.metric.tool())),
        };
        self.start(prepared);
    }

    /// Starts the handler of a prepared call, or ends the call with the
    /// error that refused it.
    fn start(&mut self, prepared: Result<Prepared, ToolError>) {
        let default_timeout = self.registry.inner.default_timeout;
        self.state = match prepared.and_then(|p| start(p, default_timeout)) {
            Ok((def, token, HandlerCall::Once(future), limit)) => State::Once(Running {
                def,
                token,
                handler: AssertUnwindSafe(future).catch_unwind(),
                limit,
                cancelled: None,
                timer: None,
            }),
            Ok((def, token, HandlerCall::Stream(events), limit)) => State::Streaming(
                Running {
                    def,
                    token,
                    handler: AssertUnwindSafe(events).catch_unwind(),
                    limit,
                    cancelled: None,
                    timer: None,
                },
                Outcome::default(),
            ),
            Err(error) => refused(error, &mut self.metric),
        };
    }

    /// The call's last event: the handler (already dropped) settled with
    /// `outcome`.
    fn finish(
        &mut self,
        outcome: ToolEvent,
        def: &ToolDefinition,
        token: &Cancellation,
        limit: Option<&TimeLimit>,
    ) -> ToolEvent {
        let outcome = settled(outcome, token);
        let outcome = match limit {
            Some(limit) => limit.settled(outcome),
            None => outcome,
        };
        // A succeeded call is a change event, whichever surface made it.
        if let ToolEvent::Result { data, .. } = &outcome {
            self.registry.inner.listeners.publish(def, data);
        }
        self.metric.outcome(outcome)
    }
}

/// A call refused before its handler ran. Not found (hidden included) and
/// cycles are refused before the call is anything to time: duration 0.
fn refused(error: ToolError, metric: &mut CallMetric) -> State {
    let unmeasured = matches!(error.code, ErrorCode::ToolNotFound | ErrorCode::Cycle);
    let event = ToolEvent::error(error);
    State::Refused(if unmeasured {
        metric.unmeasured(event)
    } else {
        metric.outcome(event)
    })
}

impl Stream for Call {
    type Item = ToolEvent;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ToolEvent>> {
        let this = self.get_mut();
        loop {
            match &mut this.state {
                State::Unstarted { .. } => {
                    let State::Unstarted { found, input, ctx } =
                        std::mem::replace(&mut this.state, State::Done)
                    else {
                        unreachable!()
                    };
                    this.prepare(found, input, ctx);
                }
                State::Preparing(gates) => {
                    let prepared = std::task::ready!(gates.as_mut().poll(cx));
                    this.start(prepared);
                }
                State::Refused(_) => {
                    let State::Refused(event) = std::mem::replace(&mut this.state, State::Done)
                    else {
                        unreachable!()
                    };
                    return Poll::Ready(Some(event));
                }
                State::Once(run) => {
                    // The handler first: one that answers at once makes
                    // no cancellation future and no timer.
                    let finished = match run.handler.poll_unpin(cx) {
                        Poll::Ready(outcome) => Ok(outcome),
                        Poll::Pending => match run.interrupted(cx) {
                            Some(error) => Err(error),
                            None => return Poll::Pending,
                        },
                    };
                    let State::Once(run) = std::mem::replace(&mut this.state, State::Done) else {
                        unreachable!()
                    };
                    let Running {
                        def,
                        token,
                        handler,
                        limit,
                        ..
                    } = run;
                    // Drop the handler before reporting, so its resources
                    // are released first.
                    drop(handler);
                    let outcome = match finished {
                        Err(error) => ToolEvent::error(error),
                        Ok(Err(payload)) => ToolEvent::error(panicked(&def.name, &*payload)),
                        Ok(Ok(Err(error))) => ToolEvent::error(error),
                        Ok(Ok(Ok(output))) => returned(&def, output),
                    };
                    let last = this.finish(outcome, &def, &token, limit.as_ref());
                    return Poll::Ready(Some(last));
                }
                State::Streaming(run, rule) => {
                    // Cancellation and the time limit first, then the
                    // handler's next event.
                    let outcome = if let Some(error) = run.interrupted(cx) {
                        ToolEvent::error(error)
                    } else {
                        match std::task::ready!(run.handler.poll_next_unpin(cx)) {
                            None => std::mem::take(rule).end(),
                            Some(Err(payload)) => {
                                ToolEvent::error(panicked(&run.def.name, &*payload))
                            }
                            Some(Ok(event)) => match rule.step(&run.def, event) {
                                Step::Pass(event) => {
                                    telemetry::passed(&event);
                                    return Poll::Ready(Some(event));
                                }
                                Step::Held => continue,
                                Step::End(outcome) => outcome,
                            },
                        }
                    };
                    let State::Streaming(run, _) = std::mem::replace(&mut this.state, State::Done)
                    else {
                        unreachable!()
                    };
                    let Running {
                        def,
                        token,
                        handler,
                        limit,
                        ..
                    } = run;
                    drop(handler);
                    let last = this.finish(outcome, &def, &token, limit.as_ref());
                    return Poll::Ready(Some(last));
                }
                State::Done => return Poll::Ready(None),
            }
        }
    }
}
