//! The 2025 sessions over HTTP whose `tools/call`s may run in their own
//! HTTP request's task (`http::direct::serve_in_session`) rather than
//! through rmcp's session worker, its serve loop and a handler task of
//! their own — three hand-offs between threads per call, which on a small
//! machine cost more than a short tool.
//!
//! A session is kept here from its `notifications/initialized` until it
//! closes, and only if its client declared none of elicitation, sampling
//! or roots: such a call can never send its client a request, so it needs
//! nothing of the session but the session's own server (log level,
//! subscriptions, close signal) and peer (the client's info), and its
//! notifications go into its answer as a stateless call's do. A client
//! that can be asked keeps rmcp's path, which routes the question and its
//! answer through the session.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rmcp::model::RequestId;
use rmcp::service::Peer;
use rmcp::RoleServer;
use tokio_util::sync::CancellationToken;

use super::McpServer;

/// The sessions whose calls may run in their requests, by session id.
#[derive(Default)]
pub(crate) struct OpenSessions(Mutex<HashMap<Arc<str>, Arc<OpenSession>>>);

/// What a call of one session needs when it runs in its request.
pub(crate) struct OpenSession {
    /// The session's server (its level, subscriptions and close signal),
    /// without the guard that closes it when the last clone goes: rmcp
    /// still owns the session's life.
    pub(crate) server: McpServer,
    /// The session's peer: the client's info from `initialize`.
    pub(crate) peer: Peer<RoleServer>,
    /// The calls running in their requests, so that the client's
    /// `notifications/cancelled` finds them (rmcp's loop never saw them).
    calls: Mutex<HashMap<RequestId, CancellationToken>>,
    /// When a request of the session last went through rmcp's worker, in
    /// milliseconds since [`epoch`]: rmcp ends a session after its idle
    /// timeout without an event, and calls served here are not events.
    through_rmcp: AtomicU64,
}

impl std::fmt::Debug for OpenSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenSessions").finish_non_exhaustive()
    }
}

/// The time base of [`OpenSession::through_rmcp`].
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    u64::try_from(epoch().elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl OpenSessions {
    /// Keeps `session` (its server and peer) until the returned guard is
    /// dropped (the task that follows the session holds it until the
    /// session closes).
    pub(crate) fn open(
        self: &Arc<Self>,
        id: &str,
        server: &McpServer,
        peer: Peer<RoleServer>,
    ) -> Opened {
        let id: Arc<str> = id.into();
        let session = Arc::new(OpenSession {
            server: server.view(),
            peer,
            calls: Mutex::default(),
            through_rmcp: AtomicU64::new(now_ms()),
        });
        self.lock().insert(Arc::clone(&id), session);
        Opened {
            sessions: Arc::downgrade(self),
            id,
        }
    }

    /// The session `id` if its calls may run in their requests now: it is
    /// kept here, and rmcp's worker heard from it within half of
    /// `idle_timeout`. Otherwise `None`, and the caller sends the request
    /// through rmcp's worker, which this counts as heard now (so that the
    /// session does not time out while its calls run here).
    pub(crate) fn serving_here(
        &self,
        id: &str,
        idle_timeout: Option<Duration>,
    ) -> Option<Arc<OpenSession>> {
        let session = self.lock().get(id).cloned()?;
        let Some(timeout) = idle_timeout else {
            return Some(session);
        };
        let now = now_ms();
        let heard = session.through_rmcp.load(Ordering::Relaxed);
        let half = u64::try_from(timeout.as_millis() / 2).unwrap_or(u64::MAX);
        if now.saturating_sub(heard) < half {
            return Some(session);
        }
        session.through_rmcp.store(now, Ordering::Relaxed);
        None
    }

    /// Cancels the call `request` of session `id` running in its request;
    /// `false` when there is none (rmcp's loop may have it).
    pub(crate) fn cancel(&self, id: &str, request: &RequestId) -> bool {
        let Some(session) = self.lock().get(id).cloned() else {
            return false;
        };
        let token = session
            .calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(request);
        match token {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Arc<OpenSession>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl OpenSession {
    /// Registers call `request` under `token` until the guard is dropped.
    pub(crate) fn running(
        self: &Arc<Self>,
        request: RequestId,
        token: CancellationToken,
    ) -> Running {
        self.calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(request.clone(), token);
        Running {
            session: Arc::clone(self),
            request,
        }
    }
}

/// A session kept in [`OpenSessions`] until this is dropped (see
/// [`OpenSessions::open`]).
pub(crate) struct Opened {
    sessions: std::sync::Weak<OpenSessions>,
    id: Arc<str>,
}

impl Drop for Opened {
    fn drop(&mut self) {
        if let Some(sessions) = self.sessions.upgrade() {
            sessions.lock().remove(&self.id);
        }
    }
}

/// A call registered with its session while it runs (see
/// [`OpenSession::running`]).
pub(crate) struct Running {
    session: Arc<OpenSession>,
    request: RequestId,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.session
            .calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.request);
    }
}
