//! The Rust end of the bridge: serves a registry over the JSON-lines
//! [`protocol`](super::protocol) on stdin/stdout (or any pair of byte
//! streams).

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::ask::{answerable, PiAsker, PiQuestions};
use super::execution::{error_result, execute, PiToolResult, PiUpdate, UpdateSink};
use super::framing::{Frame, LineReader};
use super::projection::PiCatalog;
use super::protocol::{PiBridgeError, PiReply, PiRequest, PROTOCOL_VERSION};
use super::PiOptions;
use crate::adapters::names::SurfaceNameError;
use crate::ask::InputKind;
use crate::context::{LogRecord, LogSink};
use crate::error::ToolError;
use crate::registry::ToolRegistry;

/// How long the bridge waits, once its input ended and every running call
/// was aborted, for the calls to finish before it returns anyway (a handler
/// that blocks its thread cannot be dropped).
const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// Why the bridge could not serve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PiServeError {
    /// The registry cannot be projected into Pi (a name collision or an
    /// invalid Pi name); nothing was served.
    #[error("the tools cannot be served to Pi: {0}")]
    Catalog(#[from] SurfaceNameError),
    /// Reading the input failed.
    #[error("reading the Pi bridge input failed: {0}")]
    Io(#[from] io::Error),
}

/// Serves `registry` to a Pi extension over stdin/stdout until stdin
/// closes (see the [`protocol`](super::protocol)). Checks the Pi names
/// first: a collision is an error before anything is read.
pub async fn serve_pi(registry: ToolRegistry, options: PiOptions) -> Result<(), PiServeError> {
    serve_pi_io(registry, options, tokio::io::stdin(), tokio::io::stdout()).await
}

/// [`serve_pi`] over any pair of byte streams.
pub async fn serve_pi_io<R, W>(
    registry: ToolRegistry,
    options: PiOptions,
    input: R,
    output: W,
) -> Result<(), PiServeError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let catalog = PiCatalog::build(&registry, &options)?;
    for warning in catalog.warnings() {
        tracing::warn!(target: "gonk_tools::pi", "{warning}");
    }
    let (lines, outgoing) = mpsc::unbounded_channel::<String>();
    let output_closed = CancellationToken::new();
    let stop_writing = CancellationToken::new();
    let writer = tokio::spawn(write_lines(
        outgoing,
        output,
        output_closed.clone(),
        stop_writing.clone(),
    ));
    let bridge = Arc::new(Bridge {
        registry,
        options,
        catalog: RwLock::new(Arc::new(catalog)),
        calls: Mutex::new(HashMap::new()),
        questions: Arc::new(PiQuestions::default()),
        lines,
    });
    let mut running = JoinSet::new();
    let mut reader = LineReader::new(input, bridge.options.max_line_bytes);
    let read = loop {
        let frame = tokio::select! {
            frame = reader.next() => frame,
            // Nobody reads the answers any more: stop.
            _ = output_closed.cancelled() => break Ok(()),
        };
        match frame {
            Ok(Frame::Eof) => break Ok(()),
            Ok(Frame::TooLong(size)) => bridge.send_error(
                None,
                "REQUEST_TOO_LARGE",
                format!(
                    "the line is {size} bytes; the bridge reads lines of at most {} bytes",
                    bridge.options.max_line_bytes
                ),
            ),
            Ok(Frame::Line(line)) => bridge.handle(&line, &mut running),
            Err(error) => break Err(error),
        }
        // Reap finished calls as we go, so the set stays small.
        while running.try_join_next().is_some() {}
    };
    // Waiting questions fail now, not at their bound.
    bridge.questions.close();
    bridge.abort_all();
    let _ = tokio::time::timeout(DRAIN_GRACE, async {
        while running.join_next().await.is_some() {}
    })
    .await;
    drop(bridge);
    stop_writing.cancel();
    let _ = tokio::time::timeout(DRAIN_GRACE, writer).await;
    read.map_err(PiServeError::Io)
}

