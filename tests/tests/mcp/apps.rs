//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865) served over real
//! streamable HTTP by a small server of this test's own: a tool linked to an
//! app resource lists `_meta.ui` (and the legacy flat key) for every client,
//! an app-only tool is listed with `visibility: ["app"]` and stays
//! callable, the app resource lists and reads as `text/html;profile=mcp-app`
//! with its `_meta.ui` — by raw JSON-RPC, by `McpClient`, and by the real
//! Python SDK in both eras — and `ctx.ui_supported()` is true exactly for a
//! client that declared the extension.

use std::net::SocketAddr;

use gonk_tools::adapters::http::HttpServer;
use gonk_tools::adapters::mcp::{serve_http, McpClient, McpHttpOptions, McpServerOptions};
use gonk_tools::app::{AppCsp, AppPermissions, AppResource, EXTENSION_ID, MIME_TYPE};
use gonk_tools::prelude::*;
use gonk_tools_tests::clients::report;
use gonk_tools_tests::mcp_clients::run_python;
use serde_json::{json, Value};

use crate::support::stateless::{post_stateless, sse_messages};

const BOARD: &str = "ui://fixture/board";
const HTML: &str = "<!doctype html><html><body><h1>Board</h1></body></html>";

/// Show the board (its app renders the notes; this text is for the rest).
#[tool(name = "board.show", approval = "read", ui = "ui://fixture/board")]
async fn board_show() -> String {
    "3 notes on the board".to_owned()
}

/// Move a note on the board; only the board calls it.
#[tool(
    name = "board.move",
    approval = "read",
    ui(uri = "ui://fixture/board", visibility = "app")
)]
async fn board_move() -> String {
    "moved".to_owned()
}

#[derive(Serialize, JsonSchema)]
struct Support {
    /// Whether the calling client renders MCP Apps.
    supported: bool,
}

/// Whether the client calling this renders MCP Apps.
#[tool(name = "ui.supported", approval = "read")]
async fn ui_supported(ctx: ToolContext) -> Support {
    Support {
        supported: ctx.ui_supported(),
    }
}

fn board() -> gonk_tools::resource::ResourceDefinition {
    AppResource::html(BOARD, HTML)
        .name("board")
        .title("Notes board")
        .description("The notes, as a board.")
        .csp(
            AppCsp::default()
                .connect_domain("https://api.example.com")
                .resource_domain("https://cdn.example.com"),
        )
        .permissions(AppPermissions::default().clipboard_write())
        .prefers_border(true)
        .build()
}

/// The `_meta.ui` the board declares, as the spec spells it.
fn board_ui() -> Value {
    json!({
        "csp": {
            "connectDomains": ["https://api.example.com"],
            "resourceDomains": ["https://cdn.example.com"],
        },
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": true,
    })
}

async fn serve() -> HttpServer {
    let registry = ToolRegistry::new();
    registry.register_resource(board()).unwrap();
    registry
        .register_all([
            BoardShow::definition(),
            BoardMove::definition(),
            UiSupported::definition(),
        ])
        .unwrap();
    serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry,
        McpHttpOptions::new(McpServerOptions::new("apps-fixture", "1.0.0")),
    )
    .await
    .unwrap()
}

/// The result of one stateless request (a JSON answer, or the last
/// message of an SSE one).
async fn stateless(url: &str, id: u64, method: &str, params: Value) -> Value {
    let answer = post_stateless(url, id, method, params).await.unwrap();
    let text = answer.text().await.unwrap();
    let message = if text.trim_start().starts_with('{') {
        serde_json::from_str(&text).unwrap()
    } else {
        sse_messages(&text).pop().expect("an answer")
    };
    assert!(message.get("error").is_none(), "{method}: {message}");
    message["result"].clone()
}

