//! Per-caller access over HTTP: the config's `callers` map API keys to
//! principals, each with the tools it may discover and invoke (hidden
//! tools are missing: not listed, `Unknown tool` when called) and whether
//! its `write`/`exec` calls ask it for approval first (the ask-the-human
//! mechanism: an MCP elicitation) or were approved by the operator.
//!
//! ```json
//! "callers": {
//!   "alice": {"key": "${ALICE_KEY}", "tools": ["fx.*", "web.echo"], "approval": "granted"},
//!   "bob":   {"key": "${BOB_KEY}",   "tools": ["web.*"]}
//! }
//! ```
//!
//! `approval` is `ask` unless given. The gateway's own `--api-key` (and
//! the command line, and stdio, and HTTP served without keys) is the
//! operator: every tool, approved — or, under `--approval ask`, its
//! `write`/`exec` calls asked first like a caller's.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use gonk_tools::adapters::http::{HttpAuthRejection, HttpRequestParts};
use gonk_tools::definition::ApprovalTier;
use gonk_tools::search::{CALL_TOOL, SEARCH_TOOL};
use gonk_tools::security::{
    policy_fn, AllowAll, ApprovalDecision, ApprovalRequest, AuthContext, AuthMethod,
    AuthenticatedPrincipal, AuthorizationDecision, AuthorizationRequest, PrincipalIdentity,
    PrincipalKind,
};
use serde::Deserialize;

use crate::config::expand;

/// The principal id of the operator.
pub const OPERATOR: &str = "gateway:operator";

/// The principal id prefix of a configured caller.
const CALLER: &str = "gateway:caller:";

/// One caller in the config.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CallerConfig {
    /// Its API key (`Authorization: Bearer KEY`); `${NAME}` is the
    /// environment variable `NAME`.
    pub key: String,
    /// The tools it may discover and call: exact names, `server.*` for a
    /// server's tools, or `*`.
    pub tools: Vec<String>,
    /// `ask` (the default): its `write`/`exec` calls ask it first;
    /// `granted`: the operator approved them by configuring the caller.
    #[serde(default)]
    pub approval: CallerApproval,
}

/// How a caller's `write`/`exec` calls are approved.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CallerApproval {
    /// Ask the caller (an MCP elicitation); a client that cannot answer
    /// gets `APPROVAL_REQUIRED`.
    #[default]
    Ask,
    /// Approved by the config.
    Granted,
}

/// A caller with its key resolved.
struct Caller {
    name: String,
    key: String,
    tools: Arc<Vec<String>>,
    approval: CallerApproval,
}

/// The configured callers, swapped whole on reload.
#[derive(Clone, Default)]
pub struct Callers {
    callers: Arc<RwLock<Vec<Caller>>>,
    /// Set when HTTP is served without authentication (no callers, no
    /// `--api-key`): callers a reload adds would not be enforced, so
    /// adding them is refused.
    unenforced: Arc<AtomicBool>,
    /// `--approval ask`: the operator's `write`/`exec` calls ask first.
    operator_asks: Arc<AtomicBool>,
}

/// Whether `name` is one of `patterns`; the meta-tools are always
/// allowed (they apply the caller's view themselves).
fn allowed(patterns: &[String], name: &str) -> bool {
    name == SEARCH_TOOL
        || name == CALL_TOOL
        || patterns.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => p == name,
        })
}

/// Equal secrets, compared without stopping at the first difference.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The operator's context: every tool.
pub fn operator() -> AuthContext {
    let principal = AuthenticatedPrincipal::new(
        OPERATOR,
        PrincipalKind::Local,
        PrincipalIdentity::new("gateway", "operator", AuthMethod::Local),
    );
    AuthContext::new(principal, AllowAll)
}

impl Callers {
    /// Checks and installs `configs`; an error names what to fix and
    /// leaves the callers as they were.
    pub fn set(&self, configs: &BTreeMap<String, CallerConfig>) -> Result<(), String> {
        if !configs.is_empty() && self.unenforced.load(Ordering::Acquire) {
            return Err(
                "callers cannot be added to a gateway serving HTTP without authentication; \
                 restart it with the callers (or --api-key) in place"
                    .to_owned(),
            );
        }
        let mut callers = Vec::with_capacity(configs.len());
        for (name, config) in configs {
            let key = expand(&config.key);
            if key.trim().len() < 16 || key.trim() != key {
                return Err(format!(
                    "caller {name:?}: its key is shorter than 16 characters or has surrounding \
                     white space (is its variable set?)"
                ));
            }
            if callers.iter().any(|c: &Caller| c.key == key) {
                return Err(format!("caller {name:?}: another caller has the same key"));
            }
            callers.push(Caller {
                name: name.clone(),
                key,
                tools: Arc::new(config.tools.clone()),
                approval: config.approval,
            });
        }
        *self.callers.write().unwrap_or_else(|p| p.into_inner()) = callers;
        Ok(())
    }

    /// Whether any caller is configured.
    pub fn any(&self) -> bool {
        !self
            .callers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }

    /// How the operator's `write`/`exec` calls are approved (`--approval`).
    pub fn set_operator_approval(&self, approval: CallerApproval) {
        self.operator_asks
            .store(approval == CallerApproval::Ask, Ordering::Release);
    }

    /// Whether the operator's `write`/`exec` calls ask first.
    pub fn operator_asks(&self) -> bool {
        self.operator_asks.load(Ordering::Acquire)
    }

    /// Marks HTTP as served without authentication (see [`Callers::set`]).
    pub fn mark_unenforced(&self) {
        self.unenforced.store(true, Ordering::Release);
    }

