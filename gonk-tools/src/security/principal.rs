//! [`AuthenticatedPrincipal`]: who is calling, as the host's authentication
//! established it.

use std::fmt;
use std::str::FromStr;
use std::time::SystemTime;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// What kind of party a principal is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrincipalKind {
    /// A person.
    Human,
    /// An AI agent acting on its own account.
    Agent,
    /// A machine client (a backend, a job).
    Service,
    /// The local user of a desktop or CLI process.
    Local,
}

impl PrincipalKind {
    /// The wire name (`"human"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            PrincipalKind::Human => "human",
            PrincipalKind::Agent => "agent",
            PrincipalKind::Service => "service",
            PrincipalKind::Local => "local",
        }
    }
}

/// How a credential was verified.
///
/// Serializes as `"session"`, `"oauth"`, `"service-token"`, `"api-key"`,
/// `"mtls"`, `"tailnet"`, `"transport-account"`, `"local"` or
/// `"custom:<name>"`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AuthMethod {
    /// A web or app session.
    Session,
    /// An OAuth / OIDC token.
    Oauth,
    /// A service token.
    ServiceToken,
    /// An API key.
    ApiKey,
    /// A TLS client certificate.
    Mtls,
    /// A tailnet identity.
    Tailnet,
    /// An account of the transport (an SSH user, a messaging account).
    TransportAccount,
    /// The local OS user.
    Local,
    /// A host-defined method; the name must not be empty.
    Custom(String),
}

impl AuthMethod {
    /// The wire form (`"api-key"`, `"custom:passkey"`).
    pub fn as_str(&self) -> std::borrow::Cow<'_, str> {
        let fixed = match self {
            AuthMethod::Session => "session",
            AuthMethod::Oauth => "oauth",
            AuthMethod::ServiceToken => "service-token",
            AuthMethod::ApiKey => "api-key",
            AuthMethod::Mtls => "mtls",
            AuthMethod::Tailnet => "tailnet",
            AuthMethod::TransportAccount => "transport-account",
            AuthMethod::Local => "local",
            AuthMethod::Custom(name) => return format!("custom:{name}").into(),
        };
        fixed.into()
    }
}

impl fmt::Display for AuthMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_str())
    }
}

/// An unknown authentication method name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("Unknown authentication method `{0}`; use session, oauth, service-token, api-key, mtls, tailnet, transport-account, local or custom:<name>")]
pub struct UnknownAuthMethod(pub String);

impl FromStr for AuthMethod {
    type Err = UnknownAuthMethod;

    fn from_str(method: &str) -> Result<Self, Self::Err> {
        Ok(match method {
            "session" => AuthMethod::Session,
            "oauth" => AuthMethod::Oauth,
            "service-token" => AuthMethod::ServiceToken,
            "api-key" => AuthMethod::ApiKey,
            "mtls" => AuthMethod::Mtls,
            "tailnet" => AuthMethod::Tailnet,
            "transport-account" => AuthMethod::TransportAccount,
            "local" => AuthMethod::Local,
            other => match other.strip_prefix("custom:") {
                // An empty name parses, so that validation can report it.
                Some(name) => AuthMethod::Custom(name.to_owned()),
                None => return Err(UnknownAuthMethod(other.to_owned())),
            },
        })
    }
}

impl Serialize for AuthMethod {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.as_str())
    }
}

impl<'de> Deserialize<'de> for AuthMethod {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// One verified identity: who issued it, whom it names, and how it was
/// verified.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrincipalIdentity {
    /// The issuer (an IdP URL, `"local"`, a tailnet name). Must not be empty.
    pub issuer: String,
    /// The subject within the issuer. Must not be empty.
    pub subject: String,
    /// How the credential was verified.
    pub method: AuthMethod,
}

impl PrincipalIdentity {
    /// An identity.
    pub fn new(issuer: impl Into<String>, subject: impl Into<String>, method: AuthMethod) -> Self {
        PrincipalIdentity {
            issuer: issuer.into(),
            subject: subject.into(),
            method,
        }
    }
}

/// Who acts on the principal's behalf.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActorKind {
    /// An AI agent.
    Agent,
    /// A service.
    Service,
}

impl ActorKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ActorKind::Agent => "agent",
            ActorKind::Service => "service",
        }
    }
}