/// Writes answer lines in order, flushing when no more are queued. Ends
/// when every sender is gone, or on `stop` once what is queued is written
/// (a handler that outlives the bridge may still hold a sender).
async fn write_lines<W: AsyncWrite + Unpin>(
    mut lines: mpsc::UnboundedReceiver<String>,
    mut output: W,
    closed: CancellationToken,
    stop: CancellationToken,
) {
    loop {
        let line = tokio::select! {
            line = lines.recv() => line,
            _ = stop.cancelled() => lines.try_recv().ok(),
        };
        let Some(line) = line else { break };
        if output.write_all(line.as_bytes()).await.is_err() {
            break;
        }
        if lines.is_empty() && output.flush().await.is_err() {
            break;
        }
    }
    closed.cancel();
}

/// Sends a call's log lines to the extension.
struct CallLog {
    bridge: Arc<Bridge>,
    id: String,
}

impl LogSink for CallLog {
    fn log(&self, record: &LogRecord<'_>) {
        self.bridge.send(&PiReply::Log {
            id: self.id.clone(),
            tool: record.tool.unwrap_or_default().to_owned(),
            level: record.level,
            message: record.message.to_owned(),
            meta: record.meta.cloned(),
        });
    }
}

struct Bridge {
    registry: ToolRegistry,
    options: PiOptions,
    catalog: RwLock<Arc<PiCatalog>>,
    calls: Mutex<HashMap<String, CancellationToken>>,
    questions: Arc<PiQuestions>,
    lines: mpsc::UnboundedSender<String>,
}

impl Bridge {
    fn send(&self, reply: &PiReply) {
        // A closed channel means the output is gone; the read loop stops.
        let _ = self.try_send(reply);
    }

    /// Queues a line; `false` when it cannot go out.
    fn try_send(&self, reply: &PiReply) -> bool {
        match serde_json::to_string(reply) {
            Ok(mut line) => {
                line.push('\n');
                self.lines.send(line).is_ok()
            }
            Err(error) => {
                tracing::error!(target: "gonk_tools::pi", %error, "a bridge reply could not be serialized");
                false
            }
        }
    }

    fn send_error(&self, id: Option<Value>, code: &str, message: String) {
        self.send(&PiReply::Error {
            id,
            error: PiBridgeError {
                code: code.to_owned(),
                message,
            },
        });
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn catalog(&self) -> Arc<PiCatalog> {
        Arc::clone(&self.catalog.read().unwrap_or_else(|p| p.into_inner()))
    }

    fn abort_all(&self) {
        for token in self.calls().values() {
            token.cancel();
        }
    }

    fn handle(self: &Arc<Self>, line: &[u8], running: &mut JoinSet<()>) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let request = match serde_json::from_slice::<PiRequest>(line) {
            Ok(request) => request,
            Err(error) => return self.reject(line, error),
        };
        match request {
            PiRequest::Discover { id } => self.discover(id),
            PiRequest::Execute {
                id,
                tool,
                input,
                can_answer,
            } => self.start(id, tool, input, answerable(&can_answer), running),
            PiRequest::Answer { id, answer } => {
                if let Err(message) = self.questions.answer(&id, answer) {
                    tracing::warn!(target: "gonk_tools::pi", question = %id, "{message}");
                    self.send_error(Some(Value::String(id)), "INVALID_REQUEST", message);
                }
            }
            PiRequest::Abort { id } => {
                // A call that already finished has nothing left to abort.
                if let Some(token) = self.calls().get(&id) {
                    token.cancel();
                }
            }
        }
    }

    /// Answers a line that is not a request, with its id when it has one.
    fn reject(&self, line: &[u8], error: serde_json::Error) {
        let value = serde_json::from_slice::<Value>(line).ok();
        let id = value.as_ref().and_then(|v| v.get("id")).cloned();
        let message = match &value {
            None => format!("the line is not JSON ({error})"),
            Some(_) => format!(
                "the line is not a bridge request ({error}); send {{\"type\": \"discover\" | \"execute\" | \"abort\" | \"answer\", …}}"
            ),
        };
        self.send_error(id, "INVALID_REQUEST", message);
    }

