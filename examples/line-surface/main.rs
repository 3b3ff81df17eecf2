//! A tool surface in one file that uses only gonk-tools' public API: a
//! template for writing a surface in another crate.
//!
//! A line-oriented TCP protocol. Each line in is a call,
//! `{"id": 1, "tool": "wait", "input": {"seconds": 2}}`; each line out is one
//! of its events with the call's id, `{"id": 1, "type": "progress", …}`,
//! and a call's last line is its outcome (`"type": "result"` or
//! `"error"`). Calls on one connection run concurrently (match lines by
//! `id`). The end of a connection's input cancels its running calls: each
//! handler is dropped and its `ABORTED` outcome still written, if the
//! client still reads. Each connection is one principal (its peer
//! address), so the registry authorizes and audits every call as that
//! caller's.
//!
//! A tool may ask the human a question (elicitation): the surface writes
//! `{"id": 1, "type": "question", "question": "q1", "request": {"method":
//! "elicitation/create", "params": {…}}}` and the client answers with a line
//! `{"answer": "q1", "value": {"action": "accept", "content": {…}}}`. An
//! answer of the wrong shape is refused with an error line and the question
//! keeps waiting; the end of the connection fails every waiting question.
//!
//! What a surface needs from gonk-tools: [`ToolRegistry::invoke`] (the
//! event stream, ending with the outcome),
//! [`ToolContext::from_cancellation`] (a token per connection),
//! [`ToolContext::with_auth`] (who calls), [`ToolContext::also_notify`]
//! (the progress a non-streaming handler reports with `ctx.progress`), and
//! for asking an [`Asker`] over the connection's [`PendingQuestions`]
//! installed with [`ToolContext::with_asker`].
//!
//! Run: `cargo run -p gonk-tools-examples --bin line-surface -- 127.0.0.1:7878`,
//! then `socat - TCP:127.0.0.1:7878` (or `nc 127.0.0.1 7878`) and type
//! `{"id":1,"tool":"wait","input":{"seconds":2}}`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::StreamExt;
use gonk_tools::ask::{
    answerable, AnswerRefused, AskError, AskFailures, Asker, Elicited, InputKind, InputRequest,
    PendingQuestions,
};
use gonk_tools::prelude::*;
use gonk_tools::security::{
    AllowAll, AuthContext, AuthMethod, AuthenticatedPrincipal, PrincipalIdentity, PrincipalKind,
};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio_util::sync::CancellationToken;

#[derive(Deserialize, JsonSchema)]
struct Seconds {
    /// How long to wait.
    #[schemars(range(max = 3600))]
    seconds: u32,
}

