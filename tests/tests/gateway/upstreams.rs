//! `gonk-gateway` (examples/gateway) as a real process in front of real
//! upstream processes: our `mcp-source-fixture` over stdio and over HTTP
//! with an API key, and `notes serve` with an API key. Clients: the
//! official Python SDK, our `McpClient`, and the gateway's own command line.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::prelude::*;
use gonk_tools_tests::clients::report;
use gonk_tools_tests::mcp_clients::run_python;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::{bin, notes_command};
use serde_json::{json, Value};

const UPSTREAM_KEY: &str = "gateway-upstream-key-0123456789abcdef";
const NOTES_KEY: &str = "gateway-notes-key-0123456789abcdef";
const GATEWAY_KEY: &str = "gateway-front-key-0123456789abcdef";

fn fixture_http() -> ServerProcess {
    let mut command = Command::new(bin("mcp-source-fixture"));
    command.args(["http", UPSTREAM_KEY]);
    ServerProcess::start(command)
}

fn notes_http() -> ServerProcess {
    notes_http_on(0)
}

/// `notes serve` with the API key on `port` (0: a free one).
fn notes_http_on(port: u16) -> ServerProcess {
    let mut command = notes_command();
    command.args([
        "--db",
        ":memory:",
        "serve",
        "--port",
        &port.to_string(),
        "--api-key",
        NOTES_KEY,
    ]);
    ServerProcess::start(command)
}

/// The port of `http://127.0.0.1:PORT/mcp`.
fn port_of(url: &str) -> u16 {
    let authority = url.split('/').nth(2).expect("a URL with an authority");
    authority
        .rsplit(':')
        .next()
        .and_then(|port| port.parse().ok())
        .expect("a URL with a port")
}

/// The config: `fx` the fixture over stdio, `web` the fixture over HTTP,
/// and `notes` when given.
fn write_config(path: &Path, web_url: &str, notes_url: Option<&str>) {
    let mut servers = json!({
        "fx": {"command": bin("mcp-source-fixture").display().to_string(), "args": ["stdio"]},
        "web": {"url": web_url, "headers": {"Authorization": format!("Bearer {UPSTREAM_KEY}")}},
    });
    if let Some(url) = notes_url {
        servers["notes"] =
            json!({"url": url, "headers": {"Authorization": format!("Bearer {NOTES_KEY}")}});
    }
    std::fs::write(path, json!({"mcpServers": servers}).to_string()).unwrap();
}

fn gateway(config: &Path, extra: &[&str], serve: &[&str]) -> ServerProcess {
    let mut command = Command::new(bin("gonk-gateway"));
    command
        .arg("--config")
        .arg(config)
        .args(extra)
        .args(["serve", "--port", "0", "--api-key", GATEWAY_KEY])
        .args(serve);
    ServerProcess::start(command)
}

async fn client(url: &str) -> McpClient {
    McpClient::connect_http(url, McpHttpClientOptions::new().api_key(GATEWAY_KEY))
        .await
        .expect("the gateway accepts the key")
}

async fn call(client: &McpClient, name: &str, input: Value) -> Result<ToolOutput, ToolError> {
    collect_tool_outcome(client.invoke(name, input), |_| {}).await
}

