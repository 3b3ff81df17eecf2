//! [`ReplayAsker`]: answers from a record, for a surface whose caller
//! answers with a new request (MCP `2026-07-28`'s `input_required`).

use std::sync::Mutex;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::{AskError, Asker, InputKind, InputRequest};

/// An [`Asker`] that answers from a record and otherwise collects the
/// question: the tool's run ends with [`AskError::Pending`], the surface
/// hands [`pending`](Self::pending) to its client, and the retry runs the
/// body again with a record that holds the answers.
///
/// The record is the surface's to keep safe: over MCP it travels sealed in
/// `requestState` (see `adapters::mcp`), bound to the tool, its input and
/// the caller.
///
/// ```
/// use gonk_tools::ask::{Elicited, InputKind, ReplayAsker};
/// use gonk_tools::prelude::*;
/// use std::sync::Arc;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Name { name: String }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// // First run: nothing recorded, so the question is pending.
/// let first = Arc::new(ReplayAsker::new(Default::default()).allowing([InputKind::Elicitation]));
/// let ctx = ToolContext::new().with_asker(first.clone());
/// assert!(ctx.elicit::<Name>("Who are you?").await.is_err());
/// let (key, _request) = first.pending().remove(0);
///
/// // The retry carries the answer under the same key.
/// let mut answers = serde_json::Map::new();
/// answers.insert(key, json!({"action": "accept", "content": {"name": "Ada"}}));
/// let retry = Arc::new(ReplayAsker::new(answers).allowing([InputKind::Elicitation]));
/// let ctx = ToolContext::new().with_asker(retry);
/// let Elicited::Accepted(who) = ctx.elicit::<Name>("Who are you?").await.unwrap() else { panic!() };
/// assert_eq!(who.name, "Ada");
/// # }
/// ```
pub struct ReplayAsker {
    answers: Map<String, Value>,
    recorded_steps: Map<String, Value>,
    kinds: Vec<InputKind>,
    run: Mutex<Run>,
}

/// What one run of the body did with the record.
#[derive(Default)]
struct Run {
    pending: Vec<(String, InputRequest)>,
    used: Map<String, Value>,
    steps: Map<String, Value>,
}

impl std::fmt::Debug for ReplayAsker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayAsker")
            .field("answered", &self.answers.keys().collect::<Vec<_>>())
            .field("kinds", &self.kinds)
            .finish_non_exhaustive()
    }
}

impl ReplayAsker {
    /// A replay of `answers` (question key → the client's result). Until
    /// [`allowing`](Self::allowing) says otherwise, no kind can be asked.
    pub fn new(answers: Map<String, Value>) -> Self {
        ReplayAsker {
            answers,
            recorded_steps: Map::new(),
            kinds: Vec::new(),
            run: Mutex::new(Run::default()),
        }
    }

    /// The kinds of question the client can answer (what it declared).
    pub fn allowing(mut self, kinds: impl IntoIterator<Item = InputKind>) -> Self {
        self.kinds = kinds.into_iter().collect();
        self
    }

    /// The results of [`ToolContext::once`](crate::ToolContext::once) steps
    /// recorded by earlier runs.
    pub fn with_steps(mut self, steps: Map<String, Value>) -> Self {
        self.recorded_steps = steps;
        self
    }

    /// The questions this run asked that the record did not answer, in the
    /// order asked.
    pub fn pending(&self) -> Vec<(String, InputRequest)> {
        self.lock().pending.clone()
    }

    /// Whether this run stopped at an unanswered question.
    pub fn is_pending(&self) -> bool {
        !self.lock().pending.is_empty()
    }

    /// The answers this run used: what the next record must hold.
    pub fn used_answers(&self) -> Map<String, Value> {
        self.lock().used.clone()
    }

    /// The step results of this run (recorded ones it replayed and new
    /// ones): what the next record must hold.
    pub fn steps(&self) -> Map<String, Value> {
        self.lock().steps.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Run> {
        self.run.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Asker for ReplayAsker {
    fn can_ask(&self, kind: InputKind) -> bool {
        self.kinds.contains(&kind)
    }

    fn ask<'a>(
        &'a self,
        questions: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<Value>, AskError>> {
        Box::pin(async move {
            super::answerable(self, questions)?;
            let mut run = self.lock();
            let mut answers = Vec::with_capacity(questions.len());
            for (key, question) in questions {
                match self.answers.get(key) {
                    // An answer of the wrong shape is no answer: ask again.
                    Some(answer) if question.kind.accepts(answer) => {
                        run.used.insert(key.clone(), answer.clone());
                        answers.push(answer.clone());
                    }
                    _ => {
                        if !run.pending.iter().any(|(k, _)| k == key) {
                            run.pending.push((key.clone(), question.clone()));
                        }
                    }
                }
            }
            if answers.len() == questions.len() {
                Ok(answers)
            } else {
                Err(AskError::Pending)
            }
        })
    }

    fn recorded_step(&self, key: &str) -> Option<Value> {
        let value = self.recorded_steps.get(key)?.clone();
        self.lock().steps.insert(key.to_owned(), value.clone());
        Some(value)
    }

    fn answers(&self) -> Map<String, Value> {
        self.answers.clone()
    }

    fn record_step(&self, key: &str, value: &Value) {
        self.lock().steps.insert(key.to_owned(), value.clone());
    }
}
