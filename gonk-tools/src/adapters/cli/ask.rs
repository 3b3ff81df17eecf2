//! Asking on the terminal: the CLI's [`Asker`]. An elicitation (a tool's
//! `ctx.elicit`, or an approval the provider hands to the caller) becomes
//! a form on stderr, answered line by line on stdin (see [`super::form`]).
//!
//! * Only when stdin and stderr are both terminals: otherwise nobody could
//!   see or answer the prompt, so `can_ask` is false and a question is
//!   refused at once (`INPUT_UNAVAILABLE`; an approval stays
//!   `APPROVAL_REQUIRED`). The CLI never waits on a pipe.
//! * Forms only: the command line has no model to sample from and no
//!   roots to offer, so sampling and roots are refused at once.
//! * The wait is bounded ([`super::Cli::ask_timeout`]): past it the
//!   question ends with [`AskError::TimedOut`] and the call gets the
//!   answer it would have had without asking.

use std::io::{BufRead, IsTerminal};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::mpsc;

use super::form::{Fed, Form, CANCEL, DECLINE};
use super::render::Renderer;
use super::terminal;
use crate::ask::{AskError, Asker, InputKind, InputRequest};

/// How long the CLI waits for an answer unless
/// [`Cli::ask_timeout`](super::Cli::ask_timeout) says otherwise.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Lines read from stdin by one thread for the whole process: a blocking
/// read cannot be cancelled, so the thread outlives a prompt that timed
/// out, and the next prompt reads from the same place. `None` is the end
/// of input.
struct Lines {
    rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<Option<String>>>,
}

