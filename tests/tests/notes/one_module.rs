//! One module of tool definitions (`examples/notes/tools.rs`) serves MCP,
//! the command line and Pi unchanged: the same binary, the same database,
//! the same tools, the same schema enforcement, seen from every surface.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use gonk_tools::adapters::mcp::McpClient;
use gonk_tools::prelude::*;
use serde_json::Value;

use gonk_tools_tests::pi::{run_pi, turn};
use gonk_tools_tests::workspace::bin;

fn cli(db: &str, args: &[&str]) -> std::process::Output {
    Command::new(bin("notes"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("run the notes CLI")
}

fn json_lines(output: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[tokio::test]
async fn the_same_tools_answer_on_the_cli_over_mcp_and_in_pi() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db").to_string_lossy().into_owned();

    // The CLI writes a note…
    let created = cli(
        &db,
        &["notes.create", "Written by the CLI", "--body", "hello"],
    );
    assert!(created.status.success(), "{created:?}");

    // …the MCP server of the same binary lists the same tools and finds it.
    let mut command = tokio::process::Command::new(bin("notes"));
    command.arg("--db").arg(&db).arg("mcp");
    let client = McpClient::connect_stdio(command)
        .await
        .expect("notes mcp starts");
    let mut mcp_names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    mcp_names.sort();

    let listed = cli(&db, &["list"]);
    assert!(listed.status.success());
    let mut cli_names: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.starts_with("notes.") || w.starts_with("jobs."))
        .map(str::to_owned)
        .collect();
    cli_names.sort();
    assert_eq!(cli_names, mcp_names, "both surfaces expose the same tools");
    assert_eq!(
        mcp_names.len(),
        // The notes tools and the four `jobs.*` tools.
        notes::tools::NotesTools::TOOL_NAMES.len() + 4,
        "{mcp_names:?}"
    );

    let found = collect_tool_outcome(
        client.invoke("notes.search", json!({"query": "CLI"})),
        |_| {},
    )
    .await
    .expect("notes.search over MCP");
    let titles: Vec<&str> = found.data["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["title"].as_str())
        .collect();
    assert_eq!(titles, ["Written by the CLI"]);

    // MCP writes a note; the CLI finds it.
    collect_tool_outcome(
        client.invoke(
            "notes.create",
            json!({"title": "Written over MCP", "body": "hi"}),
        ),
        |_| {},
    )
    .await
    .expect("notes.create over MCP");
    let searched = cli(&db, &["--json", "notes.search", "MCP"]);
    assert!(searched.status.success(), "{searched:?}");
    let events = json_lines(&searched);
    let result = events.last().expect("a result line");
    assert_eq!(result["type"], "result");
    assert_eq!(result["data"]["hits"][0]["title"], "Written over MCP");

    // The same schema is enforced on both surfaces, with the same issue.
    let over_mcp =
        collect_tool_outcome(client.invoke("notes.search", json!({"query": ""})), |_| {})
            .await
            .unwrap_err();
    assert_eq!(over_mcp.code, ErrorCode::InvalidInput);
    let on_cli = cli(&db, &["--json", "notes.search", ""]);
    assert_eq!(on_cli.status.code(), Some(2));
    let error = json_lines(&on_cli).pop().expect("an error line");
    assert_eq!(error["code"], "INVALID_INPUT");
    assert_eq!(
        error["details"][0]["path"].as_str(),
        Some(over_mcp.issues()[0].path.as_str())
    );
    client.close().await.unwrap();

    // The Pi bridge of the same binary offers the same tools, under Pi names…
    let discovered = discover_over_the_pi_bridge(&db);
    let mut labels: Vec<String> = discovered
        .iter()
        .map(|t| t["label"].as_str().unwrap().to_owned())
        .collect();
    labels.sort();
    // …but for `notes.board`, which only the notes board app calls: Pi is
    // a model's surface, and hides app-only tools.
    let for_models: Vec<String> = mcp_names
        .iter()
        .filter(|name| *name != "notes.board")
        .cloned()
        .collect();
    assert_eq!(for_models.len(), mcp_names.len() - 1, "{mcp_names:?}");
    assert_eq!(labels, for_models, "Pi gets the same tools");
    for tool in &discovered {
        assert_eq!(
            tool["name"],
            tool["label"].as_str().unwrap().replace('.', "_")
        );
    }

    // A real Pi on the same database finds what MCP wrote and writes a note
    // the CLI finds; the advertised schema is enforced there too.
    let dir = tempfile::tempdir().unwrap();
    let written = cli(&db, &["pi-extension"]);
    assert!(written.status.success(), "{written:?}");
    let extension = dir.path().join("notes.ts");
    std::fs::write(&extension, &written.stdout).unwrap();
    let run = run_pi(
        &extension,
        &[
            turn(&[("notes_search", json!({"query": "MCP"}))]),
            turn(&[("notes_create", json!({"title": "Written in Pi"}))]),
            turn(&[("notes_search", json!({"query": ""}))]),
        ],
        None,
        &[],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let results = run.tool_results();
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(results[0].details["hits"][0]["title"], "Written over MCP");
    assert!(!results[1].is_error, "{:?}", results[1]);
    assert!(results[2].is_error);
    assert!(results[2].text().contains("query"), "{}", results[2].text());
    let searched = cli(&db, &["--json", "notes.search", "Pi"]);
    let result = json_lines(&searched).pop().expect("a result line");
    assert_eq!(result["data"]["hits"][0]["title"], "Written in Pi");
}

/// The tool list `notes pi` answers to a `discover` line.
fn discover_over_the_pi_bridge(db: &str) -> Vec<Value> {
    let mut bridge = Command::new(bin("notes"))
        .args(["--db", db, "pi"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("notes pi starts");
    let mut stdin = bridge.stdin.take().unwrap();
    writeln!(stdin, r#"{{"type":"discover"}}"#).unwrap();
    let mut line = String::new();
    BufReader::new(bridge.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    drop(stdin);
    assert!(
        bridge.wait().unwrap().success(),
        "notes pi exits when stdin closes"
    );
    let reply: Value = serde_json::from_str(&line).expect("a JSON line");
    assert_eq!(reply["type"], "tools", "{reply}");
    reply["tools"].as_array().unwrap().clone()
}
