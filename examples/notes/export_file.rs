//! `notes.export_file`: the notebook written to a file, page by page, with
//! progress — the example's heavy tool, detached by default
//! (`#[tool(detached)]`): a call returns a job id at once unless it passes
//! `wait: true`.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use futures::Stream;
use gonk_tools::prelude::*;
use tokio::io::AsyncWriteExt;

use crate::store::Store;
use crate::tools::{markdown, ExportFormat};

/// Notes read per database round trip.
const PAGE: u32 = 200;

/// Input of `notes.export_file`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ExportFile {
    /// Where to write, relative to the server's working directory (no
    /// `..`, no absolute path).
    #[schemars(length(min = 1, max = 255))]
    pub path: String,
    /// Output format.
    #[serde(default)]
    pub format: ExportFormat,
    /// Include archived notes.
    #[serde(default)]
    pub include_archived: bool,
    /// Replace the file if it exists.
    #[serde(default)]
    pub overwrite: bool,
    /// Pause after each page of notes, in milliseconds (to watch the
    /// progress).
    #[serde(default)]
    #[schemars(range(max = 10000))]
    pub delay_ms: u64,
}

/// Output of `notes.export_file`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ExportedFile {
    /// The file written (absolute).
    pub path: String,
    /// How many notes it holds.
    pub count: u64,
    /// Its size in bytes.
    pub bytes: u64,
}

fn bad_path(path: &str, why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::InvalidInput,
        format!("Cannot export to {path:?}: {why}"),
    )
    .with_details(json!({ "path": path }))
}

/// A fresh partial file beside `target`: `.NAME.partial-PID-N`.
fn partial_path(target: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    target.with_file_name(format!(".{name}.partial-{}-{n}", std::process::id()))
}

/// The partial file of an export: removed when the export fails or is
/// dropped before [`publish`](Self::publish).
struct Partial(Option<PathBuf>);

impl Partial {
    /// Moves the file to `target`: replacing it with `overwrite`, else
    /// failing with `AlreadyExists` if it appeared meanwhile (a hard link
    /// creates the name only if it is free).
    fn publish(mut self, target: &Path, overwrite: bool) -> std::io::Result<()> {
        let Some(partial) = self.0.take() else {
            return Ok(());
        };
        let moved = if overwrite {
            std::fs::rename(&partial, target)
        } else {
            std::fs::hard_link(&partial, target).and_then(|()| std::fs::remove_file(&partial))
        };
        if moved.is_err() {
            let _ = std::fs::remove_file(&partial);
        }
        moved
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if let Some(partial) = self.0.take() {
            let _ = std::fs::remove_file(partial);
        }
    }
}

/// `path` under `root`, refusing anything that would leave it.
fn resolve(root: &Path, path: &str) -> Result<PathBuf, ToolError> {
    let relative = Path::new(path);
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(bad_path(
            path,
            "give a path relative to the working directory, without `..`",
        ));
    }
    Ok(root.join(relative))
}

/// Export the notebook to a file (Markdown or JSON), page by page, reporting progress. Heavy: returns a background job id unless called with wait: true.
#[tool(
    name = "notes.export_file",
    category = "notes",
    scopes("notes:write"),
    approval = "write",
    detached,
    capabilities(reads_fs, writes_fs, long_running),
    latency = "minutes",
    mcp(read_only = false, destructive = false, idempotent, open_world = false),
    cli(
        positional = ["path"],
        examples = [
            "notes notes.export_file backup.md",
            "notes notes.export_file backup.json --format json --overwrite --wait",
        ],
    )
)]
pub async fn notes_export_file(
    input: ExportFile,
    store: State<Store>,
    ctx: ToolContext,
) -> impl Stream<Item = ToolEvent<ExportedFile>> {
    let root = ctx.cwd();
    gonk_tools::stream! {
        let target = match resolve(&root, &input.path) {
            Ok(target) => target,
            Err(error) => {
                yield ToolEvent::error(error);
                return;
            }
        };
        let include_archived = input.include_archived;
        let total = match store.count(include_archived).await {
            Ok(total) => total,
            Err(error) => {
                yield ToolEvent::error(error);
                return;
            }
        };
        // Written to a partial file beside the target and moved into place
        // at the end, so the target is never seen half written — also when
        // the process dies mid-export and the job runs again elsewhere.
        if !input.overwrite && tokio::fs::try_exists(&target).await.unwrap_or(false) {
            yield ToolEvent::error(bad_path(&input.path, "the file exists; pass overwrite to replace it"));
            return;
        }
        let partial = partial_path(&target);
        let file = match tokio::fs::OpenOptions::new().write(true).create_new(true).open(&partial).await {
            Ok(file) => file,
            Err(error) => {
                yield ToolEvent::error(bad_path(&input.path, &error.to_string()));
                return;
            }
        };
        let partial = Partial(Some(partial));
        let mut file = tokio::io::BufWriter::new(file);
        yield ToolEvent::log(LogLevel::Info, format!("exporting {total} notes to {}", target.display()));
        let (open, separator, close) = match input.format {
            ExportFormat::Markdown => ("", "\n\n---\n\n", "\n"),
            ExportFormat::Json => ("[\n", ",\n", "\n]\n"),
        };
        let mut written = 0u64;
        let mut bytes = 0u64;
        let mut after = 0i64;
        let mut failure = None;
        if let Err(error) = file.write_all(open.as_bytes()).await {
            failure = Some(error.to_string());
        }
        while failure.is_none() {
            let page = match store.page(after, PAGE, include_archived).await {
                Ok(page) => page,
                Err(error) => {
                    yield ToolEvent::error(error);
                    return;
                }
            };
            let Some(last) = page.last() else { break };
            after = last.id;
            let mut chunk = String::new();
            for note in &page {
                if written > 0 {
                    chunk.push_str(separator);
                }
                match input.format {
                    ExportFormat::Markdown => chunk.push_str(&markdown(note)),
                    ExportFormat::Json => {
                        chunk.push_str(&serde_json::to_string_pretty(note).unwrap_or_default())
                    }
                }
                written += 1;
            }
            bytes += chunk.len() as u64;
            if let Err(error) = file.write_all(chunk.as_bytes()).await {
                failure = Some(error.to_string());
                break;
            }
            yield ToolEvent::progress(
                (written as f64 * 100.0 / total.max(1) as f64).min(100.0).round(),
                format!("exported {written}/{total}"),
            );
            if input.delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(input.delay_ms)).await;
            }
        }
        if failure.is_none() {
            let closed = async {
                file.write_all(close.as_bytes()).await?;
                file.flush().await
            };
            if let Err(error) = closed.await {
                failure = Some(error.to_string());
            }
        }
        if let Some(error) = failure {
            yield ToolEvent::error(ToolError::internal(format!(
                "writing {} failed: {error}", target.display()
            )));
            return;
        }
        if let Err(error) = partial.publish(&target, input.overwrite) {
            let error = if error.kind() == std::io::ErrorKind::AlreadyExists {
                bad_path(&input.path, "the file exists; pass overwrite to replace it")
            } else {
                ToolError::internal(format!("moving the export to {} failed: {error}", target.display()))
            };
            yield ToolEvent::error(error);
            return;
        }
        bytes += (open.len() + close.len()) as u64;
        let path = target.display().to_string();
        let display = format!("Exported {written} notes to {path} ({bytes} bytes)");
        yield ToolEvent::Result {
            data: ExportedFile { path, count: written, bytes },
            display: Some(display.into()),
        };
    }
}
