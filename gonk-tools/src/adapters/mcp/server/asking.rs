//! How the MCP server asks its client (see [`crate::ask`]): a 2025 session
//! sends `elicitation/create`, `sampling/createMessage` or `roots/list` on
//! the session and waits, within a bound; a `2026-07-28` request cannot be
//! held, so the call ends with `input_required` and a sealed
//! `requestState`, and the client's retry replays the body with the
//! answers (see [`ReplayAsker`]).
#![allow(deprecated)] // rmcp marks sampling (SEP-2577) deprecated; 2025 clients use it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, ElicitRequestParams, InputRequiredResult,
};
use rmcp::service::Peer;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Map, Value};

use super::request_state::{binding, nonce, Record, Sealer};
use crate::ask::{AskError, Asker, InputKind, InputRequest, ReplayAsker};

/// How long a 2025 session waits for its client's answer by default: 5
/// minutes, then the call gets the answer it would without asking.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(300);

/// Questions of approval are answered only through a sealed state that
/// asked them: a client cannot volunteer consent it was never asked for.
const APPROVAL_KEY_PREFIX: &str = "approval-";

/// The kinds of question `capabilities` says the client answers.
pub(crate) fn declared_kinds(capabilities: Option<&ClientCapabilities>) -> Vec<InputKind> {
    let Some(caps) = capabilities else {
        return Vec::new();
    };
    let mut kinds = Vec::new();
    if caps.elicitation.is_some() {
        kinds.push(InputKind::Elicitation);
    }
    if caps.sampling.is_some() {
        kinds.push(InputKind::Sampling);
    }
    if caps.roots.is_some() {
        kinds.push(InputKind::Roots);
    }
    kinds
}

/// The kinds a stateless request's `_meta` declares its client answers,
/// read off the raw map: decoding the whole capabilities object on every
/// call cost more than the call's own look-up.
pub(crate) fn kinds_in_meta(meta: &rmcp::model::RequestMetaObject) -> Vec<InputKind> {
    let Some(Value::Object(caps)) = meta.0 .0.get("io.modelcontextprotocol/clientCapabilities")
    else {
        return Vec::new();
    };
    [
        InputKind::Elicitation,
        InputKind::Sampling,
        InputKind::Roots,
    ]
    .into_iter()
    .filter(|kind| caps.get(kind.capability()).is_some_and(|c| !c.is_null()))
    .collect()
}

/// Asks a 2025 session's client with server → client requests.
pub(crate) struct SessionAsker {
    peer: Peer<RoleServer>,
    kinds: Vec<InputKind>,
    timeout: Duration,
    /// What the client answered during this call, by key: a job the call
    /// launches starts with them (the consent it gave covers its job).
    answered: Mutex<Map<String, Value>>,
}

impl Asker for SessionAsker {
    fn can_ask(&self, kind: InputKind) -> bool {
        self.kinds.contains(&kind)
    }

    fn ask<'a>(
        &'a self,
        questions: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<Value>, AskError>> {
        Box::pin(async move {
            crate::ask::answerable(self, questions)?;
            let asks = questions.iter().map(|(_, question)| self.ask_one(question));
            let answers =
                match tokio::time::timeout(self.timeout, futures::future::try_join_all(asks)).await
                {
                    Ok(answers) => answers?,
                    Err(_) => return Err(AskError::TimedOut(self.timeout)),
                };
            let mut answered = self.answered.lock().unwrap_or_else(|p| p.into_inner());
            for ((key, _), answer) in questions.iter().zip(&answers) {
                answered.insert(key.clone(), answer.clone());
            }
            Ok(answers)
        })
    }

