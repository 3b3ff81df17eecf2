//! Installing a test's own `tracing` subscriber for the thread it runs on.

use tracing::dispatcher::DefaultGuard;
use tracing::{Dispatch, Subscriber};

/// Keeps a subscriber installed ([`set_scoped_default`]).
pub struct ScopedGuard {
    _inert: Dispatch,
    _default: DefaultGuard,
}

/// `tracing::subscriber::set_default`, made to see every callsite.
///
/// With exactly one scoped subscriber in the process, tracing-core decides
/// the interest of a callsite another thread reaches first from that
/// thread's subscriber alone (none: never) and caches it, so a span or
/// event of this test that another test's thread reached first is not
/// recorded. A second, inert dispatcher kept with the guard makes it ask
/// every registered subscriber, this one included.
pub fn set_scoped_default(subscriber: impl Subscriber + Send + Sync + 'static) -> ScopedGuard {
    ScopedGuard {
        _inert: Dispatch::new(tracing::subscriber::NoSubscriber::default()),
        _default: tracing::subscriber::set_default(subscriber),
    }
}