fn tool<'a>(tools: &'a Value, name: &str) -> &'a Value {
    tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} is listed: {tools}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_and_the_app_resource_carry_their_meta_ui_on_the_wire() {
    let server = serve().await;
    let url = server.url();

    let tools = stateless(&url, 1, "tools/list", json!({})).await["tools"].clone();
    let show = tool(&tools, "board.show");
    assert_eq!(
        show["_meta"],
        json!({
            "ui": {"resourceUri": BOARD, "visibility": ["model", "app"]},
            "ui/resourceUri": BOARD,
        }),
        "{show}"
    );
    // The app-only tool is listed, for the host's app; hosts keep it from
    // the model.
    let moved = tool(&tools, "board.move");
    assert_eq!(
        moved["_meta"]["ui"]["visibility"],
        json!(["app"]),
        "{moved}"
    );
    assert!(tool(&tools, "ui.supported").get("_meta").is_none());

    let resources = stateless(&url, 2, "resources/list", json!({})).await;
    let listed = &resources["resources"][0];
    assert_eq!(listed["uri"], BOARD, "{resources}");
    assert_eq!(listed["mimeType"], MIME_TYPE);
    assert_eq!(listed["name"], "board");
    assert_eq!(listed["title"], "Notes board");
    assert_eq!(listed["_meta"]["ui"], board_ui(), "{listed}");

    let read = stateless(&url, 3, "resources/read", json!({"uri": BOARD})).await;
    let contents = &read["contents"];
    assert_eq!(contents.as_array().unwrap().len(), 1, "{read}");
    assert_eq!(contents[0]["uri"], BOARD);
    assert_eq!(contents[0]["mimeType"], MIME_TYPE);
    assert_eq!(contents[0]["text"], HTML);
    assert_eq!(contents[0]["_meta"]["ui"], board_ui(), "{read}");

    // Listed as callable, and it is.
    let called = stateless(&url, 4, "tools/call", json!({"name": "board.move"})).await;
    assert_eq!(called["isError"], false, "{called}");
    assert_eq!(called["content"][0]["text"], "\"moved\"", "{called}");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_supported_is_true_only_for_a_client_that_declared_the_extension() {
    let server = serve().await;
    let url = server.url();
    let supported = |capabilities: Value| {
        let url = url.clone();
        async move {
            let params = json!({
                "name": "ui.supported",
                "_meta": {"io.modelcontextprotocol/clientCapabilities": capabilities},
            });
            let result = stateless(&url, 7, "tools/call", params).await;
            result["structuredContent"]["supported"].clone()
        }
    };
    let apps = json!({"extensions": {EXTENSION_ID: {"mimeTypes": [MIME_TYPE]}}});
    assert_eq!(supported(apps).await, true);
    assert_eq!(supported(json!({})).await, false);
    // The extension declared for another kind of UI only.
    let other = json!({"extensions": {EXTENSION_ID: {"mimeTypes": ["text/uri-list"]}}});
    assert_eq!(supported(other).await, false);
    // Another extension only.
    let skills = json!({"extensions": {"io.modelcontextprotocol/skills": {}}});
    assert_eq!(supported(skills).await, false);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_client_sees_the_link_and_reads_the_app() {
    let server = serve().await;
    let client = McpClient::connect_http(&server.url(), Default::default())
        .await
        .unwrap();
    let tools = client.list_tools().await.unwrap();
    let show = tools.iter().find(|t| t.name == "board.show").unwrap();
    let meta = serde_json::to_value(show.meta.as_ref().expect("_meta")).unwrap();
    assert_eq!(meta["ui"]["resourceUri"], BOARD, "{meta}");
    assert_eq!(meta["ui/resourceUri"], BOARD, "{meta}");
    let read = client.read_resource(BOARD).await.unwrap();
    assert_eq!(read[0].as_text(), Some(HTML));
    assert_eq!(read[0].mime_type.as_deref(), Some(MIME_TYPE));
    let ui = AppResource::from_meta(read[0].meta.as_ref().expect("_meta")).unwrap();
    assert_eq!(
        ui.csp().unwrap().connect_domains(),
        ["https://api.example.com"]
    );
    assert_eq!(ui.prefers_border(), Some(true));
    // McpClient declares no UI extension: a text-only host.
    let answer = collect_tool_outcome(client.invoke("ui.supported", json!({})), |_| {})
        .await
        .unwrap();
    assert_eq!(answer.data["supported"], false, "{:?}", answer.data);
    server.shutdown().await.unwrap();
}

/// What the Python SDK saw, checked: the server declares the extension,
/// the tools carry their links, and the resource the link names lists
/// and reads as an app with its CSP.
fn check_python(report: &Value, era: &str, declared: bool) {
    assert_eq!(report["protocol_version"], era, "{report}");
    assert_eq!(
        report["extension"],
        json!({"mimeTypes": [MIME_TYPE]}),
        "{report}"
    );
    let tools = &report["tools"];
    assert_eq!(
        tool(tools, "board.show")["_meta"]["ui"],
        json!({"resourceUri": BOARD, "visibility": ["model", "app"]})
    );
    assert_eq!(tool(tools, "board.show")["_meta"]["ui/resourceUri"], BOARD);
    assert_eq!(
        tool(tools, "board.move")["_meta"]["ui"]["visibility"],
        json!(["app"])
    );
    assert_eq!(report["linked_uri"], BOARD);
    let listed = report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == BOARD)
        .expect("the app resource is listed");
    assert_eq!(listed["mimeType"], MIME_TYPE, "{listed}");
    assert_eq!(listed["_meta"]["ui"]["csp"], board_ui()["csp"], "{listed}");
    let contents = &report["read"]["contents"][0];
    assert_eq!(contents["mimeType"], MIME_TYPE, "{contents}");
    assert_eq!(contents["text"], HTML);
    assert_eq!(contents["_meta"]["ui"], board_ui(), "{contents}");
    let answer = &report["ui_supported"];
    assert_eq!(
        answer["structuredContent"]["supported"], declared,
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_reads_the_app_and_declares_the_extension_in_2026() {
    let server = serve().await;
    let url = server.url();
    let declared = tokio::task::spawn_blocking({
        let url = url.clone();
        move || run_python("python_apps.py", &["auto", &url, "ui"])
    })
    .await
    .unwrap();
    check_python(&report(&declared), "2026-07-28", true);
    let plain = tokio::task::spawn_blocking(move || run_python("python_apps.py", &["auto", &url]))
        .await
        .unwrap();
    check_python(&report(&plain), "2026-07-28", false);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_reads_the_app_and_declares_the_extension_in_2025() {
    let server = serve().await;
    let url = server.url();
    let declared = tokio::task::spawn_blocking({
        let url = url.clone();
        move || run_python("python_apps.py", &["legacy", &url, "ui"])
    })
    .await
    .unwrap();
    check_python(&report(&declared), "2025-11-25", true);
    let plain =
        tokio::task::spawn_blocking(move || run_python("python_apps.py", &["legacy", &url]))
            .await
            .unwrap();
    check_python(&report(&plain), "2025-11-25", false);
    server.shutdown().await.unwrap();
}
