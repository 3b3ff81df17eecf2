//! The dispatch pipeline: every call, from every surface, runs through
//! [`ToolRegistry::invoke`].
//!
//! Order for one invocation (root or composed): look up → cycle check →
//! *(authenticated root: capture the principal, authorize `tool.discover`)*
//! → *(root, with [rate limits](crate::rate_limit): count the call)*
//! → validate input against the advertised schema → *(authenticated:
//! resolve approval, resolve the required resource, authorize
//! `tool.invoke`, the approval gate — see [`crate::security`])* → run the
//! handler, raced against cancellation and its time limit and isolated
//! from panics → validate output → one metric record.
//!
//! Whatever the handler does, the call's stream ends with exactly one
//! outcome event, last (the rule is on [`ToolRegistry::invoke`]).
//!
//! # Host components fail closed
//!
//! Everything a host injects may fail or panic: the handler (and the log
//! sink, notify callback and scope store it calls), the policy, resolver,
//! approval provider and audit sink, a dynamic approval declaration, the
//! clock and the request-id generator. Each ends the call with one error
//! event — a hidden tool still reads as missing — and the registry keeps
//! serving. The metrics sink is the one exception: it is told the outcome
//! once the outcome is decided, so a sink that panics loses its record and
//! the call keeps its outcome.
//!
//! # The contract, written down
//!
//! `docs/contract.md` in the repository states the contract this module
//! implements: the gates in order (the step numbers in the comments below
//! are its numbers, `docs/contract.md#gates`), the outcome rule, every
//! error code, and where gonk-tools differs from the TypeScript original,
//! and why (`docs/contract.md#differences`).

mod call;
mod metric;
mod outcome;

use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;
use tracing::Instrument as _;

use self::call::Call;
use self::metric::CallMetric;
use crate::context::{Cancellation, ToolContext};
use crate::definition::{HandlerCall, ToolDefinition};
use crate::error::{ErrorCode, ToolError};
use crate::event::{ToolEvent, ToolEventStream};
use crate::registry::ToolRegistry;
use crate::security::{AuthSlot, Gate};
use crate::telemetry;

fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("non-string panic payload")
}

fn panicked(tool: &str, payload: &(dyn std::any::Any + Send)) -> ToolError {
    tracing::error!(target: "gonk_tools::dispatch", tool, panic = panic_message(payload), "tool handler panicked");
    ToolError::internal(format!(
        "Tool {tool} failed unexpectedly (the handler panicked)"
    ))
}

/// The rate-limit gate's pending count of one call.
type RateLimitCheck<'a> =
    Pin<Box<dyn std::future::Future<Output = Result<(), ToolError>> + Send + 'a>>;

/// An authenticated call that passed every gate: what
/// [`ToolRegistry::authenticate`] hands back for the handler's context.
struct Authenticated {
    def: ToolDefinition,
    input: Value,
    stack: Arc<[Arc<str>]>,
    slot: AuthSlot,
}

/// A call that passed every gate and is ready to run.
struct Prepared {
    def: ToolDefinition,
    input: Value,
    ctx: ToolContext,
}

