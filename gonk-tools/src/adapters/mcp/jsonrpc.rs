//! The JSON-RPC error layer in front of rmcp's transports: every incoming
//! message is read here first, and one that is not a well-formed MCP
//! message gets the JSON-RPC 2.0 answer it is owed — `-32700` for
//! unparseable JSON, `-32600` for an invalid request object (wrong `id`
//! type, `params` not an object, `jsonrpc` not `"2.0"`, a batch, a message
//! over the size limit), `-32602` for a method we serve called with params
//! of the wrong shape. rmcp alone drops unparseable stdio lines without an
//! answer, answers HTTP 415 for a body it cannot read, and turns a
//! `tools/call` with malformed params into `-32601`. A `server/discover`
//! without the stateless era's `_meta` fields gets `-32602` here too: over
//! HTTP without a version header rmcp would take it for a 2025 request and
//! answer a plain-text "Session ID is required".
//!
//! Notifications and responses that cannot be read are dropped: JSON-RPC
//! never answers a notification.

use std::borrow::Cow;

#[allow(deprecated)] // logging/setLevel: 2025-era clients use it.
use rmcp::model::SetLevelRequest;
use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientNotification, ClientRequest, DiscoverRequest,
    GetPromptRequest, InitializeRequest, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest,
    ListToolsRequest, PingRequest, ProtocolVersion, ReadResourceRequest, RequestId,
    RequestMetaObject,
};
use serde::de::DeserializeOwned;
use serde::Deserialize as _;
use serde_json::{json, Value};

/// `-32700`: the message is not JSON.
pub(crate) const PARSE_ERROR: i32 = -32700;
/// `-32600`: the JSON is not a valid request object.
pub(crate) const INVALID_REQUEST: i32 = -32600;
/// `-32601`: a method this server does not serve for the request's
/// protocol version (over HTTP with status `404`).
pub(crate) const METHOD_NOT_FOUND: i32 = -32601;
/// `-32602`: a served method called with params of the wrong shape.
pub(crate) const INVALID_PARAMS: i32 = -32602;

/// The longest excerpt of a parser's message kept in an answer: serde
/// quotes the offending value, which may be megabytes long.
const MAX_DETAIL_CHARS: usize = 200;

/// What to do with one incoming message.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// A well-formed message: hand it to rmcp.
    Message(Box<ClientJsonRpcMessage>),
    /// A notification or response that cannot be read: drop it silently.
    Ignore,
    /// Answer this error instead of serving the message.
    Reject(Rejection),
}

/// A JSON-RPC error answer to a message that is not served.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Rejection {
    /// The JSON-RPC error code.
    pub(crate) code: i32,
    /// What is wrong, for a person.
    pub(crate) message: String,
    /// The request's id when it could be read (`null` on the wire otherwise).
    pub(crate) id: Option<RequestId>,
}

impl Rejection {
    pub(crate) fn new(code: i32, message: impl Into<String>, id: Option<RequestId>) -> Self {
        Rejection {
            code,
            message: message.into(),
            id,
        }
    }

    /// The error response object (`"id": null` when the id is unknown, as
    /// JSON-RPC 2.0 requires).
    pub(crate) fn to_json(&self) -> Value {
        let id = match &self.id {
            Some(id) => serde_json::to_value(id).unwrap_or(Value::Null),
            None => Value::Null,
        };
        json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": { "code": self.code, "message": self.message },
        })
    }

    /// [`to_json`](Self::to_json) as bytes.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.to_json()).unwrap_or_default()
    }
}

/// The answer to a message larger than `limit` bytes. `head` is its first
/// bytes (for the id, when it comes early).
pub(crate) fn too_large(head: &[u8], limit: usize) -> Rejection {
    Rejection::new(
        INVALID_REQUEST,
        format!("Invalid Request: the message is larger than the limit of {limit} bytes"),
        id_in_prefix(head),
    )
}

fn excerpt(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(MAX_DETAIL_CHARS) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
    }
}

/// A valid MCP request id: a string or an integer (never null).
fn request_id(value: &Value) -> Option<RequestId> {
    match value {
        Value::String(s) => Some(RequestId::String(s.as_str().into())),
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        _ => None,
    }
}

/// Reads one message (a stdio line without its newline, or an HTTP body).
pub(crate) fn read(bytes: &[u8]) -> Inbound {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    // The requests every call path serves are read once, typed, from the
    // bytes; anything else, or anything that fails that read, is read
    // below as before, for the same message or the same error answer.
    if let Some(request) = hot::read(bytes) {
        return Inbound::Message(Box::new(JsonRpcMessage::Request(request)));
    }
    read_value(bytes)
}

