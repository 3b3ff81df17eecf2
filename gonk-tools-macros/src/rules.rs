// The naming rules, written once. The macro crate compiles this file as
// its `rules` module (compile-time checks with spans); `gonk_tools` gets the
// same items through the hidden `gonk_tools_macros::__rules!()`, which
// expands to this file's text (registration checks, and the constants that
// `toolset!` evaluates). So this file uses nothing but `core` and `std`
// prelude items, and no inner attributes or `//!` docs.

/// The longest tool name, in bytes (MCP's limit).
pub const NAME_MAX: usize = 128;

/// Why a tool name breaks the rule: 1–128 characters of `A-Za-z0-9_.-`,
/// starting with a letter (MCP's rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameError {
    /// The name is empty.
    Empty,
    /// The name is longer than [`NAME_MAX`].
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// The name does not start with an ASCII letter.
    FirstNotLetter {
        /// Its first character.
        first: char,
    },
    /// The name holds a character outside `A-Za-z0-9_.-`.
    BadChar {
        /// The first such character.
        bad: char,
    },
}

/// Checks `name` against the tool-name rule.
pub fn check_tool_name(name: &str) -> Result<(), NameError> {
    let Some(first) = name.chars().next() else {
        return Err(NameError::Empty);
    };
    if name.len() > NAME_MAX {
        return Err(NameError::TooLong { len: name.len() });
    }
    if !first.is_ascii_alphabetic() {
        return Err(NameError::FirstNotLetter { first });
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        Some(bad) => Err(NameError::BadChar { bad }),
        None => Ok(()),
    }
}

impl NameError {
    /// What is wrong with `name`, as a sentence; the caller adds how to
    /// fix it.
    pub fn describe(&self, name: &str) -> String {
        match self {
            NameError::Empty => "the tool name is empty".to_owned(),
            NameError::TooLong { len } => {
                format!("the tool name `{name}` is {len} characters long; the limit is {NAME_MAX}")
            }
            NameError::FirstNotLetter { first } => {
                format!("the tool name `{name}` starts with `{first}`; it must start with a letter")
            }
            NameError::BadChar { bad } => format!(
                "the tool name `{name}` contains `{bad}`; only A-Z a-z 0-9 `_` `.` `-` are allowed"
            ),
        }
    }
}

/// The rule itself, for messages.
pub const NAME_RULE: &str =
    "a tool name is 1-128 characters of A-Z a-z 0-9 `_` `.` `-` starting with a letter";

/// The longest client method: a [`NAME_MAX`] name with an `_` before
/// every hump.
pub const METHOD_MAX: usize = 2 * NAME_MAX;

/// The client method of a tool name (or of the CamelCase type `#[tool]`
/// generates): separators (`.` `-` `_`) become `_`; an upper-case letter
/// after a lower-case letter or a digit starts a new `_` word; everything
/// is lower-cased. `notes.search` and `NotesSearch` both give
/// `notes_search`; `notes.createNote` gives `notes_create_note`. The
/// method is the first `len` bytes of the array (a `const fn`, so
/// `toolset!` can check it at compile time).
pub const fn client_method(name: &str) -> ([u8; METHOD_MAX], usize) {
    let name = name.as_bytes();
    let mut out = [0u8; METHOD_MAX];
    let mut len = 0;
    let mut i = 0;
    while i < name.len() && len + 2 <= METHOD_MAX {
        let c = name[i];
        if c == b'.' || c == b'-' || c == b'_' {
            out[len] = b'_';
            len += 1;
        } else if c.is_ascii_uppercase() {
            if i > 0 && (name[i - 1].is_ascii_lowercase() || name[i - 1].is_ascii_digit()) {
                out[len] = b'_';
                len += 1;
            }
            out[len] = c.to_ascii_lowercase();
            len += 1;
        } else {
            out[len] = c;
            len += 1;
        }
        i += 1;
    }
    (out, len)
}

/// Whether the client method of `name` is `method`.
pub const fn client_method_is(name: &str, method: &str) -> bool {
    let (out, len) = client_method(name);
    bytes_eq(&out, len, method.as_bytes())
}

/// Whether two tool names map to the same client method.
pub const fn same_client_method(a: &str, b: &str) -> bool {
    let (a, a_len) = client_method(a);
    let (b, b_len) = client_method(b);
    a_len == b_len && bytes_eq(&a, a_len, b.split_at(b_len).0)
}