    /// The context of the caller presenting `token`: its principal and a
    /// policy allowing only its tools (discover and invoke alike).
    fn context(&self, token: &str) -> Option<AuthContext> {
        let callers = self.callers.read().unwrap_or_else(|p| p.into_inner());
        let caller = callers.iter().find(|c| same_secret(&c.key, token))?;
        let principal = AuthenticatedPrincipal::new(
            format!("{CALLER}{}", caller.name),
            PrincipalKind::Service,
            PrincipalIdentity::new("gonk-gateway", caller.name.clone(), AuthMethod::ApiKey),
        );
        let tools = Arc::clone(&caller.tools);
        let policy = policy_fn(move |request: &AuthorizationRequest<'_>| {
            let name = request.resource.target.as_deref().unwrap_or_default();
            Ok(if allowed(&tools, name) {
                AuthorizationDecision::allow()
            } else {
                AuthorizationDecision::deny("Unknown tool").with_policy_id("gateway-callers")
            })
        });
        Some(AuthContext::new(principal, policy))
    }

    /// The approval of one call: reads are approved; the operator's
    /// `write`/`exec` calls as `--approval` says (approved by default); a
    /// caller's as its config says; an unknown principal is denied.
    pub fn decide(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        let id = request.principal.id.as_str();
        if request.tier() == ApprovalTier::Read {
            return ApprovalDecision::approved();
        }
        if id == OPERATOR {
            return if self.operator_asks() {
                ApprovalDecision::ask_caller(
                    "The gateway runs with --approval ask: an imported tool that writes or deletes runs on another server",
                )
            } else {
                ApprovalDecision::approved()
            };
        }
        let callers = self.callers.read().unwrap_or_else(|p| p.into_inner());
        let approval = id
            .strip_prefix(CALLER)
            .and_then(|name| callers.iter().find(|c| c.name == name))
            .map(|c| c.approval);
        match approval {
            Some(CallerApproval::Granted) => ApprovalDecision::approved(),
            Some(CallerApproval::Ask) => {
                ApprovalDecision::ask_caller("An imported tool runs on another server")
            }
            None => ApprovalDecision::denied("This caller is no longer configured"),
        }
    }

    /// The HTTP authentication hook: `operator_key` is the operator, a
    /// caller's key that caller; anything else `401`.
    pub fn authenticator(
        &self,
        operator_key: Option<String>,
    ) -> impl Fn(&HttpRequestParts) -> std::future::Ready<Result<AuthContext, HttpAuthRejection>>
           + Send
           + Sync
           + 'static {
        let callers = self.clone();
        move |request: &HttpRequestParts| {
            let token = request
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| {
                    v.get(..7)
                        .filter(|s| s.eq_ignore_ascii_case("bearer "))
                        .map(|_| &v[7..])
                })
                .unwrap_or_default();
            let found = if operator_key
                .as_deref()
                .is_some_and(|key| same_secret(key, token))
            {
                Some(operator())
            } else {
                callers.context(token)
            };
            std::future::ready(found.ok_or_else(|| {
                HttpAuthRejection::unauthorized(
                    "a valid API key is required (Authorization: Bearer KEY)",
                )
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_exact_names_and_prefixes() {
        let patterns = vec!["fx.*".to_owned(), "web.echo".to_owned()];
        assert!(allowed(&patterns, "fx.slow"));
        assert!(allowed(&patterns, "web.echo"));
        assert!(!allowed(&patterns, "web.echoes"));
        assert!(!allowed(&patterns, "fxx.slow"));
        assert!(allowed(&patterns, "tools.search"));
        assert!(allowed(&["*".to_owned()], "anything.at_all"));
    }

    #[test]
    fn callers_are_not_added_where_they_would_not_be_enforced() {
        let one: BTreeMap<String, CallerConfig> = serde_json::from_value(serde_json::json!({
            "a": {"key": "a-key-0123456789abcdef", "tools": ["*"]}
        }))
        .unwrap();
        let callers = Callers::default();
        callers.set(&one).unwrap();
        assert!(callers.any());
        let open = Callers::default();
        open.mark_unenforced();
        assert!(open.set(&BTreeMap::new()).is_ok());
        let refused = open.set(&one).unwrap_err();
        assert!(refused.contains("restart"), "{refused}");
        assert!(!open.any());
    }

    #[test]
    fn the_operator_is_asked_for_writes_only_under_approval_ask() {
        let callers = Callers::default();
        let operator = operator();
        let decide = |tier: ApprovalTier| {
            let spec = gonk_tools::definition::ApprovalSpec::from(tier);
            callers.decide(&ApprovalRequest {
                principal: operator.principal(),
                request_id: "r",
                security_context_key: "k",
                persistent_grant_key: "g",
                tool: "todo.delete_todo",
                approval: &spec,
                resources: &[],
                input: &serde_json::Value::Null,
                call_stack: &[],
            })
        };
        let asks = |d: ApprovalDecision| matches!(d, ApprovalDecision::AskCaller { .. });
        let approved = |d: ApprovalDecision| matches!(d, ApprovalDecision::Approved { .. });
        assert!(approved(decide(ApprovalTier::Exec)), "granted by default");
        callers.set_operator_approval(CallerApproval::Ask);
        assert!(asks(decide(ApprovalTier::Exec)));
        assert!(asks(decide(ApprovalTier::Write)));
        assert!(approved(decide(ApprovalTier::Read)), "reads never ask");
        callers.set_operator_approval(CallerApproval::Granted);
        assert!(approved(decide(ApprovalTier::Exec)));
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
    }
}