/// [`read`] through a [`Value`]: every message the typed read in [`hot`]
/// does not take, and every JSON-RPC error answer.
fn read_value(bytes: &[u8]) -> Inbound {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(error) => {
            return Inbound::Reject(Rejection::new(
                PARSE_ERROR,
                format!("Parse error: {}", excerpt(&error.to_string())),
                None,
            ))
        }
    };
    let Value::Object(object) = &value else {
        let what = if value.is_array() {
            "a batch (JSON array); send one message at a time"
        } else {
            "not an object"
        };
        return Inbound::Reject(Rejection::new(
            INVALID_REQUEST,
            format!("Invalid Request: the message is {what}"),
            None,
        ));
    };
    let has_id = object.contains_key("id");
    let id = match object.get("id") {
        None => None,
        Some(raw) => match request_id(raw) {
            Some(id) => Some(id),
            None => {
                return Inbound::Reject(Rejection::new(
                    INVALID_REQUEST,
                    "Invalid Request: \"id\" must be a string or an integer",
                    None,
                ))
            }
        },
    };
    let reject =
        |message: &str| Inbound::Reject(Rejection::new(INVALID_REQUEST, message, id.clone()));
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return reject("Invalid Request: \"jsonrpc\" must be \"2.0\"");
    }
    let method = match object.get("method") {
        None => None,
        Some(Value::String(method)) => Some(method.as_str()),
        Some(_) => return reject("Invalid Request: \"method\" must be a string"),
    };
    if let Some(params) = object.get("params") {
        if method.is_some() && !params.is_object() {
            return reject("Invalid Request: \"params\" must be an object");
        }
    }
    let Some(method) = method else {
        if object.contains_key("result") || object.contains_key("error") {
            // A client's response to a server request (sampling, elicitation).
            return match ClientJsonRpcMessage::deserialize(&value) {
                Ok(message) => Inbound::Message(Box::new(message)),
                Err(error) => {
                    tracing::debug!(target: "gonk_tools::mcp", %error, "dropping an unreadable response");
                    Inbound::Ignore
                }
            };
        }
        return reject("Invalid Request: a request needs a \"method\"");
    };
    // Read from the borrowed value: rmcp's deserializer then copies only
    // what it keeps, and `params` stays readable for the error answers
    // without a clone (a fifth of a 2026 line's instructions).
    let params = object.get("params");
    let parsed = deserialize_message(&value, has_id);
    if !has_id {
        // A notification: served if it can be read, never answered.
        return match parsed {
            Ok(message) => Inbound::Message(Box::new(message)),
            Err(error) => {
                tracing::debug!(target: "gonk_tools::mcp", %error, method, "dropping an unreadable notification");
                Inbound::Ignore
            }
        };
    }
    let invalid_params = |detail: &str| {
        Inbound::Reject(Rejection::new(
            INVALID_PARAMS,
            format!("Invalid params for {method}: {}", excerpt(detail)),
            id.clone(),
        ))
    };
    if method == DISCOVER {
        // Judged before rmcp sees it, whatever its shape: over HTTP without
        // a version header rmcp would take it for a 2025 request.
        if let Some(detail) = params_error(method, params) {
            return invalid_params(&detail);
        }
    }
    if matches!(method, "initialize" | "ping" | "logging/setLevel") && is_stateless_era(params) {
        // Removed in the stateless era; rmcp would still answer a `ping`
        // before it has seen the first request, and `logging/setLevel`.
        return Inbound::Reject(Rejection::new(
            METHOD_NOT_FOUND,
            format!("Method not found: {method} is not part of protocol 2026-07-28"),
            id.clone(),
        ));
    }
    let served = |message: ClientJsonRpcMessage| match &message {
        // rmcp falls back to a custom request when a standard method's
        // params do not fit its type; for the methods we serve that is a
        // params error, not an unknown method.
        JsonRpcMessage::Request(request)
            if matches!(request.request, ClientRequest::CustomRequest(_)) =>
        {
            match params_error(method, params) {
                Some(detail) => invalid_params(&detail),
                None => Inbound::Message(Box::new(message)),
            }
        }
        _ => Inbound::Message(Box::new(message)),
    };
    match parsed {
        Ok(message) => served(message),
        Err(error) => match params_error(method, params) {
            Some(detail) => invalid_params(&detail),
            None => reject(&format!("Invalid Request: {}", excerpt(&error.to_string()))),
        },
    }
}

