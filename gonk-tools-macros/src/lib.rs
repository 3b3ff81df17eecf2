//! Procedural macros for [`gonk-tools`](https://docs.rs/gonk-tools):
//! [`#[tool]`](macro@tool), [`#[tools]`](macro@tools) and
//! [`toolset!`](toolset); [`#[resource]`](macro@resource) and
//! [`#[prompt]`](macro@prompt) for MCP's other two primitives. Use them
//! through `gonk_tools`, which re-exports them (`use gonk_tools::prelude::*;`).
//!
//! All five share one front end, `internals` (after serde_derive's):
//! parse the arguments (`attr`, every key named once in `keys`), build a
//! typed model of the fn, impl block or set that keeps the user's tokens
//! (`model`, checking each part as it goes), then check what relates parts
//! or items to each other (`check`), every problem collected (`errors`)
//! and reported as a compile error spanned on the offending token. Only
//! the expansion differs: `expand` has one module per macro. The naming
//! rules (`rules`) are compiled into `gonk_tools` too.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use proc_macro::TokenStream;

mod expand;
mod internals;
#[allow(dead_code)] // `gonk_tools` uses the rest through `__rules!`
mod rules;

/// Turns an `async fn` into a tool: a generated type (CamelCase of the fn
/// name, `notes_search` → `NotesSearch`; a word that starts with a digit
/// keeps its `_`, `tool_000` → `Tool_000`) implementing `gonk_tools::Tool`
/// (`NAME`, `Input`, `Output`) and `gonk_tools::StaticTool`
/// (`definition()`, ready to register). The fn itself stays exactly as
/// written, so unit tests can call it directly.
///
/// ```
/// use gonk_tools::prelude::*;
///
/// #[derive(Deserialize, Serialize, JsonSchema)]
/// pub struct SearchNotes {
///     /// Free-text query.
///     #[schemars(length(min = 1))]
///     pub query: String,
///     #[schemars(range(min = 1, max = 20))]
///     pub limit: Option<u32>,
/// }
///
/// #[derive(Serialize, Deserialize, JsonSchema)]
/// pub struct Hits { pub titles: Vec<String> }
///
/// /// Search notes visible to the authenticated principal.
/// #[tool(name = "notes.search", approval = "read",
///        capabilities(reads_fs, idempotent), mcp(read_only, idempotent))]
/// pub async fn notes_search(input: SearchNotes, ctx: ToolContext) -> Result<Hits, ToolError> {
///     ctx.log().info("searching");
///     Ok(Hits { titles: vec![input.query] })
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = ToolRegistry::new();
/// registry.register(NotesSearch::definition())?;
/// assert_eq!(NotesSearch::NAME, "notes.search");
/// let def = registry.get("notes.search").unwrap();
/// assert_eq!(def.description, "Search notes visible to the authenticated principal.");
/// assert!(def.capabilities.reads_fs);
/// # Ok(()) }
/// ```
///
/// # Parameters
///
/// In any order, each at most once:
/// * the **input**: one type that is `Deserialize + JsonSchema`; its schema
///   (field docs and `#[schemars(..)]` constraints included) is what
///   clients see and what every call is validated against. Without an
///   input parameter the tool takes [`NoInput`](../gonk_tools/struct.NoInput.html),
///   the empty object.
/// * `ToolContext` or `&ToolContext`: logging, progress, cancellation,
///   composition (`ctx.call::<OtherTool>(input)`).
/// * `State<T>`, any number of them: application state the registry holds
///   (`ToolRegistry::builder().state(t)`). Registration fails when the
///   registry has no `T`, so a missing state is found at start-up, not at
///   the first call.
/// * `&self`, in an impl block under [`#[tools]`](macro@tools).
///
/// # Returns
///
/// * `O` or nothing — the output, always a success;
/// * `Result<O, E>` with `E: Into<ToolError>`;
/// * `ToolOutput<O>` or `Result<ToolOutput<O>, E>` — data plus a display
///   for humans;
/// * `impl Stream<Item = ToolEvent<O>>` — a streaming tool (below).
///
/// `O` must be `Serialize`; its `JsonSchema` becomes the advertised output
/// schema. For an output without a schema, write `output_schema = false`.
///
/// # Streaming tools
///
/// Return `impl Stream<Item = ToolEvent<O>>`. The simplest way to write
/// one is [`gonk_tools::stream!`](../gonk_tools/macro.stream.html)
/// (async-stream): `yield` progress, logs and data chunks, then the
/// result. Events reach the caller in order; dropping the call (or
/// cancelling it) drops the stream.
///
/// ```
/// use gonk_tools::prelude::*;
/// use futures::Stream;
///
/// #[derive(Deserialize, JsonSchema)]
/// pub struct CountTo { pub to: u32 }
///
/// /// Counts to `to`, reporting progress.
/// #[tool(name = "count")]
/// pub async fn count(input: CountTo) -> impl Stream<Item = ToolEvent<u32>> {
///     gonk_tools::stream! {
///         for i in 1..=input.to {
///             yield ToolEvent::progress(f64::from(i) * 100.0 / f64::from(input.to), None);
///         }
///         yield ToolEvent::result(input.to);
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let registry = ToolRegistry::new();
/// registry.register(Count::definition()).unwrap();
/// let mut kinds = Vec::new();
/// let events = registry.invoke("count", json!({"to": 2}), ToolContext::new());
/// let outcome = collect_tool_outcome(events, |e| kinds.push(e.kind())).await.unwrap();
/// assert_eq!(kinds, ["progress", "progress", "result"]);
/// assert_eq!(outcome.data, 2);
/// # }
/// ```
///
/// A channel works as well: spawn a task that sends `ToolEvent`s into a
/// `futures::channel::mpsc` (or `tokio::sync::mpsc`) sender and return the
/// receiver as the stream.
///
/// # Attributes
///
/// | key | value |
/// |---|---|
/// | `name` | `"notes.search"` — 1–128 chars of `A-Za-z0-9_.-`, starting with a letter; default: the fn name |
/// | `description` | a string; default: the doc comment (one of the two is required) |
/// | `category` | a string |
/// | `visibility` | `"always"` or `"on-demand"` |
/// | `approval` | `"read"` / `"write"` / `"exec"`, or `approval(tier = "write", override, reason = "...")`, or a path to `fn(&Input) -> impl Into<ApprovalSpec>` |
/// | `capabilities` | `capabilities(reads_fs, writes_fs, network, long_running, idempotent, duplex)` |
/// | `tags`, `keywords`, `related_to` | `["a", "b"]` |
/// | `cost` | `"low"` / `"moderate"` / `"high"` |
/// | `latency` | `"instant"` / `"seconds"` / `"minutes"` |
/// | `cli` | `cli(command = "..", positional = [..], aliases = [..], examples = [..])` |
/// | `mcp` | `mcp(name = "..", visibility = "..", header(field = "Name", ..), read_only, destructive, idempotent, open_world)`; `header` below |
/// | `pi` | `pi(name = "..", visibility = "..", requires_approval, status_glyph = "..")`: hints for the Pi coding agent (a terminal coding agent; the `pi` adapter of `gonk_tools`) |
/// | `authorization` | `authorization(auth_level = "..", required_role = "..", allowed_callers = [..])` |
/// | `authorization_resource` | `"note"` or `authorization_resource(kind = "note", required_fields = [..])` |
/// | `validate_output` | `"off"` / `"lax"` / `"strict"` |
/// | `requires` | a path to `fn() -> bool` (registration skips the tool when false) |
/// | `capability_for` | a path to `fn() -> CapabilityStatus`, with `degraded_description = ".."` |
/// | `input_json_schema` | an expression giving a `serde_json::Value`: a trusted override of the derived input schema (advertised **and** enforced) |
/// | `output_schema` | `false` to advertise no output schema |
/// | `timeout` | `"30s"`, `"500ms"`, `"2m"`, `"1h 30m"`: the call is stopped with `TIMEOUT` after it (its handler dropped); default: the registry's default timeout, if any |
/// | `cache_ttl` | `"5m"`, `"30s"`, `"0s"`: how long a client may keep a listing that shows the tool (MCP's `ttlMs`; a listing lasts as long as its shortest-lived tool); default: the registry's `default_cache_ttl`, else zero |
/// | `detached` | a flag: a call returns a background job handle at once unless it passes `wait: true` / `sync: true` (added to the advertised input); see `gonk_tools::jobs` |
/// | `scopes` | `scopes("notes:write", ..)`: the OAuth scopes a call needs; a caller whose token lacks one is refused with `INSUFFICIENT_SCOPE` before anything runs, and the tool stays listed (each scope: printable ASCII, no spaces, `"` or `\`; no duplicates) |
/// | `ui` | `"ui://notes/board"` or `ui(uri = "ui://notes/board", visibility = "app")`: links the tool to an MCP App (a `ui://` HTML resource a host renders; listed as `_meta.ui`); `visibility` is who may call it, `"model"`, `"app"` or both (`["model", "app"]`, the default). Register the app resource (`gonk_tools::app::AppResource`) before the tool; see `gonk_tools::app` |
/// | `type_name` | the generated type's name, when CamelCase of the fn name collides with another type (`async fn add(input: Add)` is refused with this advice) |
/// | `crate` | the path of `gonk_tools` when it is renamed: `crate = my_gonk` |
///
/// Flags take `= false` too (`read_only = false`).
///
/// # MCP parameter headers
///
/// `mcp(header(region = "Region"))` sends the input field `region` as the
/// HTTP header `Mcp-Param-Region` too, so a gateway routes the call
/// without parsing its body: the advertised input schema carries
/// `"x-mcp-header": "Region"` on that property, MCP clients send the
/// header, and the server refuses a call whose header and body disagree.
/// Checked at compile time, each an error on the offending token: the
/// field exists on the input type; it is a string, an integer, a bool or
/// a char, or an `Option` of one (see `gonk_tools::definition::McpHeaderValue`
/// for your own string enums); the name is HTTP token characters without
/// the `Mcp-Param-` prefix; no header name twice, ignoring case.
///
/// The header travels with the property clients see, which is the name
/// serde gives the field: a field named by its identifier finds its
/// `#[serde(rename_all = ..)]` form (`region_code` is `regionCode`). A
/// field renamed on its own (`#[serde(rename = "zone-id")]`) is named as
/// clients see it, in a string — `header("zone-id" = "Zone")` — and that
/// property is checked at registration instead of by the compiler.
///
/// ```
/// use gonk_tools::prelude::*;
///
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(rename_all = "camelCase")]
/// pub struct Record {
///     pub region_code: String,
///     pub tenant: Option<u32>,
///     #[serde(rename = "zone-id")]
///     pub zone: u8,
///     pub query: String,
/// }
///
/// /// Look a record up in one region.
/// #[tool(mcp(header(region_code = "Region", tenant = "Tenant", "zone-id" = "Zone")), cache_ttl = "5m")]
/// pub async fn lookup(input: Record) -> String { input.query }
///
/// let def = Lookup::definition();
/// let properties = &def.input_schema["properties"];
/// assert_eq!(properties["regionCode"]["x-mcp-header"], "Region");
/// assert_eq!(properties["tenant"]["x-mcp-header"], "Tenant");
/// assert_eq!(properties["zone-id"]["x-mcp-header"], "Zone");
/// assert_eq!(def.cache_ttl, Some(std::time::Duration::from_secs(300)));
/// ToolRegistry::new().register(def).unwrap();
/// ```
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tool::attribute(args.into(), input.into()).into()
}

