//! `embed_skills!`'s front end: the folders it names, read at compile time
//! into a model of each skill (its frontmatter as JSON, its files), and
//! every rule a skill must keep checked, each error on the folder's
//! string literal.
//!
//! A folder of skills holds one sub-folder per skill; each must have a
//! `SKILL.md` whose YAML frontmatter parses, names the skill after its
//! folder (the Agent Skills naming rule) and describes it; names are
//! unique across every folder given. Names starting with `.` are skipped,
//! as are symbolic links; loose files in the folder of skills are not
//! skills and are skipped too.

use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{LitStr, Token};

use super::errors::Errors;
use crate::rules::{check_skill_description, check_skill_name, frontmatter_block, SKILL_FILE};

/// Files per skill hosts load (SEP-2640).
const MAX_FILES: usize = 512;
/// Bytes per skill hosts load (SEP-2640).
const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The macro's input: one or more folder paths (see [`resolve`]).
struct Folders(Punctuated<LitStr, Token![,]>);

impl Parse for Folders {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        Ok(Folders(Punctuated::parse_terminated(input)?))
    }
}

/// One skill, checked.
pub struct SkillModel {
    pub name: String,
    /// The frontmatter, as JSON text.
    pub frontmatter: String,
    /// Each file's path inside the skill and its absolute path.
    pub files: Vec<(String, PathBuf)>,
}

/// Reads and checks every skill of the folders `input` names.
pub fn skills(input: TokenStream) -> syn::Result<Vec<SkillModel>> {
    let folders: Folders = syn::parse2(input)?;
    if folders.0.is_empty() {
        return Err(syn::Error::new(
            proc_macro2::Span::call_site(),
            "`embed_skills!` takes the folder of skills, relative to Cargo.toml: \
             `embed_skills!(\"skills\")`",
        ));
    }
    let mut errors = Errors::default();
    let mut skills: Vec<SkillModel> = Vec::new();
    for literal in &folders.0 {
        let read = match resolve(&literal.value()).and_then(|root| read_folder(&root)) {
            Ok(read) => read,
            Err(message) => {
                errors.push_spanned(literal, message);
                continue;
            }
        };
        for result in read {
            match result {
                Ok(skill) => {
                    if skills.iter().any(|s| s.name == skill.name) {
                        errors.push_spanned(
                            literal,
                            format!(
                                "skill `{}` is already embedded from an earlier folder: skill \
                                 names must be unique, rename one of the two folders (and its \
                                 `name`)",
                                skill.name
                            ),
                        );
                    } else {
                        skills.push(skill);
                    }
                }
                Err(message) => errors.push_spanned(literal, message),
            }
        }
    }
    errors.finish()?;
    Ok(skills)
}

/// Where the folder `path` is: relative to the crate's `Cargo.toml`, or,
/// for `$NAME/rest`, to the folder in the environment variable `NAME` at
/// compile time (`$OUT_DIR/skills` for skills a build script writes).
fn resolve(path: &str) -> Result<PathBuf, String> {
    if let Some(rest) = path.strip_prefix('$') {
        let (var, tail) = rest.split_once('/').unwrap_or((rest, ""));
        let base = std::env::var(var).map_err(|_| {
            format!(
                "the environment variable `{var}` is not set at compile time: set it, or give \
                 the folder relative to the crate's Cargo.toml"
            )
        })?;
        return Ok(Path::new(&base).join(tail));
    }
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned());
    Ok(Path::new(&manifest_dir).join(path))
}

/// Every skill of the folder `root`, each checked (`Err` for one says
/// what is wrong with it); `Err` if the folder cannot be read.
fn read_folder(root: &Path) -> Result<Vec<Result<SkillModel, String>>, String> {
    let mut folders = Vec::new();
    for entry in entries(root).map_err(|e| {
        format!(
            "cannot read the folder of skills {}: {e}; the path is relative to the crate's \
             Cargo.toml",
            root.display()
        )
    })? {
        if entry.1 == Kind::Dir {
            folders.push(entry.0);
        }
    }
    folders.sort();
    Ok(folders.iter().map(|folder| read_skill(folder)).collect())
}

