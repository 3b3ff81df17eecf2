//! [`SecurityOptions`]: a registry's security configuration — resource
//! resolver, approval provider and mode, audit sink, mandatory audit,
//! request-id generator and clock.

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use super::approval::ApprovalMode;
use super::audit::AuditSink;
use super::provider::ApprovalProvider;
use super::resource::ToolResourceResolver;

/// Makes the request id of a root authenticated call.
pub type RequestIdGenerator = dyn Fn() -> Arc<str> + Send + Sync;

/// The clock for receipt timestamps and principal expiry.
pub type Clock = dyn Fn() -> SystemTime + Send + Sync;

/// The default request id: `req-<process-random hex>-<counter>`, unique in
/// the process and unlikely to collide across processes.
pub fn default_request_id() -> Arc<str> {
    static PREFIX: OnceLock<String> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    let prefix = PREFIX.get_or_init(|| {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default(),
        );
        hasher.write_u32(std::process::id());
        format!("req-{:016x}-", hasher.finish())
    });
    let mut n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // 16 hex digits + "req-" + "-" + at most 20 digits.
    let mut id = [0u8; 48];
    let (head, tail) = (prefix.as_bytes(), &digits[at..]);
    id[..head.len()].copy_from_slice(head);
    id[head.len()..head.len() + tail.len()].copy_from_slice(tail);
    match std::str::from_utf8(&id[..head.len() + tail.len()]) {
        Ok(id) => Arc::from(id),
        // Unreachable: ASCII only.
        Err(_) => Arc::from(format!("{prefix}{}", COUNTER.load(Ordering::Relaxed))),
    }
}

/// How a registry secures authenticated calls. Authentication itself stays
/// outside: these options only matter for calls whose context carries an
/// [`AuthContext`](super::AuthContext).
///
/// ```
/// use std::sync::Arc;
/// use gonk_tools::prelude::*;
/// use gonk_tools::security::*;
///
/// let audit = Arc::new(InMemoryAuditSink::new());
/// let registry = ToolRegistry::builder()
///     .security(
///         SecurityOptions::new()
///             .approval_provider(ApproveAll)
///             .audit_sink(audit.clone())
///             .mandatory_audit(true),
///     )
///     .build();
/// assert!(registry.security().is_mandatory_audit());
/// ```
#[derive(Clone)]
#[must_use]
pub struct SecurityOptions {
    pub(crate) resource_resolver: Option<Arc<dyn ToolResourceResolver>>,
    pub(crate) approval_provider: Option<Arc<dyn ApprovalProvider>>,
    pub(crate) approval_mode: ApprovalMode,
    pub(crate) audit_sink: Option<Arc<dyn AuditSink>>,
    pub(crate) mandatory_audit: bool,
    pub(crate) request_id: Arc<RequestIdGenerator>,
    pub(crate) clock: Arc<Clock>,
}

impl Default for SecurityOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for SecurityOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecurityOptions")
            .field("resource_resolver", &self.resource_resolver.is_some())
            .field("approval_provider", &self.approval_provider.is_some())
            .field("approval_mode", &self.approval_mode)
            .field("audit_sink", &self.audit_sink.is_some())
            .field("mandatory_audit", &self.mandatory_audit)
            .finish_non_exhaustive()
    }
}

impl SecurityOptions {
    /// No resolver, no provider, approval enforced, no audit sink, audit
    /// not mandatory, [`default_request_id`], the system clock.
    pub fn new() -> Self {
        SecurityOptions {
            resource_resolver: None,
            approval_provider: None,
            approval_mode: ApprovalMode::Enforce,
            audit_sink: None,
            mandatory_audit: false,
            request_id: Arc::new(default_request_id),
            clock: Arc::new(SystemTime::now),
        }
    }

    /// Resolves the authorization resources that tools declare. Without
    /// one, a tool that declares a resource is `AUTH_RESOURCE_UNRESOLVED`
    /// for every authenticated call.
    pub fn resource_resolver(mut self, resolver: impl ToolResourceResolver + 'static) -> Self {
        self.resource_resolver = Some(Arc::new(resolver));
        self
    }

    /// Decides approvals. Once configured it is consulted for every
    /// enforced call, read tier included.
    pub fn approval_provider(mut self, provider: impl ApprovalProvider + 'static) -> Self {
        self.approval_provider = Some(Arc::new(provider));
        self
    }

    /// Enforce (default) or bypass the approval gate.
    pub fn approval_mode(mut self, mode: ApprovalMode) -> Self {
        self.approval_mode = mode;
        self
    }

    /// Where receipts go.
    pub fn audit_sink(mut self, sink: impl AuditSink + 'static) -> Self {
        self.audit_sink = Some(Arc::new(sink));
        self
    }

    /// When `true`, a receipt that cannot be written (no sink, or the sink
    /// fails) stops the call: `AUTH_AUDIT_FAILED` (at discover, a deny
    /// still reads as not found).
    pub fn mandatory_audit(mut self, mandatory: bool) -> Self {
        self.mandatory_audit = mandatory;
        self
    }

    /// Makes request ids (once per root authenticated call; composed
    /// children share it). `f` may return a `String`, `&'static str` or
    /// `Arc<str>`.
    pub fn request_id_generator<S: Into<Arc<str>>>(
        mut self,
        f: impl Fn() -> S + Send + Sync + 'static,
    ) -> Self {
        self.request_id = Arc::new(move || f().into());
        self
    }

    /// The clock for timestamps and expiry (inject a fixed one in tests).
    pub fn clock(mut self, f: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(f);
        self
    }

    /// Whether a resolver is configured.
    pub fn has_resource_resolver(&self) -> bool {
        self.resource_resolver.is_some()
    }

    /// Whether a provider is configured.
    pub fn has_approval_provider(&self) -> bool {
        self.approval_provider.is_some()
    }

    /// The approval mode.
    pub fn mode(&self) -> ApprovalMode {
        self.approval_mode
    }

    /// Whether a sink is configured.
    pub fn has_audit_sink(&self) -> bool {
        self.audit_sink.is_some()
    }

    /// Whether audit is mandatory.
    pub fn is_mandatory_audit(&self) -> bool {
        self.mandatory_audit
    }

    /// The current time by the configured clock.
    pub fn now(&self) -> SystemTime {
        (self.clock)()
    }

    /// A new request id from the configured generator.
    pub fn next_request_id(&self) -> Arc<str> {
        (self.request_id)()
    }

    /// [`now`](Self::now) for dispatch: `None` when the clock panicked
    /// (the gates then fail closed).
    pub(crate) fn read_clock(&self) -> Option<SystemTime> {
        contained("clock", || (self.clock)())
    }

    /// [`next_request_id`](Self::next_request_id) for dispatch: `None`
    /// when the generator panicked.
    pub(crate) fn new_request_id(&self) -> Option<Arc<str>> {
        contained("request id generator", || (self.request_id)())
    }
}

/// Calls a host component, turning a panic into `None` (logged, without
/// its text).
fn contained<T>(component: &str, call: impl FnOnce() -> T) -> Option<T> {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(call));
    if outcome.is_err() {
        tracing::error!(target: "gonk_tools::security", component, "security component panicked; failing closed");
    }
    outcome.ok()
}
