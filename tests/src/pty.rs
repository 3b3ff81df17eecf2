//! A process on a real terminal: a pseudo-terminal opened by the test is
//! the child's stdin, stdout and stderr, and the test types into it and
//! reads what the child shows, as a person at that terminal would.
#![cfg(target_os = "linux")]

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::process::wait_with_bound;

/// A pseudo-terminal: (controller, the terminal end the child uses).
pub fn open() -> (File, File) {
    // SAFETY: plain libc calls on descriptors we own; ptsname_r writes at
    // most `buf.len()` bytes.
    unsafe {
        let controller = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(controller >= 0, "posix_openpt failed");
        assert_eq!(libc::grantpt(controller), 0);
        assert_eq!(libc::unlockpt(controller), 0);
        let mut buf = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(controller, buf.as_mut_ptr(), buf.len()), 0);
        let terminal = libc::open(buf.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
        assert!(terminal >= 0, "opening the terminal end failed");
        (
            File::from(OwnedFd::from_raw_fd(controller)),
            File::from(OwnedFd::from_raw_fd(terminal)),
        )
    }
}

/// A child running with all three standard streams on a terminal.
pub struct OnTerminal {
    child: Child,
    keys: File,
    screen: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl OnTerminal {
    /// Starts `command` on a fresh terminal.
    pub fn spawn(mut command: Command) -> OnTerminal {
        let (controller, terminal) = open();
        let child = command
            .stdin(terminal.try_clone().expect("dup"))
            .stdout(terminal.try_clone().expect("dup"))
            .stderr(terminal)
            .spawn()
            .expect("the command starts");
        let keys = controller.try_clone().expect("dup");
        let screen = Arc::new(Mutex::new(Vec::new()));
        let shown = Arc::clone(&screen);
        // Read while it runs (a full terminal buffer would block it); the
        // read ends with EIO once the child's descriptors are all closed.
        let reader = std::thread::spawn(move || {
            let mut controller = controller;
            let mut chunk = [0u8; 4096];
            while let Ok(n) = controller.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                shown.lock().unwrap().extend_from_slice(&chunk[..n]);
            }
        });
        OnTerminal {
            child,
            keys,
            screen,
            reader: Some(reader),
        }
    }

    /// Everything shown so far (stdout, stderr and the echo of typed keys).
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().unwrap()).into_owned()
    }

    /// Waits until the screen shows `text` (at most `bound`: a guard
    /// against a hang, not a timing check).
    pub fn wait_for(&mut self, text: &str, bound: Duration) {
        let deadline = Instant::now() + bound;
        while !self.screen().contains(text) {
            if Instant::now() > deadline || matches!(self.child.try_wait(), Ok(Some(_))) {
                // One last look: the text may have arrived as it exited.
                if self.screen().contains(text) {
                    return;
                }
                let _ = self.child.kill();
                panic!(
                    "the terminal never showed {text:?}; it shows:\n{}",
                    self.screen()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Types `keys` (a line ends with `\n`; `\u{4}` at a line's start is
    /// Ctrl-D, the end of input).
    pub fn type_keys(&mut self, keys: &str) {
        self.keys.write_all(keys.as_bytes()).expect("typing");
        self.keys.flush().expect("typing");
    }

    /// Waits for the child to exit (at most `bound`) and returns its
    /// status and the whole screen.
    pub fn finish(mut self, bound: Duration) -> (ExitStatus, String) {
        let status = wait_with_bound(&mut self.child, bound);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        let screen = String::from_utf8_lossy(&self.screen.lock().unwrap()).into_owned();
        (status, screen)
    }
}

impl Drop for OnTerminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
