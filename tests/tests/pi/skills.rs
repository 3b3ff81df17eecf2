//! The notes example's skill in a real Pi: Pi's extension API takes
//! skills only as folders (`resources_discover` → `skillPaths`), so the
//! bridge writes the registry's skills to a folder and the extension hands
//! it to Pi, which lists `triage-notes` among its commands
//! (`/skill:triage-notes`, RPC `get_commands`) with the description from
//! its frontmatter, and its `SKILL.md` as the bytes the registry holds.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use gonk_tools_tests::pi::pi_command;
use gonk_tools_tests::workspace::bin;

#[test]
fn pi_lists_the_registrys_skill_among_its_commands() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(bin("notes"))
        .arg("--db")
        .arg(dir.path().join("notes.db"))
        .arg("pi-extension")
        .output()
        .expect("notes runs");
    assert!(output.status.success(), "{output:?}");
    let extension = dir.path().join("notes.ts");
    std::fs::write(&extension, &output.stdout).unwrap();

    let home = tempfile::tempdir().unwrap();
    // Nothing discovered from the machine (`--no-skills`): the one skill
    // Pi can know is the extension's.
    let mut child = pi_command("rpc", &extension, home.path(), &json!({"turns": []}))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(home.path().join("stderr")).unwrap())
        .spawn()
        .expect("node runs Pi");
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", json!({"id": "c1", "type": "get_commands"})).unwrap();
    stdin.flush().unwrap();
    let response = loop {
        let Ok(line) = lines.recv_timeout(Duration::from_secs(120)) else {
            let _ = child.kill();
            let stderr = std::fs::read_to_string(home.path().join("stderr")).unwrap_or_default();
            panic!("Pi did not answer get_commands:\n{stderr}");
        };
        if let Ok(event) = serde_json::from_str::<Value>(&line) {
            if event["type"] == "response" && event["id"] == "c1" {
                break event;
            }
        }
    };
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();

    assert_eq!(response["success"], true, "{response}");
    let commands = response["data"]["commands"].as_array().unwrap();
    let skills: Vec<&Value> = commands.iter().filter(|c| c["source"] == "skill").collect();
    assert_eq!(skills.len(), 1, "{response}");
    let skill = skills[0];
    assert_eq!(skill["name"], "skill:triage-notes");
    assert!(
        skill["description"]
            .as_str()
            .unwrap()
            .starts_with("Triage a pile of notes"),
        "{skill}"
    );
    assert_eq!(skill["sourceInfo"]["source"], "extension:notes", "{skill}");
    let path = skill["sourceInfo"]["path"].as_str().unwrap();
    let written = std::fs::read(path).unwrap();
    let embedded = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/notes/skills/triage-notes/SKILL.md"),
    )
    .unwrap();
    assert_eq!(written, embedded);
}
