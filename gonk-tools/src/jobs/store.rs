//! [`JobStore`]: where an [`EmbeddedRunner`](super::EmbeddedRunner)
//! keeps its jobs across restarts.

use super::JobRecord;

/// Persistence for job records. The runner writes a record when a job is
/// launched, when it starts running and when it ends, deletes it when retention evicts it, and
/// loads every record once, when it is made. Calls are synchronous and on
/// the runtime's threads: keep them short (one small row).
///
/// The notes example keeps jobs in its SQLite database this way.
pub trait JobStore: Send + Sync + 'static {
    /// Every stored record.
    fn load(&self) -> Result<Vec<JobRecord>, String>;
    /// Inserts or replaces `record` (by id).
    fn save(&self, record: &JobRecord) -> Result<(), String>;
    /// Deletes the record with `id` (missing is fine).
    fn remove(&self, id: &str) -> Result<(), String>;
}
