//! The skills extension (SEP-2640) end to end: skills loaded from a folder
//! at run time, served over MCP, listed and loaded by `McpClient`, which
//! verifies each file it reads — a file edited after the server loaded
//! it no longer matches the digest the server published, and the client
//! refuses it; and the real Python SDK listing, getting and reading the
//! notes example's `triage-notes` skill in both eras.

use gonk_tools::adapters::mcp::{serve_io, McpClient, McpServerOptions, McpSkillError};
use gonk_tools::skill::Skill;
use gonk_tools::ToolRegistry;
use gonk_tools_tests::clients::report;
use gonk_tools_tests::mcp_clients::run_python;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::notes_command;
use serde_json::{json, Value};

/// A folder of one skill, `triage`, with a file in a sub-folder.
fn skill_folder() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let skill = root.path().join("triage");
    std::fs::create_dir_all(skill.join("references")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: triage\ndescription: Sort a pile of notes.\nmetadata:\n  version: 2\n---\nRead references/labels.md.\n",
    )
    .unwrap();
    std::fs::write(skill.join("references/labels.md"), "act, keep, stale\n").unwrap();
    root
}

async fn connect(registry: ToolRegistry) -> McpClient {
    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    tokio::spawn(serve_io(
        registry,
        McpServerOptions::new("skills", "1.0.0"),
        server_read,
        server_write,
    ));
    let (client_read, client_write) = tokio::io::split(client);
    McpClient::connect_io(client_read, client_write)
        .await
        .expect("connects")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_changed_after_loading_no_longer_matches_its_digest_on_the_client() {
    let folder = skill_folder();
    let registry = ToolRegistry::new();
    registry
        .register_skills(Skill::load_dir(folder.path()).unwrap())
        .unwrap();
    let client = connect(registry).await;

    let listed = client.list_skills().await.expect("skills/list");
    assert_eq!(listed.len(), 1);
    let entry = &listed[0];
    assert_eq!(entry.uri, "skill://triage/SKILL.md");
    assert_eq!(
        serde_json::to_value(&entry.frontmatter).unwrap(),
        json!({"name": "triage", "description": "Sort a pile of notes.", "metadata": {"version": 2}})
    );
    let loaded = client
        .load_skill(entry)
        .await
        .expect("unchanged files load");
    let labels = loaded
        .files()
        .iter()
        .find(|f| f.path() == "references/labels.md")
        .unwrap();
    assert_eq!(&*labels.read().unwrap(), b"act, keep, stale\n");

    // The same size, other bytes: only the digest can tell.
    let labels_path = folder.path().join("triage/references/labels.md");
    std::fs::write(&labels_path, "act, KEEP, stale\n").unwrap();
    match client.load_skill(entry).await {
        Err(McpSkillError::Verification { uri, reason }) => {
            assert_eq!(uri, "skill://triage/references/labels.md");
            assert!(reason.contains("digest"), "{reason}");
        }
        other => panic!("a changed file must be refused, got {other:?}"),
    }
    // Longer: the size tells first.
    std::fs::write(&labels_path, "act, keep, stale, later\n").unwrap();
    match client.load_skill(entry).await {
        Err(McpSkillError::Verification { reason, .. }) => {
            assert!(reason.contains("bytes"), "{reason}")
        }
        other => panic!("a changed file must be refused, got {other:?}"),
    }
    // A SKILL.md whose frontmatter changed is refused before any other
    // file is read (its digest already differs).
    let skill_md = folder.path().join("triage/SKILL.md");
    let text = std::fs::read_to_string(&skill_md).unwrap();
    std::fs::write(&skill_md, text.replace("Sort", "Drop")).unwrap();
    match client.load_skill(entry).await {
        Err(McpSkillError::Verification { uri, .. }) => {
            assert_eq!(uri, "skill://triage/SKILL.md")
        }
        other => panic!("a changed SKILL.md must be refused, got {other:?}"),
    }
    // A fresh entry from the server still carries the digests taken at
    // load: the server does not re-publish what changed under it.
    let again = client.get_skill("skill://triage/SKILL.md").await.unwrap();
    assert_eq!(&again, entry);
    let missing = client.get_skill("skill://nope/SKILL.md").await.unwrap_err();
    assert!(
        missing.to_string().contains("skill://nope/SKILL.md"),
        "{missing}"
    );
}

fn serve_notes() -> (tempfile::TempDir, ServerProcess) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let mut command = notes_command();
    command.args(["--db", db.to_str().unwrap(), "serve", "--port", "0"]);
    (dir, ServerProcess::start(command))
}

fn check(report: &Value, era: &str) {
    assert_eq!(report["protocol_version"], era, "{report}");
    assert_eq!(
        report["extension"],
        json!({"directoryRead": true}),
        "{report}"
    );
    let skills = report["list"]["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 1, "{report}");
    let entry = &skills[0];
    assert_eq!(entry["uri"], "skill://triage-notes/SKILL.md");
    assert_eq!(entry["frontmatter"]["name"], "triage-notes");
    assert_eq!(entry["frontmatter"]["metadata"]["author"], "gonk-tools");
    assert_eq!(report["get"]["skill"], *entry);
    // What Python read and hashed is what the entry promised.
    let files = report["files"].as_array().unwrap();
    let listed = entry["resources"].as_array().unwrap();
    assert_eq!(files.len(), listed.len());
    assert_eq!(listed.len(), 2, "SKILL.md and references/labels.md");
    for (file, promised) in files.iter().zip(listed) {
        assert_eq!(file["uri"], promised["uri"]);
        assert_eq!(file["digest"], promised["digest"], "{file}");
        assert_eq!(file["size"], promised["size"], "{file}");
    }
    let skill_md = &files[0];
    assert_eq!(skill_md["mimeType"], "text/markdown");
    assert!(skill_md["text"]
        .as_str()
        .unwrap()
        .contains("# Triage notes"));
    let resource = report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "skill://triage-notes/SKILL.md")
        .expect("the SKILL.md is among the resources");
    assert_eq!(resource["name"], "triage-notes");
    assert_eq!(resource["description"], entry["frontmatter"]["description"]);
    assert_eq!(report["get_missing"]["type"], "MCPError", "{report}");
}

#[test]
fn python_sdk_lists_gets_and_reads_the_notes_skill_in_2026() {
    let (_dir, mut server) = serve_notes();
    let output = run_python("python_skills.py", &["auto", &server.url]);
    check(&report(&output), "2026-07-28");
    assert!(server.is_running());
}

#[test]
fn python_sdk_lists_gets_and_reads_the_notes_skill_in_2025() {
    let (_dir, mut server) = serve_notes();
    let output = run_python("python_skills.py", &["legacy", &server.url]);
    check(&report(&output), "2025-11-25");
    assert!(server.is_running());
}
