//! How the macros name things: the generated type, the client method as a
//! `String` (the rule itself is in [`rules`], shared with the
//! runtime), identifiers, and "did you mean".

use proc_macro2::{Ident, Span};

use crate::rules;

/// An identifier without its `r#` prefix.
pub fn unraw(ident: &Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

/// The type `#[tool]` generates for a fn: `notes_search` → `NotesSearch`,
/// every `_`-separated word capitalized. A word that starts with a digit
/// keeps its `_` (`tool_000` → `Tool_000`), so the client method of the
/// type is still the fn's (`tool_000`), not `tool000`.
pub fn camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    for word in snake.split('_').filter(|w| !w.is_empty()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            if first.is_ascii_digit() && !out.is_empty() {
                out.push('_');
            }
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

/// The client method of a tool name or a generated type name
/// ([`rules::client_method`]).
pub fn client_method(name: &str) -> String {
    let (bytes, len) = rules::client_method(name);
    String::from_utf8_lossy(&bytes[..len]).into_owned()
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

/// `unknown X: did you mean Y?` when a candidate is close, else
/// `unknown X: expected one of ...`.
pub fn unknown_message(what: &str, unknown: &str, candidates: &[&str]) -> String {
    match did_you_mean(unknown, candidates) {
        Some(best) => format!("unknown {what} `{unknown}`: did you mean `{best}`?"),
        None => {
            let list = candidates
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ");
            format!("unknown {what} `{unknown}`: expected one of {list}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases() {
        assert_eq!(camel_case("notes_search"), "NotesSearch");
        assert_eq!(camel_case("search2"), "Search2");
        assert_eq!(camel_case("tool_000"), "Tool_000");
        assert_eq!(camel_case("v2_api"), "V2Api");
        assert_eq!(client_method("notes.search"), "notes_search");
        assert_eq!(client_method("NotesSearch"), "notes_search");
        assert_eq!(client_method("notes.createNote"), "notes_create_note");
        assert_eq!(client_method("v2Api"), "v2_api");
        assert_eq!(client_method("HTTPGet"), "httpget");
        // The method of the generated type is the method of the fn name.
        for name in [
            "fs_read_file2",
            "tool_000",
            "v2_api",
            "a_1_b",
            "notes_search",
        ] {
            assert_eq!(
                client_method(&camel_case(name)),
                client_method(name),
                "{name}"
            );
        }
    }

    #[test]
    fn names() {
        use rules::{check_tool_name, NameError};
        assert_eq!(check_tool_name("notes.search"), Ok(()));
        assert_eq!(check_tool_name("tool_000"), Ok(()));
        assert_eq!(check_tool_name(""), Err(NameError::Empty));
        assert_eq!(
            check_tool_name("1abc"),
            Err(NameError::FirstNotLetter { first: '1' })
        );
        assert_eq!(check_tool_name("a b"), Err(NameError::BadChar { bad: ' ' }));
        assert_eq!(
            check_tool_name(&"a".repeat(129)),
            Err(NameError::TooLong { len: 129 })
        );
        assert!(check_tool_name(&"a".repeat(128)).is_ok());
        assert!(rules::client_method_is("notes.search", "notes_search"));
        assert!(!rules::client_method_is("notes.search", "search"));
        assert!(rules::same_client_method("notes.search", "notes_search"));
        assert!(!rules::same_client_method("notes.search", "notes.find"));
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
        assert_eq!(
            unknown_message("key", "nmae", &["name", "tags"]),
            "unknown key `nmae`: did you mean `name`?"
        );
        assert_eq!(
            unknown_message("key", "zzzz", &["name", "tags"]),
            "unknown key `zzzz`: expected one of `name`, `tags`"
        );
    }
}
