//! `notes demo`: it starts the MCP server, connects an MCP client and calls
//! every tool end to end, on a throwaway database.

use gonk_tools_tests::workspace::notes_command;

#[test]
fn the_demo_runs_every_tool_end_to_end() {
    let output = notes_command()
        .arg("demo")
        .output()
        .expect("notes demo runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for expected in [
        "Started the notes MCP server at http://127.0.0.1:",
        "the server lists",
        "created note 1: Release checklist",
        "created note 2: Rust ownership",
        "note 1 is now \"Release checklist v2\"",
        "progress 100%  exported 2/2",
        "exported 2 notes",
        "note 2 archived: true",
        "INVALID_INPUT: Input validation failed",
        "/query",
        "Done.",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
    // No --db and no data directory: the demo needed neither.
    assert!(!stderr.contains("Error"), "{stderr}");
}
