//! The notes page (`notes serve`, at `/`) in a real browser: Debian's
//! headless Chromium driven by `playwright-core` (installed by
//! `.ci/install-ws-clients`). Two pages on the same server: a note created
//! in one appears in the other without a reload (a WebSocket broadcast),
//! search works, markup in a title stays text, and without the key the
//! socket is refused. The script (`tests/clients/browser_notes.mjs`) only
//! observes; the assertions are here.

use crate::support::{run_node, NotesServer, KEY};
use gonk_tools_tests::clients::report;
use serde_json::{json, Value};

fn titles(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("a list of titles, got {value}"))
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect()
}

#[test]
fn two_pages_see_each_others_notes_live_and_search() {
    let mut server = NotesServer::start(&["--allow-writes"]);
    let output = run_node("browser_notes.mjs", &[&server.page_url(), KEY]);
    let r = report(&output);
    assert!(
        r.get("failure").is_none(),
        "the browser run failed: {}",
        r["failure"]
    );

    assert_eq!(r["initial"], json!({"a": [], "b": []}));
    // Created in page A, shown in page B (no reload): newest first.
    assert_eq!(titles(&r["b_after_a_created"]), ["Browser note"]);
    assert_eq!(r["b_meta"], "#1 · browser, live");
    let hostile = "<img src=x onerror=\"window.pwned=1\">";
    assert_eq!(titles(&r["a_after_b_created"]), [hostile, "Browser note"]);
    assert_eq!(r["a_images"], 0, "a title is text, never markup");
    assert_eq!(r["a_pwned"], false);

    assert_eq!(titles(&r["search_titles"]), ["Browser note"]);
    assert_eq!(r["search_summary"], "1 match for “browser”");
    assert_eq!(r["search_none_summary"], "No notes match “no-such-words”.");
    assert_eq!(r["search_none_count"], 0);
    let error = r["empty_search_error"].as_str().unwrap();
    assert!(error.starts_with("INVALID_INPUT: "), "{error}");

    assert_eq!(titles(&r["a_after_reload"]), [hostile, "Browser note"]);
    assert_eq!(r["no_key_status"], "disconnected (1006)");
    // ... and what to do about it, not only a red badge.
    let hint = r["no_key_error"].as_str().unwrap();
    assert!(
        hint.starts_with(
            "The server refused the connection. If it was started with --api-key KEY, open http://"
        ) && hint.contains("/#key=KEY"),
        "{hint}"
    );
    // The only console errors are the refused socket's.
    for line in r["console"].as_array().unwrap() {
        let line = line.as_str().unwrap();
        assert!(
            line.starts_with("WebSocket connection to ")
                && line.ends_with(
                    "failed: HTTP Authentication failed; no valid credentials available"
                ),
            "unexpected console error: {line}"
        );
    }
    assert!(server.is_running());
}