/// Whether the first `len` bytes of `a` are `b`.
const fn bytes_eq(a: &[u8], len: usize, b: &[u8]) -> bool {
    if b.len() != len {
        return false;
    }
    let mut i = 0;
    while i < len {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// What a client puts before an `x-mcp-header` name: the argument of a
/// property annotated `"Region"` travels as the header `Mcp-Param-Region`.
pub const HEADER_PREFIX: &str = "Mcp-Param-";

/// The header-name rule itself, for messages.
pub const HEADER_RULE: &str = "an MCP header name is 1 or more HTTP token characters (A-Z a-z 0-9 and ! # $ % & ' * + - . ^ _ ` | ~: no spaces, colons or control characters), e.g. `Region`";

/// Why an MCP parameter header name (`x-mcp-header`) breaks the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderNameError {
    /// The name is empty.
    Empty,
    /// The name holds a character that is not an HTTP token character.
    BadChar {
        /// The first such character.
        bad: char,
    },
    /// The name starts with [`HEADER_PREFIX`], which the client adds
    /// itself (so the header would be `Mcp-Param-Mcp-Param-..`).
    Prefixed,
}

/// Whether `c` may appear in an HTTP header name (a "token" character).
pub fn is_header_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '!' | '#'
                | '$'
                | '%'
                | '&'
                | '\''
                | '*'
                | '+'
                | '-'
                | '.'
                | '^'
                | '_'
                | '`'
                | '|'
                | '~'
        )
}

/// Checks `name` against what MCP allows in `x-mcp-header`: one or more
/// HTTP token characters. Names of other servers' tools are held to this.
pub fn check_header_token(name: &str) -> Result<(), HeaderNameError> {
    if name.is_empty() {
        return Err(HeaderNameError::Empty);
    }
    match name.chars().find(|c| !is_header_char(*c)) {
        Some(bad) => Err(HeaderNameError::BadChar { bad }),
        None => Ok(()),
    }
}

/// Checks a header name a tool declares (`#[tool(mcp(header(..)))]`,
/// `ToolBuilder::mcp_header`): [`check_header_token`], and no
/// [`HEADER_PREFIX`] of its own — a name written with the prefix is a
/// mistake the client would double.
pub fn check_header_name(name: &str) -> Result<(), HeaderNameError> {
    check_header_token(name)?;
    let prefixed = name
        .get(..HEADER_PREFIX.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(HEADER_PREFIX));
    if prefixed {
        return Err(HeaderNameError::Prefixed);
    }
    Ok(())
}

/// Whether two header names are the same header (HTTP header names are
/// case-insensitive).
pub fn same_header(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

impl HeaderNameError {
    /// What is wrong with `name`, as a sentence that says how to fix it.
    pub fn describe(&self, name: &str) -> String {
        match self {
            HeaderNameError::Empty => format!(
                "the MCP header name is empty: write the name the client sends after `{HEADER_PREFIX}`, e.g. `Region`"
            ),
            HeaderNameError::BadChar { bad } => {
                let bad = match bad {
                    ' ' => "a space".to_owned(),
                    c if c.is_control() => format!("the control character `{}`", c.escape_debug()),
                    c => format!("`{c}`"),
                };
                format!(
                    "the MCP header name `{}` contains {bad}; {HEADER_RULE}",
                    name.escape_debug()
                )
            }
            HeaderNameError::Prefixed => {
                let bare = name.get(HEADER_PREFIX.len()..).unwrap_or_default();
                format!(
                    "the MCP header name `{name}` starts with `{HEADER_PREFIX}`, which the client adds itself: write `{bare}` (sent as `{HEADER_PREFIX}{bare}`)"
                )
            }
        }
    }
}

/// The scope rule itself, for messages (RFC 6749 §3.3's `scope-token`).
pub const SCOPE_RULE: &str = "an OAuth scope is 1 or more printable ASCII characters other than space, `\"` and `\\` (RFC 6749 section 3.3), e.g. `notes:write`";

/// Why an OAuth scope a tool requires breaks the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeError {
    /// The scope is empty.
    Empty,
    /// The scope holds whitespace: it would read as two scopes in a token's
    /// space-separated `scope`.
    Whitespace,
    /// The scope holds a character outside the rule.
    BadChar {
        /// The first such character.
        bad: char,
    },
}

