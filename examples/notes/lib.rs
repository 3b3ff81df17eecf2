//! The notes example: a small notes app on embedded SQLite whose tools are
//! defined once, as `#[tool]` fns (`tools`), and served unchanged as a
//! command line (`cli`), over MCP (`mcp`), in the Pi coding agent (`pi`)
//! and over WebSocket with a live page (`ws`); the notes are also MCP
//! resources, with a `summarize` prompt (`resources`), and the notes board
//! is an MCP App that hosts open from `notes.search` (`app`). The `notes` binary
//! (`main.rs`) runs it; tests reuse the tools and their typed client.
//!
//! ```text
//! notes notes.create "Release checklist" --body "- tag v1" --tags release
//! notes notes.search release --limit 5
//! notes --db /tmp/notes.db list
//! notes --approval ask notes.create "Plans"   # asks on the terminal first
//! notes mcp                      # MCP over stdio
//! notes serve --port 8808        # MCP at /mcp, WebSocket at /ws, a page at /
//! notes serve --approval ask     # the write tools ask the MCP client first
//! notes --rate-limit 5/1m --shared redis://127.0.0.1:6379 serve  # one budget for all replicas
//! NOTES_API_KEYS=alice=k1,bob=k2 notes serve --replica r1  # per-key principals; names the replica
//! notes demo                     # server + typed MCP client, end to end
//! notes pi-extension > notes.ts  # then `pi -e ./notes.ts`
//! ```

pub mod app;
pub mod approval;
pub mod cli;
pub mod debug_runtime;
pub mod export_file;
pub mod jobs;
pub mod limits;
pub mod mcp;
pub mod oauth;
pub mod otel;
pub mod pi;
pub mod pool;
pub mod postgres;
pub mod reindex;
pub mod replicas;
pub mod resources;
pub mod saved;
pub mod store;
pub mod tools;
pub mod ws;
