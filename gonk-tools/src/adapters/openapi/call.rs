//! One call of an imported operation: the validated input made into the
//! HTTP request (path templating with escaping, the query, headers, the
//! JSON body, the source's own headers last), sent within the time limit
//! and read within the size bound; 2xx is the output, anything else a
//! `REMOTE_*` error.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::context::ToolContext;
use crate::error::{ErrorCode, ToolError};

use super::operation::{Body, Param, Place};
use super::SourceShared;

/// The most characters of an error response's body that the error keeps.
const ERROR_BODY_LIMIT: usize = 500;

/// An imported operation, as its handler needs it.
pub(super) struct HttpOperation {
    pub(super) shared: Arc<SourceShared>,
    /// Our name (`<source>.<operation>`).
    pub(super) name: String,
    pub(super) method: reqwest::Method,
    pub(super) path: String,
    pub(super) params: Vec<Param>,
    pub(super) body: Body,
}

impl HttpOperation {
    /// Runs one call, raced against cancellation and the call's deadline.
    pub(super) async fn run(
        self: Arc<Self>,
        input: Value,
        ctx: ToolContext,
    ) -> Result<Value, ToolError> {
        let limit = self.shared.options.timeout;
        let deadline = tokio::time::Instant::now() + limit;
        let deadline = ctx
            .deadline()
            .map_or(deadline, |theirs| theirs.min(deadline));
        let call = self.call(input);
        tokio::select! {
            biased;
            _ = ctx.cancellation().cancelled() => Err(ToolError::new(
                ErrorCode::RemoteCancelled,
                format!("The call of {} was cancelled; the HTTP request was dropped", self.name),
            )),
            _ = tokio::time::sleep_until(deadline) => Err(self.timed_out(limit)),
            event = call => event,
        }
    }

    fn timed_out(&self, limit: Duration) -> ToolError {
        ToolError::new(
            ErrorCode::RemoteTimeout,
            format!(
                "{} ({} {}) did not answer within {}; the request was dropped",
                self.name,
                self.method,
                self.path,
                humantime::format_duration(limit)
            ),
        )
    }

