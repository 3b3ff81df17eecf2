//! A rig agent calls the notes tools in process, through dispatch: the
//! agent's model is a scripted completion model written here (no network)
//! that asks for `notes_search`, reads the tool result rig hands back, and
//! answers with it.

use std::sync::{Arc, Mutex};

use gonk_tools::adapters::providers::rig::RigTools;
use gonk_tools::metrics::{InMemoryMetrics, MetricOutcome};
use gonk_tools::prelude::*;
use notes::store::{Store, MEMORY};
use notes::tools::NotesTools;
use rig_core::agent::AgentBuilder;
use rig_core::completion::{
    AssistantContent, CompletionError, CompletionModel, CompletionRequest, CompletionResponse,
    Message, Prompt, Usage,
};
use rig_core::message::{ToolResultContent, UserContent};
use rig_core::streaming::StreamingCompletionResponse;
use rig_core::OneOrMany;
use serde_json::Value;

/// What the scripted model answers on each turn.
#[derive(Clone)]
enum Reply {
    /// Ask for a tool call.
    Call {
        name: &'static str,
        arguments: Value,
    },
    /// Answer with the text of the latest tool result, prefixed.
    Answer(&'static str),
}

/// A completion model that plays a script and records what it was sent.
#[derive(Clone, Default)]
struct Scripted {
    script: Arc<Mutex<Vec<Reply>>>,
    requests: Arc<Mutex<Vec<CompletionRequest>>>,
}

impl Scripted {
    fn new(script: Vec<Reply>) -> Self {
        Scripted {
            script: Arc::new(Mutex::new(script.into_iter().rev().collect())),
            requests: Arc::default(),
        }
    }

    fn requests(&self) -> Vec<CompletionRequest> {
        self.requests.lock().unwrap().clone()
    }
}

/// The text of the last tool result in a request's history.
fn last_tool_result(request: &CompletionRequest) -> Option<String> {
    let results: Vec<String> = request
        .chat_history
        .iter()
        .filter_map(|message| match message {
            Message::User { content } => content.iter().find_map(|c| match c {
                UserContent::ToolResult(result) => result.content.iter().find_map(|r| match r {
                    ToolResultContent::Text(text) => Some(text.text().to_owned()),
                    _ => None,
                }),
                _ => None,
            }),
            _ => None,
        })
        .collect();
    results.last().cloned()
}

impl CompletionModel for Scripted {
    type Response = ();
    type StreamingResponse = ();
    type Client = ();

    fn make(_client: &(), _model: impl Into<String>) -> Self {
        Scripted::default()
    }

    async fn completion(
        &self,
        request: CompletionRequest,
    ) -> Result<CompletionResponse<()>, CompletionError> {
        let reply = self.script.lock().unwrap().pop();
        let content = match reply {
            Some(Reply::Call { name, arguments }) => {
                let turn = self.requests.lock().unwrap().len();
                AssistantContent::tool_call(format!("call_{turn}"), name, arguments)
            }
            Some(Reply::Answer(prefix)) => {
                let seen = last_tool_result(&request).unwrap_or_default();
                AssistantContent::text(format!("{prefix}{seen}"))
            }
            None => return Err(CompletionError::ProviderError("the script is over".into())),
        };
        self.requests.lock().unwrap().push(request);
        Ok(CompletionResponse {
            choice: OneOrMany::one(content),
            usage: Usage::new(),
            raw_response: (),
            message_id: None,
        })
    }

    async fn stream(
        &self,
        _request: CompletionRequest,
    ) -> Result<StreamingCompletionResponse<()>, CompletionError> {
        Err(CompletionError::ProviderError(
            "the scripted model does not stream".into(),
        ))
    }
}

/// The notes registry on an in-memory database holding two notes, with a
/// metrics sink.
async fn notes_registry() -> (ToolRegistry, Arc<InMemoryMetrics>) {
    let store = Arc::new(Store::new(Some(MEMORY.into())));
    let metrics = Arc::new(InMemoryMetrics::new());
    let registry = ToolRegistry::builder()
        .metrics(metrics.clone())
        .state_arc(store)
        .build();
    notes::app::install(&registry).expect("the board app registers");
    NotesTools::register_tools(&registry).expect("the notes tools register");
    for (title, body) in [("Release checklist", "- tag v1"), ("Groceries", "milk")] {
        let created = registry.invoke(
            "notes.create",
            json!({"title": title, "body": body}),
            ToolContext::new(),
        );
        collect_tool_outcome(created, |_| {})
            .await
            .expect("a note is created");
    }
    metrics.clear();
    (registry, metrics)
}

#[tokio::test]
async fn a_rig_agent_calls_a_notes_tool_through_dispatch() {
    let (registry, metrics) = notes_registry().await;
    let model = Scripted::new(vec![
        Reply::Call {
            name: "notes_search",
            arguments: json!({"query": "release", "limit": null}),
        },
        Reply::Answer("Here is what I found: "),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .preamble("You keep notes.")
        .tools(RigTools::new(registry).into_tools().unwrap())
        .build();

    let answer = agent
        .prompt("What do my release notes say?")
        .max_turns(4)
        .await
        .unwrap();
    assert_eq!(
        answer,
        "Here is what I found:    1  Release checklist — - tag v1"
    );

    let requests = model.requests();
    assert_eq!(requests.len(), 2, "one turn asks for the tool, one answers");
    // The model was offered the notes tools under provider-safe names, with
    // the schema dispatch enforces.
    let search = requests[0]
        .tools
        .iter()
        .find(|t| t.name == "notes_search")
        .expect("notes_search offered");
    assert_eq!(search.parameters["properties"]["query"]["minLength"], 1);
    assert!(requests[0].tools.iter().all(|t| !t.name.contains('.')));
    // The call went through dispatch (`null` for the optional limit read as absent).
    let records = metrics.snapshot();
    assert_eq!(records.len(), 1);
    assert_eq!(
        (records[0].tool.as_str(), records[0].outcome),
        ("notes.search", MetricOutcome::Ok)
    );
}

#[tokio::test]
async fn the_model_reads_dispatch_errors_and_can_correct_itself() {
    let (registry, metrics) = notes_registry().await;
    let model = Scripted::new(vec![
        Reply::Call {
            name: "notes_search",
            arguments: json!({"query": ""}),
        },
        Reply::Call {
            name: "notes_search",
            arguments: json!({"query": "milk"}),
        },
        Reply::Answer(""),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .tools(RigTools::new(registry).into_tools().unwrap())
        .build();
    let answer = agent.prompt("Find milk").max_turns(5).await.unwrap();
    assert_eq!(answer, "   2  Groceries — milk");
    // The first tool result the model saw was the validation error.
    let requests = model.requests();
    assert_eq!(
        last_tool_result(&requests[1]).as_deref(),
        Some("Error [INVALID_INPUT]: Input validation failed\n  /query: \"\" is shorter than 1 character")
    );
    let outcomes: Vec<MetricOutcome> = metrics.snapshot().iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [MetricOutcome::Error, MetricOutcome::Ok]);
}
