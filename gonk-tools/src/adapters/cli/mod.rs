//! The command-line adapter (feature `cli`): every tool of a registry is a
//! subcommand, built with clap from the same definitions the other surfaces
//! serve.
//!
//! ```no_run
//! use gonk_tools::prelude::*;
//! use gonk_tools::adapters::cli::Cli;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Greet {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     let registry = ToolRegistry::new();
//!     registry
//!         .register(
//!             ToolDefinition::builder("greet")
//!                 .description("Say hello.")
//!                 .cli(gonk_tools::definition::CliHints {
//!                     positional: vec!["name".into()],
//!                     ..Default::default()
//!                 })
//!                 .handler(|i: Greet, _| async move { Ok::<_, ToolError>(format!("Hello, {}!", i.name)) })
//!                 .build(),
//!         )
//!         .expect("valid tool");
//!     // `greet greet Ada`, `greet list`, `greet greet --help`, `greet --json greet Ada`
//!     Cli::new(registry).name("greet").version("0.1.0").run_from_env()
//! }
//! ```
//!
//! # Argv
//!
//! `<tool> [positional..] [--flag value]..`: positionals come from the
//! tool's `hints.cli.positional`; every other property of the input schema
//! is a flag (`delay_ms` is `--delay-ms`, with `--delay_ms` as an alias),
//! typed by the schema — integers, numbers, booleans (`--flag` alone is
//! `true`, `--flag=false`), strings, enums (their values are listed), and
//! arrays by repeating the flag. `--input '<json>'` gives the whole input
//! (arguments given as well override its keys). `--json` switches the output
//! to JSON Lines. `list` lists the tools by category; `<tool> --help` is
//! generated from the schema; `--version` prints the version.
//!
//! The CLI consumes only the event stream of
//! [`ToolRegistry::invoke`](crate::registry::ToolRegistry::invoke) (plus the
//! context's logger and notify callback, which it renders the same way), so
//! a tool behaves here exactly as it does over MCP.
//!
//! # Resources and prompts
//!
//! When the registry has resources, `resource list` lists them and
//! `resource read URI` reads one (text as it is, binary contents as base64
//! or `--raw` bytes); when it has prompts, `prompt list` lists them and
//! `prompt get NAME --ARG value..` renders one, each of its arguments a
//! flag. A registry without any has neither subcommand (its help and names
//! stay the tools'). A URI nothing matches or an unknown prompt exits 127
//! with `RESOURCE_NOT_FOUND` / `PROMPT_NOT_FOUND`, as an unknown tool.
//!
//! # Output and exit codes
//!
//! The result's display goes to stdout (text and markdown raw, code fenced,
//! JSON pretty, a link as `title: url`, an image as `[image mime — alt]`);
//! with no display the data is printed as JSON. Data chunks are JSON lines on
//! stdout. Logs (`[level] message`), progress (a live bar on a terminal) and
//! errors (`Error [CODE]: message` and the details) go to stderr. Exit codes
//! are in [`exit`].
//!
//! # Ctrl-C
//!
//! The first Ctrl-C cancels the running call's token: dispatch drops the
//! handler and the process exits with 130. A second Ctrl-C exits at once.
//!
//! # Asking on the terminal
//!
//! A tool's question (`ctx.elicit`) and an approval the provider hands to
//! the caller ([`ApprovalDecision::AskCaller`](crate::security::ApprovalDecision::AskCaller))
//! are asked on the terminal when stdin and stderr are both terminals: the
//! form is shown field by field on stderr and answered on stdin (an empty
//! line takes a field's default; `/decline` declines, `/cancel` or Ctrl-D
//! cancels). Without a terminal a question is refused at once with
//! `INPUT_UNAVAILABLE` (an approval stays `APPROVAL_REQUIRED`), so the CLI
//! never waits on a pipe. Sampling and roots are refused: the command line
//! has neither a model nor roots. The wait is bounded by
//! [`Cli::ask_timeout`] ([`DEFAULT_ASK_TIMEOUT`], five minutes); past it
//! the call gets the answer it would have had without asking.

mod argv;
mod ask;
mod cancel;
mod coerce;
pub mod exit;
mod form;
mod help;
mod list;
mod primitives;
mod progress;
mod render;
mod terminal;

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, ArgMatches, Command};
use futures::StreamExt;

