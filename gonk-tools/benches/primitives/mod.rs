//! `resources/read` and `prompts/get` side by side with rmcp's own forms:
//! a resource read written by hand in `ServerHandler::read_resource` (rmcp
//! has no resource macro) and a prompt from `#[prompt_router]` with the
//! router kept in a field (`#[prompt_handler]`). Ours are `#[resource]` /
//! `#[prompt]`-equivalent definitions served by `McpServer` — matched by
//! URI template, variables converted and validated, run through dispatch.
//! Each result is serialized as the server's `ServerResult`, as on the
//! wire.

use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup};
use gonk_tools::adapters::mcp::{McpServer, McpServerOptions, WriteToolPolicy};
use gonk_tools::prelude::*;
use gonk_tools::prompt::{PromptDefinition, PromptMessage};
use gonk_tools::resource::ResourceDefinition;
use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    ErrorData, GetPromptRequestParams, ReadResourceRequestParams, ReadResourceResult,
    ResourceContents, Role, ServerResult,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{prompt, prompt_handler, prompt_router, RoleServer, ServerHandler};

/// The arguments of `summarize`, for both servers.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct SummarizeArgs {
    /// The note to summarize.
    pub id: String,
}

#[derive(Deserialize, JsonSchema)]
struct NoteVars {
    id: u64,
}

/// rmcp's server: a prompt router in a field, reads by hand.
#[derive(Clone)]
pub struct RmcpPrimitives {
    prompt_router: PromptRouter<RmcpPrimitives>,
}

#[prompt_router]
impl RmcpPrimitives {
    pub fn new() -> Self {
        RmcpPrimitives {
            prompt_router: Self::prompt_router(),
        }
    }

    /// Summarize a note.
    #[prompt(name = "summarize")]
    async fn summarize(&self, Parameters(args): Parameters<SummarizeArgs>) -> Vec<rmcp::model::PromptMessage> {
        vec![rmcp::model::PromptMessage::new_text(
            Role::User,
            format!("Summarize note {}.", args.id),
        )]
    }
}

#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for RmcpPrimitives {
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        // What a hand-written template read does: match the prefix, parse
        // the variable, answer.
        let id: u64 = request
            .uri
            .strip_prefix("notes://")
            .and_then(|id| id.parse().ok())
            .ok_or_else(|| ErrorData::invalid_params("Resource not found", None))?;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(
            format!("# Note {id}"),
            request.uri,
        )
        .with_mime_type("text/markdown")])
        .into())
    }
}

/// Our server with the same resource template and prompt.
pub fn gonk_primitives() -> McpServer {
    let registry = ToolRegistry::new();
    registry
        .register_resource(
            ResourceDefinition::builder("notes://{id}")
                .name("note")
                .description("A note as Markdown.")
                .mime_type("text/markdown")
                .handler(|vars: NoteVars, _| async move {
                    Ok::<_, ToolError>(format!("# Note {}", vars.id))
                })
                .build(),
        )
        .unwrap();
    registry
        .register_prompt(
            PromptDefinition::builder("summarize")
                .description("Summarize a note.")
                .handler(|args: SummarizeArgs, _| async move {
                    Ok::<_, ToolError>(vec![PromptMessage::user(format!(
                        "Summarize note {}.",
                        args.id
                    ))])
                })
                .build(),
        )
        .unwrap();
    McpServer::new(
        registry,
        McpServerOptions::new("bench", "1.0.0"),
        WriteToolPolicy::Permissive,
    )
}

fn prompt_request() -> GetPromptRequestParams {
    let mut request = GetPromptRequestParams::new("summarize");
    request.arguments = Some(json!({"id": "12"}).as_object().unwrap().clone());
    request
}

/// The rows `rmcp_read`, `gonk_read`, `rmcp_prompt`, `gonk_prompt`.
pub fn bench(
    group: &mut BenchmarkGroup<'_, WallTime>,
    runtime: &tokio::runtime::Runtime,
    peer: &Peer<RoleServer>,
    context: fn(&Peer<RoleServer>) -> RequestContext<RoleServer>,
) {
    let theirs = RmcpPrimitives::new();
    let ours = gonk_primitives();
    // Both answer the same read and prompt.
    runtime.block_on(async {
        for (name, read) in [
            ("rmcp", theirs.read_resource(ReadResourceRequestParams::new("notes://12"), context(peer)).await),
            ("gonk", ours.read_resource(ReadResourceRequestParams::new("notes://12"), context(peer)).await),
        ] {
            let json = serde_json::to_string(&ServerResult::from(read.unwrap())).unwrap();
            assert!(json.contains("# Note 12"), "{name} read: {json}");
        }
        for (name, got) in [
            ("rmcp", theirs.get_prompt(prompt_request(), context(peer)).await),
            ("gonk", ours.get_prompt(prompt_request(), context(peer)).await),
        ] {
            let json = serde_json::to_string(&ServerResult::from(got.unwrap())).unwrap();
            assert!(json.contains("Summarize note 12."), "{name} prompt: {json}");
        }
    });
    group.bench_function("rmcp_read", |b| {
        b.to_async(runtime).iter_batched(
            || context(peer),
            |context| async {
                let read = theirs
                    .read_resource(ReadResourceRequestParams::new("notes://12"), context)
                    .await
                    .unwrap();
                std::hint::black_box(serde_json::to_vec(&ServerResult::from(read)).unwrap())
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("gonk_read", |b| {
        b.to_async(runtime).iter_batched(
            || context(peer),
            |context| async {
                let read = ours
                    .read_resource(ReadResourceRequestParams::new("notes://12"), context)
                    .await
                    .unwrap();
                std::hint::black_box(serde_json::to_vec(&ServerResult::from(read)).unwrap())
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("rmcp_prompt", |b| {
        b.to_async(runtime).iter_batched(
            || context(peer),
            |context| async {
                let got = theirs.get_prompt(prompt_request(), context).await.unwrap();
                std::hint::black_box(serde_json::to_vec(&ServerResult::from(got)).unwrap())
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("gonk_prompt", |b| {
        b.to_async(runtime).iter_batched(
            || context(peer),
            |context| async {
                let got = ours.get_prompt(prompt_request(), context).await.unwrap();
                std::hint::black_box(serde_json::to_vec(&ServerResult::from(got)).unwrap())
            },
            BatchSize::SmallInput,
        )
    });
}

/// The ratios printed after the run: ours, rmcp's, what.
pub const RATIOS: [(&str, &str, &str); 2] = [
    ("gonk_read", "rmcp_read", "resources/read of a template -> JSON"),
    ("gonk_prompt", "rmcp_prompt", "prompts/get with an argument -> JSON"),
];
