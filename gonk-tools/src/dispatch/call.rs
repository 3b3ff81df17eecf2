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
use super::{
    check_cycle, child_stack, enter, panicked, start, validate_input, Authenticated, Prepared,
    TimeLimit,
};
use crate::context::{Cancellation, ToolContext};
use crate::definition::{HandlerCall, ToolDefinition};
use crate::error::{ErrorCode, ToolError};
use crate::event::ToolEvent;
use crate::registry::ToolRegistry;
use crate::security::AuthSlot;
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
        def: ToolDefinition,
        input: Value,
        ctx: ToolContext,
    },
    /// No such tool: the error to give when polled.
    Missing(ToolError),
    /// An unauthenticated call's rate limit, awaited.
    Preparing(BoxFuture<'static, Result<Prepared, ToolError>>),
    /// An authenticated call's gates, raced against its cancellation. The
    /// caller's context waits here, not in the gates' future.
    Authenticating {
        gates: BoxFuture<'static, Result<Authenticated, ToolError>>,
        ctx: ToolContext,
        /// Made the first time the gates wait.
        cancelled: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    },
    /// A handler with a single result that waited at its first poll.
    Once(Running<OnceHandler>),
    /// A streaming handler, under the outcome rule.
    Streaming(
        Running<StreamCatchUnwind<AssertUnwindSafe<BoxStream<'static, ToolEvent>>>>,
        Outcome,
    ),
    /// The outcome was given.
    Done,
}

type HandlerResult = Result<crate::ToolOutput<Value>, ToolError>;

/// A single-result handler, its panics caught.
type OnceHandler = CatchUnwind<AssertUnwindSafe<BoxFuture<'static, HandlerResult>>>;

/// How a single-result handler ended: what it returned (or the panic it
/// raised), or the error that interrupted it.
type Finished = Result<std::thread::Result<HandlerResult>, ToolError>;

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

/// Whether `token` fired, polling its wait (made on the first poll, in
/// `wait`): a call makes no cancellation future until it waits.
fn fired(
    token: &Cancellation,
    wait: &mut Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    cx: &mut Context<'_>,
) -> bool {
    wait.get_or_insert_with(|| Box::pin(token.token().clone().cancelled_owned()))
        .as_mut()
        .poll(cx)
        .is_ready()
}

impl<H> Running<H> {
    /// The handler is waiting: `Some` with the error that ends the call
    /// when its token fired or its time is up (in that order).
    fn interrupted(&mut self, cx: &mut Context<'_>) -> Option<ToolError> {
        if fired(&self.token, &mut self.cancelled, cx) {
            return Some(ToolError::aborted());
        }
        let limit = self.limit.as_ref()?;
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(limit.deadline)));
        timer.as_mut().poll(cx).is_ready().then(|| limit.error())
    }
}

impl Running<OnceHandler> {
    /// The handler first: one that answers at once makes no cancellation
    /// future and no timer.
    #[inline]
    fn poll_once(&mut self, cx: &mut Context<'_>) -> Poll<Finished> {
        match self.handler.poll_unpin(cx) {
            Poll::Ready(outcome) => Poll::Ready(Ok(outcome)),
            Poll::Pending => match self.interrupted(cx) {
                Some(error) => Poll::Ready(Err(error)),
                None => Poll::Pending,
            },
        }
    }
}

impl Call {
    /// A call of `def`, or of a tool that does not exist (`Err`: the
    /// name it was asked by).
    #[inline(always)]
    pub(super) fn new(
        registry: ToolRegistry,
        metric: CallMetric,
        found: Result<ToolDefinition, &str>,
        input: Value,
        ctx: ToolContext,
    ) -> Self {
        let state = match found {
            Ok(def) => State::Unstarted { def, input, ctx },
            Err(name) => State::Missing(ToolError::not_found(name)),
        };
        Call {
            state,
            registry,
            metric,
        }
    }