/// Turns an `async fn` into an MCP resource (or resource template): a unit
/// struct named like the fn (`note` → `Note`, as [`#[tool]`](macro@tool)
/// names its type) implementing `gonk_tools::resource::Resource` — `URI`,
/// `Params`, `definition()` (ready for `registry.register_resource`) and
/// `uri(&params)`, which writes a URI from the template. The fn itself
/// stays exactly as written.
///
/// The first argument is the URI: fixed (`"notes://recent"`) or an RFC 6570
/// level 1–2 template (`"notes://{id}"`, `"file:///{+path}"`,
/// `"doc://{name}{#section}"`), parsed at compile time. Each template
/// variable is a parameter of the fn with the same name, and each
/// parameter that is not an extractor is a template variable; a variable
/// without a parameter, a parameter without a variable, a malformed
/// template or one using level 3–4 forms (`{?q}`, `{/p}`, `{a,b}`,
/// `{id:3}`, `{list*}`) is a compile error on the literal or the
/// parameter.
///
/// ```
/// use gonk_tools::prelude::*;
/// use gonk_tools::completion::CompletionRequest;
/// use gonk_tools::resource::Resource;
///
/// pub struct Store { titles: Vec<String> }
///
/// /// A note as Markdown.
/// #[resource("notes://{id}", name = "note", title = "A note",
///            mime_type = "text/markdown", complete(id = note_ids))]
/// async fn note(id: usize, store: State<Store>) -> Result<String, ToolError> {
///     let title = store.titles.get(id).ok_or_else(|| {
///         ToolError::new(ErrorCode::custom("NO_NOTE"), format!("no note {id}"))
///     })?;
///     Ok(format!("# {title}"))
/// }
///
/// /// Completes a note id from what the user typed.
/// async fn note_ids(req: CompletionRequest, ctx: ToolContext) -> Result<Vec<String>, ToolError> {
///     let store = ctx.state::<Store>().ok_or_else(|| ToolError::internal("no store"))?;
///     Ok((0..store.titles.len()).map(|i| i.to_string()).filter(|i| i.starts_with(&req.value)).collect())
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = ToolRegistry::builder()
///     .state(Store { titles: vec!["milk".into(), "eggs".into()] })
///     .build();
/// registry.register_resource(Note::definition())?;
/// assert_eq!(Note::uri(&1), "notes://1");
/// let read = registry.read_resource(&Note::uri(&1), ToolContext::new()).await?;
/// assert_eq!(read[0].as_text(), Some("# eggs"));
/// assert_eq!(read[0].mime_type.as_deref(), Some("text/markdown"));
/// # Ok(()) }
/// ```
///
/// # Parameters
///
/// In any order:
/// * one per **template variable**, named like it (`id` for `{id}`; `r#type`
///   for `{type}`), of any owned type that is `Deserialize + JsonSchema`:
///   the URI's text is converted to the type its schema asks for (`u64`,
///   `bool`, …) and validated before the fn runs, so `notes://abc` is
///   `INVALID_INPUT` for an `id: u64`. To write URIs with `uri(..)` the
///   types must be `Serialize` too.
/// * `ToolContext` or `&ToolContext`, and `State<T>`, as for `#[tool]`.
///
/// `Resource::Params` is `()` for a fixed URI, the parameter's type for one
/// variable, and for several a generated struct `{Type}Params` with one
/// public field per variable (`NoteParams { id, rev }`).
///
/// # Returns
///
/// The contents, or a `Result` of them with `E: Into<ToolError>`: `String`
/// (text), `Vec<u8>` (a blob), `ResourceContents` or `Vec<ResourceContents>`
/// (full control: URI, MIME type, `_meta`), or `Json<T>` (`T` serialized,
/// `application/json`). Contents without a URI get the URI read, without a
/// MIME type the resource's.
///
/// # Attributes
///
/// | key | value |
/// |---|---|
/// | (first) | the URI or URI template, `"notes://{id}"` |
/// | `name` | the name clients list it under; default: the fn name |
/// | `title` | a human-readable title |
/// | `description` | a string; default: the doc comment |
/// | `mime_type` | `"text/markdown"`: `type/subtype`, checked at compile time |
/// | `size` | its size in bytes, `1024` |
/// | `audience` | `["user", "assistant"]`: MCP's annotation |
/// | `priority` | `0.0` to `1.0`: MCP's annotation |
/// | `icons` | `["https://..", "data:.."]` |
/// | `complete` | `complete(id = path::to_fn)`: completes template variable `id` with an `async fn(CompletionRequest, ToolContext) -> Result<R, E>` where `R: Into<Completion>` (`Vec<String>`, `Vec<&str>`, `Completion`); the variable must be in the template |
/// | `timeout` | `"30s"`: the read is stopped with `TIMEOUT` after it |
/// | `type_name` | the generated type's name, when the default collides |
/// | `crate` | the path of `gonk_tools` when it is renamed |
#[proc_macro_attribute]
pub fn resource(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::resource::attribute(args.into(), input.into()).into()
}

