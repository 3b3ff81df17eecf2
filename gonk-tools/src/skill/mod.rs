//! Skills (the MCP skills extension, SEP-2640): a folder of files — a
//! `SKILL.md` whose YAML frontmatter names and describes it, and whatever
//! it refers to — that an agent loads when it needs it.
//!
//! A registry holds skills beside its tools
//! ([`ToolRegistry::register_skills`](crate::ToolRegistry::register_skills));
//! the MCP server lists them (`skills/list`, `skills/get`) and serves each
//! file as a `skill://<name>/<path>` resource with its `sha256:` digest and
//! size. Two ways to make them:
//!
//! * [`embed_skills!`](crate::embed_skills) reads a folder of skills at
//!   compile time and embeds it in the binary; a missing `SKILL.md`, bad
//!   frontmatter, a name that is not its folder's, a duplicate name are
//!   compile errors.
//! * [`Skill::load_dir`] (feature `skills`) reads a folder at run time,
//!   with the same checks as `Result`s; the digests are taken then, and
//!   each file is read again when it is served, so an edit after loading
//!   is caught by a client's digest check.
//!
//! The whole story, publishing to verifying: `docs/skills.md`.

#[cfg(feature = "skills")]
mod dir;
#[cfg(feature = "skills")]
mod frontmatter;

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

#[cfg(feature = "skills")]
pub use frontmatter::parse_frontmatter;

/// The scheme of the URIs skills are served at.
pub const SKILL_SCHEME: &str = "skill://";
/// The file every skill has at its root.
pub const SKILL_MD: &str = "SKILL.md";
/// The MIME type of a directory in `resources/directory/read`.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";
/// Files per skill: hosts need not load a skill with more (SEP-2640).
pub const MAX_FILES: usize = 512;
/// Bytes per skill, summed over its files: hosts need not load more.
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// One skill: its frontmatter, as written, and its files.
/// Cheap to clone.
#[derive(Clone, Debug)]
pub struct Skill {
    inner: Arc<SkillInner>,
}

#[derive(Debug)]
struct SkillInner {
    /// Folders before the skill's own in its URIs (`skill://<ns>/<name>/…`):
    /// a gateway's name for the server it came from.
    namespace: Option<String>,
    name: String,
    description: String,
    frontmatter: Map<String, Value>,
    /// Sorted by path; `SKILL.md` among them.
    files: Vec<SkillFile>,
}

/// One file of a skill: its path inside the skill (`/`-separated, e.g.
/// `references/FORMS.md`), and the digest and size of its bytes.
#[derive(Clone, Debug)]
pub struct SkillFile {
    path: Cow<'static, str>,
    body: FileBody,
    digest: String,
    size: u64,
}

#[derive(Clone, Debug)]
enum FileBody {
    Bytes(Cow<'static, [u8]>),
    /// Read from disk each time it is served; the digest was taken when
    /// the skill was loaded.
    #[cfg_attr(not(feature = "skills"), allow(dead_code))]
    Disk(PathBuf),
}

/// A skill that breaks a rule of the extension or of the Agent Skills
/// specification; the message says which and how to fix it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The frontmatter, its `name` or `description`, or the files break a
    /// rule.
    #[error("skill {skill}: {reason}")]
    Invalid {
        /// The skill (its folder or name).
        skill: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// A file or folder could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// What was being read.
        path: PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
}

fn invalid(skill: &str, reason: impl Into<String>) -> SkillError {
    SkillError::Invalid {
        skill: skill.to_owned(),
        reason: reason.into(),
    }
}

/// The `sha256:<64 lowercase hex>` digest of `bytes`, as skills publish it.
pub fn sha256_digest(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut digest = String::with_capacity(71);
    digest.push_str("sha256:");
    for byte in Sha256::digest(bytes) {
        let _ = write!(digest, "{byte:02x}");
    }
    digest
}

pub use crate::definition::name::check_skill_name;

/// The MIME type a skill file is served with, from its extension.
pub fn mime_type_of(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "rs" => "text/x-rust",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        _ => return None,
    })
}

impl SkillFile {
    /// A file with these bytes at `path` inside its skill.
    pub fn new(path: impl Into<Cow<'static, str>>, bytes: impl Into<Cow<'static, [u8]>>) -> Self {
        let bytes = bytes.into();
        SkillFile {
            path: path.into(),
            digest: sha256_digest(&bytes),
            size: bytes.len() as u64,
            body: FileBody::Bytes(bytes),
        }
    }

    /// The path inside the skill, `/`-separated.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// `sha256:` and 64 lowercase hex digits, of the bytes when the skill
    /// was made.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// Its length in bytes when the skill was made.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The MIME type it is served with, from its extension.
    pub fn mime_type(&self) -> Option<&'static str> {
        mime_type_of(&self.path)
    }

    /// Its bytes now: embedded ones, or read again from disk for a skill
    /// loaded at run time (which may differ from the digest if the file
    /// changed since).
    pub fn read(&self) -> Result<Cow<'_, [u8]>, SkillError> {
        match &self.body {
            FileBody::Bytes(bytes) => Ok(Cow::Borrowed(bytes)),
            FileBody::Disk(path) => {
                std::fs::read(path)
                    .map(Cow::Owned)
                    .map_err(|source| SkillError::Io {
                        path: path.clone(),
                        source,
                    })
            }
        }
    }
}