/// Wait, reporting progress each second (cancel it by closing the connection).
#[tool(approval = "read")]
async fn wait(input: Seconds, ctx: &ToolContext) -> String {
    for done in 0..input.seconds {
        let percent = f64::from(done * 100 / input.seconds);
        ctx.progress(percent, format!("{done}/{} s", input.seconds));
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    format!("waited {} s", input.seconds)
}

/// Who the surface says is calling.
#[tool(approval = "read")]
async fn whoami(ctx: &ToolContext) -> Option<String> {
    ctx.auth().map(|auth| auth.principal().id.clone())
}

#[derive(Deserialize, JsonSchema)]
struct Name {
    /// What to call you.
    name: String,
}

/// Ask the human for their name and greet them.
#[tool(approval = "read")]
async fn greet(ctx: &ToolContext) -> Result<String, ToolError> {
    Ok(match ctx.elicit::<Name>("What is your name?").await? {
        Elicited::Accepted(Name { name }) => format!("Hello, {name}!"),
        _ => "Hello, stranger!".to_owned(),
    })
}

/// How long a question waits for its answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(300);

const FAILURES: AskFailures = AskFailures {
    closing: "the connection is closing",
    not_sent: "the question could not be written",
    closed_before_answer: "the connection closed before the answer came",
};

/// Asks the human at the other end of the connection, for one call: its
/// questions go out as lines with the call's id and wait in the
/// connection's table for the answer lines.
struct LineAsker {
    table: Arc<PendingQuestions>,
    out: UnboundedSender<String>,
    call: Value,
}

impl Asker for LineAsker {
    fn can_ask(&self, kind: InputKind) -> bool {
        kind == InputKind::Elicitation
    }

    fn ask<'a>(
        &'a self,
        questions: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<Value>, AskError>> {
        Box::pin(async move {
            answerable(self, questions)?;
            let send = |id: String, _key: &str, request: &InputRequest| {
                let line = json!({"id": self.call, "type": "question", "question": id, "request": request});
                self.out.send(format!("{line}\n")).is_ok()
            };
            self.table
                .ask(questions, ANSWER_TIMEOUT, &FAILURES, send)
                .await
        })
    }
}

/// One line in: a call, or the answer to a question.
#[derive(Deserialize)]
#[serde(untagged)]
enum Line {
    Answer { answer: String, value: Value },
    Call(Call),
}

/// A call.
#[derive(Deserialize)]
struct Call {
    #[serde(default)]
    id: Value,
    tool: String,
    /// `{}` when absent.
    input: Option<Value>,
}

/// One line out: an event (a JSON object) with the id of its call.
fn send(out: &UnboundedSender<String>, id: &Value, event: &ToolEvent) {
    let mut line = serde_json::to_value(event).unwrap_or_default();
    line["id"] = id.clone();
    let _ = out.send(format!("{line}\n"));
}

async fn serve(registry: ToolRegistry, socket: TcpStream, peer: SocketAddr) {
    let (read, mut write) = socket.into_split();
    // One writer, so that lines from concurrent calls never interleave.
    let (out, mut lines) = unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        while let Some(line) = lines.recv().await {
            if write.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
    });
    // A real surface verifies a credential here; this one trusts the peer
    // address, and lets the policy (here: allow all) decide per call.
    let identity = PrincipalIdentity::new("line-surface", peer.to_string(), AuthMethod::Local);
    let principal =
        AuthenticatedPrincipal::new(format!("tcp:{peer}"), PrincipalKind::Local, identity);
    let auth = AuthContext::new(principal, AllowAll);
    let closed = CancellationToken::new();
    let questions = Arc::new(PendingQuestions::default());
    let mut input = BufReader::new(read).lines();
    while let Ok(Some(line)) = input.next_line().await {
        let Call { id, tool, input } = match serde_json::from_str(&line) {
            Ok(Line::Call(call)) => call,
            Ok(Line::Answer { answer, value }) => {
                let refused = match questions.answer(&answer, value) {
                    Ok(()) => continue,
                    Err(AnswerRefused::WrongShape(kind)) => {
                        format!("not an answer to {kind}: send {}", kind.answer_shape())
                    }
                    Err(_) => format!("no question {answer} is waiting"),
                };
                let error = ToolError::new(ErrorCode::InvalidInput, refused);
                send(&out, &Value::Null, &ToolEvent::error(error));
                continue;
            }
            Err(e) => {
                let error = ToolError::new(ErrorCode::InvalidInput, format!("not a call: {e}"));
                send(&out, &Value::Null, &ToolEvent::error(error));
                continue;
            }
        };
        let notified = (out.clone(), id.clone());
        let asker = LineAsker {
            table: Arc::clone(&questions),
            out: out.clone(),
            call: id.clone(),
        };
        let ctx = ToolContext::from_cancellation(closed.child_token())
            .with_auth(auth.clone())
            .with_asker(Arc::new(asker))
            .also_notify(move |event: &ToolEvent| send(&notified.0, &notified.1, event));
        let input = input.unwrap_or_else(|| json!({}));
        let mut events = registry.invoke(&tool, input, ctx);
        let out = out.clone();
        tokio::spawn(async move {
            while let Some(event) = events.next().await {
                send(&out, &id, &event);
            }
        });
    }
    closed.cancel();
    questions.close();
    drop(out);
    // The writer ends once every call has written its outcome.
    let _ = writer.await;
    eprintln!("{peer}: connection closed");
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:7878".to_owned());
    let registry = ToolRegistry::new();
    registry.register_all([
        Wait::definition(),
        Whoami::definition(),
        Greet::definition(),
    ])?;
    let listener = TcpListener::bind(&addr).await?;
    println!("line-surface listening on {}", listener.local_addr()?);
    loop {
        let (socket, peer) = listener.accept().await?;
        tokio::spawn(serve(registry.clone(), socket, peer));
    }
}