/// The principal delegated the call to an actor (an agent working for a
/// human, a service acting for a user).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delegation {
    /// The actor's kind.
    pub actor_kind: ActorKind,
    /// The actor's own verified identity.
    pub actor: PrincipalIdentity,
    /// The actor's id in the host's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_id: Option<String>,
    /// The actor's session (an agent run). Must not be empty when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_session_id: Option<String>,
}

impl Delegation {
    /// A delegation to `actor`.
    pub fn new(actor_kind: ActorKind, actor: PrincipalIdentity) -> Self {
        Delegation {
            actor_kind,
            actor,
            actor_id: None,
            actor_session_id: None,
        }
    }

    /// Sets the actor id.
    pub fn with_actor_id(mut self, id: impl Into<String>) -> Self {
        self.actor_id = Some(id.into());
        self
    }

    /// Sets the actor session id.
    pub fn with_actor_session_id(mut self, id: impl Into<String>) -> Self {
        self.actor_session_id = Some(id.into());
        self
    }
}

/// Why a principal is not acceptable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PrincipalError {
    /// A required field is empty.
    #[error("principal field `{0}` must not be empty")]
    EmptyField(&'static str),
    /// A `custom:` authentication method without a name.
    #[error("authentication method of `{0}` is `custom:` without a name; use custom:<name>")]
    UnnamedCustomMethod(&'static str),
    /// `expires_at` is not after the dispatch clock's now.
    #[error("principal has expired")]
    Expired,
}

/// The caller of an authenticated invocation, as the host's authentication
/// established it. The registry never authenticates: it receives this,
/// inside an [`AuthContext`](super::AuthContext), and authorizes it.
///
/// ```
/// use gonk_tools::security::*;
///
/// let alice = AuthenticatedPrincipal::new(
///     "user-42",
///     PrincipalKind::Human,
///     PrincipalIdentity::new("https://idp.example", "alice", AuthMethod::Oauth),
/// )
/// .with_tenant("acme")
/// .with_roles(["editor"]);
/// assert!(alice.validate().is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticatedPrincipal {
    /// The host's id for the principal. Must not be empty.
    pub id: String,
    /// What kind of party it is.
    pub kind: PrincipalKind,
    /// The identity that authenticated.
    pub identity: PrincipalIdentity,
    /// Other identities known to belong to the same principal.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub linked_identities: Vec<PrincipalIdentity>,
    /// The tenant the call acts in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
    /// The workspace the call acts in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    /// Set when an agent or service acts on the principal's behalf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegation: Option<Delegation>,
    /// Roles granted to the principal.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// Scopes granted to the credential.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// When the authentication stops being valid (RFC 3339 on the wire).
    /// Dispatch treats a principal whose time has come as invalid.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "super::timestamp::option"
    )]
    pub expires_at: Option<SystemTime>,
    /// Further claims, JSON-like.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub attributes: Map<String, Value>,
}

fn non_empty(value: &str, field: &'static str) -> Result<(), PrincipalError> {
    if value.trim().is_empty() {
        Err(PrincipalError::EmptyField(field))
    } else {
        Ok(())
    }
}

fn check_identity(
    identity: &PrincipalIdentity,
    issuer: &'static str,
    subject: &'static str,
    method: &'static str,
) -> Result<(), PrincipalError> {
    non_empty(&identity.issuer, issuer)?;
    non_empty(&identity.subject, subject)?;
    match &identity.method {
        AuthMethod::Custom(name) if name.trim().is_empty() => {
            Err(PrincipalError::UnnamedCustomMethod(method))
        }
        _ => Ok(()),
    }
}

impl AuthenticatedPrincipal {
    /// A principal with an id, a kind and the identity that authenticated.
    pub fn new(id: impl Into<String>, kind: PrincipalKind, identity: PrincipalIdentity) -> Self {
        AuthenticatedPrincipal {
            id: id.into(),
            kind,
            identity,
            linked_identities: Vec::new(),
            tenant_id: None,
            workspace_id: None,
            delegation: None,
            roles: Vec::new(),
            scopes: Vec::new(),
            expires_at: None,
            attributes: Map::new(),
        }
    }

