//! [`OpenApiSource`]: an HTTP API's OpenAPI 3.0 or 3.1 document imported
//! into a registry as one source catalog — a tool per operation, called as
//! the HTTP request, governed like local tools (feature `openapi`).
//!
//! ```no_run
//! use gonk_tools::adapters::openapi::{OpenApiSource, OpenApiSpec, RouteMap};
//! use gonk_tools::prelude::*;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = ToolRegistry::new();
//! let todo = OpenApiSource::builder("todo", OpenApiSpec::url("http://127.0.0.1:8000/openapi.json"))
//!     .header("authorization", format!("Bearer {}", std::env::var("TODO_TOKEN")?))
//!     .exclude(RouteMap::parse("tag:admin")?)
//!     .connect(&registry)
//!     .await?;
//! // `todo.create_todo` (POST /todos): the body's fields are its arguments; a write.
//! let events = registry.invoke("todo.create_todo", json!({"title": "milk"}), ToolContext::new());
//! let created = collect_tool_outcome(events, |_| {}).await?;
//! println!("{}", created.data);
//! # let _ = todo;
//! # Ok(()) }
//! ```
//!
//! # The catalog
//!
//! The document is JSON or YAML (at most 16 MiB; YAML's aliases bounded),
//! read from a file or fetched from its URL with the source's
//! [`header`](OpenApiSourceBuilder::header)s, so a document behind the
//! API's own credentials can be read. Each operation the route maps keep ([`include`](OpenApiSourceBuilder::include),
//! then [`exclude`](OpenApiSourceBuilder::exclude)) becomes
//! `<source>.<operationId>` — the id with every character outside
//! `A-Za-z0-9_.-` made `_`, or `<method>_<path>` when there is none. Its
//! input is one object: each path, query and header parameter under its
//! own name, and the JSON request body's top-level fields beside them —
//! so a transform can hide or rename a body field like any argument. The
//! body stays whole, under `body`, when its fields cannot stand beside the
//! parameters: a field named like a parameter (a clash), a body that is
//! not a plain object schema (an array, `allOf`/`oneOf`, a schema for extra
//! fields). Flattened, the body takes only the fields its schema declares.
//! Its output schema is the first JSON 2xx response's. Local `$ref`s are inlined (at most 32
//! deep, 20,000 schema parts), 3.0's `nullable` and boolean exclusive
//! bounds become JSON Schema. An operation that cannot be imported as it
//! is — an empty or colliding `operationId`, a remote or recursive `$ref`,
//! a name that breaks the naming rule — refuses the document, saying
//! which and why, and a [`refresh`](OpenApiSource::refresh) leaves the
//! previous catalog. One that is legitimate but not supported yet (a
//! required cookie or object parameter, a required non-JSON body) is left
//! out and listed in [`skipped`](OpenApiSource::skipped).
//!
//! # Tiers and trust
//!
//! The approval tier comes from the method: `GET`/`HEAD`/`OPTIONS` read,
//! `POST`/`PUT`/`PATCH` write, `DELETE` (and `TRACE`) `exec`, the
//! destructive tier; [`approval`](OpenApiSourceBuilder::approval)
//! overrides it per operation. The MCP hints follow the method too
//! (`readOnlyHint`, `destructiveHint`, `idempotentHint`). Nothing the
//! document says is shown to a model unless the host
//! [`trust`](OpenApiSourceBuilder::trust)s it: a tool is described as
//! `Remote OpenAPI operation <source>/<operation>`, and its schemas lose
//! their titles and descriptions.
//!
//! # Calls
//!
//! Path parameters are escaped into their segment (a value cannot add a
//! segment or a query), query arrays are repeated (`a=1&a=2`) or
//! comma-joined (`explode: false`), the body is sent as JSON (a flattened
//! optional body only when one of its fields is given), and the
//! source's [`header`](OpenApiSourceBuilder::header)s go last — credentials
//! come from the host, never from the document. A 2xx answer's JSON is the
//! output (text when it is not JSON, `null` when empty); any other status
//! is `REMOTE_TOOL_ERROR` with the status and at most 500 characters of
//! the body. Redirects are not followed. A call takes at most the
//! [`timeout`](OpenApiSourceBuilder::timeout) (`REMOTE_TIMEOUT`) and reads
//! at most [`max_response_bytes`](OpenApiSourceBuilder::max_response_bytes)
//! (`REMOTE_PROTOCOL_ERROR` past it); an unreachable API is
//! `REMOTE_TRANSPORT_ERROR`.

