//! The notes example: a small notes app on embedded SQLite whose tools are
//! defined once, as `#[tool]` fns (`tools`), and served unchanged as a
//! command line (`cli`), over MCP (`mcp`) and in the Pi coding agent
//! (`pi`). The `notes` binary
//! (`main.rs`) runs it; tests reuse the tools and their typed client.
//!
//! ```text
//! notes notes.create "Release checklist" --body "- tag v1" --tags release
//! notes notes.search release --limit 5
//! notes --db /tmp/notes.db list
//! notes mcp                      # MCP over stdio
//! notes serve --port 8808        # MCP over HTTP at http://127.0.0.1:8808/mcp
//! notes demo                     # server + typed MCP client, end to end
//! notes pi-extension > notes.ts  # then `pi -e ./notes.ts`
//! ```

pub mod cli;
pub mod mcp;
pub mod pi;
pub mod saved;
pub mod store;
pub mod tools;
