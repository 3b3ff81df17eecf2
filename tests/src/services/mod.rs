//! The services the tests need — PostgreSQL, Redis, NATS with JetStream
//! and HAProxy — each the test binary's own: started on first use on a
//! free loopback port, shared by the tests of one binary (each under a key
//! prefix, database or stream of its own) and stopped when the binary
//! exits, however it exits. No test touches a machine-wide service, so two
//! runs at once (two clones) never meet, and the suite passes inside a
//! network namespace of its own (`scripts/test-isolated`).
//!
//! * [`redis`], [`nats`], [`postgres()`]: the binary's shared servers.
//! * [`Server::redis`], [`Server::nats`], [`PrivatePostgres::start`]: one
//!   test's own, for faults a shared one must never see (killed and
//!   started again mid-test); stopped when dropped.
//! * [`program`]: a server binary (e.g. `haproxy`, which the deployment
//!   script starts per deployment), found or a failed test.
//!
//! Every server is a child of one keeper thread that lives as long as the
//! process, and is started with a parent-death signal
//! (`PR_SET_PDEATHSIG`), so the kernel stops it when the test binary ends,
//! even on SIGKILL. (The signal follows the thread that spawned the child,
//! which is why no test thread spawns them.) A normal exit also removes the
//! shared servers' directories (an `atexit` hook); a directory that a
//! killed run left behind is removed by the next run.
//!
//! A missing binary fails the test with a message naming
//! `.ci/install-services` — never a silent skip.

pub mod postgres;

pub use postgres::{PrivatePostgres, StopMode};

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

/// The script that installs the services' binaries (Debian's packages).
pub const INSTALLER: &str = ".ci/install-services";

/// Where a server's directory is made: `<tmp>/gonk-service-<pid>-…`, the
/// pid telling the next run whether its owner is gone.
const DIR_PREFIX: &str = "gonk-service-";

/// How long a server may take to accept connections (a guard against a
/// hang on a loaded machine, not a timing assertion).
const READY_BOUND: Duration = Duration::from_secs(60);

/// The path of the server binary `name`, or a panic naming
/// [`INSTALLER`]. Looked up on `PATH`, then in `/usr/sbin` and
/// `/usr/local/sbin` (where Debian puts `nats-server` and `haproxy`, often
/// off a non-root `PATH`).
pub fn program(name: &str) -> PathBuf {
    find_program(name, std::env::var_os("PATH").as_deref())
        .unwrap_or_else(|message| panic!("{message}"))
}

/// [`program`] with the search path given: the binary, or what to run to
/// install it.
pub fn find_program(name: &str, path: Option<&OsStr>) -> Result<PathBuf, String> {
    let dirs = path
        .map(|path| std::env::split_paths(path).collect::<Vec<_>>())
        .unwrap_or_default();
    let found = dirs
        .iter()
        .map(PathBuf::as_path)
        .chain([Path::new("/usr/sbin"), Path::new("/usr/local/sbin")])
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate));
    found.ok_or_else(|| {
        format!(
            "the tests need `{name}` and it is not on PATH: run `bash {INSTALLER}` \
                 (as root it installs Debian's packages; otherwise it prints the command)"
        )
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// This test binary's Redis (no persistence), started on first use.
/// Tests sharing it keep their keys under a prefix of their own.
pub fn redis() -> &'static Server {
    static REDIS: OnceLock<Server> = OnceLock::new();
    shared(&REDIS, Server::redis)
}

/// This test binary's NATS with JetStream, started on first use. Tests
/// sharing it name their streams and buckets with a prefix of their own.
pub fn nats() -> &'static Server {
    static NATS: OnceLock<Server> = OnceLock::new();
    shared(&NATS, || Server::nats_storing(None))
}

/// This test binary's PostgreSQL, started on first use. Tests sharing it
/// make a database of their own ([`PrivatePostgres::create_database`]).
pub fn postgres() -> &'static PrivatePostgres {
    static POSTGRES: OnceLock<PrivatePostgres> = OnceLock::new();
    shared(&POSTGRES, PrivatePostgres::start)
}

