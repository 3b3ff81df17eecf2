//! The registry's skills handed to Pi: Pi's extension API takes skills
//! only as folders on disk (`resources_discover` → `skillPaths`), so the
//! bridge writes each skill's files under one folder of its own and
//! reports it in its `discover` answer; the extension hands that folder to
//! Pi, which loads the skills as if the user had installed them.

use std::path::{Path, PathBuf};

use crate::registry::ToolRegistry;

/// Writes every skill of `registry` under a folder of this process's
/// (`<temp>/gonk-tools-pi-skills-<pid>/<name>/…`, rewritten on each call
/// so a changed registry is seen) and returns it; `None` without skills.
pub(super) fn write_skills(registry: &ToolRegistry) -> std::io::Result<Option<PathBuf>> {
    let skills = registry.skills();
    if skills.is_empty() {
        return Ok(None);
    }
    let root = std::env::temp_dir().join(format!("gonk-tools-pi-skills-{}", std::process::id()));
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    for skill in &skills {
        let folder = root.join(skill.name());
        for file in skill.files() {
            let bytes = file.read().map_err(std::io::Error::other)?;
            write_under(&folder, file.path(), &bytes)?;
        }
    }
    Ok(Some(root))
}

/// Writes `bytes` at `path` (plain and relative: a skill refuses any
/// other) under `folder`.
fn write_under(folder: &Path, path: &str, bytes: &[u8]) -> std::io::Result<()> {
    let target = path.split('/').fold(folder.to_path_buf(), |p, s| p.join(s));
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(target, bytes)
}