use self::argv::{ToolArgs, JSON_ID};
pub use self::ask::DEFAULT_ASK_TIMEOUT;
use self::render::{Mode, Renderer};
use crate::context::{LogRecord, LogSink, ToolContext};
use crate::definition::{Exposure, HiddenReason, SurfaceProfile, ToolDefinition};
use crate::error::{ErrorCode, ToolError};
use crate::event::ToolEvent;
use crate::registry::ToolRegistry;

/// The clap version the adapter is built on, for global arguments and
/// application commands.
pub use clap;

/// How many Tokio workers [`Cli::run`] starts unless
/// [`Cli::worker_threads`] or `TOKIO_WORKER_THREADS` says otherwise.
pub const DEFAULT_WORKER_THREADS: usize = 2;

/// What an application command returns.
pub type CommandFuture = Pin<Box<dyn Future<Output = ExitCode> + Send + 'static>>;

type CommandFn = dyn Fn(ArgMatches) -> CommandFuture + Send + Sync;
type ParsedHook = dyn Fn(&ArgMatches) -> Result<(), String> + Send + Sync;
type ContextHook = dyn Fn(&ArgMatches, ToolContext) -> Result<ToolContext, String> + Send + Sync;

/// The name of the built-in listing subcommand.
const LIST: &str = "list";

/// Where global options appear in help: after every tool option.
const GLOBAL_ORDER: usize = 100_000;

/// A command line over a [`ToolRegistry`]. See the [module docs](self).
#[must_use = "call .run(..) or .run_from_env()"]
pub struct Cli {
    registry: ToolRegistry,
    name: String,
    version: Option<String>,
    about: Option<String>,
    global_args: Vec<Arg>,
    commands: Vec<(Command, Arc<CommandFn>)>,
    on_parsed: Option<Arc<ParsedHook>>,
    context: ToolContext,
    context_hook: Option<Arc<ContextHook>>,
    ask_timeout: Duration,
    worker_threads: usize,
}

/// The parser and the routing tables of one run.
struct Built {
    command: Command,
    tools: HashMap<String, ToolArgs>,
    apps: HashMap<String, Arc<CommandFn>>,
    duplex: HashMap<String, String>,
    entries: Vec<list::Entry>,
    warnings: Vec<String>,
}

/// Forwards the handler's `ctx.log()` lines to the renderer.
struct CliLog(Arc<Mutex<Renderer>>);

impl LogSink for CliLog {
    fn log(&self, record: &LogRecord<'_>) {
        lock(&self.0).event(&ToolEvent::Log {
            level: record.level,
            message: record.message.to_owned(),
            meta: record.meta.cloned(),
        });
    }
}

fn lock(renderer: &Mutex<Renderer>) -> MutexGuard<'_, Renderer> {
    renderer
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The subcommand name of a tool: its `command` hint when usable.
fn command_name(def: &ToolDefinition) -> String {
    match &def.hints.cli.command {
        Some(command) if argv::is_plain_word(command) => command.clone(),
        _ => def.name.clone(),
    }
}

impl Cli {
    /// A command line over `registry`, named `tools` until [`name`](Self::name).
    pub fn new(registry: ToolRegistry) -> Self {
        Cli {
            registry,
            name: "tools".to_owned(),
            version: None,
            about: None,
            global_args: Vec::new(),
            commands: Vec::new(),
            on_parsed: None,
            context: ToolContext::new(),
            context_hook: None,
            ask_timeout: DEFAULT_ASK_TIMEOUT,
            worker_threads: DEFAULT_WORKER_THREADS,
        }
    }

    /// How many Tokio workers [`run`](Self::run) starts
    /// ([`DEFAULT_WORKER_THREADS`] unless set; at least one), unless
    /// `TOKIO_WORKER_THREADS` says otherwise. One suits a server whose
    /// tools run their heavy parts on blocking threads: a second worker
    /// is woken to look for work on most requests and finds none.
    pub fn worker_threads(mut self, workers: usize) -> Self {
        self.worker_threads = workers.max(1);
        self
    }

    /// The program name shown in usage, help and `--version`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The version `--version` prints.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// The one-line description at the top of `--help`.
    pub fn about(mut self, about: impl Into<String>) -> Self {
        self.about = Some(about.into());
        self
    }

    /// An application option accepted before or after any subcommand (it is
    /// made global), e.g. `--db PATH`. Read it in [`on_parsed`](Self::on_parsed)
    /// or an application command. Its long name is never used for a tool
    /// flag; a tool property of that name is settable through `--input`.
    pub fn global_arg(mut self, arg: Arg) -> Self {
        self.global_args.push(arg.global(true));
        self
    }

