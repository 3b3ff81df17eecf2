//! `gonk-gateway --search` in front of 1,000 generated tools (the
//! `mcp-source-fixture catalog` upstream over stdio): MCP lists only
//! `tools.search` and `tools.call`; the search finds the right tool in its
//! top 3 for 20 fixed queries and `tools.call` runs it on the upstream;
//! the provider tool lists defer every imported tool; an untrusted
//! upstream (server-everything) is found by its own descriptions.

use std::path::Path;
use std::process::Command;

use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::prelude::*;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::bin;
use serde_json::{json, Value};

const GATEWAY_KEY: &str = "gateway-search-key-0123456789abcdef";

/// A request in words and the upstream tool that does it (remote name;
/// the gateway serves it as `cat.<name>`). Written for this test: each
/// shares words with its tool's description or schema (BM25 is lexical).
const QUERIES: [(&str, &str); 20] = [
    ("create an invoice for a customer", "billing.invoice_create"),
    (
        "archive an old coupon discount code",
        "billing.coupon_archive",
    ),
    (
        "send an invitation to attend a meeting",
        "calendar.invitation_create",
    ),
    ("delete a sales lead from the crm", "crm.lead_delete"),
    (
        "publish a new tagged release with notes on github",
        "github.release_create",
    ),
    (
        "add an emoji reaction to a slack message",
        "slack.reaction_create",
    ),
    (
        "write a new email draft with a subject line",
        "email.draft_create",
    ),
    (
        "create a public download link to share a file",
        "storage.share_link_create",
    ),
    (
        "current temperature and humidity observation",
        "weather.observation_get",
    ),
    ("traffic congestion on a road", "maps.traffic_get"),
    ("list my monthly salary payslips", "hr.payslip_list"),
    (
        "place a purchase order with a supplier",
        "inventory.purchase_order_create",
    ),
    (
        "book a courier pickup collection for a parcel",
        "shipping.pickup_create",
    ),
    ("add a CNAME record to the DNS", "dns.record_create"),
    ("delete a kubernetes pod", "kubernetes.pod_delete"),
    ("find songs in a playlist by mood", "music.playlist_search"),
    ("book a hotel room for two nights", "travel.hotel_create"),
    (
        "calories and macros of a food serving",
        "recipes.nutrition_get",
    ),
    (
        "change the priority of a support ticket",
        "support.ticket_update",
    ),
    (
        "export the vacation leave requests as CSV",
        "hr.leave_request_export",
    ),
];

fn write_config(path: &Path) {
    let servers = json!({"mcpServers": {
        "cat": {"command": bin("mcp-source-fixture").display().to_string(), "args": ["catalog"]},
    }});
    std::fs::write(path, servers.to_string()).unwrap();
}

async fn call(client: &McpClient, name: &str, input: Value) -> Result<ToolOutput, ToolError> {
    collect_tool_outcome(client.invoke(name, input), |_| {}).await
}

#[tokio::test(flavor = "multi_thread")]
async fn search_finds_and_calls_tools_among_a_thousand_behind_the_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    write_config(&config);
    let mut command = Command::new(bin("gonk-gateway"));
    command
        .arg("--config")
        .arg(&config)
        .args(["--search", "--trust", "cat"])
        .args(["serve", "--port", "0", "--api-key", GATEWAY_KEY]);
    let gw = ServerProcess::start(command);
    let client = McpClient::connect_http(&gw.url, McpHttpClientOptions::new().api_key(GATEWAY_KEY))
        .await
        .expect("the gateway accepts the key");

    // The listing is the two meta-tools, not the 1,000.
    let mut listed: Vec<String> = client
        .list_tools()
        .await
        .expect("tools/list answers")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    listed.sort();
    assert_eq!(listed, ["tools.call", "tools.search"]);

    let mut misses = Vec::new();
    for (i, (query, remote)) in QUERIES.iter().enumerate() {
        let name = format!("cat.{remote}");
        let found = call(&client, "tools.search", json!({"query": query, "limit": 3}))
            .await
            .unwrap_or_else(|e| panic!("tools.search {query:?}: {e:?}"));
        let data = found.data.get("structuredContent").unwrap_or(&found.data);
        let top: Vec<&str> = data["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("a tools array: {}", found.data))
            .iter()
            .filter_map(|hit| hit["name"].as_str())
            .collect();
        if !top.contains(&name.as_str()) {
            misses.push(format!("{query:?} -> {top:?}, wanted {name}"));
            continue;
        }
        // tools.call runs it on the upstream, with its arguments.
        let id = format!("rec-{i}");
        let ran = call(
            &client,
            "tools.call",
            json!({"name": name, "arguments": {"id": id}}),
        )
        .await
        .unwrap_or_else(|e| panic!("tools.call {name}: {e:?}"));
        let answer = ran.data.to_string();
        assert!(
            answer.contains(&format!("\"tool\":\"{remote}\"")) && answer.contains(&id),
            "the upstream tool {remote} answered with its name and the id: {answer}"
        );
    }
    assert!(
        misses.is_empty(),
        "not in the top 3:\n{}",
        misses.join("\n")
    );

    // A name no upstream has is TOOL_NOT_FOUND through tools.call.
    let error = call(
        &client,
        "tools.call",
        json!({"name": "cat.billing.invoice_fly", "arguments": {}}),
    )
    .await
    .expect_err("no such tool");
    assert_eq!(error.code, ErrorCode::ToolNotFound, "{error:?}");
    client.close().await.unwrap();
}