/// rmcp's message from `value`, an object with a string `method` (and an
/// `id` when `has_id`). rmcp's own deserializer finds a message's kind by
/// trying each kind on a buffered copy of the object; without `result` and
/// `error` the kind is known here, so a request or a notification is read
/// as one directly. Should that fail, rmcp's deserializer runs anyway, for
/// its error.
fn deserialize_message(
    value: &Value,
    has_id: bool,
) -> Result<ClientJsonRpcMessage, serde_json::Error> {
    let plain = value.get("result").is_none() && value.get("error").is_none();
    let direct = match (plain, has_id) {
        (true, true) => hot_request(value)
            .or_else(|| JsonRpcRequest::<ClientRequest>::deserialize(value).ok())
            .map(JsonRpcMessage::Request),
        (true, false) => JsonRpcNotification::<ClientNotification>::deserialize(value)
            .ok()
            .map(JsonRpcMessage::Notification),
        (false, _) => None,
    };
    match direct {
        Some(message) => Ok(message),
        None => ClientJsonRpcMessage::deserialize(value),
    }
}

/// A request of the kinds every call path serves, read as its own type.
/// rmcp's `ClientRequest` is an untagged enum that tries each kind in turn
/// (`tools/call` is its fourteenth), making and dropping an error for each
/// miss; the method names the kind. `None` — a method not listed here, or
/// a request its kind cannot read — leaves the message to rmcp's
/// deserializer, and to its error.
fn hot_request(value: &Value) -> Option<JsonRpcRequest<ClientRequest>> {
    let request = match value.get("method")?.as_str()? {
        "tools/call" => ClientRequest::CallToolRequest(CallToolRequest::deserialize(value).ok()?),
        "tools/list" => ClientRequest::ListToolsRequest(ListToolsRequest::deserialize(value).ok()?),
        "resources/read" => {
            ClientRequest::ReadResourceRequest(ReadResourceRequest::deserialize(value).ok()?)
        }
        "prompts/get" => {
            ClientRequest::GetPromptRequest(GetPromptRequest::deserialize(value).ok()?)
        }
        _ => return None,
    };
    let id = RequestId::deserialize(value.get("id")?).ok()?;
    Some(JsonRpcRequest::new(id, request))
}

/// The typed read of a hot request (`tools/call`, `tools/list`,
/// `resources/read`, `prompts/get`) straight from its bytes, in one pass
/// with no [`Value`]: what [`read_value`] would give for it, as
/// [`hot_request`] reads it, made with the checks [`read_value`] makes on
/// its way there. Any doubt gives `None` and the message goes to
/// [`read_value`], for its message or its error answer, unchanged:
/// another method, a key other than `jsonrpc`, `id`, `method` and
/// `params` that marks a response (`result`, `error`), a known key twice,
/// `params` before `method` (its kind is not known yet), `jsonrpc` not
/// `"2.0"` or `id` neither a string nor an `i64`, `params` not an object,
/// params their kind cannot read, or JSON that does not parse.
mod hot {
    use std::fmt;

    use rmcp::model::{
        CallToolRequestParams, ClientRequest, GetPromptRequestParams, JsonRpcRequest,
        ListToolsRequest, PaginatedRequestParams, ReadResourceRequestParams, Request, RequestId,
        RequestMetaObject,
    };
    use serde::de::value::MapAccessDeserializer;
    use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
    use serde::Deserialize;

    /// `None`: not a hot request read here (see the module).
    pub(super) fn read(bytes: &[u8]) -> Option<JsonRpcRequest<ClientRequest>> {
        let mut deserializer = serde_json::Deserializer::from_slice(bytes);
        let request = deserializer.deserialize_map(Message).ok()?;
        deserializer.end().ok()?;
        Some(request)
    }

    /// The error that sends a message to the `Value` read; its text is
    /// never shown.
    fn other<E: de::Error>() -> E {
        E::custom("not a hot request")
    }

    #[derive(Clone, Copy)]
    enum Kind {
        CallTool,
        ListTools,
        ReadResource,
        GetPrompt,
    }

    enum Params {
        CallTool(CallToolRequestParams),
        ListTools(PaginatedRequestParams),
        ReadResource(ReadResourceRequestParams),
        GetPrompt(GetPromptRequestParams),
    }

    /// A top-level key.
    enum Key {
        Jsonrpc,
        Id,
        Method,
        Params,
        /// `result` or `error`: a response, not a request.
        Response,
        Other,
    }