mod call;
mod document;
mod operation;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::definition::{
    validate_tool_name, ApprovalTier, AuthorizationSpec, Capabilities, Hints, McpAnnotations,
    McpHints, Provenance, ToolDefinition, TransformSet, Visibility,
};
use crate::registry::ToolRegistry;
use crate::schema::CompiledSchema;

pub use operation::RouteMap;

use document::Document;

/// The most characters of a trusted description that are kept.
const TRUSTED_DESCRIPTION_LIMIT: usize = 4096;

/// Where the document is.
#[derive(Clone, Debug)]
pub enum OpenApiSpec {
    /// A file.
    File(PathBuf),
    /// An `http(s)` URL (`https://`, or `http://` on loopback only).
    Url(String),
    /// A document already in hand.
    Json(Value),
}

impl OpenApiSpec {
    /// A document in a file.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        OpenApiSpec::File(path.into())
    }

    /// A document at a URL.
    pub fn url(url: impl Into<String>) -> Self {
        OpenApiSpec::Url(url.into())
    }

    /// "A file or a URL": a string starting with `http://` or `https://`
    /// is a URL, anything else a file path.
    pub fn file_or_url(location: &str) -> Self {
        if location.starts_with("http://") || location.starts_with("https://") {
            OpenApiSpec::url(location)
        } else {
            OpenApiSpec::file(location)
        }
    }

    fn origin(&self) -> String {
        match self {
            OpenApiSpec::File(path) => path.display().to_string(),
            OpenApiSpec::Url(url) => url.split(['?', '#']).next().unwrap_or_default().to_owned(),
            OpenApiSpec::Json(_) => "(given as JSON)".to_owned(),
        }
    }
}

/// Why a source could not be imported or refreshed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenApiSourceError {
    /// The document could not be read (a missing file, a URL that does
    /// not answer, a document over the size bound).
    #[error("OpenAPI source {source_id}: {reason}")]
    Read {
        /// The source's id.
        source_id: String,
        /// What went wrong.
        reason: String,
    },
    /// The document cannot be imported as it is; on a refresh the previous
    /// catalog stays.
    #[error("OpenAPI source {source_id}: document refused: {reason}")]
    Refused {
        /// The source's id.
        source_id: String,
        /// What is wrong, naming the operation.
        reason: String,
    },
    /// The configuration can never work (an unusable id or base URL).
    #[error("OpenAPI source {source_id}: {reason}")]
    Invalid {
        /// The source's id.
        source_id: String,
        /// What to fix.
        reason: String,
    },
}

/// What the source's headers come from: called for every request.
type HeaderResolver = Arc<dyn Fn() -> Result<Vec<(String, String)>, String> + Send + Sync>;

#[derive(Clone)]
struct SourceOptions {
    base_url: Option<String>,
    include: Vec<RouteMap>,
    exclude: Vec<RouteMap>,
    approvals: BTreeMap<String, ApprovalTier>,
    trusted: bool,
    visibility: Visibility,
    authorization: Option<AuthorizationSpec>,
    timeout: Duration,
    max_response_bytes: usize,
    max_document_bytes: usize,
    static_headers: Vec<(String, String)>,
    headers: HeaderResolver,
    transforms: TransformSet,
}

/// What a source's tools share.
struct SourceShared {
    options: SourceOptions,
    client: reqwest::Client,
    base_url: reqwest::Url,
    /// The base URL as provenance and errors show it.
    endpoint: String,
}

/// Builds an [`OpenApiSource`]; see [the module](self).
pub struct OpenApiSourceBuilder {
    id: String,
    spec: OpenApiSpec,
    options: SourceOptions,
}