/// The entry name of an Anthropic (`name`) or OpenAI chat (`function.name`) tool.
fn entry_name(entry: &Value) -> &str {
    entry["name"]
        .as_str()
        .or_else(|| entry["function"]["name"].as_str())
        .expect("a named entry")
}

#[test]
fn provider_tool_lists_defer_the_thousand_and_declare_the_search_tool() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    write_config(&config);
    for provider in ["anthropic", "openai", "openai-responses"] {
        let output = Command::new(bin("gonk-gateway"))
            .arg("--config")
            .arg(&config)
            .args([
                "--search",
                "--trust",
                "cat",
                "provider-tools",
                "--provider",
                provider,
            ])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let tools: Vec<Value> = serde_json::from_slice(&output.stdout).expect("a JSON array");
        assert_eq!(
            tools.len(),
            1002,
            "{provider}: the 1,000 and the two meta-tools"
        );
        let up_front: Vec<&str> = tools
            .iter()
            .filter(|t| t.get("defer_loading").is_none())
            .map(entry_name)
            .collect();
        assert_eq!(up_front, ["tools_search", "tools_call"], "{provider}");
        assert!(
            tools
                .iter()
                .filter(|t| t.get("defer_loading").is_some())
                .all(|t| t["defer_loading"] == true && entry_name(t).starts_with("cat_")),
            "{provider}: every imported tool is deferred"
        );
    }
    // Without --search nothing is marked.
    let output = Command::new(bin("gonk-gateway"))
        .arg("--config")
        .arg(&config)
        .args(["provider-tools", "--provider", "anthropic"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let tools: Vec<Value> = serde_json::from_slice(&output.stdout).expect("a JSON array");
    assert_eq!(tools.len(), 1000);
    assert!(tools.iter().all(|t| t.get("defer_loading").is_none()));
}

/// `@modelcontextprotocol/server-everything` behind `--search`, not
/// trusted: its tools are found by the words of their own descriptions
/// (which the importer keeps out of what models read), and what a search
/// shows is still the replaced description.
#[tokio::test(flavor = "multi_thread")]
async fn search_finds_untrusted_tools_by_their_upstream_description_without_showing_it() {
    let clients = gonk_tools_tests::mcp_clients::clients();
    let everything = clients
        .node_dir
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    let servers = json!({"mcpServers": {
        "everything": {"command": "node", "args": [everything.display().to_string(), "stdio"]},
    }});
    std::fs::write(&config, servers.to_string()).unwrap();
    let mut command = Command::new(bin("gonk-gateway"));
    command.arg("--config").arg(&config).arg("--search").args([
        "serve",
        "--port",
        "0",
        "--api-key",
        GATEWAY_KEY,
    ]);
    let gw = ServerProcess::start(command);
    let client = McpClient::connect_http(&gw.url, McpHttpClientOptions::new().api_key(GATEWAY_KEY))
        .await
        .expect("the gateway accepts the key");
    for (query, name, upstream_words) in [
        (
            "add two numbers",
            "everything.get-sum",
            "sum of two numbers",
        ),
        (
            "environment variables",
            "everything.get-env",
            "environment variables",
        ),
    ] {
        let found = call(&client, "tools.search", json!({"query": query, "limit": 3}))
            .await
            .unwrap_or_else(|e| panic!("tools.search {query:?}: {e:?}"));
        let data = found.data.get("structuredContent").unwrap_or(&found.data);
        let hits = data["tools"].as_array().expect("a tools array");
        let hit = hits
            .iter()
            .find(|hit| hit["name"] == name)
            .unwrap_or_else(|| panic!("{query:?} finds {name} in the top 3: {hits:?}"));
        let remote = name.trim_start_matches("everything.");
        assert_eq!(
            hit["description"],
            format!("Remote MCP tool everything/{remote}")
        );
        assert!(
            !found.data.to_string().contains(upstream_words),
            "the upstream's words are not shown: {}",
            found.data
        );
    }
    client.close().await.unwrap();
}