    impl<'de> Deserialize<'de> for Key {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct KeyVisitor;
            impl Visitor<'_> for KeyVisitor {
                type Value = Key;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a key")
                }
                fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
                    Ok(match key {
                        "jsonrpc" => Key::Jsonrpc,
                        "id" => Key::Id,
                        "method" => Key::Method,
                        "params" => Key::Params,
                        "result" | "error" => Key::Response,
                        _ => Key::Other,
                    })
                }
            }
            deserializer.deserialize_identifier(KeyVisitor)
        }
    }

    /// `"2.0"` as `jsonrpc`'s value; anything else is an error.
    struct Version;

    impl<'de> Deserialize<'de> for Version {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct VersionVisitor;
            impl Visitor<'_> for VersionVisitor {
                type Value = Version;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("\"2.0\"")
                }
                fn visit_str<E: de::Error>(self, version: &str) -> Result<Version, E> {
                    (version == "2.0").then_some(Version).ok_or_else(other)
                }
            }
            deserializer.deserialize_str(VersionVisitor)
        }
    }

    /// A valid request id, as `request_id` takes it from a `Value`: a
    /// string, or an integer that fits an `i64`.
    struct Id(RequestId);

    impl<'de> Deserialize<'de> for Id {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct IdVisitor;
            impl Visitor<'_> for IdVisitor {
                type Value = Id;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a string or an integer")
                }
                fn visit_i64<E: de::Error>(self, id: i64) -> Result<Id, E> {
                    Ok(Id(RequestId::Number(id)))
                }
                fn visit_u64<E: de::Error>(self, id: u64) -> Result<Id, E> {
                    let id = i64::try_from(id).map_err(|_| other::<E>())?;
                    Ok(Id(RequestId::Number(id)))
                }
                fn visit_str<E: de::Error>(self, id: &str) -> Result<Id, E> {
                    Ok(Id(RequestId::String(id.into())))
                }
            }
            deserializer.deserialize_any(IdVisitor)
        }
    }

    /// The method's kind; a method not read here is an error.
    impl<'de> Deserialize<'de> for Kind {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct KindVisitor;
            impl Visitor<'_> for KindVisitor {
                type Value = Kind;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a hot method")
                }
                fn visit_str<E: de::Error>(self, method: &str) -> Result<Kind, E> {
                    match method {
                        "tools/call" => Ok(Kind::CallTool),
                        "tools/list" => Ok(Kind::ListTools),
                        "resources/read" => Ok(Kind::ReadResource),
                        "prompts/get" => Ok(Kind::GetPrompt),
                        _ => Err(other()),
                    }
                }
            }
            deserializer.deserialize_str(KindVisitor)
        }
    }

    /// `params` of `kind`: an object only (a derived struct would also
    /// take an array, which `read_value` refuses), read as rmcp's params
    /// type with its `_meta` in the type's own `meta` field.
    struct ParamsSeed(Kind);

    impl<'de> DeserializeSeed<'de> for ParamsSeed {
        type Value = Params;
        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Params, D::Error> {
            deserializer.deserialize_map(self)
        }
    }

    impl<'de> Visitor<'de> for ParamsSeed {
        type Value = Params;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Params, A::Error> {
            let map = MapAccessDeserializer::new(map);
            Ok(match self.0 {
                Kind::CallTool => Params::CallTool(Deserialize::deserialize(map)?),
                Kind::ListTools => Params::ListTools(Deserialize::deserialize(map)?),
                Kind::ReadResource => Params::ReadResource(Deserialize::deserialize(map)?),
                Kind::GetPrompt => Params::GetPrompt(Deserialize::deserialize(map)?),
            })
        }
    }

    /// rmcp's request of `params`, as its `Request` deserializer makes
    /// it: `_meta` moved from the params into the extensions.
    fn request<M: Default, P>(params: P, meta: Option<RequestMetaObject>) -> Request<M, P> {
        let mut request = Request::new(params);
        if let Some(meta) = meta {
            request.extensions.insert(meta);
        }
        request
    }

    /// The whole message.
    struct Message;

    impl<'de> Visitor<'de> for Message {
        type Value = JsonRpcRequest<ClientRequest>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON-RPC request")
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<JsonRpcRequest<ClientRequest>, A::Error> {
            let mut version = None;
            let mut id = None;
            let mut kind = None;
            let mut params = None;
            while let Some(key) = map.next_key()? {
                match key {
                    Key::Jsonrpc if version.is_none() => {
                        version = Some(map.next_value::<Version>()?)
                    }
                    Key::Id if id.is_none() => id = Some(map.next_value::<Id>()?.0),
                    Key::Method if kind.is_none() => kind = Some(map.next_value::<Kind>()?),
                    Key::Params if params.is_none() => {
                        // Its kind must be known to read it in this pass.
                        let kind = kind.ok_or_else(other)?;
                        params = Some(map.next_value_seed(ParamsSeed(kind))?);
                    }
                    Key::Other => {
                        map.next_value::<IgnoredAny>()?;
                    }
                    _ => return Err(other()),
                }
            }
            let (Some(Version), Some(id), Some(kind)) = (version, id, kind) else {
                return Err(other());
            };
            let request = match (kind, params) {
                (Kind::CallTool, Some(Params::CallTool(mut params))) => {
                    let meta = params.meta.take();
                    ClientRequest::CallToolRequest(request(params, meta))
                }
                (Kind::ListTools, None) => ClientRequest::ListToolsRequest(ListToolsRequest {
                    method: Default::default(),
                    params: None,
                    extensions: Default::default(),
                }),
                (Kind::ListTools, Some(Params::ListTools(mut params))) => {
                    let meta = params.meta.take();
                    let mut list = ListToolsRequest {
                        method: Default::default(),
                        params: Some(params),
                        extensions: Default::default(),
                    };
                    if let Some(meta) = meta {
                        list.extensions.insert(meta);
                    }
                    ClientRequest::ListToolsRequest(list)
                }
                (Kind::ReadResource, Some(Params::ReadResource(mut params))) => {
                    let meta = params.meta.take();
                    ClientRequest::ReadResourceRequest(request(params, meta))
                }
                (Kind::GetPrompt, Some(Params::GetPrompt(mut params))) => {
                    let meta = params.meta.take();
                    ClientRequest::GetPromptRequest(request(params, meta))
                }
                // Without params (rmcp's error), or a second kind.
                _ => return Err(other()),
            };
            Ok(JsonRpcRequest::new(id, request))
        }
    }
}