/// Something the exit hook stops.
trait Shutdown: Sync {
    /// Stops it and removes its files; never panics (runs in `atexit`).
    fn shutdown(&self);
}

impl Shutdown for Server {
    fn shutdown(&self) {
        self.shutdown_quietly();
    }
}

/// The shared servers started so far, stopped by [`stop_shared`].
static STARTED: Mutex<Vec<&'static dyn Shutdown>> = Mutex::new(Vec::new());

fn shared<T: Shutdown + Send + 'static>(
    cell: &'static OnceLock<T>,
    start: impl FnOnce() -> T,
) -> &'static T {
    let mut fresh = false;
    let server = cell.get_or_init(|| {
        fresh = true;
        start()
    });
    if fresh {
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            // SAFETY: atexit(3) registers a plain function run at exit.
            unsafe { libc::atexit(stop_shared) };
        });
        STARTED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(server);
    }
    server
}

/// Stops the shared servers when the process exits normally (the kernel's
/// parent-death signal covers every other end).
extern "C" fn stop_shared() {
    let started = std::mem::take(&mut *STARTED.lock().unwrap_or_else(|p| p.into_inner()));
    for server in started {
        server.shutdown();
    }
}

/// A server process of the tests' own on 127.0.0.1, with a directory of
/// its own (log, data). One test's own stops when dropped; the shared ones
/// when the binary exits.
pub struct Server {
    name: &'static str,
    scheme: &'static str,
    program: PathBuf,
    args: Vec<OsString>,
    port: u16,
    dir: tempfile::TempDir,
    child: Mutex<Option<Child>>,
    /// Run as this user and group (PostgreSQL, which refuses root).
    user: Option<(libc::uid_t, libc::gid_t)>,
    /// What the kernel sends it when the test binary ends.
    death_signal: libc::c_int,
    /// Ready beyond listening (PostgreSQL: accepting connections).
    ready: fn(&Server, u32) -> bool,
}

/// What [`Server::spawn`] needs to know.
struct Spec {
    name: &'static str,
    scheme: &'static str,
    program: PathBuf,
    /// The arguments, `{port}` replaced by the port.
    args: Vec<OsString>,
    dir: tempfile::TempDir,
    user: Option<(libc::uid_t, libc::gid_t)>,
    death_signal: libc::c_int,
    ready: fn(&Server, u32) -> bool,
}

const PORT: &str = "{port}";

impl Server {
    /// A Redis of one test's own, without persistence.
    pub fn redis() -> Server {
        let dir = service_dir("redis");
        let args = [
            "--port",
            PORT,
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
        ]
        .map(OsString::from)
        .into_iter()
        .chain([dir.path().as_os_str().to_owned()])
        .collect();
        Server::start(Spec {
            name: "redis-server",
            scheme: "redis",
            program: program("redis-server"),
            args,
            dir,
            user: None,
            death_signal: libc::SIGKILL,
            ready: |_, _| true,
        })
    }

    /// A NATS server with JetStream of one test's own, its streams kept in
    /// `store` (so they survive [`Server::kill`] and
    /// [`Server::start_again`]).
    pub fn nats(store: &Path) -> Server {
        Server::nats_storing(Some(store))
    }

    /// A NATS server with JetStream, its streams in `store` or, without
    /// one, in its own directory.
    fn nats_storing(store: Option<&Path>) -> Server {
        let dir = service_dir("nats");
        let store = store.map_or_else(|| dir.path().join("jetstream"), Path::to_path_buf);
        let args = ["-a", "127.0.0.1", "-p", PORT, "-js", "-sd"]
            .map(OsString::from)
            .into_iter()
            .chain([store.into_os_string()])
            .collect();
        Server::start(Spec {
            name: "nats-server",
            scheme: "nats",
            program: program("nats-server"),
            args,
            dir,
            user: None,
            death_signal: libc::SIGKILL,
            ready: |_, _| true,
        })
    }