/// Turns an `async fn` into an MCP prompt: a unit struct named like the fn
/// (`summarize` → `Summarize`) implementing `gonk_tools::prompt::Prompt` —
/// `NAME`, `Arguments`, `definition()` (ready for
/// `registry.register_prompt`). The fn itself stays exactly as written.
///
/// The prompt's arguments are one struct (`Deserialize + JsonSchema`): each
/// property is an advertised argument, its doc comment the description,
/// required unless it is an `Option` or has a default. Clients send
/// arguments as strings; they are converted to the field types and
/// validated before the fn runs.
///
/// ```
/// use gonk_tools::prelude::*;
/// use gonk_tools::completion::CompletionRequest;
/// use gonk_tools::prompt::{Prompt, PromptMessage};
///
/// #[derive(Deserialize, JsonSchema)]
/// pub struct SummarizeArgs {
///     /// The note to summarize.
///     pub id: u64,
///     /// A tag to focus on.
///     pub tag: Option<String>,
/// }
///
/// /// Summarize a note.
/// #[prompt(name = "summarize", title = "Summarize", complete(tag = tag_values))]
/// async fn summarize(args: SummarizeArgs) -> Vec<PromptMessage> {
///     let focus = args.tag.map(|t| format!(", focusing on {t}")).unwrap_or_default();
///     vec![PromptMessage::user(format!("Summarize note {}{focus}.", args.id))]
/// }
///
/// /// Tags starting with what was typed.
/// async fn tag_values(req: CompletionRequest, _ctx: ToolContext) -> Result<Vec<&'static str>, ToolError> {
///     Ok(["rust", "release"].into_iter().filter(|t| t.starts_with(&req.value)).collect())
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = ToolRegistry::new();
/// registry.register_prompt(Summarize::definition())?;
/// let def = Summarize::definition();
/// let args: Vec<_> = def.arguments().iter().map(|a| (a.name.as_str(), a.required)).collect();
/// assert_eq!(args, [("id", true), ("tag", false)]);
///
/// let arguments = json!({"id": "12", "tag": "rust"});
/// let got = registry.get_prompt("summarize", arguments.as_object().unwrap().clone(), ToolContext::new()).await?;
/// assert_eq!(got.messages[0].content.as_text(), Some("Summarize note 12, focusing on rust."));
/// # Ok(()) }
/// ```
///
/// # Parameters
///
/// In any order: at most one **arguments struct** (none: the prompt takes
/// no arguments); `ToolContext` or `&ToolContext`; `State<T>`, as for
/// `#[tool]`. A second value parameter, or a type that is plainly not a
/// struct (`String`, `u64`, a tuple, `Vec<T>`, …), is a compile error.
///
/// # Argument names
///
/// An argument is named as clients see it: serde's name for the field. In
/// `complete(..)`, name a field by its identifier — the compiler checks
/// that it is a field, and the completion attaches to the name serde gives
/// it, its `#[serde(rename_all = ..)]` form included. A field renamed on
/// its own (`#[serde(rename = "topic")]`) is named as clients see it, in a
/// string: `complete("topic" = topics)`; registration refuses a completion
/// whose name is no argument.
///
/// ```
/// use gonk_tools::prelude::*;
/// use gonk_tools::completion::CompletionRequest;
/// use gonk_tools::prompt::Prompt;
///
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(rename_all = "camelCase")]
/// pub struct FindArgs {
///     /// The note.
///     pub note_id: u64,
///     /// A tag.
///     #[serde(rename = "topic")]
///     pub tag: Option<String>,
/// }
///
/// /// Find a note.
/// #[prompt(complete(note_id = typed, "topic" = typed))]
/// async fn find(args: FindArgs) -> String {
///     format!("Find note {}.", args.note_id)
/// }
///
/// /// What was typed.
/// async fn typed(req: CompletionRequest, _ctx: ToolContext) -> Result<Vec<String>, ToolError> {
///     Ok(vec![req.value])
/// }
///
/// let def = Find::definition();
/// assert_eq!(def.completable().collect::<Vec<_>>(), ["noteId", "topic"]);
/// ToolRegistry::new().register_prompt(def)?;
/// # Ok::<(), gonk_tools::RegistryError>(())
/// ```
///
/// # Returns
///
/// `String` (one user text message), `PromptMessage`, `Vec<PromptMessage>`
/// (text, images, embedded resources) or `PromptResult`, or a `Result` of
/// one with `E: Into<ToolError>`.
///
/// # Attributes
///
/// | key | value |
/// |---|---|
/// | `name` | the prompt's name; default: the fn name |
/// | `title` | a human-readable title |
/// | `description` | a string; default: the doc comment |
/// | `icons` | `["https://..", "data:.."]` |
/// | `complete` | `complete(tag = path::to_fn)`: completes the argument `tag` with an `async fn(CompletionRequest, ToolContext)`, as for `#[resource]`; see [argument names](#argument-names) |
/// | `timeout` | `"30s"`: the rendering is stopped with `TIMEOUT` after it |
/// | `type_name` | the generated type's name, when the default collides (`async fn summarize(args: Summarize)`) |
/// | `crate` | the path of `gonk_tools` when it is renamed |
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::prompt::attribute(args.into(), input.into()).into()
}

