//! Naming rules shared by `#[tool]` and the tool sets: the tool-name rule,
//! the generated type name, the client method name, and "did you mean".

use proc_macro2::{Ident, Span};

/// The tool-name rule (MCP's): 1–128 chars of `A-Za-z0-9_.-`, starting with
/// a letter. The error says what is wrong; the caller adds how to fix it.
pub fn check_tool_name(name: &str) -> Result<(), String> {
    let Some(first) = name.chars().next() else {
        return Err("the tool name is empty".into());
    };
    if name.len() > 128 {
        return Err(format!(
            "the tool name `{name}` is {} characters long; the limit is 128",
            name.len()
        ));
    }
    if !first.is_ascii_alphabetic() {
        return Err(format!(
            "the tool name `{name}` starts with `{first}`; it must start with a letter"
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Err(format!(
            "the tool name `{name}` contains `{bad}`; only A-Z a-z 0-9 `_` `.` `-` are allowed"
        ));
    }
    Ok(())
}

/// An identifier without its `r#` prefix.
pub fn unraw(ident: &Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

/// `notes_search` → `NotesSearch`: every `_`-separated word capitalized.
pub fn camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    for word in snake.split('_').filter(|w| !w.is_empty()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

/// The client method of a tool name (or a CamelCase type name):
/// separators become `_`, an upper-case letter after a lower-case letter
/// or digit starts a new word, all lower case. Must agree with
/// `gonk_tools::__private::client_method`.
pub fn client_method(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev: Option<char> = None;
    for c in name.chars() {
        if matches!(c, '.' | '-' | '_') {
            out.push('_');
        } else if c.is_ascii_uppercase() {
            if prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit()) {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
        prev = Some(c);
    }
    out
}

/// `method` as an identifier (a raw one for keywords), or `None` when it
/// cannot be one (`self`, `crate`, …).
pub fn method_ident(method: &str, span: Span) -> Option<Ident> {
    if syn::parse_str::<Ident>(method).is_ok() {
        return Some(Ident::new(method, span));
    }
    if matches!(method, "self" | "Self" | "super" | "crate" | "_") {
        return None;
    }
    syn::parse_str::<Ident>(&format!("r#{method}"))
        .ok()
        .map(|_| Ident::new_raw(method, span))
}

/// The closest candidate to `unknown`, when it is close enough to be a
/// plausible typo.
pub fn did_you_mean<'a>(unknown: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (strsim::damerau_levenshtein(unknown, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `unknown X; expected one of ...; did you mean ...?`
pub fn unknown_message(what: &str, unknown: &str, candidates: &[&str]) -> String {
    let list = candidates
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match did_you_mean(unknown, candidates) {
        Some(best) => {
            format!("unknown {what} `{unknown}`: did you mean `{best}`? (expected one of {list})")
        }
        None => format!("unknown {what} `{unknown}`: expected one of {list}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_tool_name("notes.search").is_ok());
        assert!(check_tool_name("").is_err());
        assert!(check_tool_name("1abc").is_err());
        assert!(check_tool_name("a b").is_err());
        assert!(check_tool_name(&"a".repeat(129)).is_err());
        assert!(check_tool_name(&"a".repeat(128)).is_ok());
    }

    #[test]
    fn cases() {
        assert_eq!(camel_case("notes_search"), "NotesSearch");
        assert_eq!(camel_case("search2"), "Search2");
        assert_eq!(client_method("notes.search"), "notes_search");
        assert_eq!(client_method("NotesSearch"), "notes_search");
        assert_eq!(client_method("notes.createNote"), "notes_create_note");
        assert_eq!(client_method("v2Api"), "v2_api");
        assert_eq!(client_method("HTTPGet"), "httpget");
        assert_eq!(client_method(&camel_case("fs_read_file2")), "fs_read_file2");
    }

    #[test]
    fn suggestions() {
        assert_eq!(
            did_you_mean("writ", &["read", "write", "exec"]),
            Some("write")
        );
        assert_eq!(
            did_you_mean("descripton", &["name", "description"]),
            Some("description")
        );
        assert_eq!(did_you_mean("zzzz", &["read", "write", "exec"]), None);
    }
}