fn text(output: &ToolOutput) -> String {
    output.data["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn lists(client: &McpClient, name: &str) -> bool {
    let tools = client.list_tools().await.expect("tools/list answers");
    tools.iter().any(|t| t.name == name)
}

/// Calls `name` until `done` holds for the outcome (bounded: a guard
/// against a hang, not a timing assertion); the last outcome.
async fn until(
    client: &McpClient,
    name: &str,
    input: Value,
    done: impl Fn(&Result<ToolOutput, ToolError>) -> bool,
) -> Result<ToolOutput, ToolError> {
    let mut outcome = call(client, name, input.clone()).await;
    for _ in 0..300 {
        if done(&outcome) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        outcome = call(client, name, input.clone()).await;
    }
    outcome
}

#[test]
fn the_python_sdk_lists_the_namespaced_union_and_calls_a_tool_of_each() {
    let web = fixture_http();
    let notes = notes_http();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    let audit = dir.path().join("audit.jsonl");
    write_config(&config, &web.url, Some(&notes.url));
    let gw = gateway(
        &config,
        &["--trust", "web", "--audit", audit.to_str().unwrap()],
        &[],
    );
    let calls = json!({
        "fx.echo": {"text": "via stdio"},
        "web.echo": {"text": "via http"},
        "notes.notes.search": {"query": "nothing"},
    });
    let output = run_python(
        "python_gateway.py",
        &[&gw.url, GATEWAY_KEY, &calls.to_string()],
    );
    let report = report(&output);
    let tools: Vec<&Value> = report["tools"].as_array().unwrap().iter().collect();
    let named = |name: &str| tools.iter().find(|t| t["name"] == name).copied();
    for name in ["fx.echo", "fx.slow", "web.echo", "notes.notes.search"] {
        assert!(named(name).is_some(), "{name} is listed: {tools:?}");
    }
    assert!(
        tools.iter().all(|t| {
            let name = t["name"].as_str().unwrap();
            ["fx.", "web.", "notes."]
                .iter()
                .any(|p| name.starts_with(p))
        }),
        "every tool is namespaced by its server: {tools:?}"
    );
    // Untrusted fx: its description is replaced; trusted web keeps its own.
    assert_eq!(
        named("fx.echo").unwrap()["description"],
        "Remote MCP tool fx/echo"
    );
    assert!(named("web.echo").unwrap()["description"]
        .as_str()
        .unwrap()
        .starts_with("Echo the text back."));
    let results = &report["calls"];
    assert_eq!(results["fx.echo"]["isError"], false, "{results}");
    assert_eq!(
        results["fx.echo"]["structuredContent"]["structuredContent"]["text"], "via stdio",
        "{results}"
    );
    assert_eq!(results["web.echo"]["isError"], false, "{results}");
    assert_eq!(
        results["web.echo"]["structuredContent"]["structuredContent"]["text"], "via http",
        "{results}"
    );
    assert_eq!(results["notes.notes.search"]["isError"], false, "{results}");
    // One receipt a line, naming the calls.
    let receipts = std::fs::read_to_string(&audit).unwrap();
    let lines: Vec<Value> = receipts
        .lines()
        .map(|l| serde_json::from_str(l).expect("each audit line is JSON"))
        .collect();
    for name in ["fx.echo", "web.echo", "notes.notes.search"] {
        assert!(
            receipts.contains(&format!("\"{name}\"")),
            "a receipt names {name}: {lines:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_upstream_fails_with_a_transport_error_while_the_others_work() {
    let web = fixture_http();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    write_config(&config, &web.url, None);
    // No reconnecting during this test: the dead upstream stays dead.
    let gw = gateway(&config, &["--health-interval", "3600"], &[]);
    let client = client(&gw.url).await;
    let pid: i32 = text(&call(&client, "fx.pid", json!({})).await.unwrap())
        .parse()
        .unwrap();
    // kill(2) of the fixture process the gateway started for this test.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let outcome = until(&client, "fx.echo", json!({"text": "hi"}), Result::is_err).await;
    let error = outcome.expect_err("fx's tools fail once it is dead");
    assert_eq!(error.code, ErrorCode::RemoteTransportError, "{error:?}");
    let output = call(&client, "web.echo", json!({"text": "still here"}))
        .await
        .expect("web keeps working");
    assert_eq!(output.data["structuredContent"]["text"], "still here");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_upstream_is_picked_up_and_sighup_reloads_the_config() {
    let web = fixture_http();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    write_config(&config, &web.url, None);
    let gw = gateway(&config, &["--health-interval", "1"], &[]);
    let client = client(&gw.url).await;

    // A stdio upstream that dies is started again.
    let first = text(&call(&client, "fx.pid", json!({})).await.unwrap());
    assert_eq!(
        unsafe { libc::kill(first.parse().unwrap(), libc::SIGKILL) },
        0
    );
    let again = until(&client, "fx.pid", json!({}), |outcome| {
        outcome.as_ref().is_ok_and(|output| text(output) != first)
    })
    .await
    .expect("fx comes back");
    assert_ne!(text(&again), first, "a new fx process answers");

    // An HTTP upstream that moves: the config is rewritten and SIGHUP
    // makes the gateway follow it.
    drop(web);
    let moved = fixture_http();
    write_config(&config, &moved.url, None);
    gw.signal(libc::SIGHUP);
    let output = until(&client, "web.echo", json!({"text": "moved"}), Result::is_ok)
        .await
        .expect("web answers from its new address");
    assert_eq!(output.data["structuredContent"]["text"], "moved");
    client.close().await.unwrap();
}

/// `notes serve` over HTTP with an API key behind the gateway, killed:
/// its tools fail with `REMOTE_TRANSPORT_ERROR` while fx's keep working.
/// Started again on the same port (a new process, none of the old state),
/// it is picked up: the gateway's health check reconnects it and its
/// tools work again.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_http_upstream_fails_and_its_restart_is_picked_up() {
    let web = fixture_http();
    let notes = notes_http();
    let port = port_of(&notes.url);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    write_config(&config, &web.url, Some(&notes.url));
    let gw = gateway(&config, &["--health-interval", "1"], &[]);
    let client = client(&gw.url).await;
    let search = json!({"query": "nothing"});
    call(&client, "notes.notes.search", search.clone())
        .await
        .expect("notes answers");

    // SIGKILL, and reaped.
    drop(notes);
    let error = until(
        &client,
        "notes.notes.search",
        search.clone(),
        Result::is_err,
    )
    .await
    .expect_err("notes' tools fail once it is dead");
    assert_eq!(error.code, ErrorCode::RemoteTransportError, "{error:?}");
    let output = call(&client, "fx.echo", json!({"text": "still here"}))
        .await
        .expect("fx keeps working");
    assert_eq!(output.data["structuredContent"]["text"], "still here");

    let _restarted = notes_http_on(port);
    until(&client, "notes.notes.search", search, Result::is_ok)
        .await
        .expect("notes answers again once restarted");
    client.close().await.unwrap();
}

/// A malicious upstream behind the gateway (the fixture's `rogue` mode: a
/// 1 MB description, a tool named `notes.search`, a 10 MB result, an
/// invalid JSON-RPC line before each answer) and another whose schema has
/// a `$ref` to a URL: the gateway keeps serving, the first's tools stay
/// under its prefix with the replaced description, the second is left out
/// whole, and the well-behaved upstream beside them keeps working.
#[tokio::test(flavor = "multi_thread")]
async fn a_malicious_upstream_never_takes_the_gateway_down() {
    let web = fixture_http();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    write_config(&config, &web.url, None);
    let mut servers: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    let rogue = |flags: &str| {
        json!({
            "command": bin("mcp-source-fixture").display().to_string(),
            "args": ["rogue"],
            "env": {"ROGUE": flags},
            "timeout": 60,
        })
    };
    servers["mcpServers"]["rogue"] = rogue("huge,local,big,garbage");
    servers["mcpServers"]["byref"] = rogue("refurl");
    std::fs::write(&config, servers.to_string()).unwrap();
    let mut gw = gateway(&config, &[], &[]);
    let client = client(&gw.url).await;
    let tools = client.list_tools().await.expect("tools/list answers");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for name in ["rogue.huge", "rogue.notes.search", "rogue.big", "fx.echo"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("rogue.") || n.starts_with("fx.") || n.starts_with("web.")),
        "nothing leaves its prefix, and byref's catalog was refused whole: {names:?}"
    );
    let huge = tools.iter().find(|t| t.name == "rogue.huge").unwrap();
    assert_eq!(
        huge.description.as_deref(),
        Some("Remote MCP tool rogue/huge")
    );
    // The 10 MB answer and the garbage line: carried or refused, never a
    // crash (the gateway's answer may also be too big for the client).
    let _ = call(&client, "rogue.big", json!({})).await;
    let _ = call(&client, "rogue.annotated", json!({})).await;
    assert!(gw.is_running(), "the gateway survived the rogue's answers");
    let output = call(&client, "fx.echo", json!({"text": "still here"}))
        .await
        .expect("fx keeps working");
    assert_eq!(output.data["structuredContent"]["text"], "still here");
    client.close().await.unwrap();
    let stderr = gw.stderr_lines().join("\n");
    assert!(
        stderr.contains("byref"),
        "the refused upstream is reported: {stderr}"
    );
}

#[test]
fn list_and_call_run_the_imported_tools_from_the_command_line() {
    let web = fixture_http();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    write_config(&config, &web.url, None);
    let list = Command::new(bin("gonk-gateway"))
        .arg("--config")
        .arg(&config)
        .arg("list")
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success(), "{listed}");
    for name in ["fx.echo", "web.echo"] {
        assert!(listed.contains(name), "{name} in {listed}");
    }
    let called = Command::new(bin("gonk-gateway"))
        .arg("--config")
        .arg(&config)
        .args(["call", "web.echo", "--text", "from the shell"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&called.stdout);
    assert!(
        called.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&called.stderr)
    );
    assert!(out.contains("from the shell"), "{out}");
    // A config that is not an mcpServers file is a clear error.
    std::fs::write(&config, r#"{"servers": {}}"#).unwrap();
    let bad = Command::new(bin("gonk-gateway"))
        .arg("--config")
        .arg(&config)
        .arg("list")
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("mcpServers"), "{stderr}");
}

/// Servers no one here wrote, from the registries (`.ci/install-mcp-clients`):
/// `@modelcontextprotocol/server-everything` (npm) and `mcp-server-time`
/// (PyPI), both over stdio, plus `notes serve` over HTTP with an API key,
/// behind the gateway: the Python SDK lists the namespaced union and calls
/// a tool of each.
#[test]
fn registry_servers_behind_the_gateway() {
    let notes = notes_http();
    let clients = gonk_tools_tests::mcp_clients::clients();
    let everything = clients
        .node_dir
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let time = clients.dir.join("time-venv/bin/mcp-server-time");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    let servers = json!({"mcpServers": {
        "everything": {"command": "node", "args": [everything.display().to_string(), "stdio"]},
        "time": {"command": time.display().to_string()},
        "notes": {"url": notes.url, "headers": {"Authorization": format!("Bearer {NOTES_KEY}")}},
    }});
    std::fs::write(&config, servers.to_string()).unwrap();
    let gw = gateway(&config, &[], &[]);
    let calls = json!({
        "everything.echo": {"message": "hi from python"},
        "time.get_current_time": {"timezone": "UTC"},
        "notes.notes.search": {"query": "nothing"},
    });
    let report = report(&run_python(
        "python_gateway.py",
        &[&gw.url, GATEWAY_KEY, &calls.to_string()],
    ));
    let names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"everything.echo"), "{names:?}");
    assert!(names.contains(&"time.get_current_time"), "{names:?}");
    assert!(names.contains(&"notes.notes.search"), "{names:?}");
    assert!(
        names.iter().all(|n| ["everything.", "time.", "notes."]
            .iter()
            .any(|prefix| n.starts_with(prefix))),
        "{names:?}"
    );
    let results = &report["calls"];
    assert_eq!(results["everything.echo"]["isError"], false, "{results}");
    assert!(
        results["everything.echo"]
            .to_string()
            .contains("hi from python"),
        "{results}"
    );
    assert_eq!(
        results["time.get_current_time"]["isError"], false,
        "{results}"
    );
    assert!(
        results["time.get_current_time"].to_string().contains("UTC"),
        "{results}"
    );
    assert_eq!(results["notes.notes.search"]["isError"], false, "{results}");
}

