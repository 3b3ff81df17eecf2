//! A job asks its caller: the question waits in the job's record (MCP
//! shows it as an `input_required` task with its `inputRequests`) until the
//! caller answers through [`JobRunner::answer`](super::JobRunner::answer)
//! (MCP: `tasks/update`), within a bound.

use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::runner::EmbeddedRunner;
use crate::ask::{AskError, Asker, InputKind, InputRequest};
use crate::context::ToolContext;

/// How long a job waits for an answer by default: 10 minutes, then the
/// question goes unanswered (`INPUT_UNAVAILABLE`, or an approval
/// question's `APPROVAL_REQUIRED`).
pub const DEFAULT_JOB_ASK_TIMEOUT: Duration = Duration::from_secs(600);

/// What the caller that launched a job can answer, and what it already
/// answered before the job started (a call that asked, then detached).
#[derive(Clone, Debug, Default)]
pub struct JobAsking {
    /// The kinds of question the caller answers.
    pub kinds: Vec<InputKind>,
    /// Answers already given, by question key.
    pub answers: Map<String, Value>,
    /// How long the job waits for an answer.
    pub timeout: Option<Duration>,
}

impl JobAsking {
    /// What a job launched from the call of `ctx` may ask: the kinds that
    /// call's caller answers and the answers it already gave. `None` when
    /// it answers nothing.
    pub(crate) fn of(ctx: &ToolContext) -> Option<JobAsking> {
        let slot = ctx.asker()?;
        let kinds: Vec<InputKind> = [
            InputKind::Elicitation,
            InputKind::Sampling,
            InputKind::Roots,
        ]
        .into_iter()
        .filter(|kind| slot.asker.can_ask(*kind))
        .collect();
        if kinds.is_empty() {
            return None;
        }
        Some(JobAsking {
            kinds,
            answers: slot.asker.answers(),
            timeout: None,
        })
    }
}

/// The asker of a job on the embedded runner.
pub(super) struct JobAsker {
    runner: EmbeddedRunner,
    id: String,
    asking: JobAsking,
}

impl JobAsker {
    pub(super) fn new(runner: EmbeddedRunner, id: String, asking: JobAsking) -> Self {
        JobAsker { runner, id, asking }
    }
}

impl Asker for JobAsker {
    fn can_ask(&self, kind: InputKind) -> bool {
        self.asking.kinds.contains(&kind)
    }

    fn ask<'a>(
        &'a self,
        questions: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<Value>, AskError>> {
        Box::pin(async move {
            crate::ask::answerable(self, questions)?;
            let mut answers: Vec<Option<Value>> = Vec::with_capacity(questions.len());
            let mut waits = Vec::new();
            let mut keys = Vec::new();
            for (index, (key, question)) in questions.iter().enumerate() {
                match self.asking.answers.get(key) {
                    Some(answer) if question.kind.accepts(answer) => {
                        answers.push(Some(answer.clone()))
                    }
                    _ => {
                        answers.push(None);
                        keys.push(key.clone());
                        let receiver = self.runner.await_answer(&self.id, key, question);
                        waits.push(async move { (index, receiver.await) });
                    }
                }
            }
            let timeout = self.asking.timeout.unwrap_or(DEFAULT_JOB_ASK_TIMEOUT);
            match tokio::time::timeout(timeout, futures::future::join_all(waits)).await {
                Ok(arrived) => {
                    for (index, answer) in arrived {
                        let answer = answer.map_err(|_| {
                            AskError::Failed("the job's question was withdrawn".to_owned())
                        })?;
                        answers[index] = Some(answer);
                    }
                }
                Err(_) => {
                    self.runner.withdraw(&self.id, &keys);
                    return Err(AskError::TimedOut(timeout));
                }
            }
            Ok(answers.into_iter().map(Option::unwrap_or_default).collect())
        })
    }

    fn answers(&self) -> Map<String, Value> {
        self.asking.answers.clone()
    }
}