/// Whether `path` is a plain relative path: non-empty segments, none `.`
/// or `..`, no backslash.
fn check_path(path: &str) -> Result<(), String> {
    let bad = path.is_empty()
        || path.contains('\\')
        || path
            .split('/')
            .any(|segment| segment.is_empty() || segment == "." || segment == "..");
    if bad {
        Err(format!(
            "the file path `{path}` is not a plain relative path: use `/`-separated names, \
             without `.`, `..` or empty segments"
        ))
    } else {
        Ok(())
    }
}

impl Skill {
    /// A skill from its parsed frontmatter and its files (`SKILL.md`
    /// among them). Checks the `name` (the naming rule) and
    /// `description` (a non-empty string of at most 1024 characters),
    /// that `SKILL.md` is there, that each path is plain and appears
    /// once, and the limits ([`MAX_FILES`], [`MAX_BYTES`]).
    pub fn new(
        frontmatter: Map<String, Value>,
        files: impl IntoIterator<Item = SkillFile>,
    ) -> Result<Skill, SkillError> {
        let name = match frontmatter.get("name") {
            Some(Value::String(name)) => name.clone(),
            Some(_) => return Err(invalid("?", "the frontmatter's `name` must be a string")),
            None => {
                return Err(invalid(
                    "?",
                    "the frontmatter has no `name`: add `name: <the folder's name>`",
                ))
            }
        };
        check_skill_name(&name).map_err(|reason| invalid(&name, reason))?;
        let description = frontmatter.get("description").and_then(Value::as_str);
        crate::definition::name::check_skill_description(description)
            .map_err(|reason| invalid(&name, reason))?;
        let description = description.unwrap_or_default().to_owned();
        let mut files: Vec<SkillFile> = files.into_iter().collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        for pair in files.windows(2) {
            if pair[0].path == pair[1].path {
                return Err(invalid(
                    &name,
                    format!("the file `{}` is listed twice", pair[0].path),
                ));
            }
        }
        for file in &files {
            check_path(&file.path).map_err(|reason| invalid(&name, reason))?;
        }
        if !files.iter().any(|file| file.path == SKILL_MD) {
            return Err(invalid(&name, "it has no SKILL.md at its root"));
        }
        if files.len() > MAX_FILES {
            return Err(invalid(
                &name,
                format!(
                    "it has {} files, over the {MAX_FILES} hosts load",
                    files.len()
                ),
            ));
        }
        let total: u64 = files.iter().map(|file| file.size).sum();
        if total > MAX_BYTES {
            return Err(invalid(
                &name,
                format!("its files add up to {total} bytes, over the {MAX_BYTES} hosts load"),
            ));
        }
        Ok(Skill {
            inner: Arc::new(SkillInner {
                namespace: None,
                name,
                description,
                frontmatter,
                files,
            }),
        })
    }

    /// This skill served under `namespace`: at
    /// `skill://<namespace>/<name>/SKILL.md`, its frontmatter and files
    /// unchanged (so their digests hold). `namespace` is `/`-separated
    /// segments of letters, digits, `-`, `.`, `_` and `~` (its first is the
    /// URI's authority). A gateway uses it to keep apart the skills of the
    /// servers behind it.
    pub fn with_namespace(&self, namespace: &str) -> Result<Skill, SkillError> {
        let ok = !namespace.is_empty()
            && namespace.split('/').all(|segment| {
                !segment.is_empty()
                    && segment
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
            });
        if !ok {
            return Err(invalid(
                self.name(),
                format!(
                    "the namespace `{namespace}` is not `/`-separated segments of letters, \
                     digits, `-`, `.`, `_` and `~`"
                ),
            ));
        }
        let inner = &self.inner;
        Ok(Skill {
            inner: Arc::new(SkillInner {
                namespace: Some(namespace.to_owned()),
                name: inner.name.clone(),
                description: inner.description.clone(),
                frontmatter: inner.frontmatter.clone(),
                files: inner.files.clone(),
            }),
        })
    }

