//! The built-in `list` subcommand: the tools grouped by category, with
//! "(uncategorized)" last.

use std::collections::BTreeMap;

use serde_json::json;

/// One listed tool.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// Its subcommand name.
    pub(crate) command: String,
    /// The registered name.
    pub(crate) name: String,
    /// Its category.
    pub(crate) category: Option<String>,
    /// Its advertised description.
    pub(crate) description: String,
}

/// The heading of tools without a category.
pub(crate) const UNCATEGORIZED: &str = "(uncategorized)";

fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// Groups in display order: categories alphabetically, then uncategorized;
/// tools in registration order within a group.
fn groups(entries: &[Entry]) -> Vec<(&str, Vec<&Entry>)> {
    let mut named: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
    let mut rest = Vec::new();
    for entry in entries {
        match entry.category.as_deref().map(str::trim) {
            Some(category) if !category.is_empty() => {
                named.entry(category).or_default().push(entry)
            }
            _ => rest.push(entry),
        }
    }
    let mut groups: Vec<(&str, Vec<&Entry>)> = named.into_iter().collect();
    if !rest.is_empty() {
        groups.push((UNCATEGORIZED, rest));
    }
    groups
}

/// The listing for people.
pub(crate) fn render_text(entries: &[Entry]) -> String {
    if entries.is_empty() {
        return "No tools.\n".to_owned();
    }
    let width = entries
        .iter()
        .map(|e| e.command.chars().count())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for (i, (category, entries)) in groups(entries).into_iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(category);
        text.push_str(":\n");
        for entry in entries {
            let description = first_line(&entry.description);
            let line = format!("  {:<width$}  {description}", entry.command);
            text.push_str(line.trim_end());
            text.push('\n');
        }
    }
    text
}

/// The listing as JSON Lines, one tool per line, in the same order.
pub(crate) fn render_json(entries: &[Entry]) -> String {
    let mut text = String::new();
    for (category, entries) in groups(entries) {
        for entry in entries {
            let category = (category != UNCATEGORIZED).then_some(category);
            let line = json!({
                "name": entry.name,
                "command": entry.command,
                "category": category,
                "description": entry.description,
            });
            text.push_str(&line.to_string());
            text.push('\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(command: &str, category: Option<&str>, description: &str) -> Entry {
        Entry {
            command: command.into(),
            name: command.into(),
            category: category.map(Into::into),
            description: description.into(),
        }
    }

    #[test]
    fn groups_are_sorted_with_uncategorized_last() {
        let entries = [
            entry("z.loose", None, "Loose tool.\nMore text."),
            entry("notes.b", Some("notes"), "B."),
            entry("admin.x", Some("admin"), "X."),
            entry("notes.a", Some("notes"), "A."),
            entry("blank", Some("  "), ""),
        ];
        assert_eq!(
            render_text(&entries),
            "admin:\n  admin.x  X.\n\nnotes:\n  notes.b  B.\n  notes.a  A.\n\n(uncategorized):\n  z.loose  Loose tool.\n  blank\n"
        );
        let json = render_json(&entries);
        let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
        assert_eq!(first["name"], "admin.x");
        let last: serde_json::Value = serde_json::from_str(json.lines().last().unwrap()).unwrap();
        assert_eq!(last["category"], serde_json::Value::Null);
    }
}
