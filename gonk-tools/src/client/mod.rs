//! Typed clients: call tools by their Rust types over any [`Transport`].
//!
//! A tool set (`toolset!` or `#[tools]` on an impl block) generates a
//! client `XClient<T: Transport>` whose methods take each tool's `Input`
//! and return `Result<Output, ClientError>`. The methods go through
//! [`call`], which serializes the input, sends it over the transport,
//! collects the event stream into the outcome and deserializes the output.
//!
//! [`InProcess`] is the transport over a [`ToolRegistry`](crate::ToolRegistry)
//! in the same process; it runs the full dispatch path (schema validation,
//! cancellation, metrics). [`Tap`] wraps any transport to observe the
//! events (progress, logs, data) of every call.
//!
//! ```
//! use gonk_tools::prelude::*;
//! use gonk_tools::client::InProcess;
//!
//! #[derive(Serialize, Deserialize, JsonSchema)]
//! struct Pair { a: i64, b: i64 }
//!
//! /// Add two integers.
//! #[tool(name = "math.add", approval = "read")]
//! async fn math_add(input: Pair) -> i64 { input.a + input.b }
//!
//! toolset! {
//!     /// Arithmetic.
//!     pub struct Math { MathAdd }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = ToolRegistry::new();
//! Math::register_tools(&registry)?;
//! let client = MathClient::new(InProcess::new(registry));
//! assert_eq!(client.math_add(Pair { a: 2, b: 3 }).await?, 5);
//! # Ok(()) }
//! ```
mod error;
mod in_process;

use futures::future::BoxFuture;
use futures::StreamExt;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

pub use error::ClientError;
pub use in_process::{InProcess, Tap};

use crate::event::ToolEvent;
use crate::event::ToolEventStream;
use crate::event::{collect_tool_outcome, ToolOutput};
use crate::resource::{Resource, ResourceContents};
use crate::tool::{typed_call_input, ClientInput, ClientOutput, Tool};

/// How a client reaches tools: one call is a name and a JSON input in, the
/// call's event stream out (logs, progress, data chunks, then a `result` or
/// an `error`).
///
/// Object-safe: clients can hold a `Box<dyn Transport>` or an
/// `Arc<dyn Transport>`. A transport reports its own failures (a broken
/// connection) as an `error` event in the stream, so every failure reaches
/// the caller the same way.
pub trait Transport: Send + Sync {
    /// Starts the call of `name` with `input`. Dropping the stream cancels
    /// the call where the transport supports it.
    fn invoke(&self, name: &str, input: Value) -> ToolEventStream;

    /// Reads the resource at `uri`. By default it sends the
    /// `resources/read` op with `{"uri"}` and takes `{"contents"}` from the
    /// result — what the WebSocket projection serves; [`InProcess`] reads
    /// through its registry. A transport whose server has no such op
    /// answers with that server's not-found error.
    fn read_resource<'a>(&'a self, uri: &'a str) -> ReadFuture<'a> {
        let events = self.invoke("resources/read", serde_json::json!({ "uri": uri }));
        Box::pin(async move {
            #[derive(serde::Deserialize)]
            struct Read {
                contents: Vec<ResourceContents>,
            }
            decode_outcome::<Read>("resources/read", events, |_| {})
                .await
                .map(|output| output.data.contents)
        })
    }
}

impl<T: Transport + ?Sized> Transport for &T {
    fn invoke(&self, name: &str, input: Value) -> ToolEventStream {
        (**self).invoke(name, input)
    }
    fn read_resource<'a>(&'a self, uri: &'a str) -> ReadFuture<'a> {
        (**self).read_resource(uri)
    }
}

impl<T: Transport + ?Sized> Transport for std::sync::Arc<T> {
    fn invoke(&self, name: &str, input: Value) -> ToolEventStream {
        (**self).invoke(name, input)
    }
    fn read_resource<'a>(&'a self, uri: &'a str) -> ReadFuture<'a> {
        (**self).read_resource(uri)
    }
}

impl<T: Transport + ?Sized> Transport for Box<T> {
    fn invoke(&self, name: &str, input: Value) -> ToolEventStream {
        (**self).invoke(name, input)
    }
    fn read_resource<'a>(&'a self, uri: &'a str) -> ReadFuture<'a> {
        (**self).read_resource(uri)
    }
}

/// What [`Transport::read_resource`] returns: the contents read.
pub type ReadFuture<'a> = BoxFuture<'a, Result<Vec<ResourceContents>, ClientError>>;

