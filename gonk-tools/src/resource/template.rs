//! URI templates (RFC 6570, levels 1 and 2): `{var}`, `{+var}` and
//! `{#var}` — parsed once when a resource is registered, then used both
//! ways: to match a URI a client reads (its variables, decoded) and to
//! expand variables into a URI (the typed client).

use std::fmt;

use serde_json::{Map, Value};

/// A parsed URI template: literal text and `{var}`, `{+var}`, `{#var}`
/// expressions, one variable each.
///
/// ```
/// use gonk_tools::resource::UriTemplate;
///
/// let template = UriTemplate::parse("notes://{id}/tags/{tag}").unwrap();
/// assert_eq!(template.variables().collect::<Vec<_>>(), ["id", "tag"]);
/// let vars = template.matches("notes://12/tags/rust%20lang").unwrap();
/// assert_eq!(vars["tag"], "rust lang");
/// assert_eq!(template.expand(&vars), "notes://12/tags/rust%20lang");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expression { operator: Operator, name: String },
}

/// The level 1–2 expression kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operator {
    /// `{var}`: unreserved characters kept, everything else
    /// percent-encoded; matches up to the next `/`, `?` or `#`.
    Simple,
    /// `{+var}`: reserved characters kept too; matches across `/`.
    Reserved,
    /// `{#var}`: `#` then a reserved expansion.
    Fragment,
}

/// Why a URI template was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template `{template}`: {reason}")]
pub struct TemplateError {
    template: String,
    reason: String,
}

impl TemplateError {
    fn new(template: &str, reason: impl Into<String>) -> Self {
        TemplateError {
            template: template.to_owned(),
            reason: reason.into(),
        }
    }