impl ToolRegistry {
    /// Invokes `name` with `input` and streams its events.
    ///
    /// # The outcome rule
    ///
    /// The stream ends with **exactly one outcome event, last**: a
    /// `result` or an `error`. Every surface (MCP, the CLI,
    /// [`collect_tool_outcome`](crate::collect_tool_outcome), typed
    /// clients) sees the same outcome.
    ///
    /// * A streaming handler's `log`, `progress` and `data` events pass
    ///   through in order.
    /// * Its `result` is held, not emitted: a later `result` replaces it
    ///   (the last one wins) and the held one is emitted when the handler's
    ///   stream ends. It is checked against the output schema as it arrives
    ///   (a `strict` failure is an `OUTPUT_INVALID` error).
    /// * An `error` is terminal: nothing follows it, a held result is
    ///   dropped, and so is the handler, at once.
    /// * A stream that ends without a result ends with `NO_RESULT`.
    /// * A handler that settles after the call's cancellation token fired
    ///   is `ABORTED`, whatever it returned.
    /// * A call that runs past its time limit — the tool's
    ///   [`timeout`](crate::definition::ToolBuilder::timeout), else the
    ///   registry's [default](crate::registry::ToolRegistryBuilder::default_timeout),
    ///   capped by what a composing parent has left — ends with `TIMEOUT`;
    ///   its handler is dropped, and one that settles at or after its
    ///   deadline is `TIMEOUT` too. A call without one starts no timer.
    ///
    /// Dropping the stream cancels the call (the handler is dropped). The
    /// call's one metric record carries the outcome the stream gave.
    ///
    /// ```
    /// # use gonk_tools::prelude::*;
    /// # #[derive(Deserialize, JsonSchema)] struct Add { a: i64, b: i64 }
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let registry = ToolRegistry::new();
    /// registry.register(
    ///     ToolDefinition::builder("add")
    ///         .description("Add two integers.")
    ///         .handler(|i: Add, _| async move { Ok::<_, ToolError>(i.a + i.b) })
    ///         .build(),
    /// ).unwrap();
    /// let events = registry.invoke("add", serde_json::json!({"a": 2, "b": 3}), ToolContext::new());
    /// let outcome = collect_tool_outcome(events, |_| {}).await.unwrap();
    /// assert_eq!(outcome.data, 5);
    /// # }
    /// ```
    pub fn invoke(&self, name: &str, input: Value, ctx: ToolContext) -> ToolEventStream {
        // Look-up happens now, so the stream owns the definition (not a copy of the name).
        let found = self.read().get(name).cloned();
        self.invoke_found(found, name, input, ctx)
    }

    /// [`invoke`](Self::invoke) of a definition already looked up in this
    /// registry — with [`get`](Self::get), [`list`](Self::list) or
    /// [`list_discoverable`](Self::list_discoverable) — so a surface that
    /// maps its own names to tools resolves each call once.
    ///
    /// Only the name look-up is skipped: every other step of
    /// [`invoke`](Self::invoke) runs as it does there (cycle check,
    /// discover and invoke authorization, input validation, approval,
    /// cancellation, time limit, output validation, the metric record),
    /// and the stream follows the same outcome rule. The registry does not
    /// check that `def` is registered in it; a definition from elsewhere
    /// runs under this registry's gates and state as if it were.
    ///
    /// ```
    /// # use gonk_tools::prelude::*;
    /// # #[derive(Deserialize, JsonSchema)] struct Add { a: i64, b: i64 }
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let registry = ToolRegistry::new();
    /// registry.register(
    ///     ToolDefinition::builder("math.add")
    ///         .description("Add two integers.")
    ///         .handler(|i: Add, _| async move { Ok::<_, ToolError>(i.a + i.b) })
    ///         .build(),
    /// ).unwrap();
    /// // A surface that calls it `math_add` resolves its name once…
    /// let def = registry.get("math.add").unwrap();
    /// // …and runs that definition through the whole dispatch path.
    /// let events = registry.invoke_definition(def, serde_json::json!({"a": 2, "b": 3}), ToolContext::new());
    /// assert_eq!(collect_tool_outcome(events, |_| {}).await.unwrap().data, 5);
    /// # }
    /// ```
    pub fn invoke_definition(
        &self,
        def: ToolDefinition,
        input: Value,
        ctx: ToolContext,
    ) -> ToolEventStream {
        self.invoke_found(Some(def), "", input, ctx)
    }

    #[inline(always)]
    fn invoke_found(
        &self,
        found: Option<ToolDefinition>,
        name: &str,
        input: Value,
        ctx: ToolContext,
    ) -> ToolEventStream {
        let registry = self.clone();
        let found = found.ok_or(name);
        let span = telemetry::call_span(found.as_ref().map_or(name, |def| &def.name));
        let metric = CallMetric::start(
            self.inner.metrics.as_ref(),
            || match &found {
                Ok(def) => Arc::clone(def.name_arc()),
                Err(name) => Arc::from(*name),
            },
            span,
        );
        Box::pin(Call::new(registry, metric, found, input, ctx))
    }