    /// An application subcommand next to the tools (e.g. `serve`), run with
    /// its matches. Application commands take precedence over tools of the
    /// same name.
    pub fn command<F, Fut>(mut self, command: Command, run: F) -> Self
    where
        F: Fn(ArgMatches) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ExitCode> + Send + 'static,
    {
        let run: Arc<CommandFn> = Arc::new(move |matches| Box::pin(run(matches)));
        self.commands.push((command, run));
        self
    }

    /// Runs after argv parsed and before any tool or command runs, with the
    /// root matches (global arguments included). An `Err` is a usage error:
    /// its message is printed and the exit code is 2.
    pub fn on_parsed(
        mut self,
        hook: impl Fn(&ArgMatches) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.on_parsed = Some(Arc::new(hook));
        self
    }

    /// The base context of every call (scope, env, cwd, host values). The
    /// CLI adds its own logger, notify callback and a cancellation token
    /// that is a child of this context's.
    pub fn context(mut self, context: ToolContext) -> Self {
        self.context = context;
        self
    }

    /// Derives a tool call's base context from the parsed argv (global
    /// arguments included), e.g. to authenticate the local user when a
    /// flag asks for approvals. Runs once per tool call, after
    /// [`on_parsed`](Self::on_parsed), with the [`context`](Self::context);
    /// an `Err` is a usage error (its message is printed, exit code 2).
    pub fn context_from_args(
        mut self,
        hook: impl Fn(&ArgMatches, ToolContext) -> Result<ToolContext, String> + Send + Sync + 'static,
    ) -> Self {
        self.context_hook = Some(Arc::new(hook));
        self
    }

    /// How long a question asked on the terminal waits for its answer
    /// (default [`DEFAULT_ASK_TIMEOUT`], five minutes). Past it the
    /// question has no answer: a tool's `ctx.elicit` fails with
    /// `INPUT_UNAVAILABLE`, an approval stays `APPROVAL_REQUIRED`.
    pub fn ask_timeout(mut self, timeout: Duration) -> Self {
        self.ask_timeout = timeout;
        self
    }

    /// The clap command the CLI parses with (for shell completions or
    /// man pages).
    pub fn command_tree(&self) -> Command {
        self.build(false).command
    }