    /// Leaves `Unstarted`: the gates, at once when none waits, then the
    /// handler. `Pending` only once a gate or the handler waits.
    fn begin(&mut self, cx: &mut Context<'_>) -> Poll<Option<ToolEvent>> {
        let State::Unstarted {
            def,
            input,
            mut ctx,
        } = std::mem::replace(&mut self.state, State::Done)
        else {
            unreachable!()
        };
        let registry = &self.registry;
        match ctx.auth.take().map(AuthSlot::from_caller) {
            None if !registry.counts_rate(&ctx) => {
                // Nothing to wait for: the gates run here, on the context
                // in place.
                let checked = check_cycle(&def, &ctx).and_then(|()| validate_input(&def, &input));
                if let Err(error) = checked {
                    return Poll::Ready(Some(refused(error, &mut self.metric)));
                }
                enter(&mut ctx, registry, &def);
                self.start(def, input, ctx, cx)
            }
            None => {
                // The registry is the future's own: no wrapper to move it.
                self.state = State::Preparing(Box::pin(registry.clone().prepare(def, input, ctx)));
                self.poll_state(cx)
            }
            Some(slot) => {
                if let Err(error) = check_cycle(&def, &ctx) {
                    return Poll::Ready(Some(refused(error, &mut self.metric)));
                }
                let stack = child_stack(&ctx, &def);
                let counts_rate = registry.counts_rate(&ctx);
                let asker = ctx.ask_slot().cloned();
                let gates =
                    registry
                        .clone()
                        .authenticate(def, input, slot, stack, counts_rate, asker);
                self.state = State::Authenticating {
                    gates: Box::pin(gates),
                    ctx,
                    cancelled: None,
                };
                self.poll_state(cx)
            }
        }
    }

    /// Starts the handler of a call that passed its gates and polls it
    /// once, or ends the call with the error that refused it. A handler
    /// that answers at once is settled here: its running state is never
    /// stored.
    fn start(
        &mut self,
        def: ToolDefinition,
        input: Value,
        ctx: ToolContext,
        cx: &mut Context<'_>,
    ) -> Poll<Option<ToolEvent>> {
        let default_timeout = self.registry.inner.default_timeout;
        match start(&def, input, ctx, default_timeout) {
            Ok((token, HandlerCall::Once(future), limit)) => {
                let mut run = Running {
                    def,
                    token,
                    handler: AssertUnwindSafe(future).catch_unwind(),
                    limit,
                    cancelled: None,
                    timer: None,
                };
                match run.poll_once(cx) {
                    Poll::Ready(finished) => Poll::Ready(Some(self.settle_once(run, finished))),
                    Poll::Pending => {
                        self.state = State::Once(run);
                        Poll::Pending
                    }
                }
            }
            Ok((token, HandlerCall::Stream(events), limit)) => {
                self.state = State::Streaming(
                    Running {
                        def,
                        token,
                        handler: AssertUnwindSafe(events).catch_unwind(),
                        limit,
                        cancelled: None,
                        timer: None,
                    },
                    Outcome::default(),
                );
                self.poll_state(cx)
            }
            Err(error) => Poll::Ready(Some(refused(error, &mut self.metric))),
        }
    }

    /// The outcome of a single-result handler that settled (or was
    /// interrupted): the handler is dropped first, so its resources are
    /// released before the outcome is reported.
    #[inline]
    fn settle_once(&mut self, run: Running<OnceHandler>, finished: Finished) -> ToolEvent {
        let Running {
            def,
            token,
            handler,
            limit,
            ..
        } = run;
        drop(handler);
        let outcome = match finished {
            Err(error) => ToolEvent::error(error),
            Ok(Err(payload)) => ToolEvent::error(panicked(&def.name, &*payload)),
            Ok(Ok(Err(error))) => ToolEvent::error(error),
            Ok(Ok(Ok(output))) => returned(&def, output),
        };
        self.finish(outcome, &def, &token, limit.as_ref())
    }

    /// The call's last event: the handler (already dropped) settled with
    /// `outcome`.
    #[inline]
    fn finish(
        &mut self,
        mut outcome: ToolEvent,
        def: &ToolDefinition,
        token: &Cancellation,
        limit: Option<&TimeLimit>,
    ) -> ToolEvent {
        settled(&mut outcome, token);
        if let Some(limit) = limit {
            limit.settled(&mut outcome);
        }
        // A succeeded call is a change event, whichever surface made it.
        if let ToolEvent::Result { data, .. } = &outcome {
            self.registry.inner.listeners.publish(def, data);
        }
        self.metric.outcome(&outcome);
        outcome
    }
}

