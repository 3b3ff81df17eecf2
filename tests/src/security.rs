//! Fixtures of authenticated dispatch: recording policy, provider,
//! resolver and audit sink, a controllable clock, a counting tool set.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use futures::StreamExt;
use gonk_tools::definition::{AuthorizationResource, AuthorizationSpec};
use gonk_tools::metrics::{InMemoryMetrics, MetricOutcome, MetricRecord};
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use serde_json::Value;

/// The fixed "now" of the test clock: 2026-01-01T00:00:00Z.
pub fn t0() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600)
}

/// A clock the test can move.
#[derive(Clone)]
pub struct TestClock(Arc<Mutex<SystemTime>>);

impl Default for TestClock {
    fn default() -> Self {
        Self::new()
    }
}

impl TestClock {
    /// A clock at [`t0`].
    pub fn new() -> Self {
        TestClock(Arc::new(Mutex::new(t0())))
    }
    pub fn now(&self) -> SystemTime {
        *self.0.lock().unwrap()
    }
    pub fn advance(&self, by: Duration) {
        *self.0.lock().unwrap() += by;
    }
}

/// What a policy saw, owned.
#[derive(Clone, Debug)]
pub struct SeenRequest {
    pub principal_id: String,
    pub action: String,
    pub resource: ResourceRef,
    pub related: Vec<ResourceRef>,
    pub input: Option<Value>,
    pub call_stack: Vec<String>,
}