    fn discover(&self, id: Option<Value>) {
        // Rebuilt on each discover, so a changed registry is seen.
        let catalog = match PiCatalog::build(&self.registry, &self.options) {
            Ok(catalog) => Arc::new(catalog),
            Err(error) => return self.send_error(id, "CATALOG_INVALID", error.to_string()),
        };
        *self.catalog.write().unwrap_or_else(|p| p.into_inner()) = Arc::clone(&catalog);
        let mut warnings = catalog.warnings().to_vec();
        let skills_dir = match super::skills::write_skills(&self.registry) {
            Ok(dir) => dir.map(|dir| dir.display().to_string()),
            Err(error) => {
                warnings.push(format!("the skills are not handed to Pi: {error}"));
                None
            }
        };
        self.send(&PiReply::Tools {
            id,
            protocol: PROTOCOL_VERSION,
            tools: catalog.tools().iter().map(|t| t.spec.clone()).collect(),
            skipped: catalog.skipped().to_vec(),
            warnings,
            skills_dir,
        });
    }

    fn start(
        self: &Arc<Self>,
        id: String,
        tool: String,
        input: Value,
        kinds: Vec<InputKind>,
        running: &mut JoinSet<()>,
    ) {
        let token = CancellationToken::new();
        {
            let mut calls = self.calls();
            if calls.contains_key(&id) {
                drop(calls);
                return self.send_error(
                    Some(Value::String(id.clone())),
                    "DUPLICATE_CALL",
                    format!("call {id} is already running; give every call its own id"),
                );
            }
            calls.insert(id.clone(), token.clone());
        }
        let bridge = Arc::clone(self);
        running.spawn(async move {
            let result = bridge.run(&id, &tool, input, kinds, token).await;
            bridge.calls().remove(&id);
            bridge.send(&PiReply::Result { id, result });
        });
    }

