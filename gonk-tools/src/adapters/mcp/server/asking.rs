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

/// The elicitation modes a client declared: form (`elicitation.form`, or
/// an `elicitation` object naming no mode, as before modes existed) and URL
/// (`elicitation.url`). A server must not send an elicitation in a mode its
/// client cannot show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ElicitationModes {
    form: bool,
    url: bool,
}

impl ElicitationModes {
    /// The modes of a 2025 session's declared capabilities.
    pub(crate) fn declared(capabilities: Option<&ClientCapabilities>) -> ElicitationModes {
        let Some(elicitation) = capabilities.and_then(|caps| caps.elicitation.as_ref()) else {
            return ElicitationModes::default();
        };
        let url = elicitation.url.is_some();
        ElicitationModes {
            form: elicitation.form.is_some() || !url,
            url,
        }
    }

    /// The modes a stateless request's `_meta` declares, read off the raw
    /// map (as [`kinds_in_meta`]).
    pub(crate) fn in_meta(meta: &rmcp::model::RequestMetaObject) -> ElicitationModes {
        let Some(Value::Object(elicitation)) = meta
            .0
             .0
            .get("io.modelcontextprotocol/clientCapabilities")
            .and_then(|caps| caps.get("elicitation"))
        else {
            return ElicitationModes::default();
        };
        let declares = |mode: &str| elicitation.get(mode).is_some_and(Value::is_object);
        let url = declares("url");
        ElicitationModes {
            form: declares("form") || !url,
            url,
        }
    }

    fn all(self) -> bool {
        self.form && self.url
    }

    /// Refuses questions in a mode the client did not declare.
    fn check(self, questions: &[(String, InputRequest)]) -> Result<(), AskError> {
        let elicitations = questions
            .iter()
            .filter(|(_, q)| q.kind == InputKind::Elicitation);
        for (_, question) in elicitations {
            let (declared, mode) = if question.is_url_elicitation() {
                (self.url, "open a URL (a URL-mode elicitation)")
            } else {
                (self.form, "fill in a form (a form-mode elicitation)")
            };
            if !declared {
                return Err(AskError::Unavailable {
                    message: format!(
                        "This call needs the caller to {mode}, and the client does not declare that mode"
                    ),
                    kinds: vec![InputKind::Elicitation],
                });
            }
        }
        Ok(())
    }
}

/// A stateless round's asker for a client that declared some elicitation
/// modes only: questions in the others are refused, the rest replayed.
struct ModesDeclared {
    replay: Arc<ReplayAsker>,
    modes: ElicitationModes,
}

impl Asker for ModesDeclared {
    fn can_ask(&self, kind: InputKind) -> bool {
        self.replay.can_ask(kind)
    }

    fn ask<'a>(
        &'a self,
        questions: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<Value>, AskError>> {
        match self.modes.check(questions) {
            Ok(()) => self.replay.ask(questions),
            Err(refused) => Box::pin(std::future::ready(Err(refused))),
        }
    }

    fn recorded_step(&self, key: &str) -> Option<Value> {
        self.replay.recorded_step(key)
    }

    fn record_step(&self, key: &str, value: &Value) {
        self.replay.record_step(key, value)
    }

    fn answers(&self) -> Map<String, Value> {
        self.replay.answers()
    }
}