/// Reads a resource by its Rust type: `client.read::<Note>(12)` builds the
/// URI from the template and the parameters ([`Resource::uri`]) and reads
/// it over the transport. Implemented for every [`Transport`].
///
/// ```
/// use gonk_tools::prelude::*;
/// use gonk_tools::client::{InProcess, ReadResource};
/// use gonk_tools::resource::{Resource, ResourceDefinition};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Vars { id: u64 }
///
/// struct Note;
/// impl Resource for Note {
///     const URI: &'static str = "notes://{id}";
///     type Params = u64;
///     fn definition() -> ResourceDefinition {
///         ResourceDefinition::builder(Self::URI)
///             .handler(|v: Vars, _| async move { Ok::<_, ToolError>(format!("note {}", v.id)) })
///             .build()
///     }
///     fn uri(id: &u64) -> String { format!("notes://{id}") }
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = ToolRegistry::new();
/// registry.register_resource(Note::definition())?;
/// let client = InProcess::new(registry);
/// let read = client.read::<Note>(12).await?;
/// assert_eq!(read[0].as_text(), Some("note 12"));
/// # Ok(()) }
/// ```
pub trait ReadResource: Transport {
    /// Reads resource `R` with `params` (its template variables).
    fn read<R: Resource>(&self, params: R::Params) -> ReadFuture<'_> {
        let uri = R::uri(&params);
        Box::pin(async move { self.read_resource(&uri).await })
    }
}

impl<T: Transport + ?Sized> ReadResource for T {}

/// The future of a typed call: the tool's output, or why the call failed.
pub type ToolFuture<'a, O> = BoxFuture<'a, Result<O, ClientError>>;

/// A transport that can call tool `X` by its types: every [`Transport`],
/// for every tool whose input is `Serialize` and output `Deserialize`.
///
/// Each method of a generated client requires `T: CallTool<ThatTool>`, so
/// the bounds are checked where a method is called: a tool set that is
/// only served needs no `Serialize` on its inputs. (The future is boxed:
/// when a bound does not hold, the compiler reports it once, not once per
/// use of the future.)
pub trait CallTool<X: Tool>: Transport {
    /// Calls `X` with `input` and returns its typed output ([`call`]).
    fn call_tool(&self, input: X::Input) -> ToolFuture<'_, X::Output>;
}

impl<T, X> CallTool<X> for T
where
    T: Transport + ?Sized,
    X: Tool,
    X::Input: ClientInput + JsonSchema + Send,
    X::Output: ClientOutput + Send,
{
    fn call_tool(&self, input: X::Input) -> ToolFuture<'_, X::Output> {
        Box::pin(call::<X>(self, input))
    }
}

/// Calls tool `T` over `transport` and returns its typed output.
pub async fn call<T>(
    transport: &(impl Transport + ?Sized),
    input: T::Input,
) -> Result<T::Output, ClientError>
where
    T: Tool,
    T::Input: Serialize + JsonSchema,
    T::Output: DeserializeOwned,
{
    call_with_events::<T>(transport, input, |_| {}).await
}

/// Calls tool `T`, handing every event (progress, logs, data chunks) to
/// `on_event` as it arrives, and returns the typed output.
pub async fn call_with_events<T>(
    transport: &(impl Transport + ?Sized),
    input: T::Input,
    on_event: impl FnMut(&ToolEvent),
) -> Result<T::Output, ClientError>
where
    T: Tool,
    T::Input: Serialize + JsonSchema,
    T::Output: DeserializeOwned,
{
    call_output::<T>(transport, input, on_event)
        .await
        .map(|output| output.data)
}

/// Like [`call_with_events`], but keeps the result's display next to the
/// typed data.
pub async fn call_output<T>(
    transport: &(impl Transport + ?Sized),
    input: T::Input,
    on_event: impl FnMut(&ToolEvent),
) -> Result<ToolOutput<T::Output>, ClientError>
where
    T: Tool,
    T::Input: Serialize + JsonSchema,
    T::Output: DeserializeOwned,
{
    let input = typed_call_input::<T>(&input).map_err(|source| ClientError::Encode {
        tool: T::NAME,
        source,
    })?;
    decode_outcome::<T::Output>(T::NAME, transport.invoke(T::NAME, input), on_event).await
}

/// Collects the event stream of a call to `tool` into its typed outcome:
/// the last `error` wins, else the last `result`, decoded as `O`.
pub async fn decode_outcome<O: DeserializeOwned>(
    tool: &'static str,
    events: ToolEventStream,
    on_event: impl FnMut(&ToolEvent),
) -> Result<ToolOutput<O>, ClientError> {
    let events = events.fuse();
    let output = collect_tool_outcome(events, on_event)
        .await
        .map_err(ClientError::Tool)?;
    let data = serde_json::from_value(output.data)
        .map_err(|source| ClientError::Decode { tool, source })?;
    Ok(ToolOutput {
        data,
        display: output.display,
    })
}