fn check<T: DeserializeOwned>(method: &str, params: Option<&Value>) -> Option<String> {
    let mut request = json!({ "method": method });
    if let Some(params) = params {
        request["params"] = params.clone();
    }
    serde_json::from_value::<T>(request)
        .err()
        .map(|e| e.to_string())
}

/// The `_meta` key a request of the stateless era (2026-07-28 and later)
/// carries its protocol version in.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The stateless era's opening request.
const DISCOVER: &str = "server/discover";

/// Which of the `_meta` fields every stateless-era request needs (protocol
/// version, client capabilities) `params` lack, by rmcp's own rule.
fn missing_stateless_meta(params: Option<&Value>) -> Option<String> {
    let meta = params
        .and_then(|params| params.get("_meta"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let missing =
        RequestMetaObject::from(meta).missing_required_keys(&ProtocolVersion::V_2026_07_28);
    (!missing.is_empty()).then(|| {
        format!(
            "_meta is missing or has malformed required fields: {}",
            missing.join(", ")
        )
    })
}

/// Whether `params` say the request is of the stateless era: its `_meta`
/// names a protocol version. Such a request has no `initialize`, `ping` or
/// `logging/setLevel` to serve: they are answered `-32601` here.
fn is_stateless_era(params: Option<&Value>) -> bool {
    params
        .and_then(|params| params.get("_meta"))
        .and_then(|meta| meta.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .is_some_and(|version| version >= "2026-07-28")
}

/// Why `params` do not fit `method`, for the methods this server serves
/// (`None` for any other method: rmcp answers those).
fn params_error(method: &str, params: Option<&Value>) -> Option<String> {
    match method {
        "initialize" => check::<InitializeRequest>(method, params),
        "ping" => check::<PingRequest>(method, params),
        "tools/list" => check::<ListToolsRequest>(method, params),
        "tools/call" => check::<CallToolRequest>(method, params),
        // It exists only in the stateless era, so it always needs that
        // era's `_meta`.
        DISCOVER => {
            check::<DiscoverRequest>(method, params).or_else(|| missing_stateless_meta(params))
        }
        #[allow(deprecated)]
        "logging/setLevel" => check::<SetLevelRequest>(method, params),
        _ => None,
    }
}

/// The top-level `"id"` of a JSON object whose text starts with `head`,
/// when it appears there: an integer, or a string without escapes. Keys
/// inside nested values are skipped, so a nested `"id"` is never taken for
/// the request's.
pub(crate) fn id_in_prefix(head: &[u8]) -> Option<RequestId> {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let mut depth = 0usize;
    let mut i = 0;
    // Whether the next string at depth 1 is a key (after `{` or `,`).
    let mut expect_key = false;
    while i < head.len() {
        match head[i] {
            b'"' => {
                let start = i + 1;
                let mut end = start;
                while end < head.len() && head[end] != b'"' {
                    end += if head[end] == b'\\' { 2 } else { 1 };
                }
                if end >= head.len() {
                    return None;
                }
                let is_key = depth == 1 && expect_key;
                expect_key = false;
                i = end + 1;
                if is_key && &head[start..end] == b"id" {
                    return id_value(&head[i..]);
                }
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                expect_key = head[i] == b'{' && depth == 1;
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => expect_key = true,
            _ => {}
        }
        i += 1;
    }
    None
}

fn id_value(rest: &[u8]) -> Option<RequestId> {
    let rest = rest
        .trim_ascii_start()
        .strip_prefix(b":")?
        .trim_ascii_start();
    if let Some(string) = rest.strip_prefix(b"\"") {
        let end = string.iter().position(|&b| b == b'"' || b == b'\\')?;
        if string[end] != b'"' {
            return None;
        }
        return std::str::from_utf8(&string[..end])
            .ok()
            .map(|s| RequestId::String(s.into()));
    }
    let end = rest
        .iter()
        .position(|b| !(b.is_ascii_digit() || *b == b'-'))
        .unwrap_or(rest.len());
    let after = rest.get(end).copied();
    if end == rest.len() || !matches!(after, Some(b',' | b'}' | b' ' | b'\t' | b'\r' | b'\n')) {
        return None;
    }
    std::str::from_utf8(&rest[..end])
        .ok()?
        .parse()
        .ok()
        .map(RequestId::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejection(text: &str) -> Rejection {
        match read(text.as_bytes()) {
            Inbound::Reject(rejection) => rejection,
            other => panic!("{text} was not rejected: {other:?}"),
        }
    }

    #[test]
    fn hot_requests_read_as_rmcp_reads_them() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":7}"#;
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{{"name":"add","arguments":{{}},{meta}}}}}"#),
            r#"{"jsonrpc":"2\u002e0","id":1,"method":"tools/call","params":{"name":"add"}}"#.to_owned(),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"add\"}}\r\n".to_owned(),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{"cursor":"c",{meta}}}}}"#),
            r#"{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"notes://1"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"p","arguments":{"k":"v"}}}"#.to_owned(),
        ];
        for line in &lines {
            let value: Value = serde_json::from_str(line).unwrap();
            let hot = hot_request(&value).unwrap_or_else(|| panic!("{line} is read directly"));
            let rmcp = JsonRpcRequest::<ClientRequest>::deserialize(&value).unwrap();
            assert_eq!(hot.id, rmcp.id, "{line}");
            assert_eq!(hot.request.method(), rmcp.request.method(), "{line}");
            assert_eq!(
                serde_json::to_value(&hot).unwrap(),
                serde_json::to_value(&rmcp).unwrap(),
                "{line}"
            );
        }
        // A kind that cannot read the request leaves it to rmcp.
        let bad: Value = serde_json::from_str(
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"arguments":{}}}"#,
        )
        .unwrap();
        assert!(hot_request(&bad).is_none());
    }

    /// What `read` gives for `text`, to compare: a message as its JSON and
    /// its `_meta` extension (the JSON merges it into the params).
    fn outcome(inbound: Inbound) -> String {
        match inbound {
            Inbound::Message(message) => {
                let meta = match &*message {
                    JsonRpcMessage::Request(request) => {
                        use rmcp::model::GetExtensions as _;
                        let meta = request.request.extensions().get::<RequestMetaObject>();
                        format!("{meta:?}")
                    }
                    _ => String::new(),
                };
                format!("message {} {meta}", serde_json::to_value(&message).unwrap())
            }
            other => format!("{other:?}"),
        }
    }

    /// The typed read gives what the `Value` read gives, or leaves the
    /// message to it.
    fn read_as_value_reads(text: &str) -> bool {
        let bytes = text.as_bytes();
        let typed = hot::read(bytes).is_some();
        assert_eq!(outcome(read(bytes)), outcome(read_value(bytes)), "{text}");
        typed
    }

    #[test]
    fn the_typed_read_of_a_hot_request_is_the_value_read() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":7}"#;
        let typed = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{{"name":"add","arguments":{{}},{meta}}}}}"#),
            format!(r#"{{"id":"x","method":"tools/call","params":{{{meta},"name":"add"}},"jsonrpc":"2.0"}}"#),
            r#" { "jsonrpc" : "2.0" , "id" : -3 , "method" : "tools/call" , "params" : { "name" : "a\u00e9\"b" , "arguments" : { "x" : [1.5, 2e3, null, {"y": "z"}], "x": 7 }, "extra": true } , "also": [1] } "#.to_owned(),
            r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/call","params":{"name":"n","_meta":null,"arguments":null}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":"","method":"tools/call","params":{"name":"n","requestState":"s","inputResponses":{"q":{"action":"accept"}}}}"#.to_owned(),
            r#"{"jsonrpc":"2\u002e0","id":1,"method":"tools/call","params":{"name":"add"}}"#.to_owned(),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"add\"}}\r\n".to_owned(),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"unknown":1}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{"cursor":"c",{meta}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{{meta}}}}}"#),
            r#"{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"notes://1"}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{{"uri":"notes://1",{meta}}}}}"#),
            r#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"p","arguments":{"k":"v"}}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{{"name":"p",{meta}}}}}"#),
        ];
        for text in &typed {
            assert!(read_as_value_reads(text), "{text} is read typed");
        }
        // Left to the `Value` read, which serves some and answers the rest.
        let left = [
            // Other methods and kinds of message.
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"},"error":null}"#,
            // Served by the `Value` read all the same.
            r#"{"jsonrpc":"2.0","id":1,"params":{"name":"add"},"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}"#,
            // Answered with an error.
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"add"}}"#,
            r#"{"id":1,"method":"tools/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","id":null,"params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"tools/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[null,"add"]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":"oops"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":5}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{}}"#,
            r#"["2.0",1,"tools/call",{"name":"add"}]"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}} x"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}"#,
        ];
        for text in left {
            assert!(
                !read_as_value_reads(text),
                "{text} is left to the Value read"
            );
        }
    }

    fn served(text: &str) -> ClientJsonRpcMessage {
        match read(text.as_bytes()) {
            Inbound::Message(message) => *message,
            other => panic!("{text} was not served: {other:?}"),
        }
    }

    #[test]
    fn well_formed_messages_pass() {
        served(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}"#,
        );
        served(r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#);
        served(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        served(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
        // Unknown methods reach rmcp, which answers -32601.
        served(r#"{"jsonrpc":"2.0","id":2,"method":"no/such","params":{}}"#);
        served("\u{feff}{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
    }

    #[test]
    fn a_request_or_notification_read_directly_is_what_rmcp_reads() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":null}]}}}"#,
            r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"add","arguments":{"a":2},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"c"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"no/such","params":{"x":1}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"r"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{"y":[]}}"#,
        ] {
            let value: Value = serde_json::from_str(text).unwrap();
            let has_id = value.get("id").is_some();
            let ours = deserialize_message(&value, has_id).unwrap();
            let rmcp = ClientJsonRpcMessage::deserialize(&value).unwrap();
            assert_eq!(
                serde_json::to_value(&ours).unwrap(),
                serde_json::to_value(&rmcp).unwrap(),
                "{text}"
            );
            assert_eq!(
                std::mem::discriminant(&ours),
                std::mem::discriminant(&rmcp),
                "{text}"
            );
        }
    }

    #[test]
    fn each_malformed_message_gets_its_code_and_id() {
        let cases: &[(&str, i32, Option<RequestId>)] = &[
            ("{not json", PARSE_ERROR, None),
            ("", PARSE_ERROR, None),
            ("[]", INVALID_REQUEST, None),
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                INVALID_REQUEST,
                None,
            ),
            ("42", INVALID_REQUEST, None),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                INVALID_REQUEST,
                None,
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                INVALID_REQUEST,
                None,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                INVALID_REQUEST,
                None,
            ),
            (
                r#"{"jsonrpc":"1.0","id":4,"method":"ping"}"#,
                INVALID_REQUEST,
                Some(RequestId::Number(4)),
            ),
            (
                r#"{"id":4,"method":"ping"}"#,
                INVALID_REQUEST,
                Some(RequestId::Number(4)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[]}"#,
                INVALID_REQUEST,
                Some(RequestId::Number(5)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":[1]}"#,
                INVALID_REQUEST,
                Some(RequestId::String("s".into())),
            ),
            (
                r#"{"jsonrpc":"2.0","id":6,"method":7}"#,
                INVALID_REQUEST,
                Some(RequestId::Number(6)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":6}"#,
                INVALID_REQUEST,
                Some(RequestId::Number(6)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","arguments":"oops"}}"#,
                INVALID_PARAMS,
                Some(RequestId::Number(8)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{}}}"#,
                INVALID_PARAMS,
                Some(RequestId::Number(9)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":10,"method":"initialize","params":{}}"#,
                INVALID_PARAMS,
                Some(RequestId::Number(10)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":11,"method":"logging/setLevel","params":{"level":"loud"}}"#,
                INVALID_PARAMS,
                Some(RequestId::Number(11)),
            ),
        ];
        for (text, code, id) in cases {
            let rejection = rejection(text);
            assert_eq!(
                (rejection.code, &rejection.id),
                (*code, id),
                "{text}: {rejection:?}"
            );
        }
    }

    #[test]
    fn removed_methods_of_the_stateless_era_are_not_found() {
        // A 2026 request for a method that era removed is -32601 (HTTP 404),
        // not a params error about 2025 fields, and never served.
        for method in ["initialize", "ping", "logging/setLevel"] {
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
            );
            let rejection = rejection(&text);
            assert_eq!(rejection.code, METHOD_NOT_FOUND, "{method}");
            assert_eq!(rejection.id, Some(RequestId::Number(7)), "{method}");
        }
        // The same shapes without the stateless `_meta` are still checked.
        let legacy = r#"{"jsonrpc":"2.0","id":8,"method":"initialize","params":{}}"#;
        assert_eq!(rejection(legacy).code, INVALID_PARAMS);
    }

    #[test]
    fn a_discover_without_the_stateless_meta_fields_is_a_params_error() {
        for params in [
            "",
            r#","params":{}"#,
            r#","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}"#,
            r#","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
            r#","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7,"io.modelcontextprotocol/clientCapabilities":{}}}"#,
        ] {
            let text =
                format!(r#"{{"jsonrpc":"2.0","id":"d","method":"server/discover"{params}}}"#);
            let rejection = rejection(&text);
            assert_eq!(
                (rejection.code, rejection.id),
                (INVALID_PARAMS, Some(RequestId::String("d".into()))),
                "{text}"
            );
        }
        // With both fields it reaches rmcp, which also judges the version.
        served(
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        );
    }

    #[test]
    fn unreadable_notifications_and_responses_are_dropped() {
        for text in [
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"_meta":5}}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":"not an error object"}"#,
        ] {
            let read = read(text.as_bytes());
            assert!(matches!(read, Inbound::Ignore), "{text}: {read:?}");
        }
    }

    #[test]
    fn the_answer_is_a_json_rpc_error_with_a_null_id_when_unknown() {
        assert_eq!(
            Rejection::new(PARSE_ERROR, "Parse error: x", None).to_json(),
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error: x"}})
        );
        assert_eq!(
            Rejection::new(INVALID_PARAMS, "m", Some(RequestId::String("a".into()))).to_json()
                ["id"],
            "a"
        );
    }

    #[test]
    fn a_huge_bad_value_is_not_echoed_whole() {
        let huge = "x".repeat(100_000);
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":"{huge}"}}}}"#
        );
        let rejection = rejection(&text);
        assert_eq!(rejection.code, INVALID_PARAMS);
        assert!(rejection.message.len() < 400, "{}", rejection.message.len());
    }

    #[test]
    fn the_id_of_an_oversized_message_is_found_at_the_top_level_only() {
        assert_eq!(
            id_in_prefix(br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"#),
            Some(RequestId::Number(12))
        );
        assert_eq!(
            id_in_prefix(br#"{ "id" : "abc", "x""#),
            Some(RequestId::String("abc".into()))
        );
        assert_eq!(
            id_in_prefix(br#"{"params":{"id":3,"text":"aaaa"#),
            None,
            "a nested id is not the request's"
        );
        assert_eq!(
            id_in_prefix(br#"{"method":"x","id":-4}"#),
            Some(RequestId::Number(-4))
        );
        assert_eq!(
            id_in_prefix(br#"{"note":"the \"id\": 3","id":5,"#),
            Some(RequestId::Number(5))
        );
        assert_eq!(
            id_in_prefix(br#"{"id":123"#),
            None,
            "the number may be cut off"
        );
        assert_eq!(id_in_prefix(br#"{"id":"a\"b","#), None);
    }
}
