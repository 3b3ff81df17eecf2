//! Approval resolution: a tool's declaration and the validated input give
//! the [`ApprovalSpec`] of one call; [`ApprovalMode`] says whether the
//! registry enforces it.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::definition::{Approval, ApprovalSpec, ApprovalTier};

/// The reason recorded when a declaration is missing or fails.
pub const MISSING_APPROVAL_REASON: &str = "Missing or invalid approval declaration";

/// Resolves a tool's approval declaration against the **validated** input.
///
/// A static declaration is returned as is; a dynamic one is called with the
/// input. No declaration, a dynamic declaration that returns `Err`, and one
/// that panics all resolve to `exec` with `override: false` and the reason
/// [`MISSING_APPROVAL_REASON`] (fail closed).
///
/// ```
/// use gonk_tools::prelude::*;
/// use gonk_tools::security::resolve_approval;
///
/// let spec = resolve_approval(None, &json!({}));
/// assert_eq!(spec.tier, ApprovalTier::Exec);
/// assert!(!spec.overridable);
/// assert_eq!(spec.reason.as_deref(), Some("Missing or invalid approval declaration"));
/// ```
pub fn resolve_approval(approval: Option<&Approval>, input: &Value) -> ApprovalSpec {
    resolve(approval, input).into_owned()
}

/// [`resolve_approval`] without copying a static declaration.
pub(crate) fn resolve<'a>(approval: Option<&'a Approval>, input: &Value) -> Cow<'a, ApprovalSpec> {
    let resolved = match approval {
        Some(Approval::Static(spec)) => return Cow::Borrowed(spec),
        Some(Approval::Dynamic(decide)) => {
            std::panic::catch_unwind(AssertUnwindSafe(|| decide(input))).ok()
        }
        None => None,
    };
    Cow::Owned(match resolved {
        Some(Ok(spec)) => spec,
        _ => ApprovalSpec {
            tier: ApprovalTier::Exec,
            overridable: false,
            reason: Some(MISSING_APPROVAL_REASON.to_owned()),
        },
    })
}

/// Whether authenticated dispatch enforces approval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalMode {
    /// Ask the approval provider for every write and exec call (and for
    /// read calls when a provider is configured). Without a provider, write
    /// and exec calls are denied. The default.
    #[default]
    Enforce,
    /// Skip the approval gate: for a trusted host that obtains consent
    /// outside gonk-tools. Authorization and receipts still apply.
    Bypass,
}
