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
//!
//! A short query runs where it is asked, on the async worker, when a
//! connection is free ([`Pool::try_read_here`], [`Pool::try_write_here`]):
//! on two cores the hop to a blocking thread and back costs more than a
//! lookup, an insert or a search of a small notebook. It gets a budget of
//! SQLite virtual-machine steps ([`HERE_BUDGET`]) and never waits on
//! another process's lock; past the budget, or finding the database
//! locked, it is stopped (nothing it did is kept) and the caller runs it
//! again on a blocking thread. So a search of a large notebook, or a
//! write behind another process's transaction, never holds the worker
//! long.
//!
//! The writer checkpoints the WAL itself, off the async workers: SQLite's
//! automatic checkpoint would run in the commit that crosses its
//! threshold (writing and syncing the pages), which may be a write run
//! here. The writer's WAL hook counts the pages each commit appends and
//! marks a checkpoint due every 1,000 of them (`CHECKPOINT_PAGES`), and
//! [`Pool::checkpoint`] runs it (PASSIVE, as the automatic one is) on a
//! blocking thread, holding the writer: SQLite starts a WAL again from
//! its beginning only when a write finds all of it copied, so a write
//! slipped in beside the checkpoint would keep the WAL growing for good.
//! While one is due, writes are not run here (they could take the writer
//! again and again before the checkpoint's thread does); a blocking write
//! runs the checkpoint first.

use std::cell::Cell;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, TryLockError};
use std::time::Duration;

use rusqlite::hooks::Wal;
use rusqlite::Connection;

/// Connections a file database opens for reads (an in-memory database
/// has one connection in all: each connection to `:memory:` would be a
/// database of its own).
pub const FILE_CONNECTIONS: usize = 4;

/// How long a connection waits for another process's write lock (off
/// the async workers).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// SQLite virtual-machine steps between two looks at the budget of a query
/// run here.
const HERE_STEPS: c_int = 1_000;

/// The budget of a query run on the async worker, in SQLite
/// virtual-machine steps: a lookup or an insert takes a few hundred, a
/// search a few per candidate note; at this many (a fraction of a
/// millisecond) it is stopped and run again on a blocking thread.
pub const HERE_BUDGET: u32 = 100 * HERE_STEPS as u32;

/// WAL pages the writer appends between two checkpoints (SQLite's own
/// threshold for its automatic checkpoint).
const CHECKPOINT_PAGES: c_int = 1_000;

thread_local! {
    /// Set by [`refuse_busy`] when a query run here found the database
    /// locked.
    static FOUND_BUSY: Cell<bool> = const { Cell::new(false) };
    /// Set by the progress handler of [`run_here`] when it stopped a query
    /// past its budget.
    static STOPPED: Cell<bool> = const { Cell::new(false) };
    /// The WAL's size in pages after the writer's last commit on this
    /// thread (set by [`note_wal_size`]).
    static WAL_PAGES: Cell<Option<c_int>> = const { Cell::new(None) };
}

/// Connections handed out one call at a time.
pub struct Pool {
    idle: Mutex<Vec<Connection>>,
    returned: Condvar,
    /// Writes take it in turn.
    writer: Mutex<Writer>,
    /// A checkpoint is due: the writer appended [`CHECKPOINT_PAGES`].
    checkpoint_due: AtomicBool,
    /// A checkpoint is running (one at a time).
    checkpointing: AtomicBool,
    /// Checkpoints run so far.
    checkpoints: AtomicUsize,
}

/// The connection writes take in turn, and what its commits appended to
/// the WAL.
struct Writer {
    /// `None`: writes take a connection from `idle` one at a time, under
    /// the writer's lock.
    connection: Option<Connection>,
    /// The WAL's size in pages after the last commit.
    wal_pages: c_int,
    /// Pages appended to the WAL since the last checkpoint.
    appended: c_int,
}

impl Writer {
    /// Counts what the last commit appended (its size from the WAL hook);
    /// `true`: a checkpoint is due.
    fn note_commit(&mut self) -> bool {
        let Some(pages) = WAL_PAGES.take() else {
            return false; // nothing was committed
        };
        let before = std::mem::replace(&mut self.wal_pages, pages);
        // A WAL smaller than before was started again from its beginning.
        let grown = if pages >= before {
            pages - before
        } else {
            pages
        };
        self.appended = self.appended.saturating_add(grown);
        self.appended >= CHECKPOINT_PAGES
    }
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
        if let Some(writer) = &writer {
            // Replaces SQLite's automatic checkpoint on this connection.
            writer.wal_hook(Some(note_wal_size));
        }
        Pool {
            idle: Mutex::new(connections),
            returned: Condvar::new(),
            writer: Mutex::new(Writer {
                connection: writer,
                wal_pages: 0,
                appended: 0,
            }),
            checkpoint_due: AtomicBool::new(false),
            checkpointing: AtomicBool::new(false),
            checkpoints: AtomicUsize::new(0),
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
    /// Blocking; it also runs a checkpoint that is due.
    pub fn write<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        // A checkpoint due runs first (writes here leave the writer to it).
        self.checkpoint_if_due(&mut writer);
        WAL_PAGES.set(None);
        let written = match writer.connection.as_ref() {
            Some(connection) => f(connection),
            None => self.with(f),
        };
        self.note_commit(&mut writer);
        self.checkpoint_if_due(&mut writer);
        written
    }

