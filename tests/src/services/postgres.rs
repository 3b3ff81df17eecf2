//! A PostgreSQL server of the tests' own: `initdb` in a temp directory,
//! `postgres` (a child of the tests, not a daemon `pg_ctl` leaves behind)
//! on a free loopback port with trust auth and its unix socket in that
//! directory.
//!
//! PostgreSQL refuses to run as root, so as root (the CI machines) the
//! server runs as the `postgres` OS user, which Debian's packages create;
//! as another user it runs as that user. The binaries are found in
//! `GONK_TESTS_PG_BINDIR` when set, else next to an `initdb` on `PATH`,
//! else in Debian's `/usr/lib/postgresql/<newest>/bin`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::{program, run_kept, service_dir, Server, Shutdown, Spec, INSTALLER, PORT};

/// How the server is stopped.
#[derive(Clone, Copy, Debug)]
pub enum StopMode {
    /// SIGINT, `pg_ctl -m fast`: open transactions are rolled back, every
    /// connection is ended (`57P01 admin_shutdown`), a clean shutdown.
    Fast,
    /// SIGQUIT, `pg_ctl -m immediate`: every process quits at once, as in
    /// a crash; the next start replays the WAL.
    Immediate,
}

/// A PostgreSQL server of the tests' own; one test's own is stopped
/// (immediately) and its data removed when dropped.
pub struct PrivatePostgres {
    server: Server,
}

impl PrivatePostgres {
    /// Creates a cluster and starts it; panics with what is missing when it
    /// cannot (the binaries, the `postgres` user).
    pub fn start() -> PrivatePostgres {
        let bindir = bindir();
        // SAFETY: geteuid(2) reads the process's effective user id.
        let user = if unsafe { libc::geteuid() } == 0 {
            Some(postgres_user())
        } else {
            None
        };
        let dir = service_dir("postgres");
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .expect("the private PostgreSQL's directory is given to the postgres user");
        }
        let data = dir.path().join("data");
        let mut initdb = Command::new(bindir.join("initdb"));
        initdb
            .arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", "postgres", "-E", "UTF8"])
            // A throwaway cluster: no fsync of the files initdb writes.
            .arg("--no-sync")
            .current_dir(dir.path());
        let initdb = run_kept(initdb, user).expect("initdb runs");
        assert!(
            initdb.status.success(),
            "initdb of a private PostgreSQL failed: {}",
            String::from_utf8_lossy(&initdb.stderr)
        );
        let args: Vec<OsString> = [
            OsString::from("-D"),
            data.into_os_string(),
            "-p".into(),
            PORT.into(),
            "-k".into(),
            dir.path().as_os_str().to_owned(),
            "-c".into(),
            "listen_addresses=127.0.0.1".into(),
            // Crash recovery is still tested (the OS keeps the writes);
            // only a power cut would lose them.
            "-c".into(),
            "fsync=off".into(),
            // Three replicas' pools per deployment, two deployments at once.
            "-c".into(),
            "max_connections=200".into(),
        ]
        .into();
        PrivatePostgres {
            server: Server::start(Spec {
                name: "postgres",
                scheme: "postgres",
                program: bindir.join("postgres"),
                args,
                dir,
                user,
                // Its immediate shutdown: the children go too, and the
                // shared memory is released.
                death_signal: libc::SIGQUIT,
                ready: accepts_connections,
            }),
        }
    }

    /// Starts the server again (after [`PrivatePostgres::stop`]) on its
    /// port and waits until it accepts connections (bounded at 60 s).
    pub fn start_again(&self) {
        self.server.start_again();
    }

    /// Stops the server and waits until it is down (bounded at 60 s).
    pub fn stop(&self, mode: StopMode) {
        self.server.stop_with(match mode {
            StopMode::Fast => libc::SIGINT,
            StopMode::Immediate => libc::SIGQUIT,
        });
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// The URL of `database` on it, as user `postgres`.
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/{database}",
            self.server.port()
        )
    }

    /// Runs `statement` with `psql` on its `postgres` database.
    pub fn psql(&self, statement: &str) -> Output {
        self.psql_on("postgres", statement)
    }

    /// Runs `statement` with `psql` on `database`, unaligned and tuples
    /// only (`-At`: one row a line, columns split by `|`).
    pub fn psql_on(&self, database: &str, statement: &str) -> Output {
        Command::new(program("psql"))
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
            .arg(self.port().to_string())
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

    /// Drops `database`, ending its connections; errors are ignored (for
    /// guards that run when a test failed).
    pub fn drop_database(&self, database: &str) {
        let _ = self.psql(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"));
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        self.server.log()
    }

    /// Its temp directory (data, socket, log).
    pub fn dir(&self) -> &Path {
        self.server.dir()
    }
}

impl Shutdown for PrivatePostgres {
    fn shutdown(&self) {
        self.server.shutdown_quietly();
    }
}

/// Ready when the running postmaster (`pid`) says so in `postmaster.pid`
/// (its eighth line, what `pg_ctl -w` waits for): past recovery,
/// accepting connections.
fn accepts_connections(server: &Server, pid: u32) -> bool {
    let Ok(text) = std::fs::read_to_string(server.dir().join("data").join("postmaster.pid")) else {
        return false;
    };
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines.first() == Some(&pid.to_string().as_str()) && lines.get(7) == Some(&"ready")
}

/// The directory holding `initdb` and `postgres`.
fn bindir() -> PathBuf {
    let has_both = |dir: &Path| dir.join("initdb").is_file() && dir.join("postgres").is_file();
    if let Some(dir) = std::env::var_os("GONK_TESTS_PG_BINDIR") {
        let dir = PathBuf::from(dir);
        assert!(
            has_both(&dir),
            "GONK_TESTS_PG_BINDIR={} holds no initdb and postgres",
            dir.display()
        );
        return dir;
    }
    // An initdb on PATH (maybe a link, as Debian's postgresql-common
    // does not make one) next to its postgres.
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|dir| std::fs::canonicalize(dir.join("initdb")).ok())
        .filter_map(|initdb| initdb.parent().map(Path::to_path_buf))
        .find(|dir| has_both(dir));
    if let Some(dir) = on_path {
        return dir;
    }
    // Debian's: /usr/lib/postgresql/<version>/bin, the newest.
    let mut debian: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, dir)| has_both(dir))
        .collect();
    debian.sort();
    debian.pop().map(|(_, dir)| dir).unwrap_or_else(|| {
        panic!(
            "the tests need PostgreSQL's server binaries (initdb, postgres), found neither \
             on PATH nor in /usr/lib/postgresql/<version>/bin: run `bash {INSTALLER}` \
             (or set GONK_TESTS_PG_BINDIR to the directory holding them)"
        )
    })
}

/// The `postgres` OS user's ids (the server refuses to run as root).
fn postgres_user() -> (libc::uid_t, libc::gid_t) {
    // SAFETY: getpwnam(3) with a NUL-terminated name; the fields are read
    // before any other call could reuse its static buffer.
    let entry = unsafe { libc::getpwnam(c"postgres".as_ptr()) };
    assert!(
        !entry.is_null(),
        "as root the private PostgreSQL runs as the `postgres` OS user, and there is none \
         here: run `bash {INSTALLER}` (Debian's postgresql package creates it), or run the \
         tests as another user"
    );
    // SAFETY: not null, checked above.
    unsafe { ((*entry).pw_uid, (*entry).pw_gid) }
}