/// A call refused before its handler ran: its last event. Not found
/// (hidden included) and cycles are refused before the call is anything
/// to time: duration 0.
fn refused(error: ToolError, metric: &mut CallMetric) -> ToolEvent {
    let unmeasured = matches!(error.code, ErrorCode::ToolNotFound | ErrorCode::Cycle);
    let event = ToolEvent::error(error);
    if unmeasured {
        metric.unmeasured(&event);
    } else {
        metric.outcome(&event);
    }
    event
}

impl Call {
    /// Polls the call in its current state.
    fn poll_state(&mut self, cx: &mut Context<'_>) -> Poll<Option<ToolEvent>> {
        match &mut self.state {
            State::Unstarted { .. } => self.begin(cx),
            State::Missing(_) => {
                let State::Missing(error) = std::mem::replace(&mut self.state, State::Done) else {
                    unreachable!()
                };
                Poll::Ready(Some(refused(error, &mut self.metric)))
            }
            State::Preparing(gates) => {
                let prepared = std::task::ready!(gates.as_mut().poll(cx));
                self.state = State::Done;
                match prepared {
                    Ok(Prepared { def, input, ctx }) => self.start(def, input, ctx, cx),
                    Err(error) => Poll::Ready(Some(refused(error, &mut self.metric))),
                }
            }
            State::Authenticating {
                gates,
                ctx,
                cancelled,
            } => {
                let passed = match gates.as_mut().poll(cx) {
                    Poll::Ready(passed) => passed,
                    // Gates that answer at once make no cancellation
                    // future: it is made when they first wait.
                    Poll::Pending if fired(&ctx.cancellation, cancelled, cx) => {
                        Err(ToolError::aborted())
                    }
                    Poll::Pending => return Poll::Pending,
                };
                // The gates' future (and a wait it was in) is dropped here.
                let State::Authenticating { mut ctx, .. } =
                    std::mem::replace(&mut self.state, State::Done)
                else {
                    unreachable!()
                };
                match passed {
                    Ok(Authenticated {
                        def,
                        input,
                        stack,
                        slot,
                    }) => {
                        ctx.enter(self.registry.dispatcher(), stack);
                        telemetry::record_principal(&slot.auth().principal().id);
                        ctx.auth = Some(slot.into_caller());
                        self.start(def, input, ctx, cx)
                    }
                    Err(error) => Poll::Ready(Some(refused(error, &mut self.metric))),
                }
            }
            State::Once(run) => {
                let finished = std::task::ready!(run.poll_once(cx));
                let State::Once(run) = std::mem::replace(&mut self.state, State::Done) else {
                    unreachable!()
                };
                Poll::Ready(Some(self.settle_once(run, finished)))
            }
            State::Streaming(run, rule) => {
                // Cancellation and the time limit first, then the
                // handler's next event.
                let outcome = loop {
                    if let Some(error) = run.interrupted(cx) {
                        break ToolEvent::error(error);
                    }
                    match std::task::ready!(run.handler.poll_next_unpin(cx)) {
                        None => break std::mem::take(rule).end(),
                        Some(Err(payload)) => {
                            break ToolEvent::error(panicked(&run.def.name, &*payload))
                        }
                        Some(Ok(event)) => match rule.step(&run.def, event) {
                            Step::Pass(event) => {
                                telemetry::passed(&event);
                                return Poll::Ready(Some(event));
                            }
                            Step::Held => continue,
                            Step::End(outcome) => break outcome,
                        },
                    }
                };
                let State::Streaming(run, _) = std::mem::replace(&mut self.state, State::Done)
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
                Poll::Ready(Some(self.finish(outcome, &def, &token, limit.as_ref())))
            }
            State::Done => Poll::Ready(None),
        }
    }
}

impl Stream for Call {
    type Item = ToolEvent;

    /// Exact once the call gave its outcome: nothing follows it.
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self.state {
            State::Done => (0, Some(0)),
            _ => (1, None),
        }
    }

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ToolEvent>> {
        let this = self.get_mut();
        if let State::Done = this.state {
            return Poll::Ready(None);
        }
        // Polled inside the call's span, so the handler, its composed
        // calls (child spans) and its log lines are in it. A span no
        // subscriber wants has nothing to enter.
        let span = this.metric.span();
        if span.is_disabled() {
            return this.poll_state(cx);
        }
        let span = span.clone();
        let _entered = span.enter();
        this.poll_state(cx)
    }
}