    async fn run(
        self: &Arc<Self>,
        id: &str,
        tool: &str,
        input: Value,
        kinds: Vec<InputKind>,
        token: CancellationToken,
    ) -> PiToolResult {
        let catalog = self.catalog();
        // Tools Pi was not given (missing, filtered, duplex) look the same.
        let Some(entry) = catalog.resolve(tool) else {
            return error_result(&ToolError::not_found(tool));
        };
        let input = match (entry.wrapped, input) {
            (true, Value::Object(mut map)) => map.remove("value").unwrap_or(Value::Null),
            (_, input) => input,
        };
        let on_update: UpdateSink = {
            let bridge = Arc::clone(self);
            let id = id.to_owned();
            Arc::new(move |update: PiUpdate| {
                bridge.send(&PiReply::Update {
                    id: id.clone(),
                    update,
                })
            })
        };
        let mut ctx = self.options.context().with_cancellation(token);
        // Questions go to the extension when it said it can answer them,
        // else they are refused at once (a host's own asker wins).
        if !ctx.has_asker() {
            let send: Arc<super::ask::ReplySender> = {
                let bridge = Arc::clone(self);
                Arc::new(move |line: &PiReply| bridge.try_send(line))
            };
            ctx = ctx.with_asker(Arc::new(PiAsker {
                kinds,
                call_id: id.to_owned(),
                questions: Arc::clone(&self.questions),
                send,
                timeout: self.options.ask_timeout,
            }));
        }
        if ctx.log_sink().is_none() {
            ctx = ctx.with_logger(CallLog {
                bridge: Arc::clone(self),
                id: id.to_owned(),
            });
        }
        execute(&self.registry, &entry.tool, input, ctx, on_update).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use serde_json::json;
    use tokio::io::{AsyncBufReadExt, BufReader, DuplexStream, Lines};

    use super::*;
    use crate::prelude::*;

    #[derive(Deserialize, JsonSchema)]
    struct Echo {
        #[schemars(length(min = 1))]
        text: String,
    }

    #[derive(Deserialize, JsonSchema)]
    struct Empty {}

    /// Set when `slow`'s handler is dropped before it finished.
    static SLOW_DROPPED: AtomicBool = AtomicBool::new(false);

    fn registry() -> ToolRegistry {
        let registry = ToolRegistry::new();
        registry
            .register_all([
                ToolDefinition::builder("text.echo")
                    .description("Echo.")
                    .approval(ApprovalTier::Read)
                    .handler(|i: Echo, ctx: ToolContext| async move {
                        ctx.log().info("echoing");
                        ctx.progress(50.0, None);
                        Ok::<_, ToolError>(i.text)
                    })
                    .build(),
                ToolDefinition::builder("slow")
                    .description("Reports that it started, then waits.")
                    .approval(ApprovalTier::Read)
                    .handler(|_: Empty, ctx: ToolContext| async move {
                        struct Guard;
                        impl Drop for Guard {
                            fn drop(&mut self) {
                                SLOW_DROPPED.store(true, Ordering::SeqCst);
                            }
                        }
                        let _guard = Guard;
                        ctx.progress(0.0, Some("started".to_owned()));
                        tokio::time::sleep(Duration::from_secs(600)).await;
                        Ok::<_, ToolError>(json!(null))
                    })
                    .build(),
                ToolDefinition::builder("hidden")
                    .description("Filtered out.")
                    .approval(ApprovalTier::Read)
                    .handler(|_: Empty, _| async move { Ok::<_, ToolError>(1) })
                    .build(),
                ToolDefinition::builder("scalar")
                    .description("Takes an integer.")
                    .approval(ApprovalTier::Read)
                    .input_json_schema(json!({"type": "integer"}))
                    .raw_handler(|v: Value, _| async move { Ok(ToolOutput::new(v)) })
                    .build(),
            ])
            .unwrap();
        registry
    }

    struct Peer {
        input: DuplexStream,
        output: Lines<BufReader<DuplexStream>>,
        served: tokio::task::JoinHandle<Result<(), PiServeError>>,
    }

    impl Peer {
        fn start(options: PiOptions) -> Peer {
            let (input, bridge_in) = tokio::io::duplex(1 << 16);
            let (bridge_out, output) = tokio::io::duplex(1 << 16);
            let served = tokio::spawn(serve_pi_io(registry(), options, bridge_in, bridge_out));
            Peer {
                input,
                output: BufReader::new(output).lines(),
                served,
            }
        }

        async fn send(&mut self, line: &str) {
            self.input.write_all(line.as_bytes()).await.unwrap();
            self.input.write_all(b"\n").await.unwrap();
        }

        /// Ends the bridge's input.
        async fn close(&mut self) {
            self.input.shutdown().await.unwrap();
        }

        async fn next(&mut self) -> Value {
            let line = tokio::time::timeout(Duration::from_secs(60), self.output.next_line())
                .await
                .expect("the bridge answers")
                .unwrap()
                .expect("a line");
            serde_json::from_str(&line).unwrap()
        }
    }

    fn options() -> PiOptions {
        PiOptions::new()
            .filter(|def| def.name != "hidden")
            .max_line_bytes(1024)
    }

    #[tokio::test]
    async fn discover_lists_the_projection_and_execute_streams_updates_then_a_result() {
        let mut peer = Peer::start(options());
        peer.send(r#"{"type":"discover","id":7}"#).await;
        let tools = peer.next().await;
        assert_eq!(tools["type"], "tools");
        assert_eq!(tools["id"], 7);
        assert_eq!(tools["protocol"], 1);
        let names: Vec<&str> = tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["text_echo", "slow", "scalar"]);
        assert_eq!(
            tools["skipped"],
            json!([{"name": "hidden", "reason": "filtered by caller"}])
        );

        peer.send(r#"{"type":"execute","id":"c1","tool":"text_echo","input":{"text":"hi"}}"#)
            .await;
        // Logs go to the extension as log lines, never into the result.
        assert_eq!(
            peer.next().await,
            json!({"type": "log", "id": "c1", "tool": "text.echo", "level": "info", "message": "echoing"})
        );
        assert_eq!(
            peer.next().await,
            json!({"type": "update", "id": "c1", "update": {"content": [{"type": "text", "text": "50%"}], "details": {"progress": true, "percent": 50.0}}})
        );
        assert_eq!(
            peer.next().await,
            json!({"type": "result", "id": "c1", "result": {"content": [{"type": "text", "text": "hi"}], "details": "hi"}})
        );

        // A wrapped schema: Pi sends {value}, the tool gets the value.
        peer.send(r#"{"type":"execute","id":"c2","tool":"scalar","input":{"value":5}}"#)
            .await;
        assert_eq!(peer.next().await["result"]["details"], 5);

        // Validation runs on the Rust side too.
        peer.send(r#"{"type":"execute","id":"c3","tool":"text_echo","input":{"text":""}}"#)
            .await;
        let invalid = peer.next().await;
        assert_eq!(invalid["type"], "result", "no log: the handler never ran");
        assert_eq!(invalid["result"]["isError"], true);
        assert_eq!(
            invalid["result"]["content"][0]["text"],
            "[INVALID_INPUT] Input validation failed"
        );
        peer.close().await;
        peer.served.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn bad_lines_get_an_error_and_the_bridge_keeps_serving() {
        let mut peer = Peer::start(options());
        peer.send("this is not json").await;
        let error = peer.next().await;
        assert_eq!(error["type"], "error");
        assert_eq!(error["error"]["code"], "INVALID_REQUEST");
        assert!(error.get("id").is_none());

        peer.send(r#"{"type":"execute","id":"x1"}"#).await;
        let error = peer.next().await;
        assert_eq!(error["id"], "x1");
        assert_eq!(error["error"]["code"], "INVALID_REQUEST");
        assert!(
            error["error"]["message"].as_str().unwrap().contains("tool"),
            "{error}"
        );

        peer.send(r#"{"type":"launch","id":"x2"}"#).await;
        assert_eq!(peer.next().await["error"]["code"], "INVALID_REQUEST");

        peer.send(&format!(
            r#"{{"type":"discover","pad":"{}"}}"#,
            "x".repeat(2000)
        ))
        .await;
        let error = peer.next().await;
        assert_eq!(error["error"]["code"], "REQUEST_TOO_LARGE");
        assert!(error["error"]["message"].as_str().unwrap().contains("1024"));

        peer.send("").await;
        // Missing and filtered tools look the same.
        for (id, tool) in [("m1", "nope"), ("m2", "hidden")] {
            peer.send(&format!(
                r#"{{"type":"execute","id":"{id}","tool":"{tool}","input":{{}}}}"#
            ))
            .await;
            assert_eq!(
                peer.next().await,
                json!({"type": "result", "id": id, "result": {"isError": true, "content": [{"type": "text", "text": format!("[TOOL_NOT_FOUND] No such tool: {tool}")}]}})
            );
        }
        peer.send(
            r#"{"type":"execute","id":"ok","tool":"text_echo","input":{"text":"still here"}}"#,
        )
        .await;
        assert_eq!(peer.next().await["type"], "log");
        assert_eq!(peer.next().await["type"], "update");
        assert_eq!(peer.next().await["result"]["details"], "still here");
    }

    #[tokio::test]
    async fn abort_drops_the_handler_and_end_of_input_aborts_what_runs() {
        let mut peer = Peer::start(options());
        peer.send(r#"{"type":"execute","id":"s1","tool":"slow","input":{}}"#)
            .await;
        assert_eq!(peer.next().await["update"]["details"]["message"], "started");
        peer.send(r#"{"type":"execute","id":"s1","tool":"slow","input":{}}"#)
            .await;
        let duplicate = peer.next().await;
        assert_eq!(duplicate["error"]["code"], "DUPLICATE_CALL");
        assert_eq!(duplicate["id"], "s1");
        peer.send(r#"{"type":"abort","id":"s1"}"#).await;
        assert_eq!(
            peer.next().await,
            json!({"type": "result", "id": "s1", "result": {"isError": true, "content": [{"type": "text", "text": "[ABORTED] Tool execution aborted"}]}})
        );
        assert!(SLOW_DROPPED.swap(false, Ordering::SeqCst));
        // Aborting a finished call is not an error.
        peer.send(r#"{"type":"abort","id":"s1"}"#).await;

        peer.send(r#"{"type":"execute","id":"s2","tool":"slow","input":{}}"#)
            .await;
        peer.next().await;
        peer.close().await;
        assert_eq!(
            peer.next().await["result"]["content"][0]["text"],
            "[ABORTED] Tool execution aborted"
        );
        peer.served.await.unwrap().unwrap();
        assert!(SLOW_DROPPED.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn a_name_collision_is_refused_before_serving() {
        let registry = registry();
        registry
            .register(
                ToolDefinition::builder("text_echo")
                    .description("Collides with text.echo.")
                    .approval(ApprovalTier::Read)
                    .handler(|_: Empty, _| async move { Ok::<_, ToolError>(1) })
                    .build(),
            )
            .unwrap();
        let error = serve_pi_io(
            registry,
            PiOptions::new(),
            tokio::io::empty(),
            tokio::io::sink(),
        )
        .await
        .unwrap_err();
        assert!(matches!(
            error,
            PiServeError::Catalog(SurfaceNameError::Collision { .. })
        ));
        assert!(
            error.to_string().contains("`text.echo` and `text_echo`"),
            "{error}"
        );
    }
}