    /// Steps before the handler of an unauthenticated call, after look-up:
    /// cycle check, rate limit (as [`ANONYMOUS`](crate::rate_limit::ANONYMOUS)),
    /// input validation.
    async fn prepare(
        self,
        def: ToolDefinition,
        input: Value,
        ctx: ToolContext,
    ) -> Result<Prepared, ToolError> {
        check_cycle(&def, &ctx)?;
        if let Some(limited) =
            self.rate_limited(&def, self.counts_rate(&ctx), crate::rate_limit::ANONYMOUS)
        {
            limited.await?;
        }
        self.validated(def, input, ctx)
    }

    /// The input checked, and the handler's context entered.
    #[inline(always)]
    fn validated(
        &self,
        def: ToolDefinition,
        input: Value,
        mut ctx: ToolContext,
    ) -> Result<Prepared, ToolError> {
        validate_input(&def, &input)?;
        enter(&mut ctx, self, &def);
        Ok(Prepared { def, input, ctx })
    }

    /// Whether the rate limits count this call: a root call, on a
    /// registry with limits, that the host did not count already.
    #[inline(always)]
    fn counts_rate(&self, ctx: &ToolContext) -> bool {
        self.inner.rate_limits.is_some() && ctx.call_stack().is_empty() && !ctx.rate_limit_charged()
    }

