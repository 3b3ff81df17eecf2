//! `notes-testbed`: a test fixture, not an example. It is the `notes`
//! binary plus diagnostic tools (`diagnostics.rs`) that make every path of
//! a surface observable from outside. The CLI tests
//! (`examples/notes/tests/cli_notes.rs`) and the MCP tests
//! (`tests/tests/mcp_*.rs`) run it.

mod diagnostics;

fn main() -> std::process::ExitCode {
    notes::cli::run(diagnostics::Diagnostics::definitions())
}