    fn answers(&self) -> Map<String, Value> {
        self.answered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl SessionAsker {
    pub(crate) fn new(peer: Peer<RoleServer>, kinds: Vec<InputKind>, timeout: Duration) -> Self {
        SessionAsker {
            peer,
            kinds,
            timeout,
            answered: Mutex::new(Map::new()),
        }
    }

    async fn ask_one(&self, question: &InputRequest) -> Result<Value, AskError> {
        let failed = |e: &dyn std::fmt::Display| AskError::Failed(e.to_string());
        let answer = match question.kind {
            InputKind::Elicitation => {
                let mut params = question.params.clone();
                if let Some(params) = params.as_object_mut() {
                    params.entry("mode").or_insert_with(|| "form".into());
                }
                let params: ElicitRequestParams =
                    serde_json::from_value(params).map_err(|e| failed(&e))?;
                let result = self
                    .peer
                    .create_elicitation(params)
                    .await
                    .map_err(|e| failed(&e))?;
                serde_json::to_value(result)
            }
            InputKind::Sampling => {
                let params: CreateMessageRequestParams =
                    serde_json::from_value(question.params.clone()).map_err(|e| failed(&e))?;
                let result = self
                    .peer
                    .create_message(params)
                    .await
                    .map_err(|e| failed(&e))?;
                serde_json::to_value(result)
            }
            InputKind::Roots => {
                let result = self.peer.list_roots().await.map_err(|e| failed(&e))?;
                serde_json::to_value(result)
            }
        };
        answer.map_err(|e| failed(&e))
    }
}

/// The asking side of one `2026-07-28` `tools/call`: the replay of what the
/// client has answered, and what a pending question needs to be sealed.
pub(crate) struct Round {
    pub(crate) replay: Arc<ReplayAsker>,
    binding: Vec<u8>,
}

impl Round {
    /// Opens the request's state (if any) and gathers the answers: the
    /// sealed ones, then the client's `inputResponses` (an approval only
    /// when the state asked it). A state that fails to open refuses the
    /// request: the protocol's invalid-params error, logged for audit.
    pub(crate) async fn open(
        sealer: &Sealer,
        tool: &str,
        arguments: &Value,
        caller: &str,
        kinds: Vec<InputKind>,
        request_state: Option<&str>,
        input_responses: Option<BTreeMap<String, Value>>,
    ) -> Result<Round, ErrorData> {
        let binding = binding(tool, arguments, caller);
        let record = match request_state {
            None => Record::default(),
            Some(sealed) => sealer.open(sealed, &binding).await.map_err(|refusal| {
                tracing::warn!(
                    target: "gonk_tools::audit",
                    tool,
                    caller,
                    refusal = refusal.as_str(),
                    "requestState refused; nothing ran"
                );
                ErrorData::invalid_params(
                    refusal.message(),
                    Some(serde_json::json!({ "requestState": refusal.as_str() })),
                )
            })?,
        };
        let mut answers = record.answers;
        for (key, answer) in input_responses.unwrap_or_default() {
            if key.starts_with(APPROVAL_KEY_PREFIX) && !record.pending.contains(&key) {
                continue;
            }
            // An answer already sealed stands.
            answers.entry(key).or_insert(answer);
        }
        let replay = ReplayAsker::new(answers)
            .allowing(kinds)
            .with_steps(record.steps);
        Ok(Round {
            replay: Arc::new(replay),
            binding,
        })
    }

    /// The `input_required` result of a run that stopped at a question:
    /// the pending questions, and the state that carries the answers so far.
    pub(crate) fn input_required(&self, sealer: &Sealer) -> Result<InputRequiredResult, ErrorData> {
        let pending = self.replay.pending();
        let mut requests = BTreeMap::new();
        for (key, question) in &pending {
            let request = to_mcp(question).map_err(|e| {
                ErrorData::internal_error(
                    format!("the tool's question `{key}` is not a valid MCP input request: {e}"),
                    None,
                )
            })?;
            requests.insert(key.clone(), request);
        }
        let record = Record {
            nonce: nonce(),
            answers: self.replay.used_answers(),
            steps: self.replay.steps(),
            pending: pending.into_iter().map(|(key, _)| key).collect(),
        };
        let sealed = sealer.seal(&record, &self.binding).ok_or_else(|| {
            ErrorData::internal_error("the request state could not be sealed", None)
        })?;
        Ok(InputRequiredResult::new(Some(requests), Some(sealed)))
    }
}

/// A question as rmcp's input request, read straight into its variant (the
/// untagged enum's trial and error cost a third of a round).
pub(crate) fn to_mcp(
    question: &InputRequest,
) -> Result<rmcp::model::InputRequest, serde_json::Error> {
    use rmcp::model::{CreateMessageRequest, ElicitRequest, InputRequest as Mcp, ListRootsRequest};
    let value = serde_json::to_value(question)?;
    Ok(match question.kind {
        InputKind::Elicitation => Mcp::Elicitation(serde_json::from_value::<ElicitRequest>(value)?),
        InputKind::Sampling => {
            Mcp::CreateMessage(serde_json::from_value::<CreateMessageRequest>(value)?)
        }
        InputKind::Roots => Mcp::ListRoots(serde_json::from_value::<ListRootsRequest>(value)?),
    })
}
