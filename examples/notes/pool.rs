//! A small fixed pool of SQLite connections: in WAL mode readers do not
//! wait for each other or for the writer, so calls that each hold one
//! connection run side by side instead of queueing behind one lock.

use std::sync::{Condvar, Mutex};

use rusqlite::Connection;

/// Connections a file database opens (an in-memory database has one: each
/// connection to `:memory:` would be a database of its own).
pub const FILE_CONNECTIONS: usize = 4;

/// Connections handed out one call at a time.
pub struct Pool {
    idle: Mutex<Vec<Connection>>,
    returned: Condvar,
}

/// A connection lent to one call; it goes back to the pool when dropped,
/// even if the call panicked.
struct Lease<'a> {
    pool: &'a Pool,
    connection: Option<Connection>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(connection) = self.connection.take() {
            self.pool
                .idle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(connection);
            self.pool.returned.notify_one();
        }
    }
}

impl Pool {
    /// A pool of `connections` (at least one).
    pub fn new(connections: Vec<Connection>) -> Self {
        assert!(!connections.is_empty(), "a pool needs a connection");
        Pool {
            idle: Mutex::new(connections),
            returned: Condvar::new(),
        }
    }

    /// Runs `f` on an idle connection, waiting for one if all are lent.
    pub fn with<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        let connection = {
            let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                if let Some(connection) = idle.pop() {
                    break connection;
                }
                idle = self.returned.wait(idle).unwrap_or_else(|p| p.into_inner());
            }
        };
        let lease = Lease {
            pool: self,
            connection: Some(connection),
        };
        f(lease.connection.as_ref().expect("leased"))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn a_connection_comes_back_after_a_panic() {
        let pool = Arc::new(Pool::new(vec![Connection::open_in_memory().unwrap()]));
        let lent = Arc::clone(&pool);
        let panicked = std::thread::spawn(move || lent.with(|_| panic!("the call failed")))
            .join()
            .is_err();
        assert!(panicked);
        // The only connection is back: this would wait forever otherwise.
        assert_eq!(
            pool.with(|db| db
                .query_row("SELECT 1", [], |r| r.get::<_, i64>(0))
                .unwrap()),
            1
        );
    }

    #[test]
    fn calls_wait_for_a_returned_connection() {
        let pool = Arc::new(Pool::new(vec![Connection::open_in_memory().unwrap()]));
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let pool = Arc::clone(&pool);
                std::thread::spawn(move || {
                    pool.with(|db| {
                        db.query_row("SELECT ?1", [i], |r| r.get::<_, i64>(0))
                            .unwrap()
                    })
                })
            })
            .collect();
        let mut seen: Vec<i64> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..8).collect::<Vec<_>>());
    }
}
