//! The notes tools over MCP — the same registry the command line runs:
//!
//! * `notes mcp` serves them on stdin/stdout (what an MCP client launches);
//! * `notes serve` serves them over streamable HTTP at `http://HOST:PORT/mcp`;
//! * `notes demo` starts that HTTP server on a throwaway database, connects
//!   an MCP client to it and calls every tool through the typed
//!   [`NotesToolsClient`], end to end.

use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;

use gonk_tools::adapters::cli::clap::{value_parser, Arg, ArgAction, ArgMatches, Command};
use gonk_tools::adapters::cli::exit;
use gonk_tools::adapters::mcp::{
    is_write_tool, serve_http, serve_stdio, McpClient, McpHttpClientOptions, McpHttpOptions,
    McpServerOptions, WriteToolPolicy,
};
use gonk_tools::client::{ClientError, Tap};
use gonk_tools::prelude::*;
use gonk_tools::ToolRegistry;

use crate::store::{Store, MEMORY};
use crate::tools::{
    CreateNote, ExportFormat, ExportNotes, NoteId, NotesToolsClient, RenameNote, SearchNotes,
};

/// The port `notes serve` listens on unless `--port` says otherwise.
pub const DEFAULT_PORT: u16 = 8808;

fn server_options() -> McpServerOptions {
    McpServerOptions::new("notes", env!("CARGO_PKG_VERSION"))
        .title("gonk-tools notes")
        .instructions(
            "Notes in a local SQLite database. Search with notes.search, read one with notes.get, \
             create with notes.create.",
        )
}

fn failure(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("Error: {message}");
    ExitCode::from(exit::FAILURE)
}

/// `notes mcp`.
pub fn stdio_command() -> Command {
    Command::new("mcp").about(
        "Serve the notes tools over MCP on stdin/stdout (configure it as the command of an MCP client)",
    )
}

/// Runs `notes mcp` until the client disconnects.
pub async fn run_stdio(registry: ToolRegistry) -> ExitCode {
    // stdout carries the protocol; MCP clients show the server's stderr.
    let writes: Vec<String> = registry
        .list()
        .iter()
        .filter(|def| !def.capabilities.duplex && is_write_tool(def))
        .map(|def| def.name.clone())
        .collect();
    if !writes.is_empty() {
        eprintln!(
            "notes: serving MCP on stdio; write tools are exposed: {}",
            writes.join(", ")
        );
    }
    match serve_stdio(registry, server_options()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => failure(error),
    }
}

/// `notes serve`.
pub fn serve_command() -> Command {
    Command::new("serve")
        .about("Serve the notes tools over MCP streamable HTTP at http://HOST:PORT/mcp")
        .arg(
            Arg::new("host")
                .long("host")
                .value_name("H")
                .value_parser(value_parser!(IpAddr))
                .default_value("127.0.0.1")
                .help("The address to bind; anything but loopback needs --api-key"),
        )
        .arg(
            Arg::new("port")
                .long("port")
                .value_name("N")
                .value_parser(value_parser!(u16))
                .default_value(DEFAULT_PORT.to_string())
                .help("The port to listen on (0 picks a free one)"),
        )
        .arg(
            Arg::new("api-key")
                .long("api-key")
                .value_name("K")
                .help("Require `Authorization: Bearer K` on every request [env: NOTES_API_KEY]"),
        )
        .arg(
            Arg::new("allow-writes")
                .long("allow-writes")
                .action(ArgAction::SetTrue)
                .help("Expose the write tools (create, rename, archive); by default HTTP withholds them"),
        )
        .arg(
            Arg::new("allow-insecure-remote")
                .long("allow-insecure-remote")
                .action(ArgAction::SetTrue)
                .help("Allow a non-loopback --host without --api-key (trusted networks only)"),
        )
}

/// Runs `notes serve` until it is stopped.
pub async fn run_serve(registry: ToolRegistry, matches: ArgMatches) -> ExitCode {
    let host = matches
        .get_one::<IpAddr>("host")
        .copied()
        .unwrap_or(IpAddr::from([127, 0, 0, 1]));
    let port = matches
        .get_one::<u16>("port")
        .copied()
        .unwrap_or(DEFAULT_PORT);
    let mut server = server_options();
    if matches.get_flag("allow-writes") {
        server = server.write_policy(WriteToolPolicy::Permissive);
    }
    let mut options = McpHttpOptions::new(server)
        .allow_insecure_remote(matches.get_flag("allow-insecure-remote"));
    let key = matches.get_one::<String>("api-key").cloned().or_else(|| {
        std::env::var("NOTES_API_KEY")
            .ok()
            .filter(|k| !k.is_empty())
    });
    if let Some(key) = key {
        options = options.api_key(key);
    }
    let withheld = !matches.get_flag("allow-writes");
    let server = match serve_http(SocketAddr::new(host, port), registry, options).await {
        Ok(server) => server,
        Err(error) => return failure(error),
    };
    eprintln!("notes: serving MCP at {}", server.url());
    if withheld {
        eprintln!(
            "notes: write tools (notes.create, notes.rename, notes.archive) are withheld over HTTP; \
             pass --allow-writes to expose them"
        );
    }
    let stop = server.shutdown_token();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("notes: shutting down");
        }
        stop.cancel();
    });
    match server.wait().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => failure(error),
    }
}

