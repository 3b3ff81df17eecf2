//! Asking through Pi. The bridge side against the real `notes --approval
//! ask pi`, with the test playing the extension (execute with `canAnswer`,
//! the question line, the answer line); the extension side by running the
//! generated extension's own `answerQuestion` in Node against a stub of
//! Pi's `ctx.ui`; and the whole path in a real Pi in RPC mode, where the
//! test answers Pi's `extension_ui_request` dialogs as an RPC client does.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use gonk_tools_tests::pi::{pi_command, pi_dir, pi_script};
use gonk_tools_tests::workspace::bin;

/// A bridge process, played by the test as the extension would.
struct Bridge {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Bridge {
    fn start(db: &Path) -> Bridge {
        let mut child = Command::new(bin("notes"))
            .arg("--db")
            .arg(db)
            .args(["--approval", "ask", "pi"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("notes pi runs");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Bridge {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: Value) {
        let stdin = self.stdin.as_mut().expect("the bridge's input is open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line that is not a log line.
    fn next(&self) -> Value {
        loop {
            // A hang must fail the test, not the suite.
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .expect("the bridge answers");
            let value: Value = serde_json::from_str(&line).unwrap();
            if value["type"] != "log" {
                return value;
            }
        }
    }

    fn create(&mut self, id: &str, title: &str, can_answer: bool) {
        let mut line = json!({"type": "execute", "id": id, "tool": "notes_create",
                              "input": {"title": title, "body": "from Pi"}});
        if can_answer {
            line["canAnswer"] = json!(["elicitation"]);
        }
        self.send(line);
    }
}

fn error_text(result: &Value) -> String {
    assert_eq!(result["type"], "result", "{result}");
    assert_eq!(result["result"]["isError"], true, "{result}");
    result["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn the_bridge_asks_the_extension_and_waits_for_its_answer() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let mut bridge = Bridge::start(&db);

    // Yes: the question names the call, and the note is written.
    bridge.create("c1", "Approved in Pi", true);
    let question = bridge.next();
    assert_eq!(
        (&question["type"], &question["id"], &question["callId"]),
        (&json!("question"), &json!("q1"), &json!("c1")),
        "{question}"
    );
    assert!(question["key"].as_str().unwrap().starts_with("approval"));
    assert_eq!(question["request"]["method"], "elicitation/create");
    let params = &question["request"]["params"];
    assert_eq!(params["requestedSchema"]["required"], json!(["approve"]));
    assert!(
        params["message"].as_str().unwrap().contains("notes.create"),
        "{params}"
    );
    // A malformed answer is refused with a reason; the question waits on.
    bridge.send(json!({"type": "answer", "id": "q1", "answer": {"action": "maybe"}}));
    let refused = bridge.next();
    assert_eq!(
        (&refused["type"], &refused["id"], &refused["error"]["code"]),
        (&json!("error"), &json!("q1"), &json!("INVALID_REQUEST")),
        "{refused}"
    );
    bridge.send(json!({"type": "answer", "id": "q1",
                       "answer": {"action": "accept", "content": {"approve": true}}}));
    let created = bridge.next();
    assert_eq!(
        (&created["type"], &created["id"]),
        (&json!("result"), &json!("c1"))
    );
    assert!(created["result"].get("isError").is_none(), "{created}");
    assert_eq!(created["result"]["details"]["title"], "Approved in Pi");

    // An answer to a question nobody waits for.
    bridge.send(json!({"type": "answer", "id": "q1", "answer": {"action": "accept", "content": {"approve": true}}}));
    assert_eq!(bridge.next()["error"]["code"], "INVALID_REQUEST");

    // No: APPROVAL_DENIED.
    bridge.create("c2", "Declined in Pi", true);
    let question = bridge.next();
    assert_eq!(question["callId"], "c2");
    bridge.send(json!({"type": "answer", "id": question["id"], "answer": {"action": "decline"}}));
    let denied = error_text(&bridge.next());
    assert!(denied.starts_with("[APPROVAL_DENIED]"), "{denied}");

    // An extension that cannot answer (no UI, or older): nothing is asked.
    bridge.create("c3", "Unasked in Pi", false);
    let required = error_text(&bridge.next());
    assert!(required.starts_with("[APPROVAL_REQUIRED]"), "{required}");

    // The input ends while a question waits: the call ends at once.
    bridge.create("c4", "Abandoned in Pi", true);
    assert_eq!(bridge.next()["type"], "question");
    drop(bridge.stdin.take());
    let abandoned = error_text(&bridge.next());
    assert!(
        !abandoned.starts_with("[APPROVAL_DENIED]"),
        "nobody said no: {abandoned}"
    );
    let status = bridge.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let mut stderr = String::new();
    std::io::Read::read_to_string(bridge.child.stderr.as_mut().unwrap(), &mut stderr).unwrap();

    // Only the approved note exists, and its receipt records the consent.
    let listed = Command::new(bin("notes"))
        .arg("--db")
        .arg(&db)
        .args(["notes.export", "--format", "markdown"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("Approved in Pi"), "{listed}");
    for missing in ["Declined in Pi", "Unasked in Pi", "Abandoned in Pi"] {
        assert!(!listed.contains(missing), "{missing} was written: {listed}");
    }
    let consent = stderr
        .lines()
        .find(|l| l.contains("notes: audit") && l.contains("\"consent\":{"))
        .unwrap_or_else(|| panic!("no receipt with consent in:\n{stderr}"));
    assert!(consent.contains("\"approve\":true"), "{consent}");
}

/// Runs the generated extension's `answerQuestion` over `cases` in Node.
fn answer_in_node(cases: &Value) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(bin("notes"))
        .args(["pi-extension"])
        .output()
        .expect("notes runs");
    assert!(output.status.success(), "{output:?}");
    let extension = dir.path().join("notes.ts");
    std::fs::write(&extension, &output.stdout).unwrap();
    let cases_file = dir.path().join("cases.json");
    std::fs::write(&cases_file, cases.to_string()).unwrap();
    let script = pi_script("answer_questions.mjs");
    let output = Command::new("node")
        .arg(&script)
        .arg(&extension)
        .arg(&cases_file)
        .current_dir(pi_dir())
        .output()
        .expect("node runs");
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice::<Vec<Value>>(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
}

fn elicit(schema: Value) -> Value {
    json!({"id": "q1", "callId": "c1", "key": "elicitation-1",
           "request": {"method": "elicitation/create", "params": {"message": "Your order", "requestedSchema": schema}}})
}

fn order() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2},
        "count": {"type": "integer", "minimum": 1, "maximum": 10},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
        "gift": {"type": "boolean", "default": false},
        "note": {"type": "string"},
        "price": {"type": "number", "default": 2.5}
    }, "required": ["name", "count", "size"]})
}

#[test]
fn the_extension_puts_questions_to_pis_dialogs() {
    let approval = elicit(json!({"type": "object",
        "properties": {"approve": {"type": "boolean", "title": "Approve"}}, "required": ["approve"]}));
    let cases = json!([
        {"name": "approve-yes", "question": approval, "replies": [true]},
        {"name": "approve-no", "question": approval, "replies": [false]},
        // Required fields first (count, name, size), then gift, note, price.
        // count: not a number, 3.5, 11, then 3; name: too short, then good;
        // size picked by label; gift yes; note skipped (empty); price default.
        {"name": "form", "question": elicit(order()),
         "replies": ["many", "3.5", "11", "3", "x", "Ada", "Large", "Yes", "", ""]},
        {"name": "form-dismissed", "question": elicit(order()), "replies": ["3", null]},
        {"name": "multi-select", "question": elicit(json!({"type": "object", "properties": {
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}}}})), "replies": []},
        {"name": "sampling", "question": {"id": "q2", "callId": "c1", "key": "sampling-1",
            "request": {"method": "sampling/createMessage", "params": {}}}, "replies": []},
    ]);
    let results = answer_in_node(&cases);
    let by_name = |name: &str| {
        results
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing: {results:?}"))
            .clone()
    };