    /// The namespace it is served under, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.inner.namespace.as_deref()
    }

    /// The skill's path in its URIs: `<namespace>/<name>`, or its name.
    pub fn path(&self) -> String {
        match &self.inner.namespace {
            Some(namespace) => format!("{namespace}/{}", self.inner.name),
            None => self.inner.name.clone(),
        }
    }

    /// A skill from its files, its frontmatter parsed from `SKILL.md`
    /// (feature `skills`).
    #[cfg(feature = "skills")]
    pub fn from_files(files: impl IntoIterator<Item = SkillFile>) -> Result<Skill, SkillError> {
        let files: Vec<SkillFile> = files.into_iter().collect();
        let skill_md = files
            .iter()
            .find(|file| file.path == SKILL_MD)
            .ok_or_else(|| invalid("?", "it has no SKILL.md at its root"))?;
        let bytes = skill_md.read()?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| invalid("?", "its SKILL.md is not UTF-8 text"))?;
        let frontmatter = parse_frontmatter(text).map_err(|reason| invalid("?", reason))?;
        Skill::new(frontmatter, files)
    }

    /// The skill's name (the frontmatter's `name`, and its folder's).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The frontmatter's `description`.
    pub fn description(&self) -> &str {
        &self.inner.description
    }

    /// The frontmatter as written in `SKILL.md`, every field.
    pub fn frontmatter(&self) -> &Map<String, Value> {
        &self.inner.frontmatter
    }

    /// Its files, sorted by path.
    pub fn files(&self) -> &[SkillFile] {
        &self.inner.files
    }

    /// `skill://<name>/SKILL.md`: what `skills/get` takes.
    pub fn uri(&self) -> String {
        self.file_uri(SKILL_MD)
    }

    /// The URI of the file at `path`: `skill://<name>/<path>` (with the
    /// namespace before the name, if any).
    pub fn file_uri(&self, path: &str) -> String {
        format!("{SKILL_SCHEME}{}/{path}", self.path())
    }

    /// `skill://<name>` (with the namespace before the name, if any): the
    /// skill's folder, for `resources/directory/read`.
    pub fn folder_uri(&self) -> String {
        format!("{SKILL_SCHEME}{}", self.path())
    }

    /// The file `uri` names, if it is one of this skill's.
    pub fn file_at(&self, uri: &str) -> Option<&SkillFile> {
        let path = self.path_of(uri)?;
        self.inner.files.iter().find(|file| file.path == path)
    }

    /// The path inside this skill that `uri` names (`""` for its root).
    fn path_of<'u>(&self, uri: &'u str) -> Option<&'u str> {
        let rest = uri.strip_prefix(SKILL_SCHEME)?;
        let rest = match &self.inner.namespace {
            Some(namespace) => rest.strip_prefix(namespace.as_str())?.strip_prefix('/')?,
            None => rest,
        };
        let rest = rest.strip_prefix(self.inner.name.as_str())?;
        if rest.is_empty() {
            return Some("");
        }
        rest.strip_prefix('/')
    }

    /// The direct children of the directory `uri` names (`skill://<name>`
    /// or a folder inside it), or `None` if it names no directory of this
    /// skill. Folders come as [`SkillEntry::Directory`].
    pub fn directory(&self, uri: &str) -> Option<Vec<SkillEntry>> {
        let dir = self.path_of(uri)?.trim_end_matches('/');
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut entries: Vec<SkillEntry> = Vec::new();
        let mut found = dir.is_empty();
        for file in &self.inner.files {
            let Some(rest) = file.path.strip_prefix(prefix.as_str()) else {
                continue;
            };
            found = true;
            match rest.split_once('/') {
                None => entries.push(SkillEntry::File(file.clone())),
                Some((folder, _)) => {
                    let path = format!("{prefix}{folder}");
                    let seen = entries
                        .iter()
                        .any(|e| matches!(e, SkillEntry::Directory(p) if *p == path));
                    if !seen {
                        entries.push(SkillEntry::Directory(path));
                    }
                }
            }
        }
        found.then_some(entries)
    }
}

/// A child of a skill's directory.
#[derive(Clone, Debug)]
pub enum SkillEntry {
    /// A file.
    File(SkillFile),
    /// A folder: its path inside the skill.
    Directory(String),
}

impl SkillEntry {
    /// Its path inside the skill.
    pub fn path(&self) -> &str {
        match self {
            SkillEntry::File(file) => file.path(),
            SkillEntry::Directory(path) => path,
        }
    }
}

/// The skills of a folder: each sub-folder holding a `SKILL.md` is one,
/// named after the folder (feature `skills`).
#[cfg(feature = "skills")]
impl Skill {
    /// Reads every skill in `root` (see [`Skill::load`] for one): each
    /// sub-folder must hold a `SKILL.md` whose frontmatter's `name` is the
    /// folder's; names starting with `.` are skipped. Digests are taken
    /// now; files are read again each time they are served.
    pub fn load_dir(root: impl Into<PathBuf>) -> Result<Vec<Skill>, SkillError> {
        dir::load_dir(&root.into())
    }

    /// Reads the one skill in `folder`, named after it.
    pub fn load(folder: impl Into<PathBuf>) -> Result<Skill, SkillError> {
        dir::load_skill(&folder.into())
    }
}

/// Skills the macro embedded: checked at compile time, so made without
/// checks.
#[doc(hidden)]
pub fn embedded(
    name: &'static str,
    frontmatter_json: &'static str,
    files: &'static [(&'static str, &'static [u8])],
) -> Skill {
    let frontmatter: Map<String, Value> =
        serde_json::from_str(frontmatter_json).unwrap_or_default();
    let description = frontmatter
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut files: Vec<SkillFile> = files
        .iter()
        .map(|(path, bytes)| SkillFile::new(*path, *bytes))
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Skill {
        inner: Arc::new(SkillInner {
            namespace: None,
            name: name.to_owned(),
            description,
            frontmatter,
            files,
        }),
    }
}

#[cfg(test)]
mod tests;