    /// Steps before the handler of an authenticated call, after look-up
    /// and the cycle check (2): capture and discover (3), the rate limit
    /// (3a), input validation (4), then approval, resource, invoke
    /// authorization and the approval gate (5–8). `stack` is the stack the
    /// handler will run with; the gates authorize with it.
    ///
    /// The future owns what the gates read and hands the input and stack
    /// back; the caller's context stays with the call, which races the
    /// future against the call's cancellation. Boxed once per
    /// authenticated call, so it is kept small: no context in it, and
    /// each gate's state is its own future, held only while it runs.
    // Not an `async fn`: its arguments would be held beside the locals
    // they move into, a second copy in the boxed state.
    #[allow(clippy::manual_async_fn)]
    fn authenticate(
        self,
        def: ToolDefinition,
        input: Value,
        slot: AuthSlot,
        stack: Arc<[Arc<str>]>,
        counts_rate: bool,
        asker: Option<Arc<crate::ask::AskSlot>>,
    ) -> impl std::future::Future<Output = Result<Authenticated, ToolError>> + Send + 'static {
        async move {
            let gate = Gate::new(&self.inner.security);
            // A gate's future is wrapped in its span only when the span is
            // recorded: the wrapper is one more move of the state.
            let span = telemetry::gate_span("authorize tool.discover");
            let admitted = if span.is_disabled() {
                gate.admit(&def, &slot, &stack).await?
            } else {
                gate.admit(&def, &slot, &stack).instrument(span).await?
            };
            if let Some(limited) = self.rate_limited(&def, counts_rate, &slot.auth().principal().id)
            {
                limited.await?;
            }
            // 3b: scopes, before the input is looked at.
            if let Some(refusal) = gate.scope_refusal(&admitted, &def) {
                return Err(refusal.await);
            }
            validate_input(&def, &input)?;
            let span = telemetry::gate_span("authorize tool.invoke");
            let asker = asker.as_ref();
            if span.is_disabled() {
                gate.authorize_invoke(&admitted, &def, &input, &stack, asker)
                    .await?;
            } else {
                gate.authorize_invoke(&admitted, &def, &input, &stack, asker)
                    .instrument(span)
                    .await?;
            }
            Ok(Authenticated {
                def,
                input,
                stack,
                slot: admitted.into_slot(),
            })
        }
    }

    /// The rate-limit gate (step 3a, `docs/contract.md#rate-limits`): the
    /// count of a root call by `principal`, when the registry has rate
    /// limits and the host did not count the call already; `None` costs
    /// nothing. Boxed, so a registry without limits keeps its call state
    /// small.
    #[inline(always)]
    fn rate_limited<'a>(
        &'a self,
        def: &'a ToolDefinition,
        counts_rate: bool,
        principal: &'a str,
    ) -> Option<RateLimitCheck<'a>> {
        if !counts_rate {
            return None;
        }
        let limits = self.inner.rate_limits.as_deref()?;
        Some(Box::pin(
            limits
                .admit(principal, &def.name)
                .instrument(telemetry::gate_span("rate limit")),
        ))
    }

    /// The OAuth scopes `auth`'s token lacks to call the tool `name`, for
    /// an HTTP surface that answers `403 insufficient_scope` (naming them
    /// in `WWW-Authenticate`) before dispatch; dispatch refuses the same
    /// call with `INSUFFICIENT_SCOPE` itself (`docs/contract.md#scopes`).
    ///
    /// `Some` holds the missing scopes (never empty) and is the refusal:
    /// it has written the same deny receipt dispatch writes. `None` when
    /// nothing is missing — and, so that a hidden tool never reveals its
    /// scopes, when no tool is called `name` (a registry name, not an MCP
    /// alias), when the principal is invalid, or when its policy hides the
    /// tool (`tool.discover` is asked as a call would ask it, with its
    /// receipt). A principal whose scopes are not enforced
    /// ([`AuthenticatedPrincipal::scopes_enforced`](crate::security::AuthenticatedPrincipal::scopes_enforced))
    /// lacks none.
    ///
    /// ```
    /// use gonk_tools::prelude::*;
    /// use gonk_tools::security::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let registry = ToolRegistry::new();
    /// registry.register(
    ///     ToolDefinition::builder("notes.create")
    ///         .description("Create a note.")
    ///         .scopes(["notes:write"])
    ///         .handler(|title: String, _ctx| async move { Ok::<_, ToolError>(title) })
    ///         .build(),
    /// ).unwrap();
    /// let reader = AuthenticatedPrincipal::new(
    ///     "u1",
    ///     PrincipalKind::Human,
    ///     PrincipalIdentity::new("https://idp.example", "alice", AuthMethod::Oauth),
    /// )
    /// .with_scopes(["notes:read"]);
    /// let auth = AuthContext::new(reader, AllowAll);
    /// assert_eq!(
    ///     registry.insufficient_scope(&auth, "notes.create").await,
    ///     Some(vec!["notes:write".to_owned()])
    /// );
    /// assert_eq!(registry.insufficient_scope(&auth, "notes.nope").await, None);
    /// # }
    /// ```
    pub async fn insufficient_scope(
        &self,
        auth: &crate::security::AuthContext,
        name: &str,
    ) -> Option<Vec<String>> {
        let def = self.get(name)?;
        Gate::new(&self.inner.security)
            .insufficient_scope(auth, &def)
            .await
    }

    /// The tools `ctx` may discover: every tool without auth; with auth,
    /// those whose `tool.discover` the policy allows (one receipt each,
    /// under one fresh request id). An invalid principal discovers nothing.
    ///
    /// Surfaces that list tools to an authenticated caller (MCP
    /// `tools/list`) use this, so hidden tools stay hidden.
    pub async fn list_discoverable(&self, ctx: &ToolContext) -> Vec<ToolDefinition> {
        Gate::new(&self.inner.security)
            .discoverable(self.list(), AuthSlot::of(ctx).as_ref())
            .await
    }
}

/// Makes `ctx` the context a handler of `def` runs with: bound to
/// `registry`, with the tool's name pushed on the call stack.
#[inline(always)]
fn enter(ctx: &mut ToolContext, registry: &ToolRegistry, def: &ToolDefinition) {
    let stack = child_stack(ctx, def);
    ctx.enter(registry.dispatcher(), stack);
}

/// `ctx`'s call stack with `def`'s name pushed. A root call's stack is the
/// definition's own `[name]`, shared, not allocated.
#[inline(always)]
fn child_stack(ctx: &ToolContext, def: &ToolDefinition) -> Arc<[Arc<str>]> {
    let stack = ctx.call_stack();
    if stack.is_empty() {
        return Arc::clone(&def.inner.root_stack);
    }
    stack
        .iter()
        .cloned()
        .chain(std::iter::once(Arc::clone(def.name_arc())))
        .collect()
}

/// A started call: its token, the pending handler and its time limit, if
/// one applies.
type Started = (Cancellation, HandlerCall, Option<TimeLimit>);