impl OpenApiSourceBuilder {
    /// The API's base URL, used instead of the document's first `servers`
    /// entry; `https://`, or `http://` on loopback only.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.options.base_url = Some(url.into());
        self
    }

    /// Imports only operations matching one of the maps added this way
    /// (every operation when none is).
    pub fn include(mut self, route: RouteMap) -> Self {
        self.options.include.push(route);
        self
    }

    /// Leaves out operations matching this map (after `include`).
    pub fn exclude(mut self, route: RouteMap) -> Self {
        self.options.exclude.push(route);
        self
    }

    /// The tier of operation `operation` (its cleaned `operationId`),
    /// instead of the one its method gives.
    pub fn approval(mut self, operation: impl Into<String>, tier: ApprovalTier) -> Self {
        self.options.approvals.insert(operation.into(), tier);
        self
    }

    /// Shows the document's summaries, descriptions and schema titles to
    /// models (default: not).
    pub fn trust(mut self, trusted: bool) -> Self {
        self.options.trusted = trusted;
        self
    }

    /// How the tools are listed (default on demand).
    pub fn visibility(mut self, visibility: Visibility) -> Self {
        self.options.visibility = visibility;
        self
    }

    /// The authorization spec every tool carries.
    pub fn authorization(mut self, spec: AuthorizationSpec) -> Self {
        self.options.authorization = Some(spec);
        self
    }

    /// How long one call may take, answer read included (default 30 s).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.options.timeout = limit;
        self
    }

    /// The most bytes a call's answer may have (default 10 MiB).
    pub fn max_response_bytes(mut self, limit: usize) -> Self {
        self.options.max_response_bytes = limit;
        self
    }

    /// The most bytes the document may have (default 16 MiB).
    pub fn max_document_bytes(mut self, limit: usize) -> Self {
        self.options.max_document_bytes = limit;
        self
    }

    /// A header sent with every call (`authorization: Bearer …`), set
    /// after the operation's own header parameters.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.options
            .static_headers
            .push((name.into(), value.into()));
        self
    }

    /// Headers computed for every call (a rotating token), sent after the
    /// static ones; an error fails the call with `REMOTE_TRANSPORT_ERROR`.
    pub fn headers(
        mut self,
        resolve: impl Fn() -> Result<Vec<(String, String)>, String> + Send + Sync + 'static,
    ) -> Self {
        self.options.headers = Arc::new(resolve);
        self
    }

    /// Transforms applied to the imported tools, by their imported name
    /// (`<source>.<operation>`): the transformed tool replaces the
    /// original. One that does not fit its tool refuses the document.
    pub fn transforms(mut self, transforms: TransformSet) -> Self {
        self.options.transforms = transforms;
        self
    }

    /// Reads the document and registers its operations in `registry` as
    /// source `id` (revision 1). On any error nothing is registered.
    pub async fn connect(
        self,
        registry: &ToolRegistry,
    ) -> Result<OpenApiSource, OpenApiSourceError> {
        let invalid = |reason: String| OpenApiSourceError::Invalid {
            source_id: self.id.clone(),
            reason,
        };
        validate_tool_name(&format!("{}.x", self.id)).map_err(|reason| {
            invalid(format!(
                "the id is not usable as a tool-name prefix: {reason}"
            ))
        })?;
        for (name, value) in &self.options.static_headers {
            check_header(name, value).map_err(&invalid)?;
        }
        let client = crate::adapters::http::OutboundHttp::new()
            .client_builder()
            .map_err(|e| invalid(format!("the HTTP client could not be built: {e}")))?
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(self.options.timeout)
            .build()
            .map_err(|e| invalid(format!("the HTTP client could not be built: {e}")))?;
        let static_headers = self.options.static_headers.clone();
        let dynamic = Arc::clone(&self.options.headers);
        let mut options = self.options;
        options.headers = Arc::new(move || {
            let mut all = static_headers.clone();
            all.extend(dynamic()?);
            Ok(all)
        });
        let source = OpenApiSource {
            id: self.id,
            spec: self.spec,
            options,
            client,
            registry: registry.clone(),
            revision: Mutex::new(0),
            skipped: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
        };
        source.refresh().await?;
        Ok(source)
    }
}

fn check_header(name: &str, value: &str) -> Result<(), String> {
    reqwest::header::HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| format!("header name {name:?} is not valid HTTP"))?;
    reqwest::header::HeaderValue::from_str(value)
        .map_err(|_| format!("the value of header {name} is not valid HTTP (a line break?)"))?;
    Ok(())
}

/// An HTTP API's operations, kept as one source catalog of a
/// [`ToolRegistry`] for as long as the source is kept (dropping it
/// unregisters them, as [`close`](Self::close) does); see [the module](self).
pub struct OpenApiSource {
    id: String,
    spec: OpenApiSpec,
    options: SourceOptions,
    client: reqwest::Client,
    registry: ToolRegistry,
    revision: Mutex<u64>,
    skipped: Mutex<Vec<(String, String)>>,
    closed: AtomicBool,
}

