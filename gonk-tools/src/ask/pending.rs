//! [`PendingQuestions`]: the questions a surface sent over its own
//! connection (the WebSocket projection, the Pi bridge, any surface written
//! outside this crate) that wait for answers. The surface keeps one table
//! per connection: the call's asker puts questions in it, the connection's
//! answer messages take them out, and closing the connection fails every
//! waiting call at once instead of letting it wait out its bound.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use super::{AskError, InputKind, InputRequest};

/// A question waiting for its answer.
struct Waiting {
    kind: InputKind,
    answer: oneshot::Sender<Value>,
}

/// Why an answer was not taken ([`PendingQuestions::answer`]).
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnswerRefused {
    /// No question of that id waits: it was answered, it expired, or its
    /// call ended.
    NotWaiting,
    /// The answer has the wrong shape for the question's kind (the
    /// question keeps waiting).
    WrongShape(InputKind),
}

impl InputKind {
    /// The JSON shape an answer to this kind must have, as an error shows
    /// it to a client that sent the wrong one.
    pub fn answer_shape(self) -> &'static str {
        match self {
            InputKind::Elicitation => {
                "{\"action\": \"accept\" | \"decline\" | \"cancel\", \"content\"?: {…}}"
            }
            InputKind::Sampling => "{\"role\", \"content\", …}",
            InputKind::Roots => "{\"roots\": […]}",
        }
    }
}

/// How a surface words the ways asking can fail: each becomes the
/// `AskError::Failed` message the asking call sees.
#[derive(Clone, Copy, Debug)]
pub struct AskFailures {
    /// The connection is closing before the question is sent.
    pub closing: &'static str,
    /// The question could not be sent.
    pub not_sent: &'static str,
    /// The connection closed while the question waited.
    pub closed_before_answer: &'static str,
}

/// One connection's questions waiting for answers.
///
/// A surface that asks over its own connection keeps one per connection:
/// its [`Asker`](super::Asker) calls [`ask`](Self::ask) with a `send` that
/// writes each question to the peer under the id it is given; the
/// connection's reader hands each answer to [`answer`](Self::answer) by
/// that id; and the connection's end calls [`close`](Self::close), which
/// fails every waiting call at once.
///
/// ```
/// use std::time::Duration;
/// use gonk_tools::ask::{AskFailures, InputRequest, PendingQuestions};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// const FAILURES: AskFailures = AskFailures {
///     closing: "the connection is closing",
///     not_sent: "the question could not be sent",
///     closed_before_answer: "the connection closed before the answer",
/// };
/// let table = PendingQuestions::default();
/// let (sent, mut outbox) = tokio::sync::mpsc::unbounded_channel();
/// let questions = [("confirm".to_owned(), InputRequest::elicit("Go?", json!({"type": "object"})))];
/// let asking = table.ask(&questions, Duration::from_secs(5), &FAILURES, |id, _key, _question| {
///     sent.send(id).is_ok() // write the question to the peer
/// });
/// let answering = async {
///     let id = outbox.recv().await.unwrap(); // the peer's answer comes back by id
///     table.answer(&id, json!({"action": "accept", "content": {}})).unwrap();
/// };
/// let (answers, ()) = tokio::join!(asking, answering);
/// assert_eq!(answers.unwrap()[0]["action"], "accept");
/// # }
/// ```
#[derive(Default)]
pub struct PendingQuestions {
    waiting: Mutex<HashMap<String, Waiting>>,
    next: AtomicU64,
    closed: AtomicBool,
}

impl PendingQuestions {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Waiting>> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many questions wait for answers.
    pub fn waiting(&self) -> usize {
        self.lock().len()
    }

    /// Hands `answer` to the question `id`; a refused answer leaves the
    /// table as it was.
    pub fn answer(&self, id: &str, answer: Value) -> Result<(), AnswerRefused> {
        let mut waiting = self.lock();
        let Some(question) = waiting.get(id) else {
            return Err(AnswerRefused::NotWaiting);
        };
        if !question.kind.accepts(&answer) {
            return Err(AnswerRefused::WrongShape(question.kind));
        }
        if let Some(question) = waiting.remove(id) {
            // The call may have ended a moment ago: then nobody listens.
            let _ = question.answer.send(answer);
        }
        Ok(())
    }

    /// The connection ended: every waiting question fails, and no new
    /// question is asked.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        self.lock().clear();
    }

    /// Whether the connection ended.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    /// Sends every question with `send` (its id, key and request; `false`
    /// when it cannot go out) and waits, at most `timeout`, for all the
    /// answers, in the questions' order. The questions leave the table
    /// however the wait ends, the future being dropped included.
    pub async fn ask(
        &self,
        questions: &[(String, InputRequest)],
        timeout: Duration,
        failures: &AskFailures,
        mut send: impl FnMut(String, &str, &InputRequest) -> bool,
    ) -> Result<Vec<Value>, AskError> {
        let mut asked = Asked {
            table: self,
            ids: Vec::with_capacity(questions.len()),
        };
        let mut answers = Vec::with_capacity(questions.len());
        for (key, request) in questions {
            if self.is_closed() {
                return Err(AskError::Failed(failures.closing.to_owned()));
            }
            let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
            let id = format!("q{n}");
            let (tx, rx) = oneshot::channel();
            let waiting = Waiting {
                kind: request.kind,
                answer: tx,
            };
            self.lock().insert(id.clone(), waiting);
            asked.ids.push(id.clone());
            if !send(id, key, request) {
                return Err(AskError::Failed(failures.not_sent.to_owned()));
            }
            answers.push(rx);
        }
        match tokio::time::timeout(timeout, futures::future::join_all(answers)).await {
            Err(_) => Err(AskError::TimedOut(timeout)),
            Ok(answers) => answers
                .into_iter()
                .map(|answer| {
                    answer.map_err(|_| AskError::Failed(failures.closed_before_answer.to_owned()))
                })
                .collect(),
        }
    }
}

/// Takes a call's questions out of the table when it stops waiting
/// (answered, timed out, or dropped with its call).
struct Asked<'a> {
    table: &'a PendingQuestions,
    ids: Vec<String>,
}

impl Drop for Asked<'_> {
    fn drop(&mut self) {
        let mut waiting = self.table.lock();
        for id in &self.ids {
            waiting.remove(id);
        }
    }
}
