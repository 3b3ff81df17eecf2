//! The notes tools over MCP — the same registry the command line runs:
//!
//! * `notes mcp` serves them on stdin/stdout (what an MCP client launches);
//! * `notes serve` serves them over streamable HTTP at `http://HOST:PORT/mcp`,
//!   and on the same port over WebSocket at `/ws` with a page at `/`
//!   ([`crate::ws`]);
//! * `notes demo` starts that HTTP server on a throwaway database, connects
//!   an MCP client to it and calls every tool through the typed
//!   [`NotesToolsClient`], end to end.

use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use gonk_tools::adapters::cli::clap::{value_parser, Arg, ArgAction, ArgMatches, Command};
use gonk_tools::adapters::cli::exit;
use gonk_tools::adapters::http::HttpServerOptions;
use gonk_tools::adapters::mcp::{
    is_write_tool, serve_http, serve_stdio_with_shutdown, McpClient, McpHttpClientOptions,
    McpHttpOptions, McpServerOptions, RequestStateKeys, WriteToolPolicy,
    DEFAULT_MAX_IN_FLIGHT_CALLS, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT,
    DEFAULT_SHUTDOWN_GRACE, REQUEST_STATE_KEYS_ENV,
};
use gonk_tools::client::{ClientError, Tap};
use gonk_tools::prelude::*;
use gonk_tools::ToolRegistry;

use tokio_util::sync::CancellationToken;

use crate::approval::{ask_timeout, ask_timeout_arg, from_matches, local_user, Approval};
use crate::store::{Store, MEMORY};
use crate::tools::{
    CreateNote, ExportFormat, ExportNotes, NoteId, NotesToolsClient, RenameNote, SearchNotes,
};
use crate::ws::WsSettings;

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

/// Resolves on SIGTERM or Ctrl-C (SIGINT): the graceful shutdown of `notes
/// mcp` and `notes serve` (new calls refused, running calls get the grace
/// period, then are cancelled with an error; exit code 0).
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            eprintln!("notes: signals cannot be handled; they will end the process at once");
            return std::future::pending().await;
        };
        tokio::select! {
            _ = term.recv() => {},
            _ = int.recv() => {},
        }
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

fn grace_arg() -> Arg {
    Arg::new("shutdown-grace")
        .long("shutdown-grace")
        .value_name("SECS")
        .value_parser(value_parser!(u64))
        .default_value(DEFAULT_SHUTDOWN_GRACE.as_secs().to_string())
        .help("On SIGTERM or Ctrl-C, how long running calls may finish before they are cancelled")
}

fn max_calls_arg() -> Arg {
    Arg::new("max-calls")
        .long("max-calls")
        .value_name("N")
        .value_parser(value_parser!(u64).range(1..))
        .default_value(DEFAULT_MAX_IN_FLIGHT_CALLS.to_string())
        .help("The most tool calls running at once; more are refused as busy")
}

/// The server options of `notes mcp` and `notes serve` from their flags.
fn limits(mut server: McpServerOptions, matches: &ArgMatches) -> McpServerOptions {
    if let Some(secs) = matches.get_one::<u64>("shutdown-grace") {
        server = server.shutdown_grace(Duration::from_secs(*secs));
    }
    if let Some(max) = matches.get_one::<u64>("max-calls") {
        server = server.max_in_flight_calls(usize::try_from(*max).unwrap_or(usize::MAX));
    }
    // `--shared`: a requestState used on one replica is used on all.
    if let Some(store) = crate::limits::request_state_store(matches) {
        server = server.request_state_store(store);
    }
    server
}

/// With `GONK_MCP_REQUEST_STATE_KEYS` set, the server seals and opens
/// `requestState`s with that key ring, so replicas that share it accept
/// each other's (a retry may land on any replica); unset, each process
/// has a random key of its own.
fn request_state_keys(server: McpServerOptions) -> Result<McpServerOptions, String> {
    match RequestStateKeys::from_env() {
        Ok(Some(keys)) => Ok(server.request_state_keys(keys)),
        Ok(None) => Ok(server),
        Err(error) => Err(format!("{REQUEST_STATE_KEYS_ENV}: {error}")),
    }
}

/// What a serving process shares with the other replicas while it runs
/// (`--shared`): its change notifications (Redis) and a share of the jobs
/// (NATS). Dropping it detaches both.
struct Shared {
    _changes: Option<gonk_tools::changes::SharedChanges>,
    worker: Option<Arc<crate::jobs::NatsJobs>>,
}

impl Shared {
    async fn start(registry: &ToolRegistry, matches: &ArgMatches) -> Result<Shared, String> {
        let changes = crate::limits::share_changes(registry, matches)?;
        let worker = match crate::jobs::nats(registry) {
            Some(nats) => {
                nats.start_worker(registry.clone())
                    .await
                    .map_err(|error| format!("the job worker could not start: {error}"))?;
                Some(nats)
            }
            None => None,
        };
        Ok(Shared {
            _changes: changes,
            worker,
        })
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(nats) = &self.worker {
            nats.stop_worker();
        }
    }
}