    let yes = by_name("approve-yes");
    assert_eq!(
        yes["answer"],
        json!({"action": "accept", "content": {"approve": true}})
    );
    assert_eq!(yes["dialogs"][0]["method"], "confirm");
    assert_eq!(yes["dialogs"][0]["detail"], "Your order");
    assert_eq!(
        by_name("approve-no")["answer"],
        json!({"action": "decline"})
    );

    let form = by_name("form");
    assert_eq!(
        form["answer"],
        json!({"action": "accept", "content": {"name": "Ada", "count": 3, "size": "l", "gift": true, "price": 2.5}}),
        "{form}"
    );
    assert_eq!(form["unused"], 0, "{form}");
    let methods: Vec<&str> = form["dialogs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "input", "input", "input", "input", "input", "input", "select", "select", "input",
            "input"
        ]
    );
    // A bad line is asked again with the reason as the placeholder.
    assert_eq!(form["dialogs"][1]["detail"], "many is not a number");
    assert_eq!(form["dialogs"][2]["detail"], "3.5 is not a whole number");
    assert_eq!(form["dialogs"][3]["detail"], "at most 10");
    assert_eq!(form["dialogs"][5]["detail"], "at least 2 characters");
    assert_eq!(form["dialogs"][6]["detail"], json!(["Small", "Large"]));
    // The boolean's default comes first.
    assert_eq!(form["dialogs"][7]["detail"], json!(["No", "Yes"]));

