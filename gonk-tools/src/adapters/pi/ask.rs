//! Questions through the Pi bridge. A call whose `execute` line said the
//! extension can answer (`"canAnswer": ["elicitation"]`, sent when Pi has a
//! UI) sends each elicitation as a `question` line and waits, bounded, for
//! the `answer` line that names it; the extension puts it to the user with
//! `ctx.ui.confirm`/`input`/`select`. Any other call, and every sampling or
//! roots question (Pi's extension API cannot answer them), is refused at
//! once: `INPUT_UNAVAILABLE`, and an approval that asks the caller stays
//! `APPROVAL_REQUIRED` (see `docs/asking.md`, "Pi").

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

use super::protocol::PiReply;
use crate::ask::{AnswerRefused, AskFailures, PendingQuestions};
use crate::ask::{AskError, Asker, InputKind, InputRequest};

/// The one kind of question Pi's extension API can answer.
const PI_KINDS: &[InputKind] = &[InputKind::Elicitation];

/// The kinds of an `execute` line's `canAnswer` that Pi can answer;
/// unknown names and kinds Pi cannot render are dropped.
pub(crate) fn answerable(can_answer: &[String]) -> Vec<InputKind> {
    PI_KINDS
        .iter()
        .copied()
        .filter(|kind| can_answer.iter().any(|name| name == kind.capability()))
        .collect()
}

/// The questions of one bridge that wait for answers. The bridge hands
/// each `answer` line to [`answer`](Self::answer) and calls
/// [`close`](Self::close) when its input or output ends, so every waiting
/// call fails at once instead of waiting out its bound.
#[derive(Default)]
pub(crate) struct PiQuestions {
    table: PendingQuestions,
}

impl PiQuestions {
    /// How many questions wait for answers.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.table.waiting()
    }

    /// Hands `answer` to the question `id`, or says why it cannot: no such
    /// question waits, or the answer is not an elicitation result (then
    /// the question keeps waiting).
    pub(crate) fn answer(&self, id: &str, answer: Value) -> Result<(), String> {
        self.table.answer(id, answer).map_err(|refused| match refused {
            AnswerRefused::NotWaiting => format!(
                "no question {id} is waiting for an answer (it was answered, it expired, or its call ended)"
            ),
            // Every question Pi is asked is an elicitation.
            AnswerRefused::WrongShape(kind) => format!(
                "the answer to question {id} is not an elicitation result: send {}",
                kind.answer_shape()
            ),
        })
    }

    /// The bridge is ending: waiting questions fail, no new one is asked.
    pub(crate) fn close(&self) {
        self.table.close();
    }
}

/// How asking through the bridge fails.
const PI_FAILURES: AskFailures = AskFailures {
    closing: "the Pi bridge is closing",
    not_sent: "the question could not be sent: the Pi extension is gone",
    closed_before_answer: "the Pi bridge closed before the question was answered",
};

/// Sends one line to the extension; `false` when the output is gone.
pub(crate) type ReplySender = dyn Fn(&PiReply) -> bool + Send + Sync;

/// The asker of one bridged call. With no `kinds` (the extension did not
/// say it can answer, or Pi has no UI) it refuses every question at once.
pub(crate) struct PiAsker {
    pub(crate) kinds: Vec<InputKind>,
    pub(crate) call_id: String,
    pub(crate) questions: Arc<PiQuestions>,
    pub(crate) send: Arc<ReplySender>,
    pub(crate) timeout: Duration,
}

impl PiAsker {
    fn unavailable(&self, kinds: Vec<InputKind>) -> AskError {
        let names: Vec<&str> = kinds.iter().map(|kind| kind.capability()).collect();
        let why = if kinds.iter().any(|kind| !PI_KINDS.contains(kind)) {
            "Pi's extension API cannot answer sampling or roots questions"
        } else {
            "Pi has no UI to ask in (print or JSON mode), or the extension is too old to carry questions"
        };
        AskError::Unavailable {
            message: format!(
                "This call needs the caller to answer ({}), and {why}; run it where it can be \
                 answered (Pi interactive or RPC mode, the command line on a terminal, an MCP \
                 client, the WebSocket page)",
                names.join(", ")
            ),
            kinds,
        }
    }
}

impl Asker for PiAsker {
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
                return Err(self.unavailable(missing));
            }
            let send = |id, key: &str, request: &InputRequest| {
                (self.send)(&PiReply::Question {
                    id,
                    call_id: self.call_id.clone(),
                    key: key.to_owned(),
                    request: request.clone(),
                })
            };
            self.questions
                .table
                .ask(questions, self.timeout, &PI_FAILURES, send)
                .await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Mutex;

    fn asker(kinds: Vec<InputKind>, timeout: Duration) -> (Arc<PiAsker>, Arc<Mutex<Vec<Value>>>) {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let outbox = Arc::clone(&sent);
        let asker = PiAsker {
            kinds,
            call_id: "c1".into(),
            questions: Arc::new(PiQuestions::default()),
            send: Arc::new(move |line| {
                outbox
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(line).unwrap());
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

    #[test]
    fn only_elicitation_is_answerable_in_pi() {
        let names = ["roots", "elicitation", "sampling", "telepathy"].map(String::from);
        assert_eq!(answerable(&names), [InputKind::Elicitation]);
        assert!(answerable(&[]).is_empty());
    }

    #[tokio::test]
    async fn a_question_line_goes_out_and_its_answer_comes_back() {
        let (asker, sent) = asker(vec![InputKind::Elicitation], Duration::from_secs(300));
        let waiting = tokio::spawn({
            let asker = Arc::clone(&asker);
            async move { asker.ask(&form()).await }
        });
        while sent.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
        let line = sent.lock().unwrap()[0].clone();
        assert_eq!(
            line,
            json!({"type": "question", "id": "q1", "callId": "c1", "key": "approval-1",
                   "request": {"method": "elicitation/create", "params": {"message": "Go?", "requestedSchema": {"type": "object"}}}})
        );
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
        let (asker, _sent) = asker(vec![InputKind::Elicitation], Duration::from_secs(60));
        let error = asker.ask(&form()).await.unwrap_err();
        assert_eq!(error, AskError::TimedOut(Duration::from_secs(60)));
        assert_eq!(asker.questions.waiting(), 0);
    }

    #[tokio::test]
    async fn a_closed_bridge_fails_the_question_at_once() {
        let (asker, sent) = asker(vec![InputKind::Elicitation], Duration::from_secs(300));
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
    async fn without_can_answer_and_for_sampling_nothing_is_sent() {
        let (asker, sent) = asker(Vec::new(), Duration::from_secs(300));
        let error = asker.ask(&form()).await.unwrap_err();
        assert!(error.to_string().contains("no UI"), "{error}");
        let (asker, _) = self::asker(vec![InputKind::Elicitation], Duration::from_secs(300));
        let error = asker
            .ask(&[("roots-1".into(), InputRequest::list_roots())])
            .await
            .unwrap_err();
        assert!(matches!(error, AskError::Unavailable { .. }), "{error:?}");
        assert!(error.to_string().contains("sampling or roots"), "{error}");
        assert!(sent.lock().unwrap().is_empty());
    }
}