type Decide =
    dyn Fn(&AuthorizationRequest<'_>) -> Result<AuthorizationDecision, PolicyError> + Send + Sync;

/// A policy that records every request and answers with a closure.
pub struct TestPolicy {
    decide: Box<Decide>,
    pub seen: Mutex<Vec<SeenRequest>>,
}

impl TestPolicy {
    pub fn new(
        decide: impl Fn(&AuthorizationRequest<'_>) -> Result<AuthorizationDecision, PolicyError>
            + Send
            + Sync
            + 'static,
    ) -> Arc<Self> {
        Arc::new(TestPolicy {
            decide: Box::new(decide),
            seen: Mutex::new(Vec::new()),
        })
    }
    pub fn allow_all() -> Arc<Self> {
        Self::new(|_| Ok(AuthorizationDecision::allow()))
    }
    pub fn seen(&self) -> Vec<SeenRequest> {
        self.seen.lock().unwrap().clone()
    }
    pub fn actions(&self) -> Vec<String> {
        self.seen().into_iter().map(|r| r.action).collect()
    }
    pub fn calls(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

impl AuthorizationPolicy for TestPolicy {
    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest<'a>,
    ) -> BoxFuture<'a, Result<AuthorizationDecision, PolicyError>> {
        self.seen.lock().unwrap().push(SeenRequest {
            principal_id: request.principal.id.clone(),
            action: request.action.to_string(),
            resource: request.resource.clone(),
            related: request.related_resources.to_vec(),
            input: request.input.cloned(),
            call_stack: request.call_stack.iter().map(|s| s.to_string()).collect(),
        });
        let answer = (self.decide)(request);
        Box::pin(async move { answer })
    }
}

/// What a provider saw, owned.
#[derive(Clone, Debug)]
pub struct SeenApproval {
    pub principal_id: String,
    pub request_id: String,
    pub security_context_key: String,
    pub persistent_grant_key: String,
    pub tool: String,
    pub approval: ApprovalSpec,
    pub resources: Vec<ResourceRef>,
    pub input: Value,
    pub call_stack: Vec<String>,
}

type DecideApproval =
    dyn Fn(&ApprovalRequest<'_>) -> Result<ApprovalDecision, SecurityError> + Send + Sync;

pub struct TestProvider {
    decide: Box<DecideApproval>,
    pub seen: Mutex<Vec<SeenApproval>>,
}

impl TestProvider {
    pub fn new(
        decide: impl Fn(&ApprovalRequest<'_>) -> Result<ApprovalDecision, SecurityError>
            + Send
            + Sync
            + 'static,
    ) -> Arc<Self> {
        Arc::new(TestProvider {
            decide: Box::new(decide),
            seen: Mutex::new(Vec::new()),
        })
    }
    pub fn approve_all() -> Arc<Self> {
        Self::new(|_| Ok(ApprovalDecision::approved()))
    }
    pub fn seen(&self) -> Vec<SeenApproval> {
        self.seen.lock().unwrap().clone()
    }
    pub fn calls(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

impl ApprovalProvider for TestProvider {
    fn decide<'a>(
        &'a self,
        request: ApprovalRequest<'a>,
    ) -> BoxFuture<'a, Result<ApprovalDecision, SecurityError>> {
        self.seen.lock().unwrap().push(SeenApproval {
            principal_id: request.principal.id.clone(),
            request_id: request.request_id.to_owned(),
            security_context_key: request.security_context_key.to_owned(),
            persistent_grant_key: request.persistent_grant_key.to_owned(),
            tool: request.tool.to_owned(),
            approval: request.approval.clone(),
            resources: request.resources.to_vec(),
            input: request.input.clone(),
            call_stack: request.call_stack.iter().map(|s| s.to_string()).collect(),
        });
        let answer = (self.decide)(&request);
        Box::pin(async move { answer })
    }
}

type Resolve = dyn Fn(&ResourceResolutionRequest<'_>) -> Result<Option<ResourceRef>, SecurityError>
    + Send
    + Sync;

pub struct TestResolver {
    resolve: Box<Resolve>,
    pub seen_inputs: Mutex<Vec<Value>>,
}

impl TestResolver {
    pub fn new(
        resolve: impl Fn(&ResourceResolutionRequest<'_>) -> Result<Option<ResourceRef>, SecurityError>
            + Send
            + Sync
            + 'static,
    ) -> Arc<Self> {
        Arc::new(TestResolver {
            resolve: Box::new(resolve),
            seen_inputs: Mutex::new(Vec::new()),
        })
    }
    /// Resolves `{noteId}` to a note of tenant acme with secret metadata.
    pub fn notes() -> Arc<Self> {
        Self::new(|req| {
            Ok(req.input.get("noteId").and_then(Value::as_str).map(|id| {
                ResourceRef::new("note")
                    .with_target(id)
                    .with_tenant("acme")
                    .with_workspace("ws-1")
                    .with_scope("notes")
                    .with_metadata("owner", json!("alice"))
            }))
        })
    }
    pub fn calls(&self) -> usize {
        self.seen_inputs.lock().unwrap().len()
    }
}

impl ToolResourceResolver for TestResolver {
    fn resolve<'a>(
        &'a self,
        request: ResourceResolutionRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<ResourceRef>, SecurityError>> {
        self.seen_inputs.lock().unwrap().push(request.input.clone());
        let answer = (self.resolve)(&request);
        Box::pin(async move { answer })
    }
}

type FailWhen = dyn Fn(&AuditReceipt) -> bool + Send + Sync;

/// An audit sink that stores receipts and fails those matching a predicate.
pub struct TestSink {
    fail_when: Box<FailWhen>,
    pub stored: Mutex<Vec<AuditReceipt>>,
    pub failures: AtomicUsize,
}

impl TestSink {
    pub fn failing_when(fail: impl Fn(&AuditReceipt) -> bool + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(TestSink {
            fail_when: Box::new(fail),
            stored: Mutex::new(Vec::new()),
            failures: AtomicUsize::new(0),
        })
    }
    pub fn always_failing() -> Arc<Self> {
        Self::failing_when(|_| true)
    }
    pub fn stored(&self) -> Vec<AuditReceipt> {
        self.stored.lock().unwrap().clone()
    }
}

impl AuditSink for TestSink {
    fn record(&self, receipt: AuditReceipt) -> BoxFuture<'_, Result<(), SecurityError>> {
        let outcome = if (self.fail_when)(&receipt) {
            self.failures.fetch_add(1, Ordering::SeqCst);
            Err(SecurityError::new("audit store unreachable"))
        } else {
            self.stored.lock().unwrap().push(receipt);
            Ok(())
        };
        Box::pin(async move { outcome })
    }
}

/// A principal with tenant and workspace.
pub fn alice() -> AuthenticatedPrincipal {
    AuthenticatedPrincipal::new(
        "user-1",
        PrincipalKind::Human,
        PrincipalIdentity::new("https://idp.example", "alice", AuthMethod::Oauth),
    )
    .with_tenant("acme")
    .with_workspace("ws-1")
}

/// Alice delegating to an agent session.
pub fn alice_via_agent() -> AuthenticatedPrincipal {
    alice().with_delegation(
        Delegation::new(
            ActorKind::Agent,
            PrincipalIdentity::new(
                "https://agents.example",
                "agent-7",
                AuthMethod::ServiceToken,
            ),
        )
        .with_actor_id("act-1")
        .with_actor_session_id("sess-9"),
    )
}

pub fn auth(principal: AuthenticatedPrincipal, policy: &Arc<TestPolicy>) -> ToolContext {
    ToolContext::new().with_auth(AuthContext::new(principal, policy.clone()))
}

/// Counts handler runs per tool.
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicUsize>);

impl Counter {
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
    pub fn hit(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct Query {
    #[schemars(length(min = 1))]
    pub q: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NoteEdit {
    pub note_id: String,
    pub text: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct Flag {
    pub dangerous: bool,
}

/// The fixture: a registry with metrics, a counted tool per tier, a
/// resource tool and an approval-fn tool.
pub struct Fixture {
    pub registry: ToolRegistry,
    pub metrics: Arc<InMemoryMetrics>,
    pub handler: Counter,
    pub approval_fn_calls: Counter,
}

/// Tools: `notes.read` (read), `notes.write` (write), `notes.exec` (no
/// declaration), `notes.edit` (write + note resource), `notes.flag`
/// (dynamic approval), `notes.badflag` (failing approval fn). All count
/// handler runs in `handler`.
pub fn fixture(options: SecurityOptions) -> Fixture {
    let metrics = Arc::new(InMemoryMetrics::new());
    let registry = ToolRegistry::builder()
        .metrics(metrics.clone())
        .security(options)
        .build();
    let handler = Counter::default();
    let approval_fn_calls = Counter::default();
    let h = handler.clone();
    registry
        .register(
            ToolDefinition::builder("notes.read")
                .description("Read notes.")
                .approval(ApprovalTier::Read)
                .capabilities(gonk_tools::definition::Capabilities {
                    reads_fs: true,
                    ..Default::default()
                })
                .authorization(AuthorizationSpec {
                    required_role: Some("reader".into()),
                    ..Default::default()
                })
                .handler(move |i: Query, _ctx| {
                    h.hit();
                    async move { Ok::<_, ToolError>(json!({"hits": [i.q]})) }
                })
                .build(),
        )
        .unwrap();
    let h = handler.clone();
    registry
        .register(
            ToolDefinition::builder("notes.write")
                .description("Write a note.")
                .approval(ApprovalTier::Write)
                .handler(move |i: Query, _ctx| {
                    h.hit();
                    async move { Ok::<_, ToolError>(json!({"written": i.q})) }
                })
                .build(),
        )
        .unwrap();
    let h = handler.clone();
    registry
        .register(
            ToolDefinition::builder("notes.exec")
                .description("Run something (no approval declaration).")
                .handler(move |i: Query, _ctx| {
                    h.hit();
                    async move { Ok::<_, ToolError>(json!({"ran": i.q})) }
                })
                .build(),
        )
        .unwrap();
    let h = handler.clone();
    registry
        .register(
            ToolDefinition::builder("notes.edit")
                .description("Edit a note.")
                .approval(ApprovalTier::Write)
                .authorization_resource(AuthorizationResource::new("note"))
                .handler(move |i: NoteEdit, _ctx| {
                    h.hit();
                    async move { Ok::<_, ToolError>(json!({"edited": i.note_id, "len": i.text.len()})) }
                })
                .build(),
        )
        .unwrap();
    let h = handler.clone();
    let a = approval_fn_calls.clone();
    registry
        .register(
            ToolDefinition::builder("notes.flag")
                .description("Dynamic approval.")
                .approval_fn(move |input| {
                    a.hit();
                    Ok(if input["dangerous"] == json!(true) {
                        ApprovalSpec {
                            tier: ApprovalTier::Exec,
                            overridable: true,
                            reason: Some("dangerous".into()),
                        }
                    } else {
                        ApprovalTier::Read.into()
                    })
                })
                .handler(move |_: Flag, _ctx| {
                    h.hit();
                    async move { Ok::<_, ToolError>(json!("flagged")) }
                })
                .build(),
        )
        .unwrap();
    let h = handler.clone();
    let a = approval_fn_calls.clone();
    registry
        .register(
            ToolDefinition::builder("notes.badflag")
                .description("Approval fn that fails.")
                .approval_fn(move |_| {
                    a.hit();
                    Err("cannot decide".to_owned())
                })
                .handler(move |_: Flag, _ctx| {
                    h.hit();
                    async move { Ok::<_, ToolError>(json!("ran")) }
                })
                .build(),
        )
        .unwrap();
    Fixture {
        registry,
        metrics,
        handler,
        approval_fn_calls,
    }
}

/// Options with a fixed clock and sequential request ids `req-1`, `req-2`…
pub fn options() -> SecurityOptions {
    let clock = TestClock::new();
    options_with_clock(&clock)
}

pub fn options_with_clock(clock: &TestClock) -> SecurityOptions {
    let counter = Arc::new(AtomicUsize::new(0));
    let clock = clock.clone();
    SecurityOptions::new()
        .clock(move || clock.now())
        .request_id_generator(move || format!("req-{}", counter.fetch_add(1, Ordering::SeqCst) + 1))
}

pub async fn run(
    registry: &ToolRegistry,
    name: &str,
    input: Value,
    ctx: ToolContext,
) -> Vec<ToolEvent> {
    registry.invoke(name, input, ctx).collect().await
}

/// The JSON of the events, for exact comparison.
pub fn wire(events: &[ToolEvent]) -> Value {
    serde_json::to_value(events).unwrap()
}

pub fn error_of(events: &[ToolEvent]) -> ToolError {
    assert_eq!(
        events.len(),
        1,
        "expected exactly one event, got {events:?}"
    );
    events[0].as_error().expect("an error event")
}

/// The sorted keys of a JSON object.
pub fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value
        .as_object()
        .expect("an object")
        .keys()
        .cloned()
        .collect();
    keys.sort();
    keys
}

/// `(kind, action-or-"approval", outcome)` per receipt.
pub fn receipt_summary(receipts: &[AuditReceipt]) -> Vec<(String, String, String)> {
    receipts
        .iter()
        .map(|r| {
            let v = serde_json::to_value(r).unwrap();
            (
                v["kind"].as_str().unwrap().to_owned(),
                v.get("action")
                    .and_then(Value::as_str)
                    .unwrap_or("-")
                    .to_owned(),
                v["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

pub fn s(a: &str, b: &str, c: &str) -> (String, String, String) {
    (a.to_owned(), b.to_owned(), c.to_owned())
}

/// `(tool, outcome, code)` per metric record.
pub fn metric_codes(records: &[MetricRecord]) -> Vec<(String, MetricOutcome, Option<String>)> {
    records
        .iter()
        .map(|r| {
            (
                r.tool.clone(),
                r.outcome,
                r.error_code.as_ref().map(|c| c.to_string()),
            )
        })
        .collect()
}

/// `(tool, outcome, code)` of one metric record.
pub fn metric(
    tool: &str,
    outcome: MetricOutcome,
    code: Option<&str>,
) -> (String, MetricOutcome, Option<String>) {
    (tool.to_owned(), outcome, code.map(str::to_owned))
}

/// What one authenticated call on a fresh fixture left behind.
pub struct Ran {
    pub events: Vec<ToolEvent>,
    /// The fixture: registry, handler count, metrics.
    pub f: Fixture,
    /// The receipts, when the options brought no sink of their own.
    pub audit: Arc<InMemoryAuditSink>,
}

impl Ran {
    pub fn wire(&self) -> Value {
        wire(&self.events)
    }
    pub fn error(&self) -> ToolError {
        error_of(&self.events)
    }
    pub fn receipts(&self) -> Vec<AuditReceipt> {
        self.audit.snapshot()
    }
    pub fn summary(&self) -> Vec<(String, String, String)> {
        receipt_summary(&self.receipts())
    }
    pub fn metrics(&self) -> Vec<(String, MetricOutcome, Option<String>)> {
        metric_codes(&self.f.metrics.snapshot())
    }
}

/// Runs `tool` with `input` as `principal` under `policy`, on a fresh
/// fixture with `options`. Receipts go to an in-memory sink unless
/// `options` has its own.
pub async fn call_as(
    options: SecurityOptions,
    principal: AuthenticatedPrincipal,
    policy: &Arc<TestPolicy>,
    tool: &str,
    input: Value,
) -> Ran {
    let audit = Arc::new(InMemoryAuditSink::new());
    let options = if options.has_audit_sink() {
        options
    } else {
        options.audit_sink(audit.clone())
    };
    let f = fixture(options);
    let events = run(&f.registry, tool, input, auth(principal, policy)).await;
    Ran { events, f, audit }
}

/// [`call_as`] alice.
pub async fn call(
    options: SecurityOptions,
    policy: &Arc<TestPolicy>,
    tool: &str,
    input: Value,
) -> Ran {
    call_as(options, alice(), policy, tool, input).await
}

/// The one error event every refused call gives: `[{type, code, message}]`.
pub fn refused(code: &str, message: &str) -> Value {
    json!([{"type": "error", "code": code, "message": message}])
}
