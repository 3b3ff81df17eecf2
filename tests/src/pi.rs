//! The real Pi CLI (installed once by `.ci/install-pi`), run offline in
//! JSON mode with a scripted model, and what it handed back to the model.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::workspace::root;

/// Where `.ci/install-pi` puts Pi: a Node project with
/// `@mariozechner/pi-coding-agent` and `@mariozechner/pi-ai`.
pub fn pi_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = root().join("target").join("pi");
        let status = Command::new("bash")
            .arg(root().join(".ci").join("install-pi"))
            .env("PI_DIR", &dir)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .status()
            .expect("bash runs .ci/install-pi");
        assert!(
            status.success(),
            ".ci/install-pi failed: the Pi tests need node and npm (run `bash .ci/install-pi` to see why)"
        );
        dir
    })
}

/// Copies a file of `tests/pi/` next to Pi's `node_modules` (so its imports
/// resolve to the installed packages) and returns the copy.
pub fn pi_script(name: &str) -> PathBuf {
    let copy = pi_dir().join(name);
    // Written aside and renamed: a Pi started by a parallel test never
    // reads a half-written copy.
    static COPIES: AtomicUsize = AtomicUsize::new(0);
    let n = COPIES.fetch_add(1, Ordering::Relaxed);
    let aside = pi_dir().join(format!(".{name}.{}.{n}", std::process::id()));
    std::fs::copy(root().join("tests").join("pi").join(name), &aside)
        .expect("copy the script next to node_modules");
    std::fs::rename(&aside, &copy).expect("move the copy in place");
    copy
}

/// One turn of the scripted model: the tools it calls, by Pi name.
pub fn turn(calls: &[(&str, Value)]) -> Value {
    Value::Array(
        calls
            .iter()
            .map(|(tool, args)| serde_json::json!({"tool": tool, "args": args}))
            .collect(),
    )
}

/// A Pi run: the JSON events it printed, and its stderr.
pub struct PiRun {
    /// Exit status code.
    pub code: Option<i32>,
    /// Every JSON line of stdout.
    pub events: Vec<Value>,
    /// Its stderr.
    pub stderr: String,
    /// The tools' log lines, as Pi's event bus carried them
    /// (`gonk-tools:log`).
    pub logs: Vec<Value>,
}

/// A tool result as Pi handed it back to the model.
#[derive(Debug)]
pub struct HandedBack {
    /// The Pi tool name.
    pub tool: String,
    /// Pi's error flag.
    pub is_error: bool,
    /// The content items.
    pub content: Vec<Value>,
    /// The details.
    pub details: Value,
}

impl HandedBack {
    /// The text items, joined by newlines.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl PiRun {
    /// The tool results Pi added to the conversation (what the model reads
    /// next), in order.
    pub fn tool_results(&self) -> Vec<HandedBack> {
        self.events
            .iter()
            .filter(|e| e["type"] == "message_end" && e["message"]["role"] == "toolResult")
            .map(|e| {
                let m = &e["message"];
                HandedBack {
                    tool: m["toolName"].as_str().unwrap_or_default().to_owned(),
                    is_error: m["isError"].as_bool().unwrap_or(false),
                    content: m["content"].as_array().cloned().unwrap_or_default(),
                    details: m["details"].clone(),
                }
            })
            .collect()
    }

    /// The one result of `tool`.
    pub fn result_of(&self, tool: &str) -> HandedBack {
        let mut results: Vec<HandedBack> = self
            .tool_results()
            .into_iter()
            .filter(|r| r.tool == tool)
            .collect();
        assert_eq!(results.len(), 1, "one result of {tool}: {results:?}");
        results.remove(0)
    }

    /// The partial results Pi got from `tool`'s `onUpdate`.
    pub fn updates_of(&self, tool: &str) -> Vec<Value> {
        self.events
            .iter()
            .filter(|e| e["type"] == "tool_execution_update" && e["toolName"] == tool)
            .map(|e| e["partialResult"].clone())
            .collect()
    }

    /// What the model said last.
    pub fn last_assistant(&self) -> Value {
        self.events
            .iter()
            .rev()
            .find(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
            .map(|e| e["message"].clone())
            .unwrap_or(Value::Null)
    }
}

/// The real Pi, offline, as every test runs it: in `mode` (`json`, `rpc`),
/// with nothing discovered from the machine (no sessions, extensions,
/// skills, prompt templates, themes, context files or built-in tools), the
/// scripted model playing `script` (`{"turns": …}`) and `extension` loaded;
/// its home, agent directory and log file in `home`.
pub fn pi_command(
    mode: &str,
    extension: &Path,
    home: &Path,
    script: &serde_json::Value,
) -> Command {
    let cli = pi_dir().join("node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
    let mut command = Command::new("node");
    command
        .arg(cli)
        .args([
            "--mode",
            mode,
            "--no-session",
            "--no-extensions",
            "--no-skills",
        ])
        .args(["--no-prompt-templates", "--no-themes", "--no-context-files"])
        .args([
            "--no-builtin-tools",
            "--provider",
            "gonk-faux",
            "--model",
            "scripted",
        ])
        .arg("-e")
        .arg(pi_script("scripted_model.ts"))
        .arg("-e")
        .arg(extension)
        .current_dir(home)
        .env("GONK_PI_SCRIPT", script.to_string())
        .env("GONK_PI_LOG_FILE", home.join("logs.jsonl"))
        .env("PI_OFFLINE", "1")
        .env("PI_CODING_AGENT_DIR", home.join("agent"));
    command
}

/// Runs Pi once, offline, in JSON mode: no session file, no built-in tools,
/// nothing discovered from the machine — only the scripted model
/// (`tests/pi/scripted_model.ts`, playing `turns`, aborting on the first
/// update of `abort_on`) and `extension`. `envs` reach Pi and so the bridge
/// it starts.
pub fn run_pi(
    extension: &Path,
    turns: &[Value],
    abort_on: Option<&str>,
    envs: &[(&str, &str)],
) -> PiRun {
    let home = tempfile::tempdir().expect("a temporary Pi home");
    let script = serde_json::json!({"turns": turns, "abortOn": abort_on});
    let mut command = pi_command("json", extension, home.path(), &script);
    command
        .arg("Use the tools.")
        .stdin(Stdio::null())
        // Files, not pipes: nothing blocks Pi while the test waits.
        .stdout(std::fs::File::create(home.path().join("stdout")).unwrap())
        .stderr(std::fs::File::create(home.path().join("stderr")).unwrap());
    for (key, value) in envs {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("node runs Pi");
    // Pi never needs long here; a hang must not hang the suite.
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for Pi") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = std::fs::read_to_string(home.path().join("stdout")).unwrap_or_default();
    let stderr = std::fs::read_to_string(home.path().join("stderr")).unwrap_or_default();
    let Some(status) = status else {
        panic!("Pi did not finish within 180 s\nstdout:\n{stdout}\nstderr:\n{stderr}");
    };
    let events = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("Pi printed {l}: {e}")))
        .collect();
    let logs = std::fs::read_to_string(home.path().join("logs.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON log line"))
        .collect();
    PiRun {
        code: status.code(),
        events,
        stderr,
        logs,
    }
}