/// Checks `scope` against RFC 6749's `scope-token`: `%x21 / %x23-5B /
/// %x5D-7E`, one or more.
pub fn check_scope(scope: &str) -> Result<(), ScopeError> {
    if scope.is_empty() {
        return Err(ScopeError::Empty);
    }
    if scope.chars().any(char::is_whitespace) {
        return Err(ScopeError::Whitespace);
    }
    match scope
        .chars()
        .find(|c| !matches!(*c as u32, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
    {
        Some(bad) => Err(ScopeError::BadChar { bad }),
        None => Ok(()),
    }
}

impl ScopeError {
    /// What is wrong with `scope`, as a sentence that says how to fix it.
    pub fn describe(&self, scope: &str) -> String {
        match self {
            ScopeError::Empty => {
                format!("the OAuth scope is empty: write the scope a token must carry; {SCOPE_RULE}")
            }
            ScopeError::Whitespace => format!(
                "the OAuth scope `{}` contains whitespace, so a token would read it as several scopes: list each scope as its own string, e.g. `scopes(\"notes:read\", \"notes:write\")`",
                scope.escape_debug()
            ),
            ScopeError::BadChar { bad } => {
                let bad = if bad.is_control() {
                    format!("the control character `{}`", bad.escape_debug())
                } else {
                    format!("`{bad}`")
                };
                format!(
                    "the OAuth scope `{}` contains {bad}; {SCOPE_RULE}",
                    scope.escape_debug()
                )
            }
        }
    }
}

/// The file every skill has at its root.
pub const SKILL_FILE: &str = "SKILL.md";

/// The Agent Skills naming rule for a skill: 1–64 characters of
/// lowercase ASCII letters, digits and hyphens, with no hyphen first,
/// last or twice in a row. `Err` says so in words.
pub fn check_skill_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the skill name `{name}` breaks the naming rule: use 1–64 lowercase letters, digits \
             and hyphens, with no hyphen first, last or twice in a row (e.g. `triage-notes`)"
        ))
    }
}

/// The YAML between the `---` line a `SKILL.md` opens with (after an
/// optional byte-order mark) and the next `---` line; `None` without one.
pub fn frontmatter_block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\r\n")
        .or_else(|| text.strip_prefix("---\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.trim_end_matches([' ', '\t']) == "---" {
            let block = &rest[..offset];
            let block = block.strip_suffix('\n').unwrap_or(block);
            return Some(block.strip_suffix('\r').unwrap_or(block));
        }
        offset += line.len();
    }
    None
}

/// What a skill's frontmatter must hold besides its name: a non-empty
/// `description` of at most 1024 characters. `Err` says what is wrong.
pub fn check_skill_description(description: Option<&str>) -> Result<(), String> {
    match description {
        None => Err(
            "the frontmatter has no `description` string: add `description: <what the skill \
             does and when to use it>`"
                .to_owned(),
        ),
        Some(d) if d.trim().is_empty() => {
            Err("the frontmatter's `description` is empty: say what the skill does".to_owned())
        }
        Some(d) if d.chars().count() > 1024 => Err(
            "the frontmatter's `description` is longer than 1024 characters: shorten it".to_owned(),
        ),
        Some(_) => Ok(()),
    }
}

/// The URI scheme of an MCP App resource (SEP-1865).
pub const UI_SCHEME: &str = "ui://";

/// Checks the URI of an MCP App resource, as a tool links it or a
/// resource serves it: `ui://` and something after it, no whitespace.
/// `Err` says what is wrong and shows the form.
pub fn check_ui_uri(uri: &str) -> Result<(), String> {
    const FORM: &str =
        "an MCP App resource lives at `ui://<server>/<view>`, e.g. `ui://notes/board`";
    match uri.strip_prefix(UI_SCHEME) {
        None => Err(format!("`{uri}` is not a `ui://` URI: {FORM}")),
        Some("") => Err(format!("`{uri}` names no page: {FORM}")),
        Some(rest) if rest.contains(char::is_whitespace) => {
            Err(format!("`{uri}` holds whitespace: {FORM}"))
        }
        Some(_) => Ok(()),
    }
}