    assert_eq!(
        by_name("form-dismissed")["answer"],
        json!({"action": "cancel"})
    );
    let multi = by_name("multi-select");
    assert_eq!(multi["answer"], json!({"action": "decline"}));
    assert_eq!(multi["dialogs"], json!([]), "nothing is asked");
    assert_eq!(by_name("sampling")["answer"], json!({"action": "decline"}));
}

/// Runs a real Pi in RPC mode (offline, the scripted model playing
/// `turns`, `extension` loaded), sends one prompt, and answers each dialog
/// the extension opens (`extension_ui_request`) with `answer`'s
/// `extension_ui_response` fields, as an RPC client does. Returns every
/// event Pi printed until the agent ended, and the dialogs it asked.
fn run_pi_rpc(
    extension: &Path,
    turns: &[Value],
    mut answer: impl FnMut(&Value) -> Value,
) -> (Vec<Value>, Vec<Value>) {
    let home = tempfile::tempdir().unwrap();
    let mut child = pi_command("rpc", extension, home.path(), &json!({"turns": turns}))
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
    writeln!(
        stdin,
        "{}",
        json!({"id": "p1", "type": "prompt", "message": "Use the tools."})
    )
    .unwrap();
    stdin.flush().unwrap();
    let mut events = Vec::new();
    let mut dialogs = Vec::new();
    loop {
        let Ok(line) = lines.recv_timeout(Duration::from_secs(120)) else {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = std::fs::read_to_string(home.path().join("stderr")).unwrap_or_default();
            panic!(
                "Pi stopped talking before the agent ended\nevents: {events:?}\nstderr:\n{stderr}"
            );
        };
        let Ok(event) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if event["type"] == "extension_ui_request"
            && ["confirm", "select", "input", "editor"]
                .contains(&event["method"].as_str().unwrap_or(""))
        {
            let mut response = answer(&event);
            response["type"] = json!("extension_ui_response");
            response["id"] = event["id"].clone();
            writeln!(stdin, "{response}").unwrap();
            stdin.flush().unwrap();
            dialogs.push(event);
            continue;
        }
        let end = event["type"] == "agent_end";
        events.push(event);
        if end {
            break;
        }
    }
    // RPC mode runs until its input ends.
    drop(stdin);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.wait();
    (events, dialogs)
}

