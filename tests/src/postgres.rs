//! A PostgreSQL server of one test's own, for faults the machine's shared
//! server must never see (stopped and started again mid-test): `initdb` in
//! a temp directory, `postgres` on a free loopback port with trust auth and
//! its unix socket in that directory, stopped and removed when dropped.
//!
//! PostgreSQL refuses to run as root, so as root (the CI machines) the
//! server runs as the `postgres` OS user (`runuser -u postgres`), which the
//! Debian packages create; as another user it runs as that user. The
//! binaries are PostgreSQL 15's (`/usr/lib/postgresql/15/bin`) unless
//! `GONK_TESTS_PG_BINDIR` names another directory.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Where the server binaries are unless `GONK_TESTS_PG_BINDIR` says.
const DEFAULT_BINDIR: &str = "/usr/lib/postgresql/15/bin";

/// How `pg_ctl stop` ends the server.
#[derive(Clone, Copy, Debug)]
pub enum StopMode {
    /// `-m fast`: open transactions are rolled back, every connection is
    /// ended (`57P01 admin_shutdown`), a clean shutdown.
    Fast,
    /// `-m immediate`: every process quits at once, as in a crash; the next
    /// start replays the WAL.
    Immediate,
}

impl StopMode {
    fn flag(self) -> &'static str {
        match self {
            StopMode::Fast => "fast",
            StopMode::Immediate => "immediate",
        }
    }
}

/// A private PostgreSQL server, stopped (`-m immediate`) and its data
/// removed when dropped.
pub struct PrivatePostgres {
    bindir: PathBuf,
    /// Owns the data directory, the socket and the log.
    dir: tempfile::TempDir,
    port: u16,
    /// Whether the server runs as the `postgres` OS user (we are root).
    as_postgres_user: bool,
}

impl PrivatePostgres {
    /// Creates a cluster and starts it; panics with what is missing when it
    /// cannot (the binaries, the `postgres` user).
    pub fn start() -> PrivatePostgres {
        let bindir = std::env::var_os("GONK_TESTS_PG_BINDIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_BINDIR));
        for tool in ["initdb", "pg_ctl", "postgres"] {
            assert!(
                bindir.join(tool).is_file(),
                "a private PostgreSQL needs {} (Debian's postgresql-15 package); \
                 set GONK_TESTS_PG_BINDIR to the directory holding initdb, pg_ctl and postgres",
                bindir.join(tool).display()
            );
        }
        // SAFETY: geteuid(2) reads the process's effective user id.
        let as_postgres_user = unsafe { libc::geteuid() } == 0;
        let dir = tempfile::Builder::new()
            .prefix("gonk-private-pg-")
            .tempdir()
            .expect("a temp dir for the private PostgreSQL");
        if as_postgres_user {
            let chown = Command::new("chown")
                .args(["postgres:postgres"])
                .arg(dir.path())
                .output()
                .expect("chown runs");
            assert!(
                chown.status.success(),
                "a private PostgreSQL runs as the `postgres` OS user when the tests run as root, \
                 and there is none here (chown: {}); install Debian's postgresql package, \
                 which creates it, or run the tests as another user",
                String::from_utf8_lossy(&chown.stderr).trim()
            );
        }
        let server = PrivatePostgres {
            bindir,
            dir,
            port: free_port(),
            as_postgres_user,
        };
        let initdb = server.run(
            "initdb",
            &[
                "-D".as_ref(),
                server.data().as_os_str(),
                "-A".as_ref(),
                "trust".as_ref(),
                "-U".as_ref(),
                "postgres".as_ref(),
                "-E".as_ref(),
                "UTF8".as_ref(),
                // A throwaway cluster: no fsync of the files initdb writes.
                "--no-sync".as_ref(),
            ],
        );
        assert!(
            initdb.status.success(),
            "initdb of a private PostgreSQL failed: {}",
            String::from_utf8_lossy(&initdb.stderr)
        );
        server.start_again();
        server
    }

    /// The data directory.
    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Runs one of the server binaries, as the `postgres` user when we are
    /// root.
    fn run(&self, tool: &str, args: &[&std::ffi::OsStr]) -> Output {
        let program = self.bindir.join(tool);
        let mut command = if self.as_postgres_user {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&program);
            command
        } else {
            Command::new(&program)
        };
        command
            .args(args)
            // Neither the server nor pg_ctl may hold the test's pipes.
            .stdin(Stdio::null())
            .current_dir(self.dir.path())
            .output()
            .unwrap_or_else(|e| panic!("{} runs: {e}", program.display()))
    }

    /// Starts the server (again, after [`PrivatePostgres::stop`]) on its
    /// port and waits until it accepts connections (`pg_ctl -w`, bounded
    /// at 60 s).
    pub fn start_again(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("postgres.log");
        let started = self.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                self.data().as_os_str(),
                "-l".as_ref(),
                log.as_os_str(),
                "-w".as_ref(),
                "-t".as_ref(),
                "60".as_ref(),
                "-o".as_ref(),
                options.as_ref(),
                "start".as_ref(),
            ],
        );
        assert!(
            started.status.success(),
            "the private PostgreSQL did not start: {}{}\n{}",
            String::from_utf8_lossy(&started.stdout),
            String::from_utf8_lossy(&started.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// Stops the server and waits until it is down (bounded at 60 s).
    pub fn stop(&self, mode: StopMode) {
        let stopped = self.pg_ctl_stop(mode);
        assert!(
            stopped.status.success(),
            "the private PostgreSQL did not stop: {}",
            String::from_utf8_lossy(&stopped.stderr)
        );
    }

    fn pg_ctl_stop(&self, mode: StopMode) -> Output {
        self.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                self.data().as_os_str(),
                "-m".as_ref(),
                mode.flag().as_ref(),
                "-w".as_ref(),
                "-t".as_ref(),
                "60".as_ref(),
                "stop".as_ref(),
            ],
        )
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of `database` on it, as user `postgres`.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// Runs `statement` with `psql` on its `postgres` database.
    pub fn psql(&self, statement: &str) -> Output {
        self.psql_on("postgres", statement)
    }

    /// Runs `statement` with `psql` on `database`, unaligned and tuples
    /// only (`-At`: one row a line, columns split by `|`).
    pub fn psql_on(&self, database: &str, statement: &str) -> Output {
        Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
            ])
            .arg("-p")
            .arg(self.port.to_string())
            .arg("-d")
            .arg(database)
            .arg("-c")
            .arg(statement)
            .stdin(Stdio::null())
            .output()
            .expect("psql runs (PostgreSQL's client)")
    }

    /// Creates `database` and returns its URL.
    pub fn create_database(&self, database: &str) -> String {
        let created = self.psql(&format!("CREATE DATABASE {database}"));
        assert!(
            created.status.success(),
            "CREATE DATABASE {database} on the private PostgreSQL: {}",
            String::from_utf8_lossy(&created.stderr)
        );
        self.url(database)
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("postgres.log")).unwrap_or_default()
    }

    /// Its temp directory (data, socket, log).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        // Already stopped is fine; the directory goes with `dir`.
        let _ = self.pg_ctl_stop(StopMode::Immediate);
    }
}

/// A port free on loopback right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}