#[derive(PartialEq)]
enum Kind {
    Dir,
    File,
}

/// The entries of `dir` that a skill serves: no names starting with
/// `.`, no symbolic links.
fn entries(dir: &Path) -> std::io::Result<Vec<(PathBuf, Kind)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let hidden = entry
            .file_name()
            .to_str()
            .is_none_or(|n| n.starts_with('.'));
        let kind = entry.file_type()?;
        if hidden {
            continue;
        }
        if kind.is_dir() {
            out.push((entry.path(), Kind::Dir));
        } else if kind.is_file() {
            out.push((entry.path(), Kind::File));
        }
    }
    Ok(out)
}

fn read_skill(folder: &Path) -> Result<SkillModel, String> {
    let folder_name = folder
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let skill_md = folder.join(SKILL_FILE);
    if !skill_md.is_file() {
        return Err(format!(
            "the skill folder `{folder_name}` has no SKILL.md: add one with \
             `name: {folder_name}` and a `description` in its YAML frontmatter, or move the \
             folder out"
        ));
    }
    let text = std::fs::read_to_string(&skill_md)
        .map_err(|e| format!("cannot read {}: {e}", skill_md.display()))?;
    let yaml = frontmatter_block(&text).ok_or_else(|| {
        format!(
            "the SKILL.md of `{folder_name}` has no frontmatter: open it with a line `---`, then \
             `name: {folder_name}` and `description: ...`, then a line `---`"
        )
    })?;
    let frontmatter = match yaml_serde::from_str::<serde_json::Value>(yaml) {
        Ok(serde_json::Value::Object(map)) => map,
        Ok(_) => {
            return Err(format!(
                "the frontmatter of `{folder_name}`'s SKILL.md is not a YAML mapping: write \
                 `key: value` lines, with `name` and `description`"
            ))
        }
        Err(e) => {
            return Err(format!(
                "the frontmatter of `{folder_name}`'s SKILL.md is not valid YAML: {e}"
            ))
        }
    };
    let name = match frontmatter.get("name") {
        Some(serde_json::Value::String(name)) => name.clone(),
        _ => {
            return Err(format!(
                "the frontmatter of `{folder_name}`'s SKILL.md has no `name` string: add \
                 `name: {folder_name}`"
            ))
        }
    };
    check_skill_name(&name).map_err(|reason| format!("skill `{folder_name}`: {reason}"))?;
    if name != folder_name {
        return Err(format!(
            "the SKILL.md in folder `{folder_name}` is named `{name}`: a skill's name must be \
             its folder's, so rename the folder or set `name: {folder_name}`"
        ));
    }
    let description = frontmatter.get("description").and_then(|d| d.as_str());
    check_skill_description(description).map_err(|reason| format!("skill `{name}`: {reason}"))?;
    let mut files = Vec::new();
    walk(folder, "", &mut files).map_err(|e| format!("cannot read skill `{name}`: {e}"))?;
    files.sort();
    if files.len() > MAX_FILES {
        return Err(format!(
            "skill `{name}` has {} files, over the {MAX_FILES} hosts load: split it",
            files.len()
        ));
    }
    let mut total = 0u64;
    for (_, path) in &files {
        total += std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    }
    if total > MAX_BYTES {
        return Err(format!(
            "skill `{name}`'s files add up to {total} bytes, over the {MAX_BYTES} hosts load: \
             split it or move large files out"
        ));
    }
    Ok(SkillModel {
        name,
        frontmatter: serde_json::Value::Object(frontmatter).to_string(),
        files,
    })
}

fn walk(dir: &Path, prefix: &str, files: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
    for (path, kind) in entries(dir)? {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let relative = format!("{prefix}{name}");
        match kind {
            Kind::Dir => walk(&path, &format!("{relative}/"), files)?,
            Kind::File => files.push((relative, path)),
        }
    }
    Ok(())
}