/// Makes the `#[tool]` methods of an impl block a tool set: every
/// `#[tool] async fn ..(&self, ..)` becomes a tool whose definition
/// captures an `Arc<Self>`; the type gains `TOOL_NAMES`,
/// `tool_definitions(&Arc<Self>)` and `register_tools(&Arc<Self>, &registry)`
/// (the names `toolset!` gives a set), and a typed client
/// `{Type}Client<T: Transport>` is generated with one method per tool
/// (snake_case of the tool name: `notes.search` → `notes_search`).
///
/// Options: `#[tools(client = OtherName, crate = path)]`.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use gonk_tools::prelude::*;
/// use gonk_tools::client::InProcess;
///
/// #[derive(Serialize, Deserialize, JsonSchema)]
/// pub struct Text { pub text: String }
///
/// #[derive(Default)]
/// pub struct Notes { items: Mutex<Vec<String>> }
///
/// #[tools]
/// impl Notes {
///     /// Add a note; returns how many there are.
///     #[tool(name = "notes.add", approval = "write")]
///     pub async fn add(&self, input: Text) -> usize {
///         let mut items = self.items.lock().unwrap();
///         items.push(input.text);
///         items.len()
///     }
///
///     /// List the notes.
///     #[tool(name = "notes.list", approval = "read")]
///     pub async fn list(&self) -> Vec<String> {
///         self.items.lock().unwrap().clone()
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = ToolRegistry::new();
/// Arc::new(Notes::default()).register_tools(&registry)?;
/// let client = NotesClient::new(InProcess::new(registry));
/// assert_eq!(client.notes_add(Text { text: "milk".into() }).await?, 1);
/// assert_eq!(client.notes_list(NoInput).await?, ["milk"]);
/// # Ok(()) }
/// ```
#[proc_macro_attribute]
pub fn tools(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::set::tools(args.into(), input.into()).into()
}

