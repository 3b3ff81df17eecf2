//! Every component a host injects into dispatch may panic. Each panic ends
//! that call with exactly one terminal error event — failing closed, with a
//! hidden tool still hidden — and the registry keeps serving: the next call
//! on the same registry succeeds.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use futures::StreamExt;
use gonk_tools::context::{LogRecord, LogSink};
use gonk_tools::definition::AuthorizationResource;
use gonk_tools::metrics::{MetricRecord, MetricsSink};
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::{alice, t0};
use serde_json::Value;

/// Which component panics on its next use (once).
#[derive(Clone, Default)]
struct Faults(Arc<Mutex<Option<&'static str>>>);

impl Faults {
    fn arm(&self, component: &'static str) {
        *self.0.lock().unwrap() = Some(component);
    }

    /// Panics if `component` is armed (and disarms it).
    fn trip(&self, component: &'static str) {
        let mut armed = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if *armed == Some(component) {
            *armed = None;
            drop(armed);
            panic!("{component} failed");
        }
    }

    fn is_armed(&self) -> bool {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }
}

struct Policy(Faults);
impl AuthorizationPolicy for Policy {
    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest<'a>,
    ) -> BoxFuture<'a, Result<AuthorizationDecision, PolicyError>> {
        match request.action {
            AuthorizationAction::Discover => self.0.trip("policy (discover)"),
            _ => self.0.trip("policy (invoke)"),
        }
        Box::pin(async { Ok(AuthorizationDecision::allow()) })
    }
}

struct Resolver(Faults);
impl ToolResourceResolver for Resolver {
    fn resolve<'a>(
        &'a self,
        request: ResourceResolutionRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<ResourceRef>, SecurityError>> {
        let faults = self.0.clone();
        let id = request.input["note"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        // Panics while the future runs (not while it is made).
        Box::pin(async move {
            faults.trip("resolver");
            Ok(Some(ResourceRef::new("note").with_target(id)))
        })
    }
}

/// Approves write; an exec call needs a human.
struct Provider(Faults);
impl ApprovalProvider for Provider {
    fn decide<'a>(
        &'a self,
        request: ApprovalRequest<'a>,
    ) -> BoxFuture<'a, Result<ApprovalDecision, SecurityError>> {
        self.0.trip("approval provider");
        let decision = match request.tier() {
            ApprovalTier::Exec => ApprovalDecision::required("apr-1"),
            _ => ApprovalDecision::approved(),
        };
        Box::pin(async move { Ok(decision) })
    }
}

struct Sink(Faults);
impl AuditSink for Sink {
    fn record(&self, _receipt: AuditReceipt) -> BoxFuture<'_, Result<(), SecurityError>> {
        self.0.trip("audit sink");
        Box::pin(async { Ok(()) })
    }
}

struct Metrics(Faults);
impl MetricsSink for Metrics {
    fn record(&self, _record: &MetricRecord) {
        self.0.trip("metrics sink");
    }
}

struct Log(Faults);
impl LogSink for Log {
    fn log(&self, _record: &LogRecord<'_>) {
        self.0.trip("log sink");
    }
}

#[derive(Deserialize, JsonSchema)]
struct Edit {
    note: String,
}

fn registry(faults: &Faults) -> ToolRegistry {
    let (clock, ids) = (faults.clone(), faults.clone());
    let registry = ToolRegistry::builder()
        .metrics(Arc::new(Metrics(faults.clone())))
        .security(
            SecurityOptions::new()
                .clock(move || {
                    clock.trip("clock");
                    t0()
                })
                .request_id_generator(move || {
                    ids.trip("request id generator");
                    "req-1"
                })
                .resource_resolver(Resolver(faults.clone()))
                .approval_provider(Provider(faults.clone()))
                .audit_sink(Sink(faults.clone()))
                .mandatory_audit(true),
        )
        .build();
    let (approval, handler) = (faults.clone(), faults.clone());
    registry
        .register(
            ToolDefinition::builder("notes.edit")
                .description("Edits a note.")
                .authorization_resource(AuthorizationResource::new("note"))
                .approval_fn(move |_| {
                    approval.trip("approval fn");
                    Ok(ApprovalTier::Write.into())
                })
                .handler(move |input: Edit, ctx: ToolContext| {
                    handler.trip("handler (call)");
                    let handler = handler.clone();
                    async move {
                        handler.trip("handler (future)");
                        ctx.log().info("editing");
                        ctx.progress(50.0, None);
                        Ok::<_, ToolError>(json!({"edited": input.note}))
                    }
                })
                .build(),
        )
        .unwrap();
    registry
}