/// Starts a call that passed its gates, with its handler's context: an
/// already-cancelled call is `ABORTED` and one whose time is already up
/// is `TIMEOUT`, without running; otherwise the handler is called (a
/// panic while it builds its future is `INTERNAL`) and its pending call
/// returned with the token and its time limit.
#[inline(always)]
fn start(
    def: &ToolDefinition,
    input: Value,
    mut ctx: ToolContext,
    default_timeout: Option<Duration>,
) -> Result<Started, ToolError> {
    let token = ctx.cancellation.clone();
    if token.is_cancelled() {
        return Err(ToolError::aborted());
    }
    let limit = time_limit_of(def, default_timeout, &mut ctx);
    if let Some(limit) = &limit {
        if limit.left.is_zero() {
            return Err(limit.error());
        }
    }
    let handler = def
        .inner
        .handler
        .as_ref()
        .expect("registration refuses tools without a handler");
    let call = std::panic::catch_unwind(AssertUnwindSafe(|| handler(input, ctx)))
        .map_err(|payload| panicked(&def.name, &*payload))??;
    Ok((token, call, limit))
}

/// When a call must end, and the error it then ends with.
struct TimeLimit {
    deadline: Instant,
    /// The time the call had when it started: the tool's limit, or less
    /// when a composing parent had less left.
    left: Duration,
    tool: Arc<str>,
}

impl TimeLimit {
    fn error(&self) -> ToolError {
        ToolError::timeout(&self.tool, self.left)
    }

    /// The outcome of a handler that settled, as the caller sees it:
    /// `TIMEOUT` when its time was up by then, whatever it returned (a
    /// parent that settles on its timed-out child's answer at its own
    /// deadline timed out too). Cancellation is checked first.
    fn settled(&self, outcome: &mut ToolEvent) {
        let aborted =
            matches!(&outcome, ToolEvent::Error { code, .. } if *code == ErrorCode::Aborted);
        if !aborted && Instant::now() >= self.deadline {
            *outcome = ToolEvent::error(self.error());
        }
    }
}

/// The call's time limit: the tool's timeout (else the registry's default)
/// from now, capped by the deadline `ctx` inherited from a composing
/// parent; the handler's context (and so its composed calls) carries the
/// result. Reads the clock only when a timeout applies.
#[inline(always)]
fn time_limit_of(
    def: &ToolDefinition,
    default_timeout: Option<Duration>,
    ctx: &mut ToolContext,
) -> Option<TimeLimit> {
    let own = def.timeout.or(default_timeout);
    let inherited = ctx.deadline();
    if own.is_none() && inherited.is_none() {
        return None;
    }
    let now = Instant::now();
    // A limit too large to add to the clock is no limit.
    let mine = own.and_then(|limit| now.checked_add(limit));
    let deadline = match (mine, inherited) {
        (Some(mine), Some(parent)) if parent <= mine => parent,
        (Some(mine), _) => {
            ctx.deadline = Some(Arc::new(mine));
            mine
        }
        (None, parent) => parent?,
    };
    Some(TimeLimit {
        deadline,
        left: deadline.saturating_duration_since(now),
        tool: Arc::clone(def.name_arc()),
    })
}

/// Step 2: a tool already on the call stack is a cycle.
#[inline(always)]
pub(super) fn check_cycle(def: &ToolDefinition, ctx: &ToolContext) -> Result<(), ToolError> {
    let name = def.name.as_str();
    let stack = ctx.call_stack();
    if stack.iter().any(|n| &**n == name) {
        let chain: Vec<&str> = stack.iter().map(|n| &**n).chain([name]).collect();
        return Err(ToolError::new(
            ErrorCode::Cycle,
            format!("Cycle detected: {}", chain.join(" -> ")),
        ));
    }
    Ok(())
}

/// Step 4: the input against the enforced schema (compiled once).
#[inline(always)]
pub(super) fn validate_input(def: &ToolDefinition, input: &Value) -> Result<(), ToolError> {
    let compiled = def
        .compiled()
        .map_err(|reason| ToolError::internal(reason.to_owned()))?;
    compiled
        .input
        .validate(input)
        .map_err(ToolError::invalid_input)
}