/// `notes mcp`.
pub fn stdio_command() -> Command {
    Command::new("mcp")
        .about(
            "Serve the notes tools over MCP on stdin/stdout (configure it as the command of an MCP client)",
        )
        .arg(max_calls_arg())
        .arg(grace_arg())
        .arg(ask_timeout_arg())
}

/// With `--approval ask`, every call runs as the local user, so the
/// registry's approval gate asks the client before a write.
fn approval(mut server: McpServerOptions, matches: &ArgMatches) -> McpServerOptions {
    if let Some(timeout) = ask_timeout(matches) {
        server = server.ask_timeout(timeout);
    }
    if from_matches(matches) != Approval::Ask {
        return server;
    }
    let caller = local_user();
    server.base_context(move || ToolContext::new().with_auth(caller.clone()))
}

/// Runs `notes mcp` until the client disconnects (or SIGTERM / Ctrl-C).
pub async fn run_stdio(registry: ToolRegistry, matches: ArgMatches) -> ExitCode {
    // stdout carries the protocol; MCP clients show the server's stderr.
    let writes: Vec<String> = registry
        .list()
        .iter()
        .filter(|def| !def.capabilities.duplex && is_write_tool(def))
        .map(|def| def.name.clone())
        .collect();
    if !writes.is_empty() {
        let how = if from_matches(&matches) == Approval::Ask {
            "exposed, and each asks the client for approval"
        } else {
            "exposed"
        };
        eprintln!(
            "notes: serving MCP on stdio; write tools are {how}: {}",
            writes.join(", ")
        );
    }
    let options = match request_state_keys(server_options()) {
        Ok(options) => approval(limits(options, &matches), &matches),
        Err(error) => return failure(error),
    };
    let _shared = match Shared::start(&registry, &matches).await {
        Ok(shared) => shared,
        Err(error) => return failure(error),
    };
    match serve_stdio_with_shutdown(registry, options, terminated()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => failure(error),
    }
}