    /// Starts `spec` on a free port, another one when the port was taken in
    /// the meantime (another run on this machine), and waits until it is
    /// ready.
    fn start(spec: Spec) -> Server {
        let mut server = Server {
            name: spec.name,
            scheme: spec.scheme,
            program: spec.program,
            args: spec.args,
            port: 0,
            dir: spec.dir,
            child: Mutex::new(None),
            user: spec.user,
            death_signal: spec.death_signal,
            ready: spec.ready,
        };
        let mut failures = Vec::new();
        for _ in 0..5 {
            server.port = free_port();
            match server.try_start() {
                Ok(()) => return server,
                Err(failure) => failures.push(failure),
            }
        }
        panic!(
            "{} did not start on a free loopback port:\n{}",
            server.name,
            failures.join("\n")
        );
    }

    /// Starts it again on its port (after [`Server::kill`]).
    pub fn start_again(&self) {
        if let Err(failure) = self.try_start() {
            panic!("{} did not start again: {failure}", self.name);
        }
    }

    fn try_start(&self) -> Result<(), String> {
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.log_path())
            .map_err(|e| format!("its log: {e}"))?;
        let args = self.args.iter().map(|arg| {
            if arg == PORT {
                OsString::from(self.port.to_string())
            } else {
                arg.clone()
            }
        });
        let mut command = Command::new(&self.program);
        command
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| format!("its log: {e}"))?)
            .stderr(log);
        let child = spawn_kept(command, self.user, self.death_signal).map_err(|e| {
            format!(
                "{} could not run ({e}); `bash {INSTALLER}` installs it",
                self.program.display()
            )
        })?;
        let pid = child.id();
        *self.child.lock().unwrap_or_else(|p| p.into_inner()) = Some(child);
        let started = Instant::now();
        loop {
            if let Some(status) = self.exited() {
                return Err(format!(
                    "{} on port {} exited ({status}):\n{}",
                    self.name,
                    self.port,
                    self.log()
                ));
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() && (self.ready)(self, pid) {
                // Ours, not another run's that took the port: ours is
                // still running (a server that cannot bind exits).
                std::thread::sleep(Duration::from_millis(20));
                if self.exited().is_none() {
                    return Ok(());
                }
                continue;
            }
            if started.elapsed() > READY_BOUND {
                self.kill();
                return Err(format!(
                    "{} never became ready on port {}:\n{}",
                    self.name,
                    self.port,
                    self.log()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Its exit status, once it has exited.
    fn exited(&self) -> Option<std::process::ExitStatus> {
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        match child.as_mut().map(Child::try_wait) {
            Some(Ok(Some(status))) => {
                *child = None;
                Some(status)
            }
            Some(Ok(None)) => None,
            // Not started, or already waited for.
            None | Some(Err(_)) => Some(std::os::unix::process::ExitStatusExt::from_raw(0)),
        }
    }

    /// Stops it at once (SIGKILL, a crash) and waits until it is gone.
    pub fn kill(&self) {
        self.stop_with(libc::SIGKILL);
    }

    /// Sends it `signal` and waits (bounded at 60 s, then SIGKILL) until
    /// it has exited.
    pub fn stop_with(&self, signal: libc::c_int) {
        if !self.signal_and_wait(signal, READY_BOUND) {
            panic!("{} did not exit within {READY_BOUND:?}", self.name);
        }
    }

    /// Whether it exited within `bound` of `signal` (else it is killed).
    fn signal_and_wait(&self, signal: libc::c_int, bound: Duration) -> bool {
        let mut guard = self.child.lock().unwrap_or_else(|p| p.into_inner());
        let Some(mut child) = guard.take() else {
            return true;
        };
        if let Ok(pid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: kill(2) on our own child, not yet waited for.
            unsafe { libc::kill(pid, signal) };
        }
        let deadline = Instant::now() + bound;
        loop {
            match child.try_wait() {
                Ok(Some(_)) | Err(_) => return true,
                Ok(None) if Instant::now() > deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return false;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }

    /// Stops it (its death signal) and removes its directory; for the exit
    /// hook, so it never panics.
    fn shutdown_quietly(&self) {
        self.signal_and_wait(self.death_signal, Duration::from_secs(10));
        let _ = std::fs::remove_dir_all(self.dir.path());
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:PORT`, `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("{}://127.0.0.1:{}", self.scheme, self.port)
    }

    /// Its directory (log, data).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    /// What it has logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.signal_and_wait(self.death_signal, Duration::from_secs(10));
    }
}

/// A port free on loopback right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// A directory for a server, `<tmp>/gonk-service-<pid>-<what>…`; first
/// removes those of runs that are gone (killed before their exit hook).
fn service_dir(what: &str) -> tempfile::TempDir {
    static SWEPT: Once = Once::new();
    SWEPT.call_once(remove_orphaned_dirs);
    tempfile::Builder::new()
        .prefix(&format!("{DIR_PREFIX}{}-{what}-", std::process::id()))
        .tempdir()
        .expect("a temp dir for a test service")
}

fn remove_orphaned_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(DIR_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        // SAFETY: kill(2) with signal 0 only asks whether the pid exists.
        let gone = unsafe { libc::kill(pid, 0) } == -1
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Spawns `command` from the keeper thread, which lives as long as the
/// process, with `death_signal` as its parent-death signal, as `user` when
/// given.
fn spawn_kept(
    mut command: Command,
    user: Option<(libc::uid_t, libc::gid_t)>,
    death_signal: libc::c_int,
) -> std::io::Result<Child> {
    static KEEPER: OnceLock<mpsc::Sender<SpawnRequest>> = OnceLock::new();
    let keeper = KEEPER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("test-services".into())
            .spawn(move || {
                // Ends only with the process: the static keeps a sender.
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
            })
            .expect("the test-services thread starts");
        tx
    });
    let parent = std::process::id();
    // SAFETY: the closure runs between fork and exec and calls only
    // async-signal-safe functions (setgroups, setgid, setuid, prctl,
    // getppid), with no allocation.
    unsafe {
        command.pre_exec(move || {
            if let Some((uid, gid)) = user {
                if libc::setgroups(1, &gid) != 0 || libc::setgid(gid) != 0 || libc::setuid(uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            // After the user change, which clears it.
            if libc::prctl(libc::PR_SET_PDEATHSIG, death_signal as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The test binary already gone: the signal would never come.
            if libc::getppid() as u32 != parent {
                return Err(std::io::Error::other("the test binary has exited"));
            }
            Ok(())
        });
    }
    let (reply, answer) = mpsc::channel();
    keeper
        .send((command, reply))
        .map_err(|_| std::io::Error::other("the test-services thread is gone"))?;
    answer
        .recv()
        .map_err(|_| std::io::Error::other("the test-services thread is gone"))?
}

/// Has the kernel send `command`'s process SIGTERM when the thread that
/// spawns it ends: for a process one test starts and stops itself (the
/// deployment script and its HAProxy), so that a killed test binary leaves
/// nothing running.
pub fn terminate_with_spawning_thread(command: &mut Command) {
    let parent = std::process::id();
    // SAFETY: prctl and getppid are async-signal-safe; nothing allocates.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() as u32 != parent {
                return Err(std::io::Error::other("the test binary has exited"));
            }
            Ok(())
        });
    }
}

/// Runs `command` to its end as `user` (PostgreSQL's `initdb`), killed if
/// the test binary ends first.
fn run_kept(
    mut command: Command,
    user: Option<(libc::uid_t, libc::gid_t)>,
) -> std::io::Result<std::process::Output> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    spawn_kept(command, user, libc::SIGKILL)?.wait_with_output()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_server_binary_names_the_installer() {
        let empty = tempfile::tempdir().unwrap();
        let message = find_program("redis-server", Some(empty.path().as_os_str())).unwrap_err();
        assert!(message.contains(".ci/install-services"), "{message}");
        assert!(message.contains("redis-server"), "{message}");
    }

    #[test]
    fn a_server_binary_on_the_path_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("redis-server");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            find_program("redis-server", Some(dir.path().as_os_str())).unwrap(),
            fake
        );
    }
}