fn lines() -> &'static Lines {
    static LINES: OnceLock<Lines> = OnceLock::new();
    LINES.get_or_init(|| {
        let (tx, rx) = mpsc::unbounded_channel();
        // A plain thread, not `spawn_blocking`: a runtime waits for its
        // blocking tasks when it shuts down, and this read may never end.
        let started = std::thread::Builder::new()
            .name("gonk-cli-stdin".into())
            .spawn(move || {
                let stdin = std::io::stdin();
                let mut stdin = stdin.lock();
                loop {
                    let mut line = String::new();
                    match stdin.read_line(&mut line) {
                        Ok(0) | Err(_) => {
                            let _ = tx.send(None);
                            return;
                        }
                        Ok(_) => {
                            if tx.send(Some(line)).is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        if started.is_err() {
            // No reader: every prompt sees the end of input (a cancel).
            tracing::warn!(target: "gonk_tools::cli", "stdin cannot be read for prompts");
        }
        Lines {
            rx: tokio::sync::Mutex::new(rx),
        }
    })
}

/// The CLI's asker for one call.
pub(crate) struct TerminalAsker {
    timeout: Duration,
    interactive: bool,
    /// The call's renderer: its progress bar is cleared before a prompt.
    renderer: Arc<Mutex<Renderer>>,
    /// Where the answers are typed.
    lines: &'static Lines,
    /// Whether the call wanted to ask a form without a terminal (so the
    /// CLI can say why an approval stayed required).
    wanted: AtomicBool,
}

impl TerminalAsker {
    /// An asker that prompts when stdin and stderr are terminals.
    pub(crate) fn new(timeout: Duration, renderer: Arc<Mutex<Renderer>>) -> Self {
        TerminalAsker {
            timeout,
            interactive: interactive(),
            renderer,
            lines: lines(),
            wanted: AtomicBool::new(false),
        }
    }

    /// Whether the call wanted to ask a form and could not: no terminal.
    pub(crate) fn wanted_a_terminal(&self) -> bool {
        self.wanted.load(Ordering::Relaxed)
    }

    /// Asks each form in turn; the answers in order.
    async fn fill_all(&self, forms: &[Form]) -> Vec<Value> {
        // One terminal: concurrent questions (composed calls) wait their turn.
        let mut rx = self.lines.rx.lock().await;
        // Lines typed before the question are not its answer.
        while let Ok(Some(_)) = rx.try_recv() {}
        super::lock(&self.renderer).finish();
        let mut answers = Vec::with_capacity(forms.len());
        for form in forms {
            answers.push(fill(form, &mut rx).await);
        }
        answers
    }
}

/// Prompts for one form until it is done.
async fn fill(form: &Form, rx: &mut mpsc::UnboundedReceiver<Option<String>>) -> Value {
    let mut header = String::from("\n");
    if !form.message().is_empty() {
        header.push_str(form.message());
        header.push('\n');
    }
    header.push_str(&format!(
        "(Type {DECLINE} to decline, {CANCEL} or Ctrl-D to cancel.)\n"
    ));
    terminal::stderr(&header);
    let mut filling = form.fill();
    loop {
        if let Some(answer) = filling.finish() {
            return answer;
        }
        if let Some(prompt) = filling.prompt() {
            terminal::stderr(&prompt);
        }
        // A closed channel is the end of input, as `None` is.
        let line = rx.recv().await.flatten();
        if line.is_none() {
            terminal::stderr("\n");
        }
        match filling.feed(line.as_deref()) {
            Fed::Next => {}
            Fed::Again(why) => terminal::stderr(&format!("  {why}\n")),
            Fed::Done(answer) => return answer,
        }
    }
}

impl Asker for TerminalAsker {
    fn can_ask(&self, kind: InputKind) -> bool {
        if kind == InputKind::Elicitation && !self.interactive {
            self.wanted.store(true, Ordering::Relaxed);
        }
        self.interactive && kind == InputKind::Elicitation
    }

    fn ask<'a>(
        &'a self,
        questions: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<Value>, AskError>> {
        Box::pin(async move {
            let kinds: Vec<InputKind> = questions.iter().map(|(_, q)| q.kind).collect();
            if !self.interactive {
                self.wanted.store(true, Ordering::Relaxed);
                return Err(AskError::Unavailable {
                    message: "This call needs an answer on a terminal, and stdin is not a \
                              terminal: run it in a terminal, or call the tool through a \
                              surface whose client can answer (MCP, WebSocket)"
                        .to_owned(),
                    kinds,
                });
            }
            let others: Vec<InputKind> = kinds
                .iter()
                .copied()
                .filter(|kind| *kind != InputKind::Elicitation)
                .collect();
            if !others.is_empty() {
                let names: Vec<&str> = others.iter().map(|k| k.capability()).collect();
                return Err(AskError::Unavailable {
                    message: format!(
                        "This call asks for {}, which the command line cannot answer (it \
                         asks forms only: it has no model to sample and no roots to offer)",
                        names.join(" and ")
                    ),
                    kinds: others,
                });
            }
            let forms = questions
                .iter()
                .map(|(key, question)| {
                    Form::from_params(&question.params).map_err(|why| {
                        AskError::Failed(format!("question `{key}` cannot be shown: {why}"))
                    })
                })
                .collect::<Result<Vec<Form>, AskError>>()?;
            match tokio::time::timeout(self.timeout, self.fill_all(&forms)).await {
                Ok(answers) => Ok(answers),
                Err(_) => {
                    terminal::stderr(&format!(
                        "\nNo answer within {}; going on without one.\n",
                        humantime::format_duration(self.timeout)
                    ));
                    Err(AskError::TimedOut(self.timeout))
                }
            }
        })
    }
}

/// Whether a prompt could be shown and answered here.
pub(crate) fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::cli::render::Mode;

    /// An asker on a terminal whose lines come from `rx`.
    fn on_terminal(timeout: Duration) -> (TerminalAsker, mpsc::UnboundedSender<Option<String>>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let lines: &'static Lines = Box::leak(Box::new(Lines {
            rx: tokio::sync::Mutex::new(rx),
        }));
        let renderer = Arc::new(Mutex::new(Renderer::new(Mode::Human)));
        let mut asker = TerminalAsker::new(timeout, renderer);
        asker.interactive = true;
        asker.lines = lines;
        (asker, tx)
    }

    fn approval() -> InputRequest {
        InputRequest::elicit(
            "Allow it?",
            serde_json::json!({"type": "object", "properties": {"approve": {"type": "boolean"}}, "required": ["approve"]}),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn no_answer_within_the_bound_times_out() {
        let (asker, _typing) = on_terminal(Duration::from_secs(300));
        let error = asker.ask(&[("q".into(), approval())]).await.unwrap_err();
        assert_eq!(error, AskError::TimedOut(Duration::from_secs(300)));
    }

    #[tokio::test]
    async fn typed_lines_answer_and_type_ahead_is_dropped() {
        let (asker, typing) = on_terminal(Duration::from_secs(300));
        // Typed before the question: not its answer.
        typing.send(Some("y\n".into())).unwrap();
        let answering = tokio::spawn(async move {
            let answers = asker.ask(&[("q".into(), approval())]).await;
            (asker, answers)
        });
        tokio::task::yield_now().await;
        while !answering.is_finished() {
            typing.send(Some("n\n".into())).unwrap();
            tokio::task::yield_now().await;
        }
        let (_, answers) = answering.await.unwrap();
        assert_eq!(
            answers.unwrap(),
            [serde_json::json!({"action": "accept", "content": {"approve": false}})]
        );
    }

    #[tokio::test]
    async fn sampling_and_roots_are_refused_on_a_terminal_too() {
        let (asker, _typing) = on_terminal(Duration::from_secs(300));
        assert!(asker.can_ask(InputKind::Elicitation));
        assert!(!asker.can_ask(InputKind::Sampling));
        assert!(!asker.can_ask(InputKind::Roots));
        let error = asker
            .ask(&[("r".into(), InputRequest::list_roots())])
            .await
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("which the command line cannot answer"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn without_a_terminal_nothing_waits() {
        // `cargo test` runs with stdin not a terminal in CI; skip otherwise.
        if interactive() {
            return;
        }
        let renderer = Arc::new(Mutex::new(Renderer::new(Mode::Human)));
        let asker = TerminalAsker::new(DEFAULT_ASK_TIMEOUT, renderer);
        assert!(!asker.can_ask(InputKind::Elicitation));
        let question = InputRequest::elicit("Go?", serde_json::json!({"type": "object"}));
        let error = asker.ask(&[("q".into(), question)]).await.unwrap_err();
        assert!(
            error.to_string().contains("stdin is not a terminal"),
            "{error}"
        );
    }
}