    /// Builds the parser; `relaxed` is the variant used when `--input` is
    /// given (see [`argv::tool_command`]).
    fn build(&self, relaxed: bool) -> Built {
        let mut warnings = Vec::new();
        let mut root = Command::new(self.name.clone())
            .bin_name(self.name.clone())
            .subcommand_required(true)
            .arg_required_else_help(true)
            .arg(
                Arg::new(JSON_ID)
                    .long("json")
                    .global(true)
                    .display_order(GLOBAL_ORDER)
                    .action(ArgAction::SetTrue)
                    .help("Print every event as one JSON line on stdout (JSON Lines)"),
            );
        if let Some(version) = &self.version {
            // `-v` as well; what is printed is decided in `argv_error`.
            root = root
                .version(version.clone())
                .disable_version_flag(true)
                .arg(
                    Arg::new("version")
                        .short('v')
                        .long("version")
                        .action(ArgAction::Version)
                        .display_order(GLOBAL_ORDER)
                        .help("Print the version"),
                );
        }
        if let Some(about) = &self.about {
            root = root.about(about.clone());
        }
        let mut reserved_longs = BTreeSet::new();
        for (i, arg) in self.global_args.iter().enumerate() {
            reserved_longs.extend(arg.get_long().map(str::to_owned));
            reserved_longs.extend(
                arg.get_all_aliases()
                    .into_iter()
                    .flatten()
                    .map(str::to_owned),
            );
            root = root.arg(arg.clone().display_order(GLOBAL_ORDER + 1 + i));
        }

        let mut taken: BTreeSet<String> = ["help", LIST].iter().map(|s| (*s).to_owned()).collect();
        root = root.subcommand(Command::new(LIST).about("List the tools, grouped by category"));
        // Resources and prompts only when there are some: a tools-only
        // command line keeps these names free.
        if !self.registry.resources().is_empty() {
            taken.insert(primitives::RESOURCE.to_owned());
            root = root.subcommand(primitives::resource_command());
        }
        let prompts = self.registry.prompts();
        if !prompts.is_empty() {
            taken.insert(primitives::PROMPT.to_owned());
            root = root.subcommand(primitives::prompt_command(
                &prompts,
                &reserved_longs,
                &mut warnings,
            ));
        }

        let mut apps = HashMap::new();
        for (command, run) in &self.commands {
            let name = command.get_name().to_owned();
            let names: Vec<String> = std::iter::once(name.clone())
                .chain(command.get_all_aliases().map(str::to_owned))
                .collect();
            if let Some(clash) = names.iter().find(|n| taken.contains(*n)) {
                warnings.push(format!(
                    "command `{name}` is not available: the name `{clash}` is already taken"
                ));
                continue;
            }
            taken.extend(names);
            apps.insert(name, Arc::clone(run));
            root = root.subcommand(command.clone());
        }

        let mut tools = HashMap::new();
        let mut duplex = HashMap::new();
        let mut entries = Vec::new();
        // Every tool but duplex ones: argv carries no input stream, and the
        // CLI has no filter and lists on-demand tools too.
        let profile = SurfaceProfile::new();
        for def in self.registry.list() {
            let name = command_name(&def);
            match profile.exposure(&def) {
                Exposure::Listed | Exposure::Unlisted => {}
                // Remembered under each of its names, so naming it on the
                // command line says why it cannot run (exit code 3).
                Exposure::Hidden(HiddenReason::Duplex) => {
                    for alias in std::iter::once(&name)
                        .chain(std::iter::once(&def.name))
                        .chain(&def.hints.cli.aliases)
                    {
                        if !taken.contains(alias) {
                            duplex
                                .entry(alias.clone())
                                .or_insert_with(|| def.name.clone());
                        }
                    }
                    continue;
                }
                Exposure::Hidden(_) => continue,
            }
            // The command hint, else the tool name.
            let Some(name) = [name.clone(), def.name.clone()]
                .into_iter()
                .find(|n| !taken.contains(n))
            else {
                warnings.push(format!(
                    "tool {} is not available as a subcommand: the name `{name}` is already taken",
                    def.name
                ));
                continue;
            };
            if name != command_name(&def) {
                warnings.push(format!(
                    "tool {}: the command `{}` is already taken; it is available as `{name}`",
                    def.name,
                    command_name(&def)
                ));
            }
            taken.insert(name.clone());
            let mut aliases = Vec::new();
            for alias in &def.hints.cli.aliases {
                if argv::is_plain_word(alias) && !taken.contains(alias) {
                    taken.insert(alias.clone());
                    aliases.push(alias.clone());
                }
            }
            let (command, args) =
                argv::tool_command(&def, &self.name, &name, &aliases, &reserved_longs, relaxed);
            root = root.subcommand(command);
            entries.push(list::Entry {
                command: name.clone(),
                name: def.name.clone(),
                category: def.category.clone(),
                description: def.advertised_description().to_owned(),
            });
            tools.insert(name, args);
        }
        // Duplex names that a later tool took are not duplex any more.
        duplex.retain(|name, _| !taken.contains(name));

        Built {
            command: root,
            tools,
            apps,
            duplex,
            entries,
            warnings,
        }
    }