/// Asks a 2025 session's client with server → client requests.
pub(crate) struct SessionAsker {
    peer: Peer<RoleServer>,
    kinds: Vec<InputKind>,
    /// The elicitation modes the client declared.
    modes: ElicitationModes,
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
            self.modes.check(questions)?;
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
        let modes =
            ElicitationModes::declared(peer.peer_info().as_ref().map(|info| &info.capabilities));
        SessionAsker {
            peer,
            kinds,
            modes,
            timeout,
            answered: Mutex::new(Map::new()),
        }
    }

    async fn ask_one(&self, question: &InputRequest) -> Result<Value, AskError> {
        let failed = |e: &dyn std::fmt::Display| AskError::Failed(e.to_string());
        let answer = match question.kind {
            InputKind::Elicitation => {
                let mut params = question.params.clone();
                let url_mode = question.is_url_elicitation();
                if let Some(params) = params.as_object_mut() {
                    params.entry("mode").or_insert_with(|| "form".into());
                    // The 2025 wire names each URL-mode elicitation, for its
                    // completion notice.
                    if url_mode {
                        params
                            .entry("elicitationId")
                            .or_insert_with(|| elicitation_id().into());
                    }
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

/// A fresh id for a URL-mode elicitation on a 2025 session.
fn elicitation_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // Unique within the process is enough for the completion notice.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        bytes[..8].copy_from_slice(&n.to_be_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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

    /// The asker a call of this round asks through: the replay, refusing
    /// elicitations in a mode the client did not declare (`modes`).
    pub(crate) fn asker(&self, modes: ElicitationModes) -> Arc<dyn Asker> {
        if modes.all() {
            Arc::clone(&self.replay) as Arc<dyn Asker>
        } else {
            Arc::new(ModesDeclared {
                replay: Arc::clone(&self.replay),
                modes,
            })
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ElicitRequestParams, ElicitationCapability, RequestMetaObject};
    use serde_json::json;

    fn meta(elicitation: Value) -> RequestMetaObject {
        serde_json::from_value(json!({
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": elicitation}
        }))
        .expect("a _meta object")
    }

    #[test]
    fn the_declared_modes_read_alike_from_a_session_and_from_meta() {
        let cases = [
            (json!({}), (true, false)),
            (json!({"form": {}}), (true, false)),
            (json!({"url": {}}), (false, true)),
            (json!({"form": {}, "url": {}}), (true, true)),
        ];
        for (declared, (form, url)) in cases {
            let expected = ElicitationModes { form, url };
            assert_eq!(ElicitationModes::in_meta(&meta(declared.clone())), expected);
            let capability: ElicitationCapability =
                serde_json::from_value(declared).expect("a capability");
            let mut capabilities = ClientCapabilities::default();
            capabilities.elicitation = Some(capability);
            assert_eq!(ElicitationModes::declared(Some(&capabilities)), expected);
        }
        assert_eq!(
            ElicitationModes::declared(None),
            ElicitationModes::default()
        );
    }

    #[test]
    fn a_question_in_an_undeclared_mode_is_refused_naming_the_mode() {
        let url = (
            "u".to_owned(),
            InputRequest::elicit_url("Sign in", "https://a.example"),
        );
        let form = (
            "f".to_owned(),
            InputRequest::elicit("Who?", json!({"type": "object", "properties": {}})),
        );
        let roots = ("r".to_owned(), InputRequest::list_roots());
        let form_only = ElicitationModes {
            form: true,
            url: false,
        };
        assert!(form_only.check(&[form.clone(), roots.clone()]).is_ok());
        let refused = form_only.check(&[form.clone(), url.clone()]).unwrap_err();
        assert!(refused.to_string().contains("open a URL"), "{refused}");
        let url_only = ElicitationModes {
            form: false,
            url: true,
        };
        assert!(url_only.check(&[url, roots]).is_ok());
        let refused = url_only.check(&[form]).unwrap_err();
        assert!(refused.to_string().contains("fill in a form"), "{refused}");
    }

    #[test]
    fn a_url_question_goes_on_the_2026_wire_as_a_url_elicitation() {
        let question = InputRequest::elicit_url("Sign in", "https://calendar.example/authorize");
        let rmcp::model::InputRequest::Elicitation(request) = to_mcp(&question).expect("maps")
        else {
            panic!("an elicitation");
        };
        let ElicitRequestParams::UrlElicitationParams { message, url, .. } = request.params else {
            panic!("URL mode, not {:?}", request.params);
        };
        assert_eq!(message, "Sign in");
        assert_eq!(url, "https://calendar.example/authorize");
    }

    #[test]
    fn elicitation_ids_differ() {
        let (a, b) = (elicitation_id(), elicitation_id());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
