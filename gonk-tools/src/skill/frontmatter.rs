//! A `SKILL.md`'s frontmatter: the YAML block between the `---` lines it
//! opens with, as a JSON object (what `skills/list` publishes verbatim).

use serde_json::{Map, Value};

/// The YAML frontmatter `SKILL.md` opens with, as a JSON object: the text
/// between a first line `---` and the next line `---` (a byte-order mark
/// first is skipped). `Err` says what is wrong: no frontmatter, YAML that
/// does not parse, or a frontmatter that is not a mapping.
pub fn parse_frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let yaml = crate::definition::name::frontmatter_block(text).ok_or_else(|| {
        "SKILL.md must open with YAML frontmatter: a line `---`, `name: ...` and \
         `description: ...`, then a line `---`"
            .to_owned()
    })?;
    let value: Value = yaml_serde::from_str(yaml)
        .map_err(|error| format!("its frontmatter is not valid YAML: {error}"))?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err("its frontmatter must be a YAML mapping (`key: value` lines)".to_owned()),
    }
}