    /// Parses `args` (the first is the program name, as in
    /// `std::env::args_os()`), runs the subcommand and returns its exit
    /// code. Starts its own Tokio runtime, with
    /// [`worker_threads`](Self::worker_threads) workers unless
    /// `TOKIO_WORKER_THREADS` says how many; from async code use
    /// [`run_async`](Self::run_async).
    pub fn run<I, T>(&self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let run = move || {
            let mut runtime = tokio::runtime::Builder::new_multi_thread();
            // Tokio reads `TOKIO_WORKER_THREADS` itself when no count is set.
            if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
                runtime.worker_threads(self.worker_threads);
            }
            match runtime.enable_all().build() {
                Ok(runtime) => {
                    let code = runtime.block_on(self.run_async(args));
                    // The exit code is decided; do not wait for leftover blocking work.
                    runtime.shutdown_background();
                    code
                }
                Err(error) => {
                    terminal::stderr(&format!(
                        "Error: could not start the async runtime: {error}\n"
                    ));
                    exit::code(exit::FAILURE)
                }
            }
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            // Blocking inside a runtime would stall it: run on a thread of our own.
            std::thread::scope(|scope| scope.spawn(run).join().unwrap_or(exit::code(exit::FAILURE)))
        } else {
            run()
        }
    }

    /// [`run`](Self::run) with the process arguments.
    pub fn run_from_env(&self) -> ExitCode {
        self.run(std::env::args_os())
    }

    /// [`run`](Self::run) on the current Tokio runtime, which needs its I/O
    /// and time drivers (`#[tokio::main]` enables them) for Ctrl-C handling.
    pub async fn run_async<I, T>(&self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let (built, matches) = self.parse(args);
        for warning in &built.warnings {
            terminal::stderr(&format!("warning: {warning}\n"));
        }
        let mut command = built.command;
        let matches = match matches {
            Ok(matches) => matches,
            Err(error) => return exit::code(argv_error(error, &built.duplex, self)),
        };
        if let Some(hook) = &self.on_parsed {
            if let Err(message) = hook(&matches) {
                terminal::stderr(&format!("Error: {message}\n"));
                return exit::code(exit::USAGE);
            }
        }
        let mode = if matches.get_flag(JSON_ID) {
            Mode::Json
        } else {
            Mode::Human
        };
        let Some((name, sub)) = matches.subcommand() else {
            // `subcommand_required` makes clap report this; kept as a fallback.
            terminal::stderr(&command.render_help().to_string());
            return exit::code(exit::USAGE);
        };
        if name == LIST {
            match mode {
                Mode::Human => terminal::stdout(&list::render_text(&built.entries)),
                Mode::Json => terminal::stdout_json(&list::render_json(&built.entries)),
            }
            return exit::code(exit::OK);
        }
        if let Some(run) = built.apps.get(name) {
            return run(sub.clone()).await;
        }
        let base = match &self.context_hook {
            None => self.context.clone(),
            Some(hook) => match hook(&matches, self.context.clone()) {
                Ok(context) => context,
                Err(message) => {
                    terminal::stderr(&format!("Error: {message}\n"));
                    return exit::code(exit::USAGE);
                }
            },
        };
        let json = mode == Mode::Json;
        if name == primitives::RESOURCE && !built.tools.contains_key(name) {
            return exit::code(primitives::run_resource(&self.registry, base, sub, json).await);
        }
        if name == primitives::PROMPT && !built.tools.contains_key(name) {
            return exit::code(primitives::run_prompt(&self.registry, base, sub, json).await);
        }
        match built.tools.get(name) {
            Some(args) => exit::code(self.call(&base, args, sub, mode).await),
            None => {
                terminal::stderr(&format!("Error: unknown command `{name}`\n"));
                exit::code(exit::USAGE)
            }
        }
    }

    /// Parses argv. Required arguments are required, except that when a
    /// strict parse misses one and `--input` was given, the relaxed parser
    /// is used (the JSON may hold the field; dispatch checks it).
    fn parse(&self, args: Vec<OsString>) -> (Built, Result<ArgMatches, clap::Error>) {
        let mut built = self.build(false);
        let strict = built.command.try_get_matches_from_mut(args.clone());
        let missing = matches!(&strict, Err(e) if e.kind() == ErrorKind::MissingRequiredArgument);
        let mentions_input = args
            .iter()
            .skip(1)
            .filter_map(|a| a.to_str())
            .any(|a| a == "--input" || a.starts_with("--input="));
        if !(missing && mentions_input) {
            return (built, strict);
        }
        let mut relaxed = self.build(true);
        match relaxed.command.try_get_matches_from_mut(args) {
            Ok(matches) if gave_input(&matches) => (relaxed, Ok(matches)),
            _ => (built, strict),
        }
    }

    /// Runs one tool call and renders its events; returns the exit code.
    async fn call(
        &self,
        base: &ToolContext,
        args: &ToolArgs,
        matches: &ArgMatches,
        mode: Mode,
    ) -> u8 {
        let input = match args.input(matches) {
            Ok(input) => input,
            Err(error) => {
                terminal::stderr(&format!("Input error: {}\n", error.0));
                return exit::USAGE;
            }
        };
        let renderer = Arc::new(Mutex::new(Renderer::new(mode)));
        let token = base.cancellation().child_token();
        let notify = Arc::clone(&renderer);
        let mut ctx = base.clone();
        // An asker the host installed wins over the terminal.
        let mut terminal_asker = None;
        if !ctx.has_asker() {
            let asker = Arc::new(ask::TerminalAsker::new(
                self.ask_timeout,
                Arc::clone(&renderer),
            ));
            terminal_asker = Some(Arc::clone(&asker));
            ctx = ctx.with_asker(asker);
        }
        let ctx = ctx
            .with_cancellation(token.clone())
            .with_logger(CliLog(Arc::clone(&renderer)))
            .with_notify(move |event| lock(&notify).event(event));
        let notice = Arc::clone(&renderer);
        let interrupts = cancel::cancel_on_interrupt(token, move || {
            lock(&notice).notice("Cancelling (press Ctrl-C again to exit at once)");
        });

        let detached = self
            .registry
            .get(&args.tool)
            .is_some_and(|def| def.detached);
        let mut events = self.registry.invoke(&args.tool, input, ctx);
        let mut error: Option<ErrorCode> = None;
        let mut has_result = false;
        let mut launched = None;
        while let Some(event) = events.next().await {
            match &event {
                ToolEvent::Result { data, .. } => {
                    has_result = true;
                    launched = if detached {
                        self.launched_job(base, &args.tool, data).await
                    } else {
                        None
                    };
                    // The handle's message is written for a model; a person
                    // is told below, and gets the job's outcome instead.
                    if launched.is_some() && mode == Mode::Human {
                        continue;
                    }
                }
                ToolEvent::Error { code, .. } => error = Some(code.clone()),
                _ => {}
            }
            lock(&renderer).event(&event);
        }
        drop(events);
        if error.is_none() && !has_result {
            let missing = ToolError::new(ErrorCode::NoResult, "Tool produced no result");
            error = Some(missing.code.clone());
            lock(&renderer).event(&ToolEvent::error(missing));
        }
        lock(&renderer).finish();
        drop(interrupts);
        if error == Some(ErrorCode::ApprovalRequired)
            && terminal_asker.is_some_and(|asker| asker.wanted_a_terminal())
        {
            terminal::stderr(
                "This call needs an answer on a terminal to be approved, and stdin is not a \
                 terminal: run it in a terminal to answer the question.\n",
            );
        }
        if let Some(job) = launched {
            return self.follow_job(base, &args.tool, &job, &renderer).await;
        }
        self.await_jobs(base, None).await;
        error.map_or(exit::OK, |code| exit::for_error(&code))
    }

    /// The id of the job a detached call of `tool` launched, when `data`
    /// is its handle (rather than the result of an inline run).
    async fn launched_job(
        &self,
        base: &ToolContext,
        tool: &str,
        data: &serde_json::Value,
    ) -> Option<String> {
        let id = data.get("jobId")?.as_str()?;
        let runner = crate::jobs::runner(&self.registry)?;
        let owner = crate::jobs::owner_of(base.auth());
        let record = runner.get(owner.as_deref(), id).await?;
        (record.tool == tool).then_some(record.id)
    }

    /// Waits for the job a call launched and reports its outcome as a
    /// foreground call would: the result on stdout, or the error on stderr
    /// and its exit code (Ctrl-C cancels it: `ABORTED`, 130).
    async fn follow_job(
        &self,
        base: &ToolContext,
        tool: &str,
        job: &str,
        renderer: &Mutex<Renderer>,
    ) -> u8 {
        self.await_jobs(base, Some((tool, job))).await;
        let owner = crate::jobs::owner_of(base.auth());
        let record = match crate::jobs::runner(&self.registry) {
            Some(runner) => runner.get(owner.as_deref(), job).await,
            None => None,
        };
        let outcome = match record {
            Some(record) => match (record.output, record.error) {
                (_, Some(error)) => Err(error),
                (Some(output), None) => Ok(output),
                (None, None) => Err(ToolError::new(
                    ErrorCode::NoResult,
                    format!("Background job {job} ended without a result"),
                )),
            },
            None => Err(ToolError::new(
                ErrorCode::custom("JOB_NOT_FOUND"),
                format!("Background job {job} is gone; `jobs.list` shows the jobs still kept"),
            )),
        };
        let event = match outcome {
            Ok(output) => ToolEvent::Result {
                data: output.data,
                display: output.display,
            },
            Err(error) => ToolEvent::error(error),
        };
        let code = match &event {
            ToolEvent::Error { code, .. } => exit::for_error(code),
            _ => exit::OK,
        };
        let mut renderer = lock(renderer);
        renderer.event(&event);
        renderer.finish();
        code
    }

    /// A detached call launched its job in this process, which ends the
    /// job when it exits: stay until this caller's jobs end (Ctrl-C
    /// cancels them). `--wait` runs the call in the foreground instead.
    /// `followed` is the (tool, job) this call launched: it is announced
    /// even when it has already ended.
    async fn await_jobs(&self, base: &ToolContext, followed: Option<(&str, &str)>) {
        let Some(runner) = crate::jobs::runner(&self.registry) else {
            return;
        };
        let owner = crate::jobs::owner_of(base.auth());
        let pending: Vec<String> = runner
            .list(owner.as_deref())
            .await
            .into_iter()
            .filter(|record| !record.status.is_terminal())
            .map(|record| record.id)
            .collect();
        if pending.is_empty() && followed.is_none() {
            return;
        }
        // Listening before the notice, so a Ctrl-C right after it counts.
        let interrupted = tokio::signal::ctrl_c();
        let mut interrupted = std::pin::pin!(interrupted);
        let early = futures::FutureExt::now_or_never(interrupted.as_mut()).is_some();
        if let Some((tool, job)) = followed {
            terminal::stderr(&format!(
                "{tool} started as background job {job}; waiting for it to finish \
                 (Ctrl-C cancels it; --wait runs {tool} in the foreground; \
                 `jobs.status {job}` shows its progress from another shell)\n"
            ));
        }
        if pending.is_empty() {
            return;
        }
        let others: Vec<&str> = pending
            .iter()
            .map(String::as_str)
            .filter(|id| Some(*id) != followed.map(|(_, job)| job))
            .collect();
        if !others.is_empty() {
            terminal::stderr(&format!(
                "Waiting for background job {} to finish before exiting (Ctrl-C cancels it; --wait runs a call in the foreground)\n",
                others.join(", ")
            ));
        }
        let cancelled = early
            || tokio::select! {
                _ = runner.idle() => false,
                _ = interrupted => true,
            };
        if cancelled {
            for id in &pending {
                runner.cancel(owner.as_deref(), id).await;
            }
            runner.idle().await;
        }
    }
}

