//! [`AuditSink`]: where receipts go, with an in-memory sink for tests and
//! dashboards and a `tracing` sink.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use super::error::SecurityError;
use super::ready::ReadyWith;
use super::receipt::AuditReceipt;

/// Stores audit receipts.
///
/// An `Err` means the receipt was not stored. With
/// [`mandatory_audit`](super::SecurityOptions::mandatory_audit) that stops
/// the call (`AUTH_AUDIT_FAILED`, or the not-found result at discover);
/// otherwise the call goes on. The error's text is never shown or logged.
pub trait AuditSink: Send + Sync {
    /// Stores one receipt.
    fn record(&self, receipt: AuditReceipt) -> BoxFuture<'_, Result<(), SecurityError>>;
}

impl<T: AuditSink + ?Sized> AuditSink for Arc<T> {
    fn record(&self, receipt: AuditReceipt) -> BoxFuture<'_, Result<(), SecurityError>> {
        (**self).record(receipt)
    }
}

/// Keeps receipts in memory, oldest first.
#[derive(Debug, Default)]
pub struct InMemoryAuditSink {
    receipts: Mutex<Vec<AuditReceipt>>,
}

impl InMemoryAuditSink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of the receipts so far.
    pub fn snapshot(&self) -> Vec<AuditReceipt> {
        self.receipts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Takes the receipts so far, leaving the sink empty.
    pub fn take(&self) -> Vec<AuditReceipt> {
        std::mem::take(&mut *self.receipts.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// How many receipts it holds.
    pub fn len(&self) -> usize {
        self.receipts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every receipt.
    pub fn clear(&self) {
        self.receipts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

impl AuditSink for InMemoryAuditSink {
    fn record(&self, receipt: AuditReceipt) -> BoxFuture<'_, Result<(), SecurityError>> {
        self.receipts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(receipt);
        Box::pin(ReadyWith(|| Ok(())))
    }
}

/// Emits each receipt as one `info` event (target `gonk_tools::audit`)
/// whose `receipt` field is the receipt's JSON. Receipts are redacted, so
/// this is safe to ship to ordinary logs.
#[derive(Clone, Copy, Debug, Default)]
pub struct TracingAuditSink;

impl AuditSink for TracingAuditSink {
    fn record(&self, receipt: AuditReceipt) -> BoxFuture<'_, Result<(), SecurityError>> {
        let outcome = match serde_json::to_string(&receipt) {
            Ok(json) => {
                tracing::info!(target: "gonk_tools::audit", receipt = %json, "audit receipt");
                Ok(())
            }
            Err(e) => Err(SecurityError::new(e)),
        };
        Box::pin(std::future::ready(outcome))
    }
}
