//! Security context keys: stable, opaque identifiers of "who, where, via
//! whom" for pinning sessions ([`security_context_key`]) and storing
//! persistent approval grants ([`persistent_grant_key`]).
//!
//! A key is `<prefix>:v1:` followed by the unpadded base64url SHA-256 of
//! `gonk-auth:<prefix>:v1\0` and this canonical JSON (compact, keys in
//! exactly this order):
//!
//! ```text
//! {"version":1,
//!  "subject":{"issuer":…,"subject":…,"kind":…},
//!  "tenantId":…|null,
//!  "workspaceId":…|null,
//!  "actor":{"issuer":…,"subject":…,"kind":…,"id":…|null,"sessionId":…|null}|null}
//! ```
//!
//! `sessionId` appears only in the `gsk` (security context) key, so a
//! persistent grant survives the agent's next session while a session pin
//! does not.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::principal::AuthenticatedPrincipal;

#[derive(Serialize)]
struct KeySubject<'a> {
    issuer: &'a str,
    subject: &'a str,
    kind: &'a str,
}

#[derive(Serialize)]
struct KeyActor<'a> {
    issuer: &'a str,
    subject: &'a str,
    kind: &'a str,
    id: Option<&'a str>,
    #[serde(rename = "sessionId", skip_serializing_if = "SessionField::is_omitted")]
    session_id: SessionField<'a>,
}

/// The actor session id: a value or `null` in the gsk key, omitted in gpg.
enum SessionField<'a> {
    Included(Option<&'a str>),
    Omitted,
}

impl SessionField<'_> {
    fn is_omitted(&self) -> bool {
        matches!(self, SessionField::Omitted)
    }
}

impl Serialize for SessionField<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SessionField::Included(value) => value.serialize(serializer),
            SessionField::Omitted => serializer.serialize_none(),
        }
    }
}

#[derive(Serialize)]
struct KeyDocument<'a> {
    version: u8,
    subject: KeySubject<'a>,
    #[serde(rename = "tenantId")]
    tenant_id: Option<&'a str>,
    #[serde(rename = "workspaceId")]
    workspace_id: Option<&'a str>,
    actor: Option<KeyActor<'a>>,
}

/// The canonical JSON that a key of `principal` hashes.
fn canonical_json(principal: &AuthenticatedPrincipal, with_session: bool) -> Vec<u8> {
    let document = KeyDocument {
        version: 1,
        subject: KeySubject {
            issuer: &principal.identity.issuer,
            subject: &principal.identity.subject,
            kind: principal.kind.as_str(),
        },
        tenant_id: principal.tenant_id.as_deref(),
        workspace_id: principal.workspace_id.as_deref(),
        actor: principal.delegation.as_ref().map(|d| KeyActor {
            issuer: &d.actor.issuer,
            subject: &d.actor.subject,
            kind: d.actor_kind.as_str(),
            id: d.actor_id.as_deref(),
            session_id: if with_session {
                SessionField::Included(d.actor_session_id.as_deref())
            } else {
                SessionField::Omitted
            },
        }),
    };
    // Serializing borrowed strings and options to a Vec cannot fail.
    serde_json::to_vec(&document).unwrap_or_default()
}

fn key(prefix: &str, json: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"gonk-auth:");
    hasher.update(prefix.as_bytes());
    hasher.update(b":v1\0");
    hasher.update(json);
    let digest = hasher.finalize();
    let mut out = String::with_capacity(prefix.len() + 4 + 43);
    out.push_str(prefix);
    out.push_str(":v1:");
    URL_SAFE_NO_PAD.encode_string(digest, &mut out);
    out
}

/// The security context key (`gsk:v1:…`) of `principal`: subject, tenant,
/// workspace and actor **including** the actor's session. Sessions and
/// receipts are pinned to it.
///
/// ```
/// use gonk_tools::security::*;
///
/// let p = AuthenticatedPrincipal::new(
///     "u1",
///     PrincipalKind::Human,
///     PrincipalIdentity::new("https://idp.example", "alice", AuthMethod::Oauth),
/// );
/// let key = security_context_key(&p);
/// assert!(key.starts_with("gsk:v1:"));
/// assert_eq!(key.len(), "gsk:v1:".len() + 43);
/// ```
pub fn security_context_key(principal: &AuthenticatedPrincipal) -> String {
    key("gsk", &canonical_json(principal, true))
}

/// The persistent grant key (`gpg:v1:…`) of `principal`: like the security
/// context key but **without** the actor's session, so an "always allow"
/// grant outlives one agent session.
pub fn persistent_grant_key(principal: &AuthenticatedPrincipal) -> String {
    key("gpg", &canonical_json(principal, false))
}