/// `notes serve`.
pub fn serve_command() -> Command {
    Command::new("serve")
        .about(
            "Serve the notes tools over MCP streamable HTTP at http://HOST:PORT/mcp, over \
             WebSocket at ws://HOST:PORT/ws, and a live notes page at http://HOST:PORT/",
        )
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
            Arg::new("auth-issuer")
                .long("auth-issuer")
                .value_name("URL")
                .help(
                    "Accept OAuth access tokens (JWTs) of this issuer on /mcp and /ws, verified \
                     against the keys its metadata publishes; read tools need the scope \
                     notes:read, write tools notes:write",
                ),
        )
        .arg(
            Arg::new("auth-audience")
                .long("auth-audience")
                .value_name("URL")
                .requires("auth-issuer")
                .help(
                    "The resource URI tokens must be issued for [default: this server's own MCP \
                     URL, http://HOST:PORT/mcp]; needed when clients reach the server by another \
                     URL (a proxy, TLS in front, a non-loopback --host)",
                ),
        )
        .arg(
            Arg::new("allow-writes")
                .long("allow-writes")
                .action(ArgAction::SetTrue)
                .help("Expose the write tools (notes.create, notes.rename, notes.archive, notes.export_file, notes.reindex) over MCP and WebSocket; by default HTTP withholds them"),
        )
        .arg(
            Arg::new("allow-insecure-remote")
                .long("allow-insecure-remote")
                .action(ArgAction::SetTrue)
                .help("Allow a non-loopback --host without --api-key (trusted networks only)"),
        )
        .arg(
            Arg::new("allow-host")
                .long("allow-host")
                .value_name("NAME[:PORT]")
                .action(ArgAction::Append)
                .help(
                    "Also accept requests addressed to NAME (repeatable); the bound address, and for \
                     0.0.0.0 the machine's addresses and name, are accepted already",
                ),
        )
        .arg(max_calls_arg())
        .arg(
            Arg::new("max-sessions")
                .long("max-sessions")
                .value_name("N")
                .value_parser(value_parser!(u64).range(1..))
                .default_value(DEFAULT_MAX_SESSIONS.to_string())
                .help("The most MCP sessions open at once; past it the least recently used idle one is closed (503 only when all are busy)"),
        )
        .arg(
            Arg::new("session-idle-timeout")
                .long("session-idle-timeout")
                .value_name("SECS")
                .value_parser(value_parser!(u64))
                .default_value(DEFAULT_SESSION_IDLE_TIMEOUT.as_secs().to_string())
                .help("Close a session after this long without a request (0: never)"),
        )
        .arg(grace_arg())
        .arg(ask_timeout_arg())
        .arg(crate::replicas::replica_arg())
        .arg(crate::debug_runtime::arg())
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
    let mut server = match request_state_keys(server_options()) {
        Ok(options) => approval(limits(options, &matches), &matches),
        Err(error) => return failure(error),
    };
    // `--shared`: changes made on other replicas are heard here.
    let _shared = match Shared::start(&registry, &matches).await {
        Ok(shared) => shared,
        Err(error) => return failure(error),
    };
    // A write that asks first is safe to expose over MCP.
    if matches.get_flag("allow-writes") || from_matches(&matches) == Approval::Ask {
        server = server.write_policy(WriteToolPolicy::Permissive);
    }
    let key = matches.get_one::<String>("api-key").cloned().or_else(|| {
        std::env::var("NOTES_API_KEY")
            .ok()
            .filter(|k| !k.is_empty())
    });
    let withheld = !matches.get_flag("allow-writes");
    // Named from the registry, so the start-up line lists every one.
    let write_tools: Vec<String> = registry
        .list()
        .iter()
        .filter(|def| gonk_tools::adapters::mcp::is_write_tool(def))
        .map(|def| def.name.clone())
        .collect();
    let oauth = match crate::oauth::resource(&matches, host) {
        Ok(oauth) => oauth,
        Err(error) => return failure(error),
    };
    let allowed_hosts: Vec<String> = matches
        .get_many::<String>("allow-host")
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    // One port for every surface: /mcp, /ws and the page at /, with the
    // same Host allow-list and one shutdown.
    let stop = CancellationToken::new();
    let shared = HttpServerOptions::new()
        .allowed_hosts(&allowed_hosts)
        .shutdown_token(stop.clone());
    let debug = match crate::debug_runtime::routes(&matches, host) {
        Ok(debug) => debug,
        Err(error) => return failure(error),
    };
    let mut page_and_socket = crate::ws::routes(
        &registry,
        WsSettings {
            allow_writes: !withheld,
            api_key: key.clone(),
            bind: host,
            http: shared.clone(),
            oauth: oauth.clone(),
        },
    );
    if let Some(debug) = debug {
        page_and_socket = page_and_socket.merge(debug);
    }
    let idle = matches
        .get_one::<u64>("session-idle-timeout")
        .copied()
        .unwrap_or(DEFAULT_SESSION_IDLE_TIMEOUT.as_secs());
    let max_sessions = matches
        .get_one::<u64>("max-sessions")
        .map_or(DEFAULT_MAX_SESSIONS, |n| {
            usize::try_from(*n).unwrap_or(usize::MAX)
        });
    let mut http = shared.allow_insecure_remote(matches.get_flag("allow-insecure-remote"));
    let keyed = match crate::replicas::principal_keys() {
        Ok(keyed) => keyed,
        Err(error) => return failure(error),
    };
    if let Some(resource) = oauth {
        if keyed.is_some() {
            return failure(format!(
                "--auth-issuer and {} both say who calls /mcp; use one",
                crate::replicas::KEYS_ENV
            ));
        }
        // Tokens, not the key, on /mcp (the key still guards the page and
        // /ws when given).
        http = http.protected_resource(resource);
    } else if let Some(keys) = keyed {
        // The keys guard /mcp only: the page and /ws need --api-key off loopback.
        if !host.is_loopback() && key.is_none() && !matches.get_flag("allow-insecure-remote") {
            return failure(format!(
                "{} guards /mcp only; off loopback also pass --api-key (it guards /ws and the page)",
                crate::replicas::KEYS_ENV
            ));
        }
        http = http.authenticate(keys.authenticator());
    } else if let Some(key) = key {
        http = http.api_key(key);
    }
    let mut options = McpHttpOptions::new(server)
        .http(http)
        .max_sessions(max_sessions)
        .session_idle_timeout((idle > 0).then(|| Duration::from_secs(idle)))
        .also_serve(page_and_socket);
    if let Some(name) = crate::replicas::replica(&matches) {
        match crate::replicas::header_layer(&name) {
            Ok(layer) => options = options.map_router(layer),
            Err(error) => return failure(error),
        }
        eprintln!(
            "notes: replica {name} (responses carry {}: {name})",
            crate::replicas::HEADER
        );
    }
    let server = match serve_http(SocketAddr::new(host, port), registry, options).await {
        Ok(server) => server,
        Err(error) => return failure(error),
    };
    eprintln!("notes: serving MCP at {}", server.url());
    eprintln!(
        "notes: serving WebSocket at ws://{}/ws",
        server.local_addr()
    );
    eprintln!("notes: page at http://{}/", server.local_addr());
    if from_matches(&matches) == Approval::Ask {
        eprintln!(
            "notes: write tools ask the MCP client for approval before they run (--approval ask)"
        );
    }
    if withheld && from_matches(&matches) != Approval::Ask && !write_tools.is_empty() {
        eprintln!(
            "notes: write tools ({}) are withheld over HTTP; pass --allow-writes to expose them",
            write_tools.join(", ")
        );
    }
    // `stop` is the server's shutdown token: it also closes the sockets.
    tokio::spawn(async move {
        terminated().await;
        eprintln!("notes: shutting down");
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
        .http(HttpServerOptions::new().api_key("notes-demo"));
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
    let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
    for tool in &tools {
        println!(
            "      {:<width$} {}",
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