/// Whether the subcommand of `matches` got `--input`.
fn gave_input(matches: &ArgMatches) -> bool {
    matches.subcommand().is_some_and(|(_, sub)| {
        sub.try_get_one::<String>(argv::INPUT_ID)
            .ok()
            .flatten()
            .is_some()
    })
}

/// Prints a clap error (or help / version) and picks the exit code: 0 for
/// help and version (`--version` / `-v` print the version alone), and for
/// the help a bare command prints, which is not a mistake; 3 for a duplex
/// tool; 2 otherwise. An unknown
/// subcommand is `Unknown tool: NAME`, as on every other surface.
fn argv_error(error: clap::Error, duplex: &HashMap<String, String>, cli: &Cli) -> u8 {
    let program = &cli.name;
    if error.kind() == ErrorKind::DisplayVersion {
        // The version alone, for scripts (clap would print the name too).
        if let Some(version) = &cli.version {
            terminal::stdout(&format!("{version}\n"));
            return exit::OK;
        }
    }
    if error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        terminal::stdout(&error.render().to_string());
        return exit::OK;
    }
    if error.kind() == ErrorKind::InvalidSubcommand {
        if let Some(ContextValue::String(name)) = error.get(ContextKind::InvalidSubcommand) {
            if let Some(tool) = duplex.get(name) {
                terminal::stderr(&format!(
                    "Error: tool {tool} is duplex (it needs a bidirectional input stream) and \
                     cannot run from the command line; use a surface that streams input\n"
                ));
                return exit::DUPLEX;
            }
            // clap lists the similar names least similar first.
            let similar = match error.get(ContextKind::SuggestedSubcommand) {
                Some(ContextValue::String(similar)) => Some(similar),
                Some(ContextValue::Strings(similar)) => similar.last(),
                _ => None,
            };
            let hint = similar.map_or(String::new(), |s| format!("did you mean `{s}`? "));
            terminal::stderr(&format!(
                "Unknown tool: {name}\n  {hint}`{program} list` shows the tools\n"
            ));
            return exit::USAGE;
        }
    }
    let text = error.render().to_string();
    if error.use_stderr() {
        terminal::stderr(&text);
    } else {
        terminal::stdout(&text);
    }
    match error.exit_code() {
        0 => exit::OK,
        _ => exit::USAGE,
    }
}