/// Pi's tool results in `events`: (tool, isError, first text).
fn results(events: &[Value]) -> Vec<(String, bool, String)> {
    events
        .iter()
        .filter(|e| e["type"] == "message_end" && e["message"]["role"] == "toolResult")
        .map(|e| {
            let m = &e["message"];
            (
                m["toolName"].as_str().unwrap_or_default().to_owned(),
                m["isError"].as_bool().unwrap_or(false),
                m["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

#[test]
fn in_pis_rpc_mode_a_write_asks_with_a_confirm_dialog() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let output = Command::new(bin("notes"))
        .arg("--db")
        .arg(&db)
        .args(["--approval", "ask", "pi-extension"])
        .output()
        .expect("notes runs");
    assert!(output.status.success(), "{output:?}");
    let extension = dir.path().join("notes.ts");
    std::fs::write(&extension, &output.stdout).unwrap();
    let turns = [
        gonk_tools_tests::pi::turn(&[(
            "notes_create",
            json!({"title": "Yes in Pi", "body": "confirmed"}),
        )]),
        gonk_tools_tests::pi::turn(&[(
            "notes_create",
            json!({"title": "No in Pi", "body": "declined"}),
        )]),
    ];
    // The first dialog is confirmed, the second refused.
    let mut confirmed = [true, false].into_iter();
    let (events, dialogs) = run_pi_rpc(
        &extension,
        &turns,
        |_| json!({"confirmed": confirmed.next().unwrap_or(false)}),
    );
    assert_eq!(dialogs.len(), 2, "{dialogs:?}");
    for dialog in &dialogs {
        assert_eq!(dialog["method"], "confirm", "{dialog}");
        assert!(
            dialog["message"]
                .as_str()
                .unwrap_or_default()
                .contains("notes.create"),
            "{dialog}"
        );
    }
    let results = results(&events);
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(
        (results[0].0.as_str(), results[0].1),
        ("notes_create", false),
        "{results:?}"
    );
    assert_eq!(
        (results[1].0.as_str(), results[1].1),
        ("notes_create", true),
        "{results:?}"
    );
    assert!(results[1].2.starts_with("[APPROVAL_DENIED]"), "{results:?}");

    let listed = Command::new(bin("notes"))
        .arg("--db")
        .arg(&db)
        .args(["notes.export", "--format", "markdown"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("Yes in Pi"), "{listed}");
    assert!(!listed.contains("No in Pi"), "{listed}");
}

#[test]
fn in_pis_rpc_mode_a_tools_form_is_filled_in_dialog_by_dialog() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(bin("notes-testbed"))
        .arg("--db")
        .arg(dir.path().join("notes.db"))
        .arg("pi-extension")
        .output()
        .expect("notes-testbed runs");
    assert!(output.status.success(), "{output:?}");
    let extension = dir.path().join("notes.ts");
    std::fs::write(&extension, &output.stdout).unwrap();
    let turns = [
        gonk_tools_tests::pi::turn(&[("diag_ask", json!({}))]),
        gonk_tools_tests::pi::turn(&[("diag_ask", json!({}))]),
    ];
    // The first form is filled in (five dialogs); the second is dismissed
    // at its first dialog.
    let mut asked = 0;
    let (events, dialogs) = run_pi_rpc(&extension, &turns, |dialog| {
        asked += 1;
        if asked > 5 {
            return json!({"cancelled": true});
        }
        let title = dialog["title"].as_str().unwrap_or_default();
        // The form's message, then the field's label and description.
        let field = title.lines().nth(1).unwrap_or_default();
        let pick = |want: &str| {
            let options = dialog["options"].as_array().cloned().unwrap_or_default();
            options
                .into_iter()
                .find(|o| o.as_str().unwrap_or_default().eq_ignore_ascii_case(want))
                .unwrap_or_else(|| panic!("no option {want} in {dialog}"))
        };
        match (dialog["method"].as_str().unwrap_or_default(), field) {
            ("input", f) if f.starts_with("count") => json!({"value": "3"}),
            ("input", f) if f.starts_with("name") => json!({"value": "Ada"}),
            ("input", f) if f.starts_with("note") => json!({"value": ""}),
            ("select", f) if f.starts_with("size") => json!({"value": pick("large")}),
            ("select", f) if f.starts_with("gift") => json!({"value": pick("yes")}),
            _ => panic!("an unexpected dialog: {dialog}"),
        }
    });
    let methods: Vec<&str> = dialogs
        .iter()
        .map(|d| d["method"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        methods,
        ["input", "input", "select", "select", "input", "input"],
        "{dialogs:?}"
    );
    let results: Vec<Value> = events
        .iter()
        .filter(|e| e["type"] == "message_end" && e["message"]["role"] == "toolResult")
        .map(|e| e["message"]["details"].clone())
        .collect();
    assert_eq!(results.len(), 2, "{events:?}");
    assert_eq!(results[0]["action"], "accept", "{results:?}");
    let order = &results[0]["order"];
    assert_eq!(
        (
            &order["name"],
            &order["count"],
            &order["size"],
            &order["gift"]
        ),
        (&json!("Ada"), &json!(3), &json!("large"), &json!(true)),
        "{order}"
    );
    assert!(order["note"].is_null(), "{order}");
    assert_eq!(results[1], json!({"action": "cancel"}));
}