    /// What is wrong, without the template.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl UriTemplate {
    /// Parses `text`. Only levels 1 and 2 are supported: one variable per
    /// expression, operators `+` and `#`, no modifiers; anything else is
    /// refused with a message saying which forms are supported.
    pub fn parse(text: &str) -> Result<UriTemplate, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = text;
        let mut names: Vec<String> = Vec::new();
        while let Some(open) = rest.find(['{', '}']) {
            if rest.as_bytes()[open] == b'}' {
                return Err(TemplateError::new(text, "`}` without a matching `{`"));
            }
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let after = &rest[open + 1..];
            let close = after
                .find(['{', '}'])
                .filter(|&i| after.as_bytes()[i] == b'}')
                .ok_or_else(|| TemplateError::new(text, "`{` is never closed with `}`"))?;
            let body = &after[..close];
            let (operator, name) = match body.as_bytes().first() {
                Some(b'+') => (Operator::Reserved, &body[1..]),
                Some(b'#') => (Operator::Fragment, &body[1..]),
                Some(op @ (b'?' | b'&' | b'/' | b'.' | b';' | b'=' | b',' | b'!' | b'@' | b'|')) => {
                    return Err(TemplateError::new(
                        text,
                        format!(
                            "the `{}` operator is RFC 6570 level 3 or 4; supported are {{var}}, {{+var}} and {{#var}}",
                            *op as char
                        ),
                    ))
                }
                _ => (Operator::Simple, body),
            };
            check_name(text, name)?;
            if names.iter().any(|n| n == name) {
                return Err(TemplateError::new(
                    text,
                    format!("variable `{name}` appears twice"),
                ));
            }
            names.push(name.to_owned());
            parts.push(Part::Expression {
                operator,
                name: name.to_owned(),
            });
            rest = &after[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(UriTemplate {
            text: text.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the template has no variables (a fixed URI).
    pub fn is_fixed(&self) -> bool {
        self.variables().next().is_none()
    }

    /// The variables, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> + '_ {
        self.parts.iter().filter_map(|p| match p {
            Part::Expression { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The variables of `uri` (percent-decoded) if it matches the
    /// template, else `None`. A `{var}` matches one or more characters up
    /// to the next `/`, `?` or `#`; `{+var}` and `{#var}` match across
    /// them. Matching is by backtracking, so a literal after a reserved
    /// variable is found wherever it is.
    pub fn matches(&self, uri: &str) -> Option<Map<String, Value>> {
        let mut vars = Map::new();
        match_parts(&self.parts, uri, &mut vars).then_some(vars)
    }

    /// Expands the template with `vars` (strings, numbers and booleans;
    /// a missing variable expands to nothing, as RFC 6570 says).
    pub fn expand(&self, vars: &Map<String, Value>) -> String {
        let mut out = String::with_capacity(self.text.len());
        for part in &self.parts {
            match part {
                Part::Literal(text) => out.push_str(text),
                Part::Expression { operator, name } => {
                    let value = match vars.get(name) {
                        None | Some(Value::Null) => continue,
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                    };
                    if *operator == Operator::Fragment {
                        out.push('#');
                    }
                    encode(&value, *operator != Operator::Simple, &mut out);
                }
            }
        }
        out
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn check_name(template: &str, name: &str) -> Result<(), TemplateError> {
    if name.is_empty() {
        return Err(TemplateError::new(
            template,
            "an expression `{}` names no variable",
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
    {
        let reason = match c {
            ':' | '*' => format!(
                "variable `{name}` has a modifier (`{c}`), which is RFC 6570 level 4; supported are {{var}}, {{+var}} and {{#var}}"
            ),
            ',' => format!("`{name}` names several variables; use one variable per expression"),
            _ => format!("variable `{name}` has `{c}`; a variable name is letters, digits and `_`"),
        };
        return Err(TemplateError::new(template, reason));
    }
    Ok(())
}

fn match_parts(parts: &[Part], uri: &str, vars: &mut Map<String, Value>) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(text) => uri
            .strip_prefix(text.as_str())
            .is_some_and(|tail| match_parts(rest, tail, vars)),
        Part::Expression { operator, name } => {
            let uri = match operator {
                Operator::Fragment => match uri.strip_prefix('#') {
                    Some(tail) => tail,
                    None => return false,
                },
                _ => uri,
            };
            let stop = match operator {
                Operator::Simple => uri.find(['/', '?', '#']).unwrap_or(uri.len()),
                _ => uri.len(),
            };
            // Longest first: a variable takes what it can, then gives back.
            for end in (1..=stop).rev() {
                if !uri.is_char_boundary(end) {
                    continue;
                }
                if match_parts(rest, &uri[end..], vars) {
                    let Some(value) = decode(&uri[..end]) else {
                        return false;
                    };
                    vars.insert(name.clone(), Value::String(value));
                    return true;
                }
            }
            false
        }
    }
}

/// RFC 3986 unreserved characters; with `reserved`, the reserved set too.
fn encode(value: &str, reserved: bool, out: &mut String) {
    for byte in value.bytes() {
        let keep = byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'.' | b'_' | b'~')
            || (reserved && b":/?#[]@!$&'()*+,;=".contains(&byte));
        if keep {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
}

/// Percent-decodes; `None` when the result is not UTF-8 or an escape is cut.
fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Map<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect()
    }

    #[test]
    fn simple_variables_stop_at_slashes() {
        let t = UriTemplate::parse("notes://{id}").unwrap();
        assert_eq!(t.matches("notes://12"), Some(vars(&[("id", "12")])));
        assert_eq!(t.matches("notes://12/x"), None);
        assert_eq!(t.matches("notes://"), None);
        assert_eq!(t.matches("other://12"), None);
    }

    #[test]
    fn reserved_variables_cross_slashes() {
        let t = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(
            t.matches("file:///a/b.txt"),
            Some(vars(&[("path", "a/b.txt")]))
        );
        assert_eq!(t.expand(&vars(&[("path", "a/b c")])), "file:///a/b%20c");
    }

    #[test]
    fn literal_after_reserved_variable_backtracks() {
        let t = UriTemplate::parse("repo://{+path}/blame").unwrap();
        assert_eq!(
            t.matches("repo://src/lib.rs/blame"),
            Some(vars(&[("path", "src/lib.rs")]))
        );
    }

    #[test]
    fn fragments() {
        let t = UriTemplate::parse("doc://page{#section}").unwrap();
        assert_eq!(
            t.matches("doc://page#intro"),
            Some(vars(&[("section", "intro")]))
        );
        assert_eq!(t.expand(&vars(&[("section", "a b")])), "doc://page#a%20b");
    }

    #[test]
    fn simple_expansion_encodes_reserved_characters() {
        let t = UriTemplate::parse("notes://{id}").unwrap();
        assert_eq!(t.expand(&vars(&[("id", "a/b?c")])), "notes://a%2Fb%3Fc");
        assert_eq!(
            t.matches(&t.expand(&vars(&[("id", "a/b?c")]))),
            Some(vars(&[("id", "a/b?c")]))
        );
    }

    #[test]
    fn bad_escapes_do_not_match() {
        let t = UriTemplate::parse("notes://{id}").unwrap();
        assert_eq!(t.matches("notes://%ff"), None);
        assert_eq!(t.matches("notes://%4"), None);
    }

    #[test]
    fn refusals_say_what_is_supported() {
        for (text, needle) in [
            ("notes://{id", "never closed"),
            ("notes://id}", "without a matching"),
            ("notes://{}", "names no variable"),
            ("notes://{?q}", "level 3 or 4"),
            ("notes://{id:3}", "modifier"),
            ("notes://{a,b}", "several variables"),
            ("notes://{a-b}", "letters, digits"),
            ("notes://{id}/{id}", "appears twice"),
        ] {
            let error = UriTemplate::parse(text).unwrap_err();
            assert!(error.reason().contains(needle), "{text}: {error}");
        }
    }
}
