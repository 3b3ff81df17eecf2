//! A small fixed pool of SQLite connections: in WAL mode readers do not
//! wait for each other or for the writer, so calls that each hold one
//! connection run side by side instead of queueing behind one lock.
//!
//! A file database also keeps one connection for this process's writes,
//! taken in turn: its writes queue on that lock (not in SQLite's busy
//! handler, which sleeps 1, 2, 5 ms… between tries), and as the only
//! writer here its page cache stays valid from one write to the next,
//! where a connection that another one wrote behind must read its pages
//! again.

use std::sync::{Condvar, Mutex};

use rusqlite::Connection;

/// Connections a file database opens for reads (an in-memory database
/// has one connection in all: each connection to `:memory:` would be a
/// database of its own).
pub const FILE_CONNECTIONS: usize = 4;

/// Connections handed out one call at a time.
pub struct Pool {
    idle: Mutex<Vec<Connection>>,
    returned: Condvar,
    /// The connection writes take in turn; `None`: writes take a
    /// connection from `idle` one at a time, under this lock.
    writer: Mutex<Option<Connection>>,
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
    /// A pool of `connections` (at least one) for reads, and `writer`
    /// for writes (`None`: writes use the read connections, one at a
    /// time).
    pub fn new(connections: Vec<Connection>, writer: Option<Connection>) -> Self {
        assert!(!connections.is_empty(), "a pool needs a connection");
        Pool {
            idle: Mutex::new(connections),
            returned: Condvar::new(),
            writer: Mutex::new(writer),
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

    /// Runs `f` on an idle connection if there is one; `None` (and `f`
    /// not run) when every connection is lent.
    pub fn try_with<T>(&self, f: impl FnOnce(&Connection) -> T) -> Option<T> {
        let connection = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop()?;
        let lease = Lease {
            pool: self,
            connection: Some(connection),
        };
        Some(f(lease.connection.as_ref().expect("leased")))
    }

    /// Runs `f` on the writer, one write of this process at a time.
    pub fn write<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        let writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        match writer.as_ref() {
            Some(connection) => f(connection),
            None => self.with(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn a_connection_comes_back_after_a_panic() {
        let pool = Arc::new(Pool::new(vec![Connection::open_in_memory().unwrap()], None));
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
        let pool = Arc::new(Pool::new(vec![Connection::open_in_memory().unwrap()], None));
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

    #[test]
    fn writes_go_to_the_writer_one_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pool.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER)")
            .unwrap();
        let pool = Arc::new(Pool::new(
            vec![Connection::open(&path).unwrap()],
            Some(writer),
        ));
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let pool = Arc::clone(&pool);
                std::thread::spawn(move || {
                    pool.write(|db| db.execute("INSERT INTO t VALUES (?1)", [i]).unwrap())
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        // The readers see every write.
        let count: i64 = pool.with(|db| {
            db.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
                .unwrap()
        });
        assert_eq!(count, 8);
    }
}