fn context(faults: &Faults) -> ToolContext {
    let notify = faults.clone();
    ToolContext::new()
        .with_auth(AuthContext::new(alice(), Policy(faults.clone())))
        .with_logger(Log(faults.clone()))
        .with_notify(move |_| notify.trip("notify callback"))
}

async fn call(registry: &ToolRegistry, faults: &Faults) -> Vec<ToolEvent> {
    registry
        .invoke("notes.edit", json!({"note": "n1"}), context(faults))
        .collect()
        .await
}

#[tokio::test]
async fn every_host_component_that_panics_ends_the_call_with_one_error() {
    let faults = Faults::default();
    let registry = registry(&faults);
    let success = vec![ToolEvent::result(json!({"edited": "n1"}))];
    assert_eq!(call(&registry, &faults).await, success, "the baseline call");

    for (component, code) in [
        ("clock", ErrorCode::ToolNotFound),
        ("request id generator", ErrorCode::ToolNotFound),
        ("policy (discover)", ErrorCode::ToolNotFound),
        ("audit sink", ErrorCode::AuthAuditFailed),
        ("approval fn", ErrorCode::ApprovalRequired),
        ("resolver", ErrorCode::AuthResourceUnresolved),
        ("policy (invoke)", ErrorCode::AuthorizationDenied),
        ("approval provider", ErrorCode::ApprovalDenied),
        ("handler (call)", ErrorCode::Internal),
        ("handler (future)", ErrorCode::Internal),
        ("log sink", ErrorCode::Internal),
        ("notify callback", ErrorCode::Internal),
    ] {
        faults.arm(component);
        let events = call(&registry, &faults).await;
        assert!(!faults.is_armed(), "{component} was used by the call");
        assert_eq!(events.len(), 1, "{component}: {events:?}");
        let error = events[0]
            .as_error()
            .unwrap_or_else(|| panic!("{component}: an error, got {events:?}"));
        assert_eq!(error.code, code, "{component}: {error:?}");
        if code == ErrorCode::ToolNotFound {
            // Hidden stays hidden: exactly what a missing tool gets.
            assert_eq!(error.message, "No such tool: notes.edit", "{component}");
            assert_eq!(error.details, None, "{component}");
        }
        assert!(
            !format!("{error:?}").contains(&format!("{component} failed")),
            "{component}: the panic text reaches no event: {error:?}"
        );
        assert_eq!(
            call(&registry, &faults).await,
            success,
            "{component}: the next call succeeds"
        );
    }
}

#[tokio::test]
async fn a_panicking_metrics_sink_leaves_the_outcome_as_it_was() {
    // The metric is recorded when the outcome is known: the call has
    // happened (a write is done), so its outcome is reported unchanged.
    let faults = Faults::default();
    let registry = registry(&faults);
    faults.arm("metrics sink");
    let events = call(&registry, &faults).await;
    assert!(!faults.is_armed(), "the sink was asked");
    assert_eq!(events, [ToolEvent::result(json!({"edited": "n1"}))]);
    // Errors too.
    faults.arm("metrics sink");
    let events: Vec<ToolEvent> = registry
        .invoke("ghost", Value::Null, ToolContext::new())
        .collect()
        .await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].as_error().unwrap().code, ErrorCode::ToolNotFound);
    assert_eq!(
        call(&registry, &faults).await,
        [ToolEvent::result(json!({"edited": "n1"}))]
    );
}

#[tokio::test]
async fn a_clock_that_panics_while_listing_lists_nothing() {
    let faults = Faults::default();
    let registry = registry(&faults);
    faults.arm("clock");
    let listed = registry.list_discoverable(&context(&faults)).await;
    assert!(listed.is_empty(), "fails closed: nothing is discoverable");
    let listed = registry.list_discoverable(&context(&faults)).await;
    assert_eq!(listed.len(), 1);
}
