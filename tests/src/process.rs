//! Processes the tests start: a server that prints its URL, signals, and
//! bounded waits (guards against a hang, not timing assertions).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// This test binary run again for one test alone, in a process of its own:
/// `test` (an ignored one, so it runs only when asked) of the module at
/// `module_path` (`module_path!()`). For a test whose process-wide state
/// (the environment, a tracing subscriber's interest cache) other tests'
/// threads would share.
pub fn alone(module_path: &str, test: &str) -> Command {
    // The harness names a test by its module path without the crate's name.
    let name = match module_path.split_once("::") {
        Some((_, module)) => format!("{module}::{test}"),
        None => test.to_owned(),
    };
    let mut command = Command::new(std::env::current_exe().expect("the test binary's path"));
    command.args(["--exact", &name, "--include-ignored", "--nocapture"]);
    command
}

/// A server process that prints `... serving MCP at URL` on stderr. Killed
/// when dropped.
pub struct ServerProcess {
    child: Child,
    /// The endpoint URL it printed.
    pub url: String,
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl ServerProcess {
    /// Starts `command` and waits for its URL line (its stderr is then
    /// forwarded to ours).
    pub fn start(command: Command) -> ServerProcess {
        ServerProcess::start_announcing(command, "serving MCP at ")
    }

    /// Starts `command` and waits for the stderr line where `announce` is
    /// followed by its URL (an HTTP API's `serving HTTP at `).
    pub fn start_announcing(mut command: Command, announce: &'static str) -> ServerProcess {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = std::sync::Arc::clone(&lines);
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !sent {
                    if let Some(url) = line.split(announce).nth(1) {
                        let _ = tx.send(url.trim().to_owned());
                        sent = true;
                        continue;
                    }
                }
                eprintln!("[server] {line}");
                kept.lock().unwrap_or_else(|p| p.into_inner()).push(line);
            }
        });
        let url = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                panic!("the server never printed its URL");
            }
        };
        ServerProcess { child, url, lines }
    }

    /// The host and port of its URL.
    pub fn addr(&self) -> std::net::SocketAddr {
        let rest = self.url.split("://").nth(1).unwrap_or(&self.url);
        let authority = rest.split('/').next().unwrap_or(rest);
        authority
            .parse()
            .unwrap_or_else(|_| panic!("{} names no socket address", self.url))
    }

    /// The lines it has printed on stderr after its URL line, so far.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.lines.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether it is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends it SIGTERM.
    #[cfg(unix)]
    pub fn terminate(&self) {
        signal(&self.child, libc::SIGTERM);
    }

    /// Sends it `sig` (SIGKILL for a crash).
    #[cfg(unix)]
    pub fn signal(&self, sig: libc::c_int) {
        signal(&self.child, sig);
    }

    /// Waits for it to exit (see [`wait_with_bound`]).
    pub fn wait(&mut self, bound: Duration) -> std::process::ExitStatus {
        wait_with_bound(&mut self.child, bound)
    }
}

/// Sends `signal` to `child`.
#[cfg(unix)]
pub fn signal(child: &Child, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    // SAFETY: kill(2) with a pid we spawned; no memory is involved.
    let rc = unsafe { libc::kill(pid, signal) };
    assert_eq!(rc, 0, "kill({pid}, {signal}) failed");
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits (bounded) until `path` holds some text, and returns it.
pub fn wait_for_file(path: &Path, within: Duration) -> Option<String> {
    let deadline = Instant::now() + within;
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if !text.is_empty() {
                return Some(text);
            }
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for `child` to exit; kills it and panics if it is still running
/// after `bound` (a guard against a hang, not a timing assertion).
pub fn wait_with_bound(child: &mut Child, bound: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the process did not exit within {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
