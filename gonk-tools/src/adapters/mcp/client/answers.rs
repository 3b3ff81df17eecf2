//! How the client answers the server's questions — a form for the human
//! (elicitation), a completion from the application's model (sampling),
//! the application's roots — through the hooks installed on
//! [`McpClientBuilder`](super::McpClientBuilder). The same hooks answer
//! both eras: a session's `elicitation/create`, `sampling/createMessage`
//! and `roots/list` requests (2025 revisions), and the `inputRequests` of
//! an `input_required` result, sent back with the call's retry
//! (`2026-07-28`).
//!
//! A client declares only the capabilities it has a hook for. Asked
//! anyway, it declines an elicitation and answers sampling or roots with
//! JSON-RPC "method not found"; in `2026-07-28` a call whose questions it
//! cannot answer ends with `INPUT_UNAVAILABLE` instead of a retry.
#![allow(deprecated)] // rmcp marks sampling and roots (SEP-2577) deprecated; 2025-era servers use them.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestMethod, ElicitationCapability,
    ErrorCode as JsonRpcCode, FormElicitationCapability, InputRequests, ListRootsRequestMethod,
    RootsCapabilities, SamplingCapability, UrlElicitationCapability,
};
use rmcp::ErrorData;
use serde_json::{json, Map, Value};

use crate::ask::{Elicited, InputKind, InputRequest, Root, SamplingMessage, SamplingRequest};

/// An elicitation the server puts to the client: a message for the human
/// and the form to fill in.
///
/// The answer is an [`Elicited`]`<Value>`: `Accepted` with the form's
/// content (a JSON object), `Declined` or `Cancelled`. Fields the content
/// leaves out that the form gives a `default` for are sent with that
/// default (SEP-1034), so accepting `{}` accepts the form as the server
/// filled it in.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ElicitationRequest {
    /// What the server asks, for the human.
    pub message: String,
    /// The form, as the server sent it: the JSON Schema of a flat object
    /// (`properties` of strings, numbers, integers, booleans and enums,
    /// with their `title`s, `description`s and `default`s; `required`).
    pub requested_schema: Value,
}

impl ElicitationRequest {
    /// An elicitation of `message` with the form `requested_schema` (for
    /// testing a hook).
    pub fn new(message: impl Into<String>, requested_schema: Value) -> Self {
        ElicitationRequest {
            message: message.into(),
            requested_schema,
        }
    }

    /// The defaults the form gives its fields, by field name.
    ///
    /// ```
    /// use gonk_tools::adapters::mcp::ElicitationRequest;
    /// use serde_json::json;
    ///
    /// let request = ElicitationRequest::new(
    ///     "Your name?",
    ///     json!({"type": "object", "properties": {
    ///         "name": {"type": "string", "default": "Ada"},
    ///         "age": {"type": "integer"},
    ///     }}),
    /// );
    /// assert_eq!(request.defaults(), *json!({"name": "Ada"}).as_object().unwrap());
    /// ```
    pub fn defaults(&self) -> Map<String, Value> {
        self.requested_schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(name, field)| Some((name.clone(), field.get("default")?.clone())))
            .collect()
    }
}

/// A URL-mode elicitation: the server asks the human to open a URL (a
/// downstream service's sign-in or consent page) and to come back when
/// done. Whatever they enter there goes to that page, never through the
/// client: the answer is only [`Elicited::Accepted`] (done),
/// [`Declined`](Elicited::Declined) or [`Cancelled`](Elicited::Cancelled).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UrlElicitationRequest {
    /// Why the server asks, for the human.
    pub message: String,
    /// The URL to open. Show it to the human with its host plainly visible
    /// (or open it for them after they agree): a server could name any
    /// page.
    pub url: String,
    /// The server's id for this elicitation (2025 revisions; `None` in
    /// `2026-07-28`, which has none).
    pub elicitation_id: Option<String>,
}

impl UrlElicitationRequest {
    /// A URL-mode elicitation of `message` pointing at `url` (for testing a
    /// hook).
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> Self {
        UrlElicitationRequest {
            message: message.into(),
            url: url.into(),
            elicitation_id: None,
        }
    }
}