/// Declares a tool set of `#[tool]` types: a unit struct with `TOOL_NAMES`,
/// `tool_definitions()` and `register_tools(&registry)`, and a typed client
/// `{Set}Client<T: Transport>` with one method per tool.
///
/// ```
/// use gonk_tools::prelude::*;
/// use gonk_tools::client::InProcess;
///
/// #[derive(Serialize, Deserialize, JsonSchema)]
/// pub struct Pair { pub a: i64, pub b: i64 }
///
/// /// Add two integers.
/// #[tool(name = "math.add")]
/// pub async fn math_add(input: Pair) -> i64 { input.a + input.b }
///
/// /// Multiply two integers.
/// #[tool(name = "math.mul")]
/// pub async fn math_mul(input: Pair) -> i64 { input.a * input.b }
///
/// toolset! {
///     /// Arithmetic.
///     pub struct Math { MathAdd, MathMul }
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = ToolRegistry::new();
/// Math::register_tools(&registry)?;
/// assert_eq!(Math::TOOL_NAMES, ["math.add", "math.mul"]);
/// let math = MathClient::new(InProcess::new(registry));
/// assert_eq!(math.math_mul(Pair { a: 6, b: 7 }).await?, 42);
/// # Ok(()) }
/// ```
///
/// The client method of an entry is the snake_case of its type
/// (`MathAdd` → `math_add`), and the compiler checks that it is the
/// snake_case of the tool's name; when they differ (a fn `add` named
/// `"math.add"`), name the method: `math_add = Add`. Duplicate names and
/// two tools with the same client method are compile errors.
/// Options: `#[toolset(client = OtherName, crate = path)]` before the
/// struct.
#[proc_macro]
pub fn toolset(input: TokenStream) -> TokenStream {
    expand::set::toolset(input.into()).into()
}

