//! Skills read from a folder at run time: every file below a skill's
//! folder (symbolic links and names starting with `.` skipped), its
//! digest taken now, its bytes read again whenever it is served.

use std::path::{Path, PathBuf};

use super::{invalid, sha256_digest, FileBody, Skill, SkillError, SkillFile, SKILL_MD};

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SkillError + '_ {
    move |source| SkillError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_none_or(|n| n.starts_with('.'))
}

pub(super) fn load_dir(root: &Path) -> Result<Vec<Skill>, SkillError> {
    let mut folders: Vec<PathBuf> = Vec::new();
    for entry in std::fs::read_dir(root).map_err(io(root))? {
        let entry = entry.map_err(io(root))?;
        let kind = entry.file_type().map_err(io(root))?;
        if kind.is_dir() && !is_hidden(&entry.path()) {
            folders.push(entry.path());
        }
    }
    folders.sort();
    folders.iter().map(|folder| load_skill(folder)).collect()
}

pub(super) fn load_skill(folder: &Path) -> Result<Skill, SkillError> {
    let folder_name = folder
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    if !folder.join(SKILL_MD).is_file() {
        return Err(invalid(
            &folder_name,
            format!(
                "the folder {} has no SKILL.md: add one, with `name: {folder_name}` and a \
                 `description` in its frontmatter, or move the folder out",
                folder.display()
            ),
        ));
    }
    let mut files = Vec::new();
    walk(folder, "", &mut files)?;
    let skill = Skill::from_files(files).map_err(|error| match error {
        SkillError::Invalid { reason, .. } => invalid(&folder_name, reason),
        other => other,
    })?;
    if skill.name() != folder_name {
        return Err(invalid(
            &folder_name,
            format!(
                "its frontmatter's name is `{}`, not its folder's: rename one to match the other",
                skill.name()
            ),
        ));
    }
    Ok(skill)
}

fn walk(dir: &Path, prefix: &str, files: &mut Vec<SkillFile>) -> Result<(), SkillError> {
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        if is_hidden(&path) {
            continue;
        }
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let relative = format!("{prefix}{name}");
        // `file_type` does not follow symbolic links, which are skipped:
        // a skill serves what is inside its folder.
        let kind = entry.file_type().map_err(io(&path))?;
        if kind.is_dir() {
            walk(&path, &format!("{relative}/"), files)?;
        } else if kind.is_file() {
            let bytes = std::fs::read(&path).map_err(io(&path))?;
            files.push(SkillFile {
                path: relative.into(),
                digest: sha256_digest(&bytes),
                size: bytes.len() as u64,
                body: FileBody::Disk(path),
            });
        }
    }
    Ok(())
}