impl OpenApiSource {
    /// A source `id` (the tool-name prefix and the registry's source id)
    /// from the document at `spec`.
    pub fn builder(id: impl Into<String>, spec: OpenApiSpec) -> OpenApiSourceBuilder {
        OpenApiSourceBuilder {
            id: id.into(),
            spec,
            options: SourceOptions {
                base_url: None,
                include: Vec::new(),
                exclude: Vec::new(),
                approvals: BTreeMap::new(),
                trusted: false,
                visibility: Visibility::OnDemand,
                authorization: None,
                timeout: Duration::from_secs(30),
                max_response_bytes: 10 << 20,
                max_document_bytes: 16 << 20,
                static_headers: Vec::new(),
                headers: Arc::new(|| Ok(Vec::new())),
                transforms: TransformSet::new(),
            },
        }
    }

    /// The source id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The current catalog revision (1 after connecting, +1 per refresh).
    pub fn revision(&self) -> u64 {
        *self.revision.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The operations left out as not supported: `(METHOD path, why)`.
    pub fn skipped(&self) -> Vec<(String, String)> {
        self.skipped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Reads the document again and replaces the catalog with it; the new
    /// revision. On error the previous catalog and revision stay.
    pub async fn refresh(&self) -> Result<u64, OpenApiSourceError> {
        let read = |reason: String| OpenApiSourceError::Read {
            source_id: self.id.clone(),
            reason,
        };
        let refused = |reason: String| OpenApiSourceError::Refused {
            source_id: self.id.clone(),
            reason,
        };
        let text = self.read_document().await.map_err(read)?;
        let origin = self.spec.origin();
        let document = Document::parse(&text, &origin).map_err(refused)?;
        drop(text);
        let base_url = self
            .base_url(&document)
            .map_err(|reason| OpenApiSourceError::Invalid {
                source_id: self.id.clone(),
                reason,
            })?;
        let endpoint = base_url.as_str().trim_end_matches('/').to_owned();
        let shared = Arc::new(SourceShared {
            options: self.options.clone(),
            client: self.client.clone(),
            base_url,
            endpoint,
        });
        let mut revision = self.revision.lock().unwrap_or_else(|p| p.into_inner());
        let next = *revision + 1;
        let (defs, skipped) = self.import(&document, &shared, next).map_err(refused)?;
        if self.closed.load(Ordering::Acquire) {
            return Err(refused("the source is closed".to_owned()));
        }
        self.registry
            .replace_source(&self.id, defs)
            .map_err(|e| refused(e.to_string()))?;
        for (operation, why) in &skipped {
            tracing::warn!(target: "gonk_tools::openapi", source = %self.id, %operation, %why, "operation left out");
        }
        *self.skipped.lock().unwrap_or_else(|p| p.into_inner()) = skipped;
        *revision = next;
        Ok(next)
    }

    /// Unregisters every tool of the source. Closing again does nothing.
    pub fn close(&self) {
        let _commit = self.revision.lock().unwrap_or_else(|p| p.into_inner());
        self.closed.store(true, Ordering::Release);
        self.registry.remove_source(&self.id);
    }

    /// The document's text, read within the size bound.
    async fn read_document(&self) -> Result<String, String> {
        let limit = self.options.max_document_bytes;
        let too_big = || {
            format!(
                "the OpenAPI document {} is over {limit} bytes; raise the source's document limit if it is really this large",
                self.spec.origin()
            )
        };
        match &self.spec {
            OpenApiSpec::Json(value) => Ok(value.to_string()),
            OpenApiSpec::File(path) => {
                let size = tokio::fs::metadata(path)
                    .await
                    .map_err(|e| {
                        format!("cannot read the OpenAPI document {}: {e}", path.display())
                    })?
                    .len();
                if size > limit as u64 {
                    return Err(too_big());
                }
                tokio::fs::read_to_string(path).await.map_err(|e| {
                    format!("cannot read the OpenAPI document {}: {e}", path.display())
                })
            }
            OpenApiSpec::Url(url) => {
                let parsed = checked_url(url)?;
                let origin = self.spec.origin();
                // The source's headers too: a protected document needs the
                // API's credentials (its URL is the host's, like the base URL).
                let headers = (self.options.headers)().map_err(|reason| {
                    format!(
                        "the source's headers could not be resolved to fetch {origin}: {reason}"
                    )
                })?;
                let fetch =
                    async {
                        let mut request = self.client.get(parsed).header(
                            "accept",
                            "application/json, application/yaml;q=0.9, text/yaml;q=0.9, */*;q=0.5",
                        );
                        for (name, value) in headers {
                            request = request.header(name, value);
                        }
                        let mut response = request.send().await.map_err(|e| {
                            format!("cannot fetch the OpenAPI document {origin}: {e}")
                        })?;
                        if !response.status().is_success() {
                            return Err(format!(
                                "fetching the OpenAPI document {origin} answered HTTP {}",
                                response.status()
                            ));
                        }
                        let mut body = Vec::new();
                        while let Some(chunk) = response.chunk().await.map_err(|e| {
                            format!("cannot fetch the OpenAPI document {origin}: {e}")
                        })? {
                            if body.len() + chunk.len() > limit {
                                return Err(too_big());
                            }
                            body.extend_from_slice(&chunk);
                        }
                        String::from_utf8(body)
                            .map_err(|_| format!("the OpenAPI document {origin} is not UTF-8"))
                    };
                match tokio::time::timeout(self.options.timeout, fetch).await {
                    Ok(result) => result,
                    Err(_) => Err(format!(
                        "the OpenAPI document {origin} did not arrive within {}",
                        humantime::format_duration(self.options.timeout)
                    )),
                }
            }
        }
    }

    /// The base URL: the builder's, else the document's first server
    /// (relative to the document's URL when it is relative).
    fn base_url(&self, document: &Document) -> Result<reqwest::Url, String> {
        if let Some(url) = &self.options.base_url {
            return checked_url(url);
        }
        let server = document.root.pointer("/servers/0").and_then(|s| {
            let mut url = s.get("url")?.as_str()?.to_owned();
            if let Some(Value::Object(vars)) = s.get("variables") {
                for (name, var) in vars {
                    if let Some(default) = var.get("default").and_then(Value::as_str) {
                        url = url.replace(&format!("{{{name}}}"), default);
                    }
                }
            }
            Some(url)
        });
        match (server, &self.spec) {
            (Some(url), _) if url.starts_with("http://") || url.starts_with("https://") => {
                checked_url(&url)
            }
            (server, OpenApiSpec::Url(spec)) => {
                let spec = checked_url(spec)?;
                spec.join(server.as_deref().unwrap_or("/"))
                    .map_err(|e| {
                        format!("the document's server URL does not resolve against {spec}: {e}")
                    })
                    .and_then(|url| checked_url(url.as_str()))
            }
            _ => Err(
                "the document names no absolute server URL; give the API's base URL (baseUrl)"
                    .to_owned(),
            ),
        }
    }

    /// The definitions of the operations the route maps keep, and the
    /// ones left out as not supported.
    #[allow(clippy::type_complexity)]
    fn import(
        &self,
        document: &Document,
        shared: &Arc<SourceShared>,
        revision: u64,
    ) -> Result<(Vec<ToolDefinition>, Vec<(String, String)>), String> {
        let options = &self.options;
        let discovered_at =
            humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        let mut defs: Vec<ToolDefinition> = Vec::new();
        let mut skipped = Vec::new();
        let mut names: BTreeMap<String, String> = BTreeMap::new();
        for (method, path, op, item) in operation::operations(document)? {
            let route = format!("{} {path}", method.to_ascii_uppercase());
            let tags = operation::tags_of(op);
            if !options.include.is_empty()
                && !options
                    .include
                    .iter()
                    .any(|m| m.matches(&method, &path, &tags))
            {
                continue;
            }
            if options
                .exclude
                .iter()
                .any(|m| m.matches(&method, &path, &tags))
            {
                continue;
            }
            let remote = operation::remote_name(&method, &path, op)?;
            let name = format!("{}.{remote}", self.id);
            validate_tool_name(&name)
                .map_err(|reason| format!("{route} cannot be imported as {name}: {reason}"))?;
            if let Some(other) = names.insert(name.clone(), route.clone()) {
                return Err(format!(
                    "{route} and {other} are both named {name} (operationIds must be unique); exclude one or fix the document"
                ));
            }
            let built =
                operation::build(document, &method, &path, op, item, remote, options.trusted)
                    .map_err(|reason| format!("{route}: {reason}"))?;
            let op = match built {
                Ok(op) => op,
                Err(why) => {
                    skipped.push((route, why));
                    continue;
                }
            };
            defs.push(self.definition(op, shared, &document.version, revision, &discovered_at)?);
        }
        Ok((options.transforms.apply_all(defs)?, skipped))
    }

    fn definition(
        &self,
        op: operation::Operation,
        shared: &Arc<SourceShared>,
        version: &str,
        revision: u64,
        discovered_at: &str,
    ) -> Result<ToolDefinition, String> {
        let options = &self.options;
        let name = format!("{}.{}", self.id, op.remote);
        let route = format!("{} {}", op.method.to_ascii_uppercase(), op.path);
        CompiledSchema::compile(&op.input_schema)
            .map_err(|e| format!("{route}: its input schema does not compile: {e}"))?;
        if let Some(output) = &op.output_schema {
            CompiledSchema::compile(output)
                .map_err(|e| format!("{route}: its output schema does not compile: {e}"))?;
        }
        let tier = options
            .approvals
            .get(&op.remote)
            .copied()
            .unwrap_or_else(|| operation::tier_of(&op.method));
        let description = match (&op.text, options.trusted) {
            (Some(text), true) => cut(text, TRUSTED_DESCRIPTION_LIMIT),
            _ => format!("Remote OpenAPI operation {}/{}", self.id, op.remote),
        };
        // Untrusted, the document's words rank the tool in a search but
        // are never shown.
        let search_text = match (&op.search_text, options.trusted) {
            (Some(text), false) => Some(cut(text, TRUSTED_DESCRIPTION_LIMIT)),
            _ => None,
        };
        let method = op.method.as_str();
        let annotations = McpAnnotations {
            read_only: Some(matches!(method, "get" | "head" | "options")),
            destructive: Some(method == "delete"),
            idempotent: Some(matches!(
                method,
                "get" | "head" | "options" | "put" | "delete"
            )),
            open_world: Some(true),
        };
        let provenance = Provenance {
            importer: "openapi".to_owned(),
            server_id: self.id.clone(),
            remote_name: op.remote.clone(),
            endpoint: shared.endpoint.clone(),
            protocol_version: format!("OpenAPI {version}"),
            catalog_revision: revision,
            discovered_at: discovered_at.to_owned(),
        };
        let http_method = reqwest::Method::from_bytes(method.to_ascii_uppercase().as_bytes())
            .map_err(|e| format!("{route}: {e}"))?;
        let call = Arc::new(call::HttpOperation {
            shared: Arc::clone(shared),
            name: name.clone(),
            method: http_method,
            path: op.path.clone(),
            params: op.params,
            body: op.body,
        });
        let mut builder = ToolDefinition::builder(name)
            .description(description)
            .visibility(options.visibility)
            .approval(tier)
            .capabilities(Capabilities {
                network: true,
                ..Capabilities::default()
            })
            .hints(Hints {
                mcp: McpHints {
                    annotations,
                    ..McpHints::default()
                },
                ..Hints::default()
            })
            .tags(op.tags)
            .input_json_schema(op.input_schema)
            .provenance(provenance)
            .raw_handler(move |input, ctx| {
                let call = Arc::clone(&call);
                async move {
                    call.run(input, ctx)
                        .await
                        .map(crate::event::ToolOutput::new)
                }
            });
        if let Some(output) = op.output_schema {
            builder = builder.output_schema(output);
        }
        if let Some(text) = search_text {
            builder = builder.search_text(text);
        }
        if let Some(spec) = &options.authorization {
            builder = builder.authorization(spec.clone());
        }
        Ok(builder.build())
    }
}

impl Drop for OpenApiSource {
    fn drop(&mut self) {
        self.close();
    }
}

/// `url`, parsed, if it is `https://` or `http://` to a loopback host:
/// credentials never travel in the clear.
fn checked_url(url: &str) -> Result<reqwest::Url, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    let host = parsed.host_str().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        "http" => Err(format!(
            "{url} must use HTTPS (plain http:// is allowed only for loopback addresses)"
        )),
        other => Err(format!(
            "{url}: the scheme must be https (or http on loopback), not {other:?}"
        )),
    }
}

fn cut(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}