    async fn call(&self, input: Value) -> Result<Value, ToolError> {
        let request = self.request(input)?;
        let mut response = match request.send().await {
            Ok(response) => response,
            Err(error) if error.is_timeout() => {
                return Err(self.timed_out(self.shared.options.timeout))
            }
            Err(error) => return Err(self.transport_error(&error.to_string())),
        };
        let status = response.status();
        let limit = self.shared.options.max_response_bytes;
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > limit {
                        return Err(
                            ToolError::new(
                                ErrorCode::RemoteProtocolError,
                                format!(
                                    "{} answered more than {limit} bytes (HTTP {status}); the response was dropped — raise the source's response limit if the API really answers this much",
                                    self.name
                                ),
                            )
                            .with_details(json!({"status": status.as_u16(), "limit": limit})),
                        );
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(error) if error.is_timeout() => {
                    return Err(self.timed_out(self.shared.options.timeout))
                }
                Err(error) => return Err(self.transport_error(&error.to_string())),
            }
        }
        let text = String::from_utf8_lossy(&body);
        if !status.is_success() {
            let excerpt = cut(&text, ERROR_BODY_LIMIT);
            let parsed = serde_json::from_slice::<Value>(&body).ok();
            return Err(ToolError::new(
                ErrorCode::RemoteToolError,
                format!(
                    "{} answered HTTP {status} ({} {}): {}",
                    self.name,
                    self.method,
                    self.path,
                    if excerpt.is_empty() {
                        "no body"
                    } else {
                        excerpt
                    }
                ),
            )
            .with_details(json!({
                "status": status.as_u16(),
                "body": parsed.unwrap_or_else(|| Value::String(excerpt.to_owned())),
            })));
        }
        let data = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&body).unwrap_or_else(|_| Value::String(text.into_owned()))
        };
        Ok(data)
    }

    /// The request for `input` (checked against the input schema already).
    fn request(&self, input: Value) -> Result<reqwest::RequestBuilder, ToolError> {
        let Value::Object(mut input) = input else {
            return Err(ToolError::new(
                ErrorCode::InvalidInput,
                "the input is not an object",
            ));
        };
        let mut path = self.path.clone();
        let mut query: Vec<(String, String)> = Vec::new();
        let mut headers: Vec<(String, String)> = Vec::new();
        for param in &self.params {
            let Some(value) = input.remove(&param.name) else {
                continue;
            };
            match param.place {
                Place::Path => {
                    let text = scalar(&param.name, &value, ",")?;
                    if text == "." || text == ".." || text.is_empty() {
                        return Err(ToolError::new(
                            ErrorCode::InvalidInput,
                            format!("path parameter {} may not be {text:?}", param.name),
                        ));
                    }
                    let escaped: String =
                        percent_encoding::utf8_percent_encode(&text, SEGMENT).collect();
                    path = path.replace(&format!("{{{}}}", param.name), &escaped);
                }
                Place::Query => match &value {
                    Value::Array(items) if param.explode => {
                        for item in items {
                            query.push((param.name.clone(), scalar(&param.name, item, ",")?));
                        }
                    }
                    Value::Null => {}
                    other => query.push((param.name.clone(), scalar(&param.name, other, ",")?)),
                },
                Place::Header => {
                    if !value.is_null() {
                        headers.push((param.name.clone(), scalar(&param.name, &value, ",")?));
                    }
                }
            }
        }
        let mut url = self.shared.base_url.clone();
        let joined = format!("{}{path}", url.path().trim_end_matches('/'));
        url.set_path(&joined);
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let mut request = self
            .shared
            .client
            .request(self.method.clone(), url)
            .timeout(self.shared.options.timeout)
            .header("accept", "application/json");
        for (name, value) in headers {
            request = request.header(name, value);
        }
        for (name, value) in (self.shared.options.headers)().map_err(|reason| {
            ToolError::new(
                ErrorCode::RemoteTransportError,
                format!(
                    "{}: the source's headers could not be resolved: {reason}",
                    self.name
                ),
            )
        })? {
            request = request.header(name, value);
        }
        let body = match self.body {
            Body::None => None,
            Body::Whole => input.remove("body"),
            // What the parameters left is the body's fields (the schema
            // allowed nothing else).
            Body::Flat { required } => {
                (required || !input.is_empty()).then(|| Value::Object(std::mem::take(&mut input)))
            }
        };
        if let Some(body) = body {
            let bytes = serde_json::to_vec(&body).map_err(|e| {
                ToolError::new(ErrorCode::Internal, format!("the body is not JSON: {e}"))
            })?;
            request = request
                .header("content-type", "application/json")
                .body(bytes);
        }
        Ok(request)
    }

    fn transport_error(&self, message: &str) -> ToolError {
        ToolError::new(
            ErrorCode::RemoteTransportError,
            format!(
                "{} ({} {}) failed: {message}; check that the API is up at {}",
                self.name, self.method, self.path, self.shared.endpoint
            ),
        )
        .with_details(json!({"name": "HttpTransportError", "message": message}))
    }
}

/// Everything but unreserved characters escaped: a value cannot leave its
/// path segment (`/`, `?`, `#`, `%` are all escaped).
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// A parameter value as text: strings as they are, numbers and booleans
/// as JSON writes them, arrays joined with `sep`.
fn scalar(name: &str, value: &Value, sep: &str) -> Result<String, ToolError> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Array(items) => items
            .iter()
            .map(|i| scalar(name, i, sep))
            .collect::<Result<Vec<_>, _>>()
            .map(|parts| parts.join(sep)),
        Value::Null | Value::Object(_) => Err(ToolError::new(
            ErrorCode::InvalidInput,
            format!(
                "parameter {name} cannot be sent as {}",
                crate::error::quote(value)
            ),
        )),
    }
}

fn cut(text: &str, limit: usize) -> &str {
    match text.char_indices().nth(limit) {
        None => text,
        Some((end, _)) => &text[..end],
    }
}
