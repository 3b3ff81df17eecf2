//! Skills from a server (the skills extension, SEP-2640): listing and
//! getting entries, and loading a skill — reading its files only then, and
//! refusing every file whose size or digest is not the entry's, and a
//! `SKILL.md` whose frontmatter is not the entry's.

use rmcp::model::{GetSkillRequestParams, ResourceContents, SkillResource, SkillResources};
use serde_json::{Map, Value};

use super::{McpClient, McpClientError};
use crate::skill::{parse_frontmatter, Skill, SkillFile, SKILL_MD};

/// A skill entry as the server lists it (`skills/list`, `skills/get`).
pub use rmcp::model::Skill as McpSkillEntry;

/// Why a skill could not be loaded: nothing of it is used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpSkillError {
    /// A request failed.
    #[error(transparent)]
    Request(#[from] McpClientError),
    /// A file is not what the entry promised (size, digest, or the
    /// `SKILL.md` frontmatter): the server changed it, or someone on the
    /// way did. Load the entry again (`skills/get`) and retry, or stop.
    #[error("skill file {uri} fails verification: {reason}")]
    Verification {
        /// The file.
        uri: String,
        /// What differs.
        reason: String,
    },
    /// The entry cannot be loaded as it is: `"dynamic"` resources (no
    /// digests to check against), or files that do not make a skill.
    #[error("skill {uri} cannot be loaded: {reason}")]
    Unusable {
        /// The skill's `SKILL.md` URI.
        uri: String,
        /// Why.
        reason: String,
    },
}

impl McpClient {
    /// The server's skills (`skills/list`, every page): entries only —
    /// no file is read until [`load_skill`](Self::load_skill). Refused
    /// (`-32601`) without a request when the server does not declare the
    /// skills extension.
    pub async fn list_skills(&self) -> Result<Vec<McpSkillEntry>, McpClientError> {
        Ok(self.service.peer().list_all_skills().await?)
    }

    /// One skill's entry by the URI of its `SKILL.md` (`skills/get`).
    pub async fn get_skill(&self, uri: &str) -> Result<McpSkillEntry, McpClientError> {
        let got = self
            .service
            .peer()
            .get_skill(GetSkillRequestParams::new(uri))
            .await?;
        Ok(got.skill)
    }

    /// Loads the skill `entry` describes: reads its `SKILL.md` first and
    /// checks its size, then its digest, then that its frontmatter is the
    /// entry's, field by field; then each other file, size and digest. The
    /// first file that fails stops the load (no later file is read) with
    /// [`McpSkillError::Verification`]. The result is a [`Skill`] of the
    /// verified bytes, its paths relative to the skill.
    pub async fn load_skill(&self, entry: &McpSkillEntry) -> Result<Skill, McpSkillError> {
        let unusable = |reason: &str| McpSkillError::Unusable {
            uri: entry.uri.clone(),
            reason: reason.to_owned(),
        };
        let SkillResources::Files(listed) = &entry.resources else {
            return Err(unusable(
                "its resources are \"dynamic\": there are no digests to verify them against",
            ));
        };
        let root = entry
            .uri
            .strip_suffix(SKILL_MD)
            .ok_or_else(|| unusable("its URI does not end in /SKILL.md"))?;
        let skill_md = listed
            .iter()
            .find(|file| file.uri == entry.uri)
            .ok_or_else(|| unusable("its resources do not list its own SKILL.md"))?;
        // SKILL.md first: a tampered one stops the load before anything
        // else is fetched.
        let bytes = self.verified(skill_md).await?;
        let expected = serde_json::to_value(&entry.frontmatter)
            .ok()
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default();
        check_frontmatter(&entry.uri, &bytes, &expected)?;
        let mut files = vec![SkillFile::new(SKILL_MD, bytes)];
        for listed in listed.iter().filter(|file| file.uri != entry.uri) {
            let path = listed
                .uri
                .strip_prefix(root)
                .ok_or_else(|| unusable(&format!("{} is outside the skill", listed.uri)))?;
            let bytes = self.verified(listed).await?;
            files.push(SkillFile::new(path.to_owned(), bytes));
        }
        Skill::new(expected, files).map_err(|error| unusable(&error.to_string()))
    }

    /// The bytes of the file `listed` names, if they are its size and
    /// digest.
    async fn verified(&self, listed: &SkillResource) -> Result<Vec<u8>, McpSkillError> {
        let read = self
            .service
            .peer()
            .read_resource(rmcp::model::ReadResourceRequestParams::new(&listed.uri))
            .await
            .map_err(McpClientError::from)?;
        let contents =
            read.contents
                .into_iter()
                .next()
                .ok_or_else(|| McpSkillError::Verification {
                    uri: listed.uri.clone(),
                    reason: "the server returned no contents".to_owned(),
                })?;
        let bytes = match contents {
            ResourceContents::TextResourceContents { text, .. } => text.into_bytes(),
            ResourceContents::BlobResourceContents { blob, .. } => {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD
                    .decode(blob)
                    .map_err(|e| McpSkillError::Verification {
                        uri: listed.uri.clone(),
                        reason: format!("its blob is not base64: {e}"),
                    })?
            }
            _ => {
                return Err(McpSkillError::Verification {
                    uri: listed.uri.clone(),
                    reason: "the server returned neither text nor a blob".to_owned(),
                })
            }
        };
        listed
            .verify(&bytes)
            .map_err(|error| McpSkillError::Verification {
                uri: listed.uri.clone(),
                reason: error.to_string(),
            })?;
        Ok(bytes)
    }
}

/// The `SKILL.md` in `bytes` has exactly the frontmatter of its entry.
fn check_frontmatter(
    uri: &str,
    bytes: &[u8],
    expected: &Map<String, Value>,
) -> Result<(), McpSkillError> {
    let fails = |reason: String| McpSkillError::Verification {
        uri: uri.to_owned(),
        reason,
    };
    let text = std::str::from_utf8(bytes).map_err(|_| fails("it is not UTF-8 text".into()))?;
    let found = parse_frontmatter(text).map_err(fails)?;
    let keys: std::collections::BTreeSet<&String> = found.keys().chain(expected.keys()).collect();
    for key in keys {
        let (file, listed) = (found.get(key), expected.get(key));
        if file != listed {
            return Err(fails(format!(
                "its frontmatter's `{key}` is {} in the file and {} in the entry",
                file.map_or("absent".into(), Value::to_string),
                listed.map_or("absent".into(), Value::to_string),
            )));
        }
    }
    Ok(())
}
