//! The skills extension (SEP-2640) on the wire: `skills/list` (paged, with
//! cache hints), `skills/get`, `resources/directory/read`, and each skill
//! file as a `skill://` resource — the `SKILL.md`s listed among the
//! resources, every file readable. The registry holds the skills
//! ([`crate::skill`]); this module speaks the wire.

use rmcp::model::{
    CacheScope, GetSkillResult, ListSkillsResult, ReadResourceDirectoryResult, ReadResourceResult,
    Resource, ResourceContents, ResultType, SKILLS_EXTENSION_ID,
};
use rmcp::ErrorData;
use serde_json::{json, Value};

use super::resources::page;
use crate::registry::ToolRegistry;
use crate::skill::{Skill, SkillEntry, SkillFile, DIRECTORY_MIME_TYPE, SKILL_MD};

/// Skills are the same for every caller and change only when the
/// registry's do (subscribers hear of it): nothing to keep, anyone may.
fn hints() -> (u64, CacheScope) {
    (0, CacheScope::Public)
}

/// Declares the extension (with `directoryRead`) in `capabilities`; the
/// files are resources, so the resources capability comes with it.
pub(crate) fn declare(capabilities: &mut rmcp::model::ServerCapabilities) {
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(
            SKILLS_EXTENSION_ID.to_owned(),
            json!({ "directoryRead": true })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
    if capabilities.resources.is_none() {
        let mut resources = rmcp::model::ResourcesCapability::default();
        resources.list_changed = Some(true);
        capabilities.resources = Some(resources);
    }
}

/// A skill entry as `skills/list` and `skills/get` show it: its
/// `SKILL.md` URI, the frontmatter verbatim, and every file with its
/// digest and size.
fn entry(skill: &Skill) -> Result<rmcp::model::Skill, ErrorData> {
    let resources: Vec<Value> = skill
        .files()
        .iter()
        .map(|file| {
            json!({
                "uri": skill.file_uri(file.path()),
                "digest": file.digest(),
                "size": file.size(),
            })
        })
        .collect();
    serde_json::from_value(json!({
        "uri": skill.uri(),
        "frontmatter": skill.frontmatter(),
        "resources": resources,
    }))
    .map_err(|e| ErrorData::internal_error(format!("cannot project skill to MCP: {e}"), None))
}

pub(crate) fn list(
    registry: &ToolRegistry,
    cursor: Option<&str>,
) -> Result<ListSkillsResult, ErrorData> {
    let (skills, next) = page(registry.skills(), cursor)?;
    let skills = skills.iter().map(entry).collect::<Result<_, _>>()?;
    let (ttl, scope) = hints();
    let mut result = ListSkillsResult::with_all_items(skills)
        .with_ttl_ms(ttl)
        .with_cache_scope(scope);
    result.next_cursor = next;
    Ok(result)
}

pub(crate) fn get(registry: &ToolRegistry, uri: &str) -> Result<GetSkillResult, ErrorData> {
    let skill = registry.skill(uri).ok_or_else(|| {
        ErrorData::invalid_params(
            format!("No skill at {uri}: skills/list gives the URI of each skill's SKILL.md"),
            Some(json!({ "uri": uri })),
        )
    })?;
    let (ttl, scope) = hints();
    Ok(GetSkillResult::new(entry(&skill)?)
        .with_ttl_ms(ttl)
        .with_cache_scope(scope))
}

fn file_resource(skill: &Skill, file: &SkillFile) -> Resource {
    let name = file.path().rsplit('/').next().unwrap_or(file.path());
    let mut resource = Resource::new(skill.file_uri(file.path()), name).with_size(file.size());
    resource.mime_type = file.mime_type().map(Into::into);
    resource
}

pub(crate) fn read_directory(
    registry: &ToolRegistry,
    uri: &str,
    cursor: Option<&str>,
) -> Result<ReadResourceDirectoryResult, ErrorData> {
    let not_a_directory = || {
        ErrorData::invalid_params(
            format!("{uri} is not a directory of a skill this server serves"),
            Some(json!({ "uri": uri })),
        )
    };
    let skill = registry.skill_at(uri).ok_or_else(not_a_directory)?;
    let entries = skill.directory(uri).ok_or_else(not_a_directory)?;
    let children: Vec<Resource> = entries
        .iter()
        .map(|entry| match entry {
            SkillEntry::File(file) => file_resource(&skill, file),
            SkillEntry::Directory(path) => {
                let name = path.rsplit('/').next().unwrap_or(path);
                Resource::new(skill.file_uri(path), name).with_mime_type(DIRECTORY_MIME_TYPE)
            }
        })
        .collect();
    let (children, next) = page(children, cursor)?;
    let (ttl, scope) = hints();
    let mut result = ReadResourceDirectoryResult::with_all_items(children)
        .with_ttl_ms(ttl)
        .with_cache_scope(scope);
    result.next_cursor = next;
    Ok(result)
}

/// The `SKILL.md` of each skill, for `resources/list`: named and
/// described by its frontmatter.
pub(crate) fn listed(registry: &ToolRegistry) -> Vec<Resource> {
    registry
        .skills()
        .iter()
        .filter_map(|skill| {
            let file = skill.files().iter().find(|f| f.path() == SKILL_MD)?;
            let mut resource = file_resource(skill, file);
            resource.name = skill.name().to_owned();
            resource.description = Some(skill.description().to_owned());
            Some(resource)
        })
        .collect()
}

/// `resources/read` of a skill file, or `None` when `uri` names none.
/// Text when the bytes are UTF-8 text, else a blob; the bytes are
/// today's, so a file changed on disk since its skill was loaded no
/// longer matches the digest its entry gives (and a client refuses it).
pub(crate) fn read(
    registry: &ToolRegistry,
    uri: &str,
) -> Option<Result<ReadResourceResult, ErrorData>> {
    let (_, file) = registry.skill_file(uri)?;
    Some(read_file(uri, &file))
}

fn read_file(uri: &str, file: &SkillFile) -> Result<ReadResourceResult, ErrorData> {
    let bytes = file.read().map_err(|error| {
        tracing::warn!(%uri, %error, "a skill file cannot be read");
        ErrorData::internal_error(
            format!("The skill file {uri} cannot be read now; ask the server's operator"),
            None,
        )
    })?;
    let text = std::str::from_utf8(&bytes)
        .ok()
        .filter(|text| !text.contains('\0'));
    let contents = match text {
        Some(text) => ResourceContents::text(text, uri),
        None => {
            use base64::Engine as _;
            ResourceContents::blob(
                base64::engine::general_purpose::STANDARD.encode(&bytes),
                uri,
            )
        }
    };
    let contents = match file.mime_type() {
        Some(mime_type) => contents.with_mime_type(mime_type),
        None => contents,
    };
    let (ttl, scope) = hints();
    let mut result = ReadResourceResult::new(vec![contents]);
    result.result_type = Some(ResultType::COMPLETE);
    result.ttl_ms = Some(ttl);
    result.cache_scope = Some(scope);
    Ok(result)
}