    /// Sets the tenant.
    pub fn with_tenant(mut self, tenant_id: impl Into<String>) -> Self {
        self.tenant_id = Some(tenant_id.into());
        self
    }

    /// Sets the workspace.
    pub fn with_workspace(mut self, workspace_id: impl Into<String>) -> Self {
        self.workspace_id = Some(workspace_id.into());
        self
    }

    /// Sets the delegation.
    pub fn with_delegation(mut self, delegation: Delegation) -> Self {
        self.delegation = Some(delegation);
        self
    }

    /// Adds a linked identity.
    pub fn with_linked_identity(mut self, identity: PrincipalIdentity) -> Self {
        self.linked_identities.push(identity);
        self
    }

    /// Sets the roles.
    pub fn with_roles<S: Into<String>>(mut self, roles: impl IntoIterator<Item = S>) -> Self {
        self.roles = roles.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the scopes.
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the expiry.
    pub fn with_expires_at(mut self, expires_at: SystemTime) -> Self {
        self.expires_at = Some(expires_at);
        self
    }

    /// Adds a claim.
    pub fn with_attribute(mut self, key: impl Into<String>, value: Value) -> Self {
        self.attributes.insert(key.into(), value);
        self
    }

    /// Whether the principal holds `role`.
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r == role)
    }

    /// Whether the credential carries `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// Whether the scopes a tool requires apply to this principal
    /// (`docs/contract.md#scopes`): it authenticated with an OAuth token
    /// ([`AuthMethod::Oauth`] — with no scopes it then has none, and every
    /// scoped tool is refused), or its credential carries any scope at
    /// all. A principal of another method without scopes (the static API
    /// key, a local user, mTLS) is not limited by scopes: what it may do
    /// is its policy's to decide.
    ///
    /// ```
    /// use gonk_tools::security::*;
    ///
    /// let token = |method| AuthenticatedPrincipal::new(
    ///     "u1", PrincipalKind::Human, PrincipalIdentity::new("https://idp.example", "u1", method));
    /// assert!(token(AuthMethod::Oauth).scopes_enforced());
    /// assert!(!token(AuthMethod::ApiKey).scopes_enforced());
    /// assert!(token(AuthMethod::ServiceToken).with_scopes(["jobs:run"]).scopes_enforced());
    /// ```
    pub fn scopes_enforced(&self) -> bool {
        self.identity.method == AuthMethod::Oauth || !self.scopes.is_empty()
    }

    /// The scopes of `required` this principal lacks, when its scopes are
    /// [enforced](Self::scopes_enforced); empty when it has them all or
    /// they are not enforced.
    pub fn missing_scopes<'r>(&self, required: &'r [String]) -> Vec<&'r str> {
        if required.is_empty() || !self.scopes_enforced() {
            return Vec::new();
        }
        required
            .iter()
            .filter(|scope| !self.has_scope(scope))
            .map(String::as_str)
            .collect()
    }

    /// Structural validation: `id`, every identity's `issuer` and `subject`
    /// are non-empty, a `custom:` method has a name, and a delegation's
    /// actor session id, when present, is not empty.
    pub fn validate(&self) -> Result<(), PrincipalError> {
        non_empty(&self.id, "id")?;
        check_identity(
            &self.identity,
            "identity.issuer",
            "identity.subject",
            "identity.method",
        )?;
        for linked in &self.linked_identities {
            check_identity(
                linked,
                "linkedIdentities.issuer",
                "linkedIdentities.subject",
                "linkedIdentities.method",
            )?;
        }
        if let Some(delegation) = &self.delegation {
            check_identity(
                &delegation.actor,
                "delegation.actor.issuer",
                "delegation.actor.subject",
                "delegation.actor.method",
            )?;
            if let Some(session) = &delegation.actor_session_id {
                non_empty(session, "delegation.actorSessionId")?;
            }
        }
        Ok(())
    }

    /// Whether `expires_at` is at or before `now`.
    pub fn is_expired_at(&self, now: SystemTime) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }

    /// [`validate`](Self::validate), then the expiry against `now`.
    pub fn validate_at(&self, now: SystemTime) -> Result<(), PrincipalError> {
        self.validate()?;
        if self.is_expired_at(now) {
            return Err(PrincipalError::Expired);
        }
        Ok(())
    }
}