    /// [`Pool::try_with`] within the budget of a query run here: `None`
    /// when no connection is idle or `f` was stopped (then run it again on
    /// a blocking thread). `f` must only read.
    pub fn try_read_here<T>(&self, f: impl FnOnce(&Connection) -> T) -> Option<T> {
        self.try_with(|db| run_here(db, f)).flatten()
    }

    /// [`Pool::write`] here, within the budget of a query run here: `None`
    /// when another write of this process holds the writer, the database is
    /// locked by another process, or `f` was stopped. Then nothing `f` did
    /// is kept *if* `f` is one statement or one transaction (a stopped
    /// statement is rolled back), and the caller runs it again with
    /// [`Pool::write`] on a blocking thread. When it returns
    /// `Some`, [`Pool::take_checkpoint`] says whether to run
    /// [`Pool::checkpoint`] (on a blocking thread).
    pub fn try_write_here<T>(&self, f: impl FnOnce(&Connection) -> T) -> Option<T> {
        // A checkpoint is due: writes here, taking the writer again and
        // again, could keep it waiting; the blocking writes run it first.
        if self.checkpoint_due.load(Ordering::Acquire) {
            return None;
        }
        let mut writer = match self.writer.try_lock() {
            Ok(writer) => writer,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        WAL_PAGES.set(None);
        let written = match writer.connection.as_ref() {
            Some(connection) => run_here(connection, f),
            None => self.try_read_here(f),
        };
        self.note_commit(&mut writer);
        written
    }

    /// Whether a checkpoint is due and no one runs it yet; `true` makes
    /// the caller the one to run [`Pool::checkpoint`].
    pub fn take_checkpoint(&self) -> bool {
        self.checkpoint_due.load(Ordering::Acquire)
            && !self.checkpointing.swap(true, Ordering::AcqRel)
    }

    /// Copies the WAL into the database (PASSIVE: without waiting for
    /// readers), on the writer and holding it, so no write of this process
    /// comes between the copy and the next write, which then starts the
    /// WAL again from its beginning. Blocking. A failure is left for the
    /// next one: the WAL only grows meanwhile.
    pub fn checkpoint(&self) {
        {
            let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
            self.checkpoint_if_due(&mut writer);
        }
        self.checkpointing.store(false, Ordering::Release);
    }

    /// The checkpoint of [`Pool::checkpoint`], if one is due, holding the
    /// writer.
    fn checkpoint_if_due(&self, writer: &mut Writer) {
        if !self.checkpoint_due.load(Ordering::Acquire) {
            return;
        }
        // (busy, pages in the WAL, pages copied)
        let copy = |db: &Connection| {
            db.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
                Ok((
                    row.get::<_, c_int>(0)?,
                    row.get::<_, c_int>(1)?,
                    row.get::<_, c_int>(2)?,
                ))
            })
        };
        let copied = match writer.connection.as_ref() {
            Some(connection) => copy(connection),
            None => self.with(copy),
        };
        match copied {
            Ok((busy, pages, done)) => {
                // All of it copied: the next write starts the WAL
                // again, and all it appends counts (if a reader still
                // holds the old one, the next commit is due at once).
                let whole = busy == 0 && pages == done;
                writer.wal_pages = if whole { 0 } else { pages };
                writer.appended = 0;
            }
            Err(error) => {
                eprintln!("notes: the WAL checkpoint failed ({error}); the next write tries again")
            }
        }
        self.checkpoint_due.store(false, Ordering::Release);
        self.checkpoints.fetch_add(1, Ordering::Relaxed);
    }

    /// How many checkpoints the writer has run (diagnostics).
    pub fn checkpoints(&self) -> usize {
        self.checkpoints.load(Ordering::Relaxed)
    }

    /// Marks a checkpoint due if the writer's last commit made one due.
    fn note_commit(&self, writer: &mut Writer) {
        if writer.note_commit() {
            self.checkpoint_due.store(true, Ordering::Release);
        }
    }
}