/// Embeds a folder of skills (the MCP skills extension, SEP-2640) at
/// compile time: `embed_skills!("skills")` is a
/// `Vec<gonk_tools::skill::Skill>` to hand to
/// `ToolRegistry::register_skills`.
///
/// The path is relative to the crate's `Cargo.toml`, or to an environment
/// variable's folder when it starts with `$NAME/` (`"$OUT_DIR/skills"` for
/// skills a build script writes); several folders may be given
/// (`embed_skills!("skills", "more-skills")`). Each sub-folder is
/// one skill and must hold a `SKILL.md` whose YAML frontmatter parses,
/// has a `name` equal to the folder's (1–64 lowercase letters, digits and
/// single hyphens) and a non-empty `description`; names must be unique;
/// a skill has at most 512 files and 16 MiB. Each broken rule is a
/// compile error on the path. Files are embedded with `include_bytes!`,
/// so editing one rebuilds the crate; a file or skill *added* is seen at
/// the next build of the crate for another reason (`touch` the source
/// that calls the macro).
///
/// ```
/// use gonk_tools::{embed_skills, ToolRegistry};
///
/// let registry = ToolRegistry::new();
/// registry.register_skills(embed_skills!("../examples/notes/skills"))?;
/// assert_eq!(registry.skills()[0].name(), "triage-notes");
/// # Ok::<(), gonk_tools::RegistryError>(())
/// ```
#[proc_macro]
pub fn embed_skills(input: TokenStream) -> TokenStream {
    expand::skills::embed_skills(input.into()).into()
}

/// The naming rules shared with `gonk_tools`: expands to the items of
/// this crate's `rules.rs`, so both crates compile one source. Not a
/// public API.
#[doc(hidden)]
#[proc_macro]
pub fn __rules(_input: TokenStream) -> TokenStream {
    include_str!("rules.rs")
        .parse()
        .expect("rules.rs is valid Rust")
}