/// `notes demo`.
pub fn demo_command() -> Command {
    Command::new("demo").about(
        "Start the MCP server on a throwaway database, connect an MCP client and call every tool",
    )
}

/// Prints the progress events of a call as they arrive.
fn show_progress(event: &ToolEvent) {
    if let ToolEvent::Progress {
        percent: Some(percent),
        message,
    } = event
    {
        println!(
            "      progress {percent:>3.0}%  {}",
            message.as_deref().unwrap_or("")
        );
    }
}

async fn demo(registry: ToolRegistry) -> Result<(), String> {
    let options = McpHttpOptions::new(server_options().write_policy(WriteToolPolicy::Permissive))
        .api_key("notes-demo");
    let server = serve_http(SocketAddr::from(([127, 0, 0, 1], 0)), registry, options)
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "1. Started the notes MCP server at {} (streamable HTTP).",
        server.url()
    );

    let client = McpClient::connect_http(
        &server.url(),
        McpHttpClientOptions::new().api_key("notes-demo"),
    )
    .await
    .map_err(|e| e.to_string())?;
    let tools = client.list_tools().await.map_err(|e| e.to_string())?;
    println!(
        "2. Connected an MCP client; the server lists {} tools:",
        tools.len()
    );
    for tool in &tools {
        println!(
            "      {:<14} {}",
            tool.name,
            tool.description.as_deref().unwrap_or("")
        );
    }

    // The typed client `toolset!` generated: each method takes the tool's
    // input type and returns its output type, here over MCP.
    let notes = NotesToolsClient::new(Tap::new(&client, show_progress));
    let failed = |e: ClientError| e.to_string();

    println!("3. notes.create, twice:");
    for (title, body, tag) in [
        (
            "Release checklist",
            "- tag v1\n- publish the crate",
            "release",
        ),
        ("Rust ownership", "Borrowing rules and lifetimes.", "rust"),
    ] {
        let note = notes
            .notes_create(CreateNote {
                title: title.into(),
                body: body.into(),
                tags: vec![tag.into()],
            })
            .await
            .map_err(failed)?;
        println!("      created note {}: {}", note.id, note.title);
    }

    println!("4. notes.search \"release\":");
    let found = notes
        .notes_search(SearchNotes {
            query: "release".into(),
            limit: 5,
            include_archived: false,
        })
        .await
        .map_err(failed)?;
    for hit in &found.hits {
        println!("      {:>3}  {}", hit.id, hit.title);
    }

    println!("5. notes.rename 1, then notes.get 1:");
    notes
        .notes_rename(RenameNote {
            id: 1,
            title: "Release checklist v2".into(),
        })
        .await
        .map_err(failed)?;
    let note = notes.notes_get(NoteId { id: 1 }).await.map_err(failed)?;
    println!("      note {} is now \"{}\"", note.id, note.title);

    println!("6. notes.export streams progress notifications:");
    let export = notes
        .notes_export(ExportNotes {
            format: ExportFormat::Markdown,
            include_archived: false,
            delay_ms: 0,
        })
        .await
        .map_err(failed)?;
    println!("      exported {} notes", export.count);

    println!("7. notes.archive 2:");
    let note = notes
        .notes_archive(NoteId { id: 2 })
        .await
        .map_err(failed)?;
    println!("      note {} archived: {}", note.id, note.archived);

    println!("8. The advertised schema is enforced: notes.search with an empty query:");
    let empty = SearchNotes {
        query: String::new(),
        limit: 5,
        include_archived: false,
    };
    match notes.notes_search(empty).await {
        Err(ClientError::Tool(error)) => {
            println!("      {}: {}", error.code, error.message);
            for issue in error.issues() {
                println!("      {} {}", issue.path, issue.message);
            }
        }
        Err(other) => return Err(other.to_string()),
        Ok(_) => return Err("an empty query was accepted".to_owned()),
    }

    drop(notes);
    client.close().await.map_err(|e| e.to_string())?;
    server.shutdown().await.map_err(|e| e.to_string())?;
    println!("Done. Add `notes mcp` or `notes serve` to your MCP client to use these tools.");
    Ok(())
}

/// Runs `notes demo`. Without `--db` it uses an in-memory database, so your
/// notes are never touched.
pub async fn run_demo(registry: ToolRegistry, store: Arc<Store>, db_given: bool) -> ExitCode {
    if !db_given {
        store.set_location(MEMORY);
    }
    match demo(registry).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => failure(format!("the demo failed: {error}")),
    }
}