/// The writer's WAL hook: SQLite calls it after each commit with the WAL's
/// size in pages.
fn note_wal_size(_wal: &Wal, pages: c_int) -> rusqlite::Result<()> {
    WAL_PAGES.set(Some(pages));
    Ok(())
}

/// SQLite's busy handler for a query run here: do not wait, remember.
fn refuse_busy(_tries: i32) -> bool {
    FOUND_BUSY.set(true);
    false
}

/// Runs `f` on `db` within [`HERE_BUDGET`] and without waiting for a lock;
/// `None` when it was stopped or found the database locked.
fn run_here<T>(db: &Connection, f: impl FnOnce(&Connection) -> T) -> Option<T> {
    /// Puts the connection back as the blocking path expects it, even if
    /// `f` panicked.
    struct Restore<'a>(&'a Connection);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            let _ = self.0.progress_handler(0, None::<fn() -> bool>);
            let _ = self.0.busy_timeout(BUSY_TIMEOUT);
        }
    }
    // The handlers run on this thread, inside `f`: they report through
    // this thread's flags.
    let mut looks = 0u32;
    db.progress_handler(
        HERE_STEPS,
        Some(move || {
            looks += 1;
            let stop = looks > HERE_BUDGET / HERE_STEPS as u32;
            if stop {
                STOPPED.set(true);
            }
            stop
        }),
    )
    .ok()?;
    let restore = Restore(db);
    db.busy_handler(Some(refuse_busy)).ok()?;
    STOPPED.set(false);
    FOUND_BUSY.set(false);
    let result = f(db);
    drop(restore);
    (!STOPPED.replace(false) && !FOUND_BUSY.replace(false)).then_some(result)
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

    /// A pool on a fresh WAL file: one reader, and a writer with table
    /// `t`.
    fn file_pool(dir: &tempfile::TempDir) -> (Pool, std::path::PathBuf) {
        let path = dir.path().join("pool.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER)")
            .unwrap();
        let reader = Connection::open(&path).unwrap();
        reader.busy_timeout(BUSY_TIMEOUT).unwrap();
        (Pool::new(vec![reader], Some(writer)), path)
    }

    /// Counts to `n` in SQL: about 3 SQLite steps per row.
    fn count_to(n: u64) -> String {
        format!(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT {n}) \
             SELECT count(*) FROM c"
        )
    }

    #[test]
    fn a_short_read_runs_here_and_a_long_one_is_stopped_for_a_blocking_thread() {
        let dir = tempfile::tempdir().unwrap();
        let (pool, _) = file_pool(&dir);
        let short =
            pool.try_read_here(|db| db.query_row(&count_to(100), [], |r| r.get::<_, i64>(0)));
        assert_eq!(short.unwrap().unwrap(), 100);
        let long = u64::from(HERE_BUDGET) * 10;
        let stopped =
            pool.try_read_here(|db| db.query_row(&count_to(long), [], |r| r.get::<_, i64>(0)));
        assert!(stopped.is_none(), "a query past the budget was not stopped");
        // The connection is back, without the budget: the same query
        // runs to its end where it may block.
        let finished = pool.with(|db| db.query_row(&count_to(long), [], |r| r.get::<_, i64>(0)));
        assert_eq!(finished.unwrap(), long as i64);
    }

    #[test]
    fn a_write_here_stopped_past_its_budget_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (pool, _) = file_pool(&dir);
        let rows = u64::from(HERE_BUDGET) * 10;
        let insert = format!(
            "INSERT INTO t (n) WITH RECURSIVE c(x) AS \
             (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT {rows}) SELECT x FROM c"
        );
        assert!(pool.try_write_here(|db| db.execute(&insert, [])).is_none());
        let count = |pool: &Pool| -> i64 {
            pool.with(|db| db.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)))
                .unwrap()
        };
        assert_eq!(count(&pool), 0, "the stopped insert was kept");
        // Run again with `write`, it completes.
        assert_eq!(
            pool.write(|db| db.execute(&insert, [])).unwrap(),
            rows as usize
        );
        assert_eq!(count(&pool), rows as i64);
    }

    #[test]
    fn a_write_here_does_not_wait_for_another_process_lock() {
        let dir = tempfile::tempdir().unwrap();
        let (pool, path) = file_pool(&dir);
        // Another process's transaction holds the write lock.
        let other = Connection::open(&path).unwrap();
        other
            .execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (1)")
            .unwrap();
        let started = std::time::Instant::now();
        assert!(pool
            .try_write_here(|db| db.execute("INSERT INTO t VALUES (2)", []))
            .is_none());
        // Refused, not waited out (the busy timeout is 5 s).
        assert!(started.elapsed() < BUSY_TIMEOUT);
        other.execute_batch("COMMIT").unwrap();
        // Once the lock is free, a write here goes through.
        let written = pool.try_write_here(|db| db.execute("INSERT INTO t VALUES (2)", []));
        assert_eq!(written.unwrap().unwrap(), 1);
        let rows: Vec<i64> = pool.with(|db| {
            let mut rows = db.prepare("SELECT n FROM t ORDER BY n").unwrap();
            let rows = rows.query_map([], |r| r.get(0)).unwrap();
            rows.collect::<Result<_, _>>().unwrap()
        });
        assert_eq!(rows, [1, 2]);
    }

    #[test]
    fn a_checkpoint_is_left_to_whoever_takes_it() {
        let dir = tempfile::tempdir().unwrap();
        let (pool, path) = file_pool(&dir);
        let file_size = || std::fs::metadata(&path).unwrap().len();
        // 5 MB is about 1,220 pages of WAL, past the checkpoint threshold.
        let blob = "INSERT INTO t VALUES (zeroblob(5000000))";
        let written = pool.try_write_here(|db| db.execute(blob, []));
        assert_eq!(written.unwrap().unwrap(), 1);
        // The commit did not checkpoint: the pages are in the WAL only.
        assert!(file_size() < 1_000_000, "checkpointed in the commit");
        assert!(pool.take_checkpoint());
        assert!(!pool.take_checkpoint(), "two checkpoints at once");
        pool.checkpoint();
        assert!(file_size() >= 5_000_000, "the checkpoint copied nothing");
        assert!(!pool.take_checkpoint());
        // `write` is blocking already: it runs the checkpoint itself.
        pool.write(|db| db.execute(blob, [])).unwrap();
        assert!(file_size() >= 10_000_000, "write left its checkpoint");
        assert!(!pool.take_checkpoint());
    }

    /// Writes as the store makes them: here when the writer is free, else
    /// blocking; a checkpoint made due here runs on a thread of its own,
    /// beside the writes that follow. How many checkpoints ran.
    fn write_while_checkpointing(pool: &Arc<Pool>, writes: usize, sql: &str) -> usize {
        let before = pool.checkpoints();
        let mut checkpoints = Vec::new();
        for _ in 0..writes {
            match pool.try_write_here(|db| db.execute(sql, [])) {
                Some(written) => assert_eq!(written.unwrap(), 1),
                None => assert_eq!(pool.write(|db| db.execute(sql, [])).unwrap(), 1),
            }
            if pool.take_checkpoint() {
                let pool = Arc::clone(pool);
                checkpoints.push(std::thread::spawn(move || pool.checkpoint()));
            }
        }
        checkpoints.into_iter().for_each(|c| c.join().unwrap());
        pool.checkpoints() - before
    }

    /// About 25 pages of WAL.
    const PAGES_25: &str = "INSERT INTO t VALUES (zeroblob(100000))";

    #[test]
    fn the_wal_starts_again_while_writes_keep_coming() {
        let dir = tempfile::tempdir().unwrap();
        let (pool, path) = file_pool(&dir);
        let pool = Arc::new(pool);
        // 400 writes append about 10,000 pages (40 MB) to the WAL.
        let checkpoints = write_while_checkpointing(&pool, 400, PAGES_25);
        let wal = std::fs::metadata(path.with_extension("db-wal"))
            .unwrap()
            .len();
        // Started again after each checkpoint, it stays near the threshold
        // (4 MB); never started again, it would hold all 40 MB.
        assert!(wal < 12_000_000, "the WAL grew to {wal} bytes");
        assert!(
            (5..=15).contains(&checkpoints),
            "{checkpoints} checkpoints for 10,000 pages"
        );
    }

    #[test]
    fn a_reader_holding_the_wal_does_not_make_every_commit_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let (pool, path) = file_pool(&dir);
        let pool = Arc::new(pool);
        write_while_checkpointing(&pool, 1, PAGES_25);
        // Another process's reader keeps its snapshot: no checkpoint can
        // copy past it, and the WAL cannot start again.
        let reader = Connection::open(&path).unwrap();
        reader
            .execute_batch("BEGIN; SELECT count(*) FROM t;")
            .unwrap();
        // About 5,000 pages: a checkpoint per 1,000, not one per commit
        // once the WAL is past 1,000.
        let checkpoints = write_while_checkpointing(&pool, 200, PAGES_25);
        assert!(
            (3..=7).contains(&checkpoints),
            "{checkpoints} checkpoints for 5,000 pages"
        );
        reader.execute_batch("COMMIT").unwrap();
    }
}
