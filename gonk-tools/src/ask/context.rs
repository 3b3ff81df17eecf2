//! The asking half of [`ToolContext`]: how a tool puts a question to its
//! caller through whatever surface serves the call.

use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::{
    elicitation_schema, AskError, AskSlot, Asker, Elicited, InputKind, InputRequest, Root,
    SamplingMessage, SamplingRequest,
};
use crate::context::ToolContext;
use crate::error::{ErrorCode, ToolError};

impl ToolContext {
    /// Lets this call (and the calls it composes) ask its caller through
    /// `asker`. A surface that can ask installs one per call; without one,
    /// every question is `INPUT_UNAVAILABLE`.
    pub fn with_asker(mut self, asker: Arc<dyn Asker>) -> Self {
        self.set_asker(Arc::new(AskSlot::new(asker)));
        self
    }

    /// Whether the caller can answer a question of `kind` here.
    pub fn can_ask(&self, kind: InputKind) -> bool {
        self.asker().is_some_and(|slot| slot.asker.can_ask(kind))
    }

    /// The surface's asker and the call's question counter.
    pub(crate) fn ask_slot(&self) -> Option<&Arc<AskSlot>> {
        self.asker()
    }

    /// Whether an asker is installed on this context. A surface that can
    /// ask installs its own only when the host did not: the host's asker
    /// wins.
    pub fn has_asker(&self) -> bool {
        self.asker().is_some()
    }

    /// Asks several questions at once (key → request) and returns the
    /// client's answers in the same order. Over MCP `2026-07-28` the keys
    /// are the `inputRequests` keys the client sees; keep them stable from
    /// run to run (see [the replay model](crate::ask#re-running-a-body-the-replay-model)).
    ///
    /// Errors: `INPUT_UNAVAILABLE` when the surface or its client cannot
    /// ask (with `requiredCapabilities` in the details), or when nobody
    /// answered in time.
    pub async fn ask(
        &self,
        questions: Vec<(String, InputRequest)>,
    ) -> Result<Vec<Value>, ToolError> {
        let Some(slot) = self.asker() else {
            let kinds: Vec<InputKind> = questions.iter().map(|(_, q)| q.kind).collect();
            return Err(AskError::unavailable(&kinds).into());
        };
        Ok(slot.asker.ask(&questions).await?)
    }

    /// Asks the human to fill in the form of `T` (a flat struct; see
    /// [`elicitation_schema`]) with
    /// `message` above it.
    ///
    /// ```
    /// use gonk_tools::ask::Elicited;
    /// use gonk_tools::prelude::*;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Confirm {
    ///     /// Really delete it?
    ///     confirm: bool,
    /// }
    ///
    /// /// Delete a file, once the human agrees.
    /// #[tool(approval = "write")]
    /// async fn delete_file(ctx: &ToolContext) -> Result<String, ToolError> {
    ///     match ctx.elicit::<Confirm>("Delete report.txt?").await? {
    ///         Elicited::Accepted(Confirm { confirm: true }) => Ok("deleted".into()),
    ///         _ => Ok("kept".into()),
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// // A context no surface can ask through: the tool hears so at once.
    /// let registry = ToolRegistry::new();
    /// registry.register(DeleteFile::definition()).unwrap();
    /// let events = registry.invoke("delete_file", json!({}), ToolContext::new());
    /// let error = collect_tool_outcome(events, |_| {}).await.unwrap_err();
    /// assert_eq!(error.code, ErrorCode::InputUnavailable);
    /// # }
    /// ```
    pub async fn elicit<T>(&self, message: impl Into<String>) -> Result<Elicited<T>, ToolError>
    where
        T: JsonSchema + DeserializeOwned + 'static,
    {
        let schema = elicitation_schema::<T>()
            .map_err(|e| ToolError::new(ErrorCode::Internal, e.to_string()))?;
        let key = self.next_question_key("elicitation");
        let question = InputRequest::elicit(message, (*schema).clone());
        let answer = self.ask(vec![(key, question)]).await?.pop();
        Elicited::from_answer(answer.unwrap_or(Value::Null))
    }

    /// Asks the caller's model to complete `request`.
    pub async fn sample(&self, request: SamplingRequest) -> Result<SamplingMessage, ToolError> {
        let key = self.next_question_key("sampling");
        let answer = self
            .ask(vec![(key, InputRequest::sample(&request))])
            .await?
            .pop()
            .unwrap_or(Value::Null);
        serde_json::from_value(answer).map_err(|e| {
            ToolError::new(
                ErrorCode::InvalidInput,
                format!("The caller's sampled message is not usable: {e}"),
            )
        })
    }

    /// Asks the caller for its roots.
    pub async fn roots(&self) -> Result<Vec<Root>, ToolError> {
        let key = self.next_question_key("roots");
        let mut answer = self
            .ask(vec![(key, InputRequest::list_roots())])
            .await?
            .pop()
            .unwrap_or(Value::Null);
        serde_json::from_value(answer.get_mut("roots").map(Value::take).unwrap_or_default())
            .map_err(|e| {
                ToolError::new(
                    ErrorCode::InvalidInput,
                    format!("The caller's roots are not usable: {e}"),
                )
            })
    }

    /// Runs `work` once per call, however often the body is replayed: where
    /// the surface replays the body with recorded answers (MCP
    /// `2026-07-28`), the first run records `work`'s result under `key` and
    /// later runs return it without running `work`. Elsewhere `work` simply
    /// runs. Put a side effect that must happen before a question here.
    ///
    /// The result travels with the record (over MCP, inside the sealed
    /// `requestState`): keep it small, and never secret — the record is
    /// signed, not encrypted.
    pub async fn once<T, F>(&self, key: &str, work: F) -> Result<T, ToolError>
    where
        T: Serialize + DeserializeOwned,
        F: Future<Output = Result<T, ToolError>>,
    {
        let Some(slot) = self.asker() else {
            return work.await;
        };
        if let Some(recorded) = slot.asker.recorded_step(key) {
            return serde_json::from_value(recorded).map_err(|e| {
                ToolError::internal(format!(
                    "the recorded result of step `{key}` no longer reads: {e}"
                ))
            });
        }
        let value = work.await?;
        let recorded = serde_json::to_value(&value).map_err(|e| {
            ToolError::internal(format!(
                "the result of step `{key}` cannot be recorded: {e}"
            ))
        })?;
        slot.asker.record_step(key, &recorded);
        Ok(value)
    }

    /// The key of the call's next unnamed question of `prefix`.
    pub(crate) fn next_question_key(&self, prefix: &str) -> String {
        match self.asker() {
            Some(slot) => slot.next_key(prefix),
            None => format!("{prefix}-1"),
        }
    }
}
