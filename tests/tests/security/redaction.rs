//! Redaction: secrets placed in resource metadata, tool input and the
//! errors of failing components (provider, policy, resolver, audit sink)
//! appear in no event, no receipt and no log line — with every `tracing`
//! event of the run captured at TRACE level.

use std::sync::Arc;

use futures::future::BoxFuture;
use gonk_tools::context::TracingLog;
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::log_capture::Capture;
use gonk_tools_tests::security::*;

const SECRET_META: &str = "meta-SECRET-1f9a";
const SECRET_INPUT: &str = "input-SECRET-77c2";
const SECRET_PROVIDER: &str = "provider-SECRET-0b3e";
const SECRET_POLICY: &str = "policy-SECRET-5d41";
const SECRET_RESOLVER: &str = "resolver-SECRET-9e07";
const SECRET_SINK: &str = "sink-SECRET-c3a8";
const SECRETS: [&str; 6] = [
    SECRET_META,
    SECRET_INPUT,
    SECRET_PROVIDER,
    SECRET_POLICY,
    SECRET_RESOLVER,
    SECRET_SINK,
];

/// Stores every receipt in memory and logs it through `TracingAuditSink`,
/// so receipts are checked both as values and as log lines.
struct TeeSink {
    memory: InMemoryAuditSink,
}

impl AuditSink for TeeSink {
    fn record(&self, receipt: AuditReceipt) -> BoxFuture<'_, Result<(), SecurityError>> {
        let logged = TracingAuditSink.record(receipt.clone());
        Box::pin(async move {
            logged.await?;
            self.memory.record(receipt).await
        })
    }
}

/// A sink that always fails with a secret in its error.
struct LeakySink;

impl AuditSink for LeakySink {
    fn record(&self, _receipt: AuditReceipt) -> BoxFuture<'_, Result<(), SecurityError>> {
        Box::pin(async {
            Err(SecurityError::new(format!(
                "s3 write failed: {SECRET_SINK}"
            )))
        })
    }
}

fn secret_resolver() -> Arc<TestResolver> {
    TestResolver::new(|req| {
        Ok(req.input.get("noteId").and_then(|v| v.as_str()).map(|id| {
            ResourceRef::new("note")
                .with_target(id)
                .with_tenant("acme")
                .with_metadata("apiKey", json!(SECRET_META))
        }))
    })
}

fn assert_clean(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{what} leaks {secret}:\n{text}");
    }
}

#[tokio::test]
async fn secrets_reach_no_event_receipt_or_log_line() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(capture.clone())
        .with_ansi(false)
        .finish();
    let _guard = gonk_tools_tests::subscriber::set_scoped_default(subscriber);

    let mut events = Vec::new();
    let input = json!({"noteId": "n1", "text": SECRET_INPUT});

    // 1. Resource metadata + input reach policy and provider; the provider fails with a secret.
    let tee = Arc::new(TeeSink {
        memory: InMemoryAuditSink::new(),
    });
    let failing_provider =
        TestProvider::new(|_| Err(SecurityError::new(format!("consent db: {SECRET_PROVIDER}"))));
    let f = fixture(
        options()
            .audit_sink(tee.clone())
            .resource_resolver(secret_resolver())
            .approval_provider(failing_provider.clone()),
    );
    let policy = TestPolicy::allow_all();
    let ctx = auth(alice(), &policy).with_logger(TracingLog);
    let run1 = run(&f.registry, "notes.edit", input.clone(), ctx).await;
    assert_eq!(error_of(&run1).code, ErrorCode::ApprovalDenied);
    // The secrets did reach the components (so their absence below means redaction).
    assert_eq!(policy.seen()[1].related[0].metadata["apiKey"], SECRET_META);
    assert_eq!(failing_provider.seen()[0].input["text"], SECRET_INPUT);
    events.extend(run1);

    // 2. A provider that requires approval: details are redacted too.
    let requiring = TestProvider::new(|_| Ok(ApprovalDecision::required("apr-1")));
    let f2 = fixture(
        options()
            .audit_sink(tee.clone())
            .resource_resolver(secret_resolver())
            .approval_provider(requiring),
    );
    let run2 = run(
        &f2.registry,
        "notes.edit",
        input.clone(),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(error_of(&run2).code, ErrorCode::ApprovalRequired);
    events.extend(run2);

    // 3. A policy failing at invoke with a secret.
    let leaky_policy = TestPolicy::new(|req| match req.action {
        AuthorizationAction::Invoke => Err(PolicyError::new(format!("opa: {SECRET_POLICY}"))),
        _ => Ok(AuthorizationDecision::allow()),
    });
    let f3 = fixture(
        options()
            .audit_sink(tee.clone())
            .resource_resolver(secret_resolver()),
    );
    let run3 = run(
        &f3.registry,
        "notes.edit",
        input.clone(),
        auth(alice(), &leaky_policy),
    )
    .await;
    assert_eq!(error_of(&run3).code, ErrorCode::AuthorizationDenied);
    events.extend(run3);

    // 4. A resolver failing with a secret.
    let f4 = fixture(
        options()
            .audit_sink(tee.clone())
            .resource_resolver(TestResolver::new(|_| {
                Err(SecurityError::new(format!("notes db: {SECRET_RESOLVER}")))
            })),
    );
    let run4 = run(
        &f4.registry,
        "notes.edit",
        input.clone(),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(error_of(&run4).code, ErrorCode::AuthResourceUnresolved);
    events.extend(run4);

    // 5. An optional audit sink failing with a secret (the call goes on), then a mandatory one.
    let f5 = fixture(
        options()
            .audit_sink(LeakySink)
            .resource_resolver(secret_resolver())
            .approval_provider(ApproveAll),
    );
    let run5 = run(
        &f5.registry,
        "notes.edit",
        input.clone(),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(run5[0].kind(), "result");
    events.extend(run5);
    let f6 = fixture(options().audit_sink(LeakySink).mandatory_audit(true));
    let run6 = run(
        &f6.registry,
        "notes.read",
        json!({"q": SECRET_INPUT}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(error_of(&run6).code, ErrorCode::AuthAuditFailed);
    events.extend(run6);

    // Events: neither their wire form nor their Debug form.
    assert_clean("events (json)", &serde_json::to_string(&events).unwrap());
    assert_clean("events (debug)", &format!("{events:?}"));
    // Receipts: as values and as JSON.
    let receipts = tee.memory.snapshot();
    assert!(receipts.len() >= 8, "{}", receipts.len());
    assert_clean(
        "receipts (json)",
        &serde_json::to_string(&receipts).unwrap(),
    );
    assert_clean("receipts (debug)", &format!("{receipts:?}"));
    // Log lines: the run did log (failures, receipts), and none leaks.
    let logs = capture.text();
    assert!(logs.contains("approval provider failed; denying"), "{logs}");
    assert!(
        logs.contains("authorization policy failed; denying"),
        "{logs}"
    );
    assert!(logs.contains("resource resolver failed; denying"), "{logs}");
    assert!(
        logs.contains("audit sink failed to store a receipt"),
        "{logs}"
    );
    assert!(
        logs.contains("audit receipt"),
        "receipts were logged: {logs}"
    );
    assert_clean("log lines", &logs);
}