type ElicitHook = dyn Fn(ElicitationRequest) -> BoxFuture<'static, Elicited<Value>> + Send + Sync;
type UrlHook = dyn Fn(UrlElicitationRequest) -> BoxFuture<'static, Elicited<()>> + Send + Sync;
type SampleHook = dyn Fn(SamplingRequest) -> BoxFuture<'static, SamplingMessage> + Send + Sync;
type RootsHook = dyn Fn() -> BoxFuture<'static, Vec<Root>> + Send + Sync;

/// The hooks of one client (any of them may be missing).
#[derive(Clone, Default)]
pub(super) struct Answers {
    elicitation: Option<Arc<ElicitHook>>,
    url_elicitation: Option<Arc<UrlHook>>,
    sampling: Option<Arc<SampleHook>>,
    roots: Option<Arc<RootsHook>>,
}

impl Answers {
    pub(super) fn on_elicitation<F, Fut>(&mut self, hook: F)
    where
        F: Fn(ElicitationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Elicited<Value>> + Send + 'static,
    {
        self.elicitation = Some(Arc::new(move |request| Box::pin(hook(request))));
    }

    pub(super) fn on_url_elicitation<F, Fut>(&mut self, hook: F)
    where
        F: Fn(UrlElicitationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Elicited<()>> + Send + 'static,
    {
        self.url_elicitation = Some(Arc::new(move |request| Box::pin(hook(request))));
    }

    pub(super) fn on_sampling<F, Fut>(&mut self, hook: F)
    where
        F: Fn(SamplingRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = SamplingMessage> + Send + 'static,
    {
        self.sampling = Some(Arc::new(move |request| Box::pin(hook(request))));
    }

    pub(super) fn on_roots<F, Fut>(&mut self, hook: F)
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<Root>> + Send + 'static,
    {
        self.roots = Some(Arc::new(move || Box::pin(hook())));
    }

    /// Whether a hook answers questions of `kind`.
    pub(super) fn answers(&self, kind: InputKind) -> bool {
        match kind {
            InputKind::Elicitation => self.elicitation.is_some() || self.url_elicitation.is_some(),
            InputKind::Sampling => self.sampling.is_some(),
            InputKind::Roots => self.roots.is_some(),
        }
    }

    /// The capabilities to declare: one per installed hook (elicitation in
    /// the modes it has a hook for).
    pub(super) fn capabilities(&self) -> ClientCapabilities {
        let mut capabilities = ClientCapabilities::default();
        if self.elicitation.is_some() || self.url_elicitation.is_some() {
            let mut elicitation = ElicitationCapability::new();
            if self.elicitation.is_some() {
                elicitation = elicitation.with_form(FormElicitationCapability::default());
            }
            if self.url_elicitation.is_some() {
                elicitation = elicitation.with_url(UrlElicitationCapability::default());
            }
            capabilities.elicitation = Some(elicitation);
        }
        if self.sampling.is_some() {
            capabilities.sampling = Some(SamplingCapability::default());
        }
        if self.roots.is_some() {
            capabilities.roots = Some(RootsCapabilities::default());
        }
        capabilities
    }

    /// The answer to one question: the JSON result of its request (an
    /// elicitation result, a sampled message, a roots list), or the
    /// JSON-RPC error this client sends for it.
    pub(super) async fn answer(&self, request: InputRequest) -> Result<Value, ErrorData> {
        match request.kind {
            InputKind::Elicitation => Ok(self.elicit(request.params).await),
            InputKind::Sampling => {
                let Some(hook) = &self.sampling else {
                    return Err(ErrorData::method_not_found::<CreateMessageRequestMethod>());
                };
                let asked: SamplingRequest = serde_json::from_value(request.params)
                    .map_err(|e| invalid("sampling/createMessage", e))?;
                let reply = hook(asked).await;
                Ok(sampled(reply))
            }
            InputKind::Roots => {
                let Some(hook) = &self.roots else {
                    return Err(ErrorData::method_not_found::<ListRootsRequestMethod>());
                };
                Ok(json!({ "roots": hook().await }))
            }
        }
    }

    /// An elicitation result: the hook of its mode answers; without one
    /// the answer is `decline`. A URL-mode answer carries no content.
    async fn elicit(&self, params: Value) -> Value {
        let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
        if mode == "url" {
            let Some(hook) = &self.url_elicitation else {
                return json!({ "action": "decline" });
            };
            let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
            let request = UrlElicitationRequest {
                message: text("message").unwrap_or_default(),
                url: text("url").unwrap_or_default(),
                elicitation_id: text("elicitationId").filter(|id| !id.is_empty()),
            };
            return match hook(request).await {
                Elicited::Accepted(()) => json!({ "action": "accept" }),
                Elicited::Declined => json!({ "action": "decline" }),
                Elicited::Cancelled => json!({ "action": "cancel" }),
            };
        }
        let (Some(hook), "form") = (&self.elicitation, mode) else {
            return json!({ "action": "decline" });
        };
        let request = ElicitationRequest {
            message: params
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            requested_schema: params
                .get("requestedSchema")
                .cloned()
                .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
        };
        let defaults = request.defaults();
        match hook(request).await {
            Elicited::Accepted(content) => {
                let mut content = match content {
                    Value::Object(content) => content,
                    // Nothing filled in: the form as the server filled it.
                    Value::Null => Map::new(),
                    other => {
                        tracing::warn!(
                            target: "gonk_tools::mcp::client",
                            "the elicitation hook accepted with content that is not an object ({other}); declining"
                        );
                        return json!({ "action": "decline" });
                    }
                };
                for (name, default) in defaults {
                    content.entry(name).or_insert(default);
                }
                json!({ "action": "accept", "content": content })
            }
            Elicited::Declined => json!({ "action": "decline" }),
            Elicited::Cancelled => json!({ "action": "cancel" }),
        }
    }

    /// The answers to one round of `inputRequests`, keyed as the server
    /// keyed them. `Err` names the methods no hook answers (the round is
    /// then not answered at all), or carries a JSON-RPC error of a hook's
    /// answer.
    pub(super) async fn answer_round(
        &self,
        requests: InputRequests,
    ) -> Result<BTreeMap<String, Value>, RoundError> {
        let mut asked = Vec::with_capacity(requests.len());
        let mut unanswered = Vec::new();
        for (key, request) in requests {
            let request: InputRequest = serde_json::to_value(&request)
                .and_then(serde_json::from_value)
                .map_err(|e| RoundError::Unreadable(e.to_string()))?;
            if !self.answers(request.kind) {
                unanswered.push(request.kind.method().to_owned());
            }
            asked.push((key, request));
        }
        if !unanswered.is_empty() {
            unanswered.sort();
            unanswered.dedup();
            return Err(RoundError::Unanswered(unanswered));
        }
        let answers = futures::future::join_all(
            asked
                .into_iter()
                .map(|(key, request)| async move { (key, self.answer(request).await) }),
        )
        .await;
        answers
            .into_iter()
            .map(|(key, answer)| answer.map(|answer| (key, answer)))
            .collect::<Result<_, _>>()
            .map_err(RoundError::Refused)
    }
}

/// Why a round of `inputRequests` got no answers.
#[derive(Debug)]
pub(super) enum RoundError {
    /// No hook answers these methods.
    Unanswered(Vec<String>),
    /// A request could not be read.
    Unreadable(String),
    /// Answering a request failed.
    Refused(ErrorData),
}

fn invalid(method: &str, error: serde_json::Error) -> ErrorData {
    ErrorData::new(
        JsonRpcCode::INVALID_PARAMS,
        format!("unreadable {method} request: {error}"),
        None,
    )
}

/// A sampled message as a `sampling/createMessage` result, whose `model`
/// is required: a hook that names none is sent as `unknown`.
fn sampled(reply: SamplingMessage) -> Value {
    let mut result = json!({
        "role": reply.role,
        "content": reply.content,
        "model": reply.model.unwrap_or_else(|| "unknown".to_owned()),
    });
    if let Some(reason) = reply.stop_reason {
        result["stopReason"] = Value::String(reason);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> Value {
        json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "verified": {"type": "boolean", "default": true},
            "note": {"type": "string"},
        }})
    }

    #[tokio::test]
    async fn an_accepted_form_gets_the_defaults_it_leaves_out() {
        let mut answers = Answers::default();
        answers.on_elicitation(|_| async { Elicited::Accepted(json!({"name": "Ada"})) });
        let answer = answers
            .answer(InputRequest::elicit("Who?", form()))
            .await
            .expect("answered");
        assert_eq!(
            answer,
            json!({"action": "accept", "content": {"name": "Ada", "verified": true}})
        );
    }

    #[tokio::test]
    async fn without_hooks_elicitation_is_declined_and_the_rest_not_found() {
        let answers = Answers::default();
        assert_eq!(answers.capabilities(), ClientCapabilities::default());
        let declined = answers
            .answer(InputRequest::elicit("Who?", form()))
            .await
            .expect("declined");
        assert_eq!(declined, json!({"action": "decline"}));
        let error = answers
            .answer(InputRequest::sample(&SamplingRequest::user_text("hi", 5)))
            .await
            .expect_err("no sampling");
        assert_eq!(error.code, JsonRpcCode::METHOD_NOT_FOUND);
        let error = answers
            .answer(InputRequest::list_roots())
            .await
            .expect_err("no roots");
        assert_eq!(error.code, JsonRpcCode::METHOD_NOT_FOUND);
    }

    #[tokio::test]
    async fn a_url_elicitation_is_declined_without_its_own_hook() {
        let mut answers = Answers::default();
        answers.on_elicitation(|_| async { Elicited::Accepted(json!({})) });
        let declared = serde_json::to_value(answers.capabilities()).expect("serializes");
        assert_eq!(declared, json!({"elicitation": {"form": {}}}));
        let request = InputRequest::elicit_url("Sign in", "https://example.com");
        assert_eq!(
            answers.answer(request).await.expect("declined"),
            json!({"action": "decline"})
        );
    }

    #[tokio::test]
    async fn the_url_hook_answers_url_elicitations_without_content() {
        let mut answers = Answers::default();
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let saw = Arc::clone(&seen);
        answers.on_url_elicitation(move |request| {
            saw.lock().unwrap().push(request);
            async { Elicited::Accepted(()) }
        });
        let declared = serde_json::to_value(answers.capabilities()).expect("serializes");
        assert_eq!(declared, json!({"elicitation": {"url": {}}}));
        let mut request = InputRequest::elicit_url("Sign in", "https://calendar.example/a");
        request.params["elicitationId"] = json!("e-1");
        assert_eq!(
            answers.answer(request).await.expect("answered"),
            json!({"action": "accept"})
        );
        assert_eq!(
            *seen.lock().unwrap(),
            [UrlElicitationRequest {
                message: "Sign in".into(),
                url: "https://calendar.example/a".into(),
                elicitation_id: Some("e-1".into()),
            }]
        );
        // A form is declined: this client has no form hook.
        let declined = answers
            .answer(InputRequest::elicit("Who?", form()))
            .await
            .expect("declined");
        assert_eq!(declined, json!({"action": "decline"}));
    }

    #[tokio::test]
    async fn hooks_declare_their_capabilities_and_answer_in_the_wire_shape() {
        let mut answers = Answers::default();
        answers.on_sampling(|request: SamplingRequest| async move {
            let asked = request.messages[0].as_text().unwrap_or_default().to_owned();
            SamplingMessage::text("assistant", format!("echo {asked}"))
        });
        answers.on_roots(|| async {
            vec![Root {
                uri: "file:///work".into(),
                name: None,
            }]
        });
        let declared = serde_json::to_value(answers.capabilities()).expect("serializes");
        assert_eq!(declared, json!({"roots": {}, "sampling": {}}));
        let sampled = answers
            .answer(InputRequest::sample(&SamplingRequest::user_text("hi", 5)))
            .await
            .expect("sampled");
        assert_eq!(
            sampled,
            json!({"role": "assistant", "content": {"type": "text", "text": "echo hi"}, "model": "unknown"})
        );
        assert!(InputKind::Sampling.accepts(&sampled));
        let roots = answers
            .answer(InputRequest::list_roots())
            .await
            .expect("roots");
        assert_eq!(roots, json!({"roots": [{"uri": "file:///work"}]}));
    }
}
