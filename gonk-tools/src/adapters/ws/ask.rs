//! Asking the caller over the socket: a call whose request said it can
//! answer (`canAnswer`) sends each question as a [`WsQuestion`] and waits,
//! bounded, for the `answer` message that names it. [`WsQuestions`] is the
//! table of one connection's questions waiting for answers; the call's
//! asker ([`WsAsker`]) puts questions in it, the connection's answers take
//! them out.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

use super::message::{WsQuestion, WsReply};
use crate::ask::{AnswerRefused, AskFailures, PendingQuestions};
use crate::ask::{AskError, Asker, InputKind, InputRequest};

/// How long a call waits for the answer to a question unless
/// [`WsHandlerBuilder::ask_timeout`](super::WsHandlerBuilder::ask_timeout)
/// says otherwise.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Sends one question to the caller; `false` when it cannot go out (the
/// connection is closing or its queue is full).
pub type QuestionSender = dyn Fn(WsQuestion) -> bool + Send + Sync;

/// The questions of one connection that wait for answers. A transport
/// keeps one per connection: it hands each `answer` message to
/// [`answer`](Self::answer), and calls [`close`](Self::close) when the
/// connection ends, so every waiting call fails at once instead of
/// waiting out its bound.
#[derive(Default)]
pub struct WsQuestions {
    table: PendingQuestions,
}

impl std::fmt::Debug for WsQuestions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsQuestions")
            .field("waiting", &self.waiting())
            .field("closed", &self.table.is_closed())
            .finish()
    }
}

impl WsQuestions {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many questions wait for answers.
    pub fn waiting(&self) -> usize {
        self.table.waiting()
    }

    /// Hands `answer` to the question `id`. The error reply to send back
    /// when no question of that id waits (it was answered, timed out, or
    /// its call ended) or the answer has the wrong shape for its kind (the
    /// question keeps waiting).
    pub fn answer(&self, id: &str, answer: Value) -> Result<(), WsReply> {
        self.table.answer(id, answer).map_err(|refused| {
            let message = match refused {
                AnswerRefused::NotWaiting => format!(
                    "No question {id} is waiting for an answer (it was answered, it expired, or its call ended)"
                ),
                AnswerRefused::WrongShape(kind) => format!(
                    "The answer to question {id} is not an answer to {}: send {}",
                    kind.method(),
                    kind.answer_shape()
                ),
            };
            WsReply::invalid_request(None, message)
        })
    }

    /// The connection ended: every waiting question fails, and no new
    /// question is asked.
    pub fn close(&self) {
        self.table.close();
    }
}

/// How asking over a socket fails.
const WS_FAILURES: AskFailures = AskFailures {
    closing: "the connection closed",
    not_sent: "the question could not be sent: the connection is closing or not reading",
    closed_before_answer: "the connection closed before the question was answered",
};

/// The asker of one call over a socket.
pub(crate) struct WsAsker {
    pub(crate) kinds: Vec<InputKind>,
    pub(crate) req_id: Option<Value>,
    pub(crate) questions: Arc<WsQuestions>,
    pub(crate) send: Arc<QuestionSender>,
    pub(crate) timeout: Duration,
}

impl Asker for WsAsker {
    fn can_ask(&self, kind: InputKind) -> bool {
        self.kinds.contains(&kind) && !self.questions.table.is_closed()
    }

    fn ask<'a>(
        &'a self,
        questions: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<Value>, AskError>> {
        Box::pin(async move {
            let missing: Vec<InputKind> = questions
                .iter()
                .map(|(_, q)| q.kind)
                .filter(|kind| !self.kinds.contains(kind))
                .collect();
            if !missing.is_empty() {
                let names: Vec<&str> = missing.iter().map(|k| k.capability()).collect();
                return Err(AskError::Unavailable {
                    message: format!(
                        "This call needs the caller to answer ({}), and the request did not say it can (send \"canAnswer\": [{}] with it)",
                        names.join(", "),
                        names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
                    ),
                    kinds: missing,
                });
            }
            let send = |id, key: &str, request: &InputRequest| {
                (self.send)(WsQuestion {
                    req_id: self.req_id.clone(),
                    id,
                    key: key.to_owned(),
                    request: request.clone(),
                })
            };
            self.questions
                .table
                .ask(questions, self.timeout, &WS_FAILURES, send)
                .await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Mutex;

    fn asker(timeout: Duration) -> (Arc<WsAsker>, Arc<Mutex<Vec<WsQuestion>>>) {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let outbox = Arc::clone(&sent);
        let asker = WsAsker {
            kinds: vec![InputKind::Elicitation],
            req_id: Some(json!(7)),
            questions: Arc::new(WsQuestions::new()),
            send: Arc::new(move |q| {
                outbox.lock().unwrap().push(q);
                true
            }),
            timeout,
        };
        (Arc::new(asker), sent)
    }

    fn form() -> Vec<(String, InputRequest)> {
        vec![(
            "approval-1".into(),
            InputRequest::elicit("Go?", json!({"type": "object"})),
        )]
    }

    #[tokio::test]
    async fn a_question_goes_out_and_its_answer_comes_back() {
        let (asker, sent) = asker(DEFAULT_ASK_TIMEOUT);
        let waiting = tokio::spawn({
            let asker = Arc::clone(&asker);
            async move { asker.ask(&form()).await }
        });
        while sent.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
        let question = sent.lock().unwrap()[0].clone();
        assert_eq!(
            (question.id.as_str(), question.key.as_str()),
            ("q1", "approval-1")
        );
        assert_eq!(question.req_id, Some(json!(7)));
        // A wrong shape is refused and the question keeps waiting.
        assert!(asker
            .questions
            .answer("q1", json!({"action": "maybe"}))
            .is_err());
        assert!(asker
            .questions
            .answer("q9", json!({"action": "accept"}))
            .is_err());
        let answer = json!({"action": "accept", "content": {"approve": true}});
        asker.questions.answer("q1", answer.clone()).unwrap();
        assert_eq!(waiting.await.unwrap(), Ok(vec![answer]));
        assert_eq!(asker.questions.waiting(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn no_answer_times_out_and_leaves_nothing_waiting() {
        let (asker, _sent) = asker(Duration::from_secs(60));
        let error = asker.ask(&form()).await.unwrap_err();
        assert_eq!(error, AskError::TimedOut(Duration::from_secs(60)));
        assert_eq!(asker.questions.waiting(), 0);
    }

    #[tokio::test]
    async fn a_closed_connection_fails_the_question() {
        let (asker, sent) = asker(DEFAULT_ASK_TIMEOUT);
        let waiting = tokio::spawn({
            let asker = Arc::clone(&asker);
            async move { asker.ask(&form()).await }
        });
        while sent.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
        asker.questions.close();
        assert!(matches!(waiting.await.unwrap(), Err(AskError::Failed(_))));
        assert!(!asker.can_ask(InputKind::Elicitation));
    }

    #[tokio::test]
    async fn kinds_the_request_did_not_declare_are_unavailable_at_once() {
        let (asker, sent) = asker(DEFAULT_ASK_TIMEOUT);
        let error = asker
            .ask(&[("roots-1".into(), InputRequest::list_roots())])
            .await
            .unwrap_err();
        assert!(matches!(error, AskError::Unavailable { .. }), "{error:?}");
        assert!(sent.lock().unwrap().is_empty());
    }
}