/// `gonk-gateway mcp` over stdio, launched by the Python SDK as an MCP
/// client launches a server; an upstream that cannot start is reported and
/// left out while the others are served.
#[test]
fn stdio_serving_with_an_upstream_that_cannot_start() {
    let web = fixture_http();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    write_config(&config, &web.url, None);
    let mut servers: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    servers["mcpServers"]["broken"] =
        json!({"command": dir.path().join("no-such-server").display().to_string()});
    std::fs::write(&config, servers.to_string()).unwrap();
    let gateway = bin("gonk-gateway").display().to_string();
    let report = report(&run_python(
        "python_list_call.py",
        &[
            "fx.echo,web.echo",
            &gateway,
            "--config",
            config.to_str().unwrap(),
            "mcp",
        ],
    ));
    let tools = report["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t == "fx.echo"), "{tools:?}");
    assert!(tools.iter().any(|t| t == "web.echo"), "{tools:?}");
    assert!(
        !tools
            .iter()
            .any(|t| t.as_str().unwrap().starts_with("broken.")),
        "{tools:?}"
    );
    for name in ["fx.echo", "web.echo"] {
        assert_eq!(report["calls"][name]["isError"], false, "{report}");
    }
}

/// An upstream's `list_changed` reaches the gateway's own listing: `grow`
/// makes the stdio fixture announce a new tool, and a client of the
/// gateway then lists (and calls) `fx.extra`.
#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_list_change_updates_the_gateway_listing() {
    let web = fixture_http();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    write_config(&config, &web.url, None);
    let gw = gateway(&config, &[], &[]);
    let client = client(&gw.url).await;
    assert!(!lists(&client, "fx.extra").await);
    call(&client, "fx.grow", json!({})).await.expect("grows");
    let mut seen = false;
    for _ in 0..300 {
        if lists(&client, "fx.extra").await {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(seen, "fx.extra is listed after the upstream announced it");
    let output = call(&client, "fx.extra", json!({}))
        .await
        .expect("fx.extra runs");
    assert!(text(&output).contains("extra"), "{output:?}");
    client.close().await.unwrap();
}

/// A server's `timeout` in the config ends a slow call with
/// `REMOTE_TIMEOUT`; a server without one is not limited.
#[tokio::test(flavor = "multi_thread")]
async fn a_configured_timeout_ends_a_slow_call_with_remote_timeout() {
    let web = fixture_http();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    write_config(&config, &web.url, None);
    let mut servers: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    servers["mcpServers"]["fx"]["timeout"] = json!(0.2);
    std::fs::write(&config, servers.to_string()).unwrap();
    let gw = gateway(&config, &[], &[]);
    let client = client(&gw.url).await;
    let error = call(&client, "fx.slow", json!({"steps": 100, "step_ms": 100}))
        .await
        .expect_err("the call outlives fx's timeout");
    assert_eq!(error.code, ErrorCode::RemoteTimeout, "{error:?}");
    call(&client, "web.slow", json!({"steps": 2, "step_ms": 300}))
        .await
        .expect("web has no timeout");
    client.close().await.unwrap();
}

/// A port nothing listens on now (bound, then let go).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// An upstream down when the gateway starts keeps its namespace: `list`
/// marks it, a call under its prefix answers `REMOTE_UNAVAILABLE` naming
/// it (not "Unknown tool"), and once it is started the health check
/// imports its tools — the client hears `tools/list_changed`, lists them
/// and calls one — without restarting the gateway.
#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_down_at_start_answers_unavailable_then_joins_when_it_comes_up() {
    let web = fixture_http();
    let port = free_port();
    let notes_url = format!("http://127.0.0.1:{port}/mcp");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    write_config(&config, &web.url, Some(&notes_url));

    let listed = Command::new(bin("gonk-gateway"))
        .arg("--config")
        .arg(&config)
        .arg("list")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.status.success(), "{stdout}");
    let marked = stdout
        .lines()
        .find(|line| line.starts_with("notes.*"))
        .unwrap_or_else(|| panic!("list marks the unreachable server: {stdout}"));
    assert!(marked.contains("UNREACHABLE"), "{marked}");
    assert!(
        stdout.contains("fx.echo"),
        "the others are listed: {stdout}"
    );

    let gw = gateway(&config, &["--health-interval", "1"], &[]);
    let client = client(&gw.url).await;
    let mut changes = client
        .watch_tools()
        .await
        .expect("the gateway announces changes");
    let search = json!({"query": "nothing"});
    let error = call(&client, "notes.notes.search", search.clone())
        .await
        .expect_err("notes is down");
    assert_eq!(error.code, ErrorCode::RemoteUnavailable, "{error:?}");
    assert!(
        error.message.contains("MCP server notes") && error.message.contains("unreachable"),
        "names the server: {}",
        error.message
    );
    assert!(
        error.message.contains("could not connect"),
        "and its last connection error: {}",
        error.message
    );
    assert!(!lists(&client, "notes.notes.search").await);
    let output = call(&client, "fx.echo", json!({"text": "still here"}))
        .await
        .expect("fx works meanwhile");
    assert_eq!(output.data["structuredContent"]["text"], "still here");

    let _notes = notes_http_on(port);
    // Within the health check's (backed-off) period; the bound is only a
    // guard against a hang.
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            changes
                .changed()
                .await
                .expect("the change stream stays open");
            if lists(&client, "notes.notes.search").await {
                break;
            }
        }
    })
    .await
    .expect("notes' tools appear, announced by tools/list_changed");
    call(&client, "notes.notes.search", search)
        .await
        .expect("notes answers without a gateway restart");
    client.close().await.unwrap();
}
