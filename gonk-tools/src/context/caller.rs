//! [`Caller`]: who calls, as a context carries it without opening it.
//!
//! Authentication is the security layer's: it attaches the caller with
//! `ToolContext::with_auth`, dispatch captures it at the root call, and
//! only the security layer looks inside. The context answers the two
//! questions any handler may ask of it.

use std::any::Any;
use std::sync::Arc;

/// An authenticated caller, provided by the host or captured by dispatch.
pub(crate) trait Caller: Send + Sync + 'static {
    /// The request id, once dispatch captured the caller.
    fn request_id(&self) -> Option<&str>;

    /// The security context key (`gsk:v1:…`), once dispatch captured the
    /// caller.
    fn security_context_key(&self) -> Option<&str>;

    /// What the security layer attached, to look inside.
    fn as_any(&self) -> &dyn Any;

    /// The same, owned.
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}
