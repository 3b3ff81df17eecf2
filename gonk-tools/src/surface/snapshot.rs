//! The surface pinned in a golden file: compare, report, update.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{diff, surface, SurfaceDiff};
use crate::registry::ToolRegistry;

/// The environment variable that accepts a changed surface: run the test
/// with `GONK_BLESS=1` and the golden file is rewritten (as the other
/// golden files of this workspace are).
pub const UPDATE_VAR: &str = "GONK_BLESS";

/// What a successful check did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotOutcome {
    /// The surface matches the file.
    Unchanged,
    /// The file was (re)written with the current surface.
    Written,
}

/// Why a surface snapshot check failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The surface differs from the file.
    Changed {
        /// The golden file.
        path: PathBuf,
        /// The classified changes (empty when only order or formatting
        /// differ).
        diff: SurfaceDiff,
    },
    /// There is no golden file yet.
    Missing {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// The file could not be read, parsed or written.
    File {
        /// The golden file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::Changed { path, diff } if diff.is_empty() => write!(
                f,
                "the tool surface differs from {} only in order or formatting; rerun with {UPDATE_VAR}=1 to rewrite it",
                path.display()
            ),
            SnapshotError::Changed { path, diff } => write!(
                f,
                "the tool surface changed from {}: {diff}\nIf this is intended, rerun with {UPDATE_VAR}=1 to rewrite the file, and review its diff{}",
                path.display(),
                if diff.is_breaking() { " — breaking changes need a new major version or a migration for callers" } else { "" }
            ),
            SnapshotError::Missing { path } => write!(
                f,
                "no surface snapshot at {}; run with {UPDATE_VAR}=1 to create it",
                path.display()
            ),
            SnapshotError::File { path, reason } => write!(f, "{}: {reason}", path.display()),
        }
    }
}

impl std::error::Error for SnapshotError {}

/// Compares `registry`'s [`surface`] with the golden file at `path`; with
/// `update`, writes the file instead when it is missing or differs.
pub fn check_surface(
    registry: &ToolRegistry,
    path: impl AsRef<Path>,
    update: bool,
) -> Result<SnapshotOutcome, SnapshotError> {
    let path = path.as_ref();
    let current = surface(registry);
    let file_error = |reason: String| SnapshotError::File {
        path: path.to_owned(),
        reason,
    };
    let expected: Option<Value> = match std::fs::read_to_string(path) {
        Ok(text) => {
            Some(serde_json::from_str(&text).map_err(|e| file_error(format!("not JSON: {e}")))?)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(file_error(e.to_string())),
    };
    if expected.as_ref() == Some(&current) {
        return Ok(SnapshotOutcome::Unchanged);
    }
    if update {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| file_error(e.to_string()))?;
        }
        let text = serde_json::to_string_pretty(&current).map_err(|e| file_error(e.to_string()))?;
        std::fs::write(path, text + "\n").map_err(|e| file_error(e.to_string()))?;
        return Ok(SnapshotOutcome::Written);
    }
    match expected {
        None => Err(SnapshotError::Missing {
            path: path.to_owned(),
        }),
        Some(expected) => Err(SnapshotError::Changed {
            path: path.to_owned(),
            diff: diff(&expected, &current),
        }),
    }
}

/// [`check_surface`] for tests: panics with the classified changes when the
/// surface differs from the golden file, unless [`UPDATE_VAR`] is set (to
/// anything but `0` or nothing), which rewrites the file.
///
/// [`assert_surface!`](crate::assert_surface!) resolves a relative path
/// against the calling crate's directory.
#[track_caller]
pub fn assert_surface(registry: &ToolRegistry, path: impl AsRef<Path>) {
    let update = std::env::var(UPDATE_VAR).is_ok_and(|v| !v.is_empty() && v != "0");
    if let Err(error) = check_surface(registry, path, update) {
        panic!("{error}");
    }
}

/// Asserts that a registry's tool surface matches a golden file, relative
/// to the calling crate's directory (see [`surface`](crate::surface)).
///
/// ```no_run
/// # let registry = gonk_tools::ToolRegistry::new();
/// gonk_tools::assert_surface!(registry, "tests/golden/surface.json");
/// ```
#[macro_export]
macro_rules! assert_surface {
    ($registry:expr, $path:expr $(,)?) => {
        $crate::surface::assert_surface(
            &$registry,
            ::std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join($path),
        )
    };
}
