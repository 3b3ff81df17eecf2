//! The URI template of `#[resource("notes://{id}")]`, parsed at compile
//! time: RFC 6570 levels 1 and 2 — `{var}`, `{+var}`, `{#var}` — and
//! nothing more. Each variable names a parameter of the fn, so it must be a
//! Rust identifier, and appears once. Everything else (levels 3 and 4:
//! `{?q}`, `{/p}`, `{a,b}`, `{id:3}`, `{list*}`) is refused with a message
//! that says which forms are supported.

/// How an expression expands its variable (RFC 6570 §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// `{var}`: the value percent-encoded (only unreserved characters kept).
    Simple,
    /// `{+var}`: reserved characters (`/`, `?`, `:` …) kept as they are.
    Reserved,
    /// `{#var}`: like `+`, after a `#` when the value is defined.
    Fragment,
}

/// One piece of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Text copied into the URI as it is.
    Literal(String),
    /// `{var}`, `{+var}` or `{#var}`.
    Variable { operator: Operator, name: String },
}

/// A parsed template: its parts in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pub parts: Vec<Part>,
}

impl Template {
    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Variable { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// Whether the template has no variables: a fixed URI.
    pub fn is_fixed(&self) -> bool {
        self.variables().next().is_none()
    }
}

/// The supported forms, for messages.
pub const SUPPORTED: &str =
    "`#[resource]` URI templates support RFC 6570 levels 1-2: `{var}`, `{+var}` (keeps `/` and other reserved characters) and `{#var}` (a fragment)";

/// Why a template is refused. Each variant says what to write instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TemplateError {
    /// The template is the empty string.
    Empty,
    /// `{` without its `}`.
    Unclosed { from: String },
    /// `}` outside an expression.
    Unopened { at: usize },
    /// `{` inside an expression.
    Nested { expression: String },
    /// `{}` or `{+}`.
    EmptyExpression { expression: String },
    /// A level 3 operator, or a reserved one.
    Operator { expression: String, operator: char },
    /// `{a,b}`: several variables in one expression.
    List { expression: String },
    /// `{id:3}` or `{list*}`: a level 4 modifier.
    Modifier { expression: String, modifier: char },
    /// A variable that is not a Rust identifier.
    VariableName { expression: String, name: String },
    /// A variable used twice.
    Duplicate { name: String },
    /// A character a URI cannot hold, outside an expression.
    Literal { ch: char, at: usize },
    /// `%` not followed by two hex digits.
    Percent { at: usize },
}

impl TemplateError {
    /// The whole message for template `template`.
    pub fn describe(&self, template: &str) -> String {
        match self {
            TemplateError::Empty => {
                "the resource URI is empty: write a URI such as `\"notes://recent\"` or a template such as `\"notes://{id}\"`".to_owned()
            }
            TemplateError::Unclosed { from } => format!(
                "the URI template `{template}` opens an expression that is never closed (`{from}`): close it with `}}`, e.g. `{{id}}`"
            ),
            TemplateError::Unopened { at } => format!(
                "the URI template `{template}` has a `}}` at byte {at} that closes nothing: open the expression with `{{` (`{{id}}`), or percent-encode a literal brace as `%7D`"
            ),
            TemplateError::Nested { expression } => format!(
                "the URI template `{template}` opens `{{` inside the expression `{expression}`: expressions do not nest; write one variable per expression, `{{id}}`"
            ),
            TemplateError::EmptyExpression { expression } => format!(
                "the URI template `{template}` has an empty expression `{expression}`: name the variable it expands, e.g. `{{id}}`"
            ),
            TemplateError::Operator { expression, operator } => format!(
                "the URI template `{template}` uses the operator `{operator}` in `{expression}`, which is not supported: {SUPPORTED}"
            ),
            TemplateError::List { expression } => format!(
                "the URI template `{template}` puts several variables in `{expression}` (RFC 6570 level 3), which is not supported: {SUPPORTED}; write one expression per variable"
            ),
            TemplateError::Modifier { expression, modifier } => {
                let what = if *modifier == '*' { "the explode modifier `*`" } else { "a prefix modifier `:N`" };
                format!(
                    "the URI template `{template}` uses {what} in `{expression}` (RFC 6570 level 4), which is not supported: {SUPPORTED}"
                )
            }
            TemplateError::VariableName { expression, name } => format!(
                "the URI template `{template}` has the variable `{name}` in `{expression}`, which is not a valid variable name: a variable names a parameter of the fn, so write a Rust identifier (letters, digits and `_`, not starting with a digit)"
            ),
            TemplateError::Duplicate { name } => format!(
                "the URI template `{template}` uses the variable `{name}` twice: each variable is one parameter of the fn; use it once, or give the second one its own name and parameter"
            ),
            TemplateError::Literal { ch, at } => {
                let shown = match ch {
                    ' ' => "a space".to_owned(),
                    c if c.is_control() => format!("the control character `{}`", c.escape_debug()),
                    c => format!("`{c}`"),
                };
                let mut utf8 = [0; 4];
                let encoded: String = ch
                    .encode_utf8(&mut utf8)
                    .bytes()
                    .map(|b| format!("%{b:02X}"))
                    .collect();
                format!(
                    "the URI template `{}` holds {shown} at byte {at}, which a URI cannot contain: percent-encode it as `{encoded}`",
                    template.escape_debug()
                )
            }
            TemplateError::Percent { at } => format!(
                "the URI template `{template}` has a `%` at byte {at} that is not followed by two hex digits: write `%25` for a literal `%`, or a full escape such as `%20`"
            ),
        }
    }
}

/// Whether `c` may stand in a template outside an expression (RFC 6570
/// §2.1: any character but controls, space, `"` `'` `%` `<` `>` `\` `^`
/// `` ` `` `{` `|` `}`; `%` only as an escape, checked separately).
fn literal_char(c: char) -> bool {
    !(c.is_control()
        || c.is_whitespace()
        || matches!(
            c,
            '"' | '\'' | '<' | '>' | '\\' | '^' | '`' | '{' | '|' | '}'
        ))
}

/// Whether `name` is a Rust identifier (ASCII, not starting with a digit).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_')
        && name != "_"
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parses `template`.
pub fn parse(template: &str) -> Result<Template, TemplateError> {
    if template.is_empty() {
        return Err(TemplateError::Empty);
    }
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut rest = template.char_indices().peekable();
    while let Some((at, c)) = rest.next() {
        match c {
            '{' => {
                let mut body = String::new();
                let mut closed = false;
                for (_, c) in rest.by_ref() {
                    match c {
                        '}' => {
                            closed = true;
                            break;
                        }
                        '{' => {
                            return Err(TemplateError::Nested {
                                expression: format!("{{{body}{{"),
                            })
                        }
                        c => body.push(c),
                    }
                }
                if !closed {
                    return Err(TemplateError::Unclosed {
                        from: format!("{{{body}"),
                    });
                }
                if !literal.is_empty() {
                    parts.push(Part::Literal(std::mem::take(&mut literal)));
                }
                let (operator, name) = expression(&body)?;
                if parts
                    .iter()
                    .any(|p| matches!(p, Part::Variable { name: n, .. } if *n == name))
                {
                    return Err(TemplateError::Duplicate { name });
                }
                parts.push(Part::Variable { operator, name });
            }
            '}' => return Err(TemplateError::Unopened { at }),
            '%' => {
                let hex =
                    |next: Option<(usize, char)>| next.is_some_and(|(_, h)| h.is_ascii_hexdigit());
                let (first, second) = (rest.next(), rest.next());
                if !(hex(first) && hex(second)) {
                    return Err(TemplateError::Percent { at });
                }
                literal.push('%');
                literal.extend(first.map(|(_, h)| h));
                literal.extend(second.map(|(_, h)| h));
            }
            c if literal_char(c) => literal.push(c),
            ch => return Err(TemplateError::Literal { ch, at }),
        }
    }
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
    }
    Ok(Template { parts })
}

/// The inside of one `{..}`.
fn expression(body: &str) -> Result<(Operator, String), TemplateError> {
    let expression = format!("{{{body}}}");
    let (operator, name) = match body.chars().next() {
        Some('+') => (Operator::Reserved, &body[1..]),
        Some('#') => (Operator::Fragment, &body[1..]),
        Some(op @ ('.' | '/' | ';' | '?' | '&' | '=' | ',' | '!' | '@' | '|')) => {
            return Err(TemplateError::Operator {
                expression,
                operator: op,
            })
        }
        _ => (Operator::Simple, body),
    };
    if name.is_empty() {
        return Err(TemplateError::EmptyExpression { expression });
    }
    if name.contains(',') {
        return Err(TemplateError::List { expression });
    }
    if let Some(modifier) = name.chars().find(|c| matches!(c, ':' | '*')) {
        return Err(TemplateError::Modifier {
            expression,
            modifier,
        });
    }
    if !is_identifier(name) {
        return Err(TemplateError::VariableName {
            expression,
            name: name.to_owned(),
        });
    }
    Ok((operator, name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(operator: Operator, name: &str) -> Part {
        Part::Variable {
            operator,
            name: name.to_owned(),
        }
    }

    fn lit(s: &str) -> Part {
        Part::Literal(s.to_owned())
    }

    #[test]
    fn levels_one_and_two() {
        assert_eq!(
            parse("notes://{id}").unwrap().parts,
            [lit("notes://"), var(Operator::Simple, "id")]
        );
        assert_eq!(
            parse("file:///{+path}{#section}").unwrap().parts,
            [
                lit("file:///"),
                var(Operator::Reserved, "path"),
                var(Operator::Fragment, "section")
            ]
        );
        assert_eq!(
            parse("repo://{owner}/{name}/x%20y").unwrap().parts,
            [
                lit("repo://"),
                var(Operator::Simple, "owner"),
                lit("/"),
                var(Operator::Simple, "name"),
                lit("/x%20y")
            ]
        );
        let fixed = parse("notes://recent").unwrap();
        assert!(fixed.is_fixed());
        assert_eq!(fixed.parts, [lit("notes://recent")]);
        assert_eq!(
            parse("{_a1}").unwrap().variables().collect::<Vec<_>>(),
            ["_a1"]
        );
        assert!(parse("notes://ünïcode/{id}").is_ok());
    }

    #[test]
    fn refusals() {
        use TemplateError::*;
        let cases: &[(&str, TemplateError)] = &[
            ("", Empty),
            ("notes://{id", Unclosed { from: "{id".into() }),
            ("notes://id}", Unopened { at: 10 }),
            (
                "notes://{a{b}}",
                Nested {
                    expression: "{a{".into(),
                },
            ),
            (
                "notes://{}",
                EmptyExpression {
                    expression: "{}".into(),
                },
            ),
            (
                "notes://{+}",
                EmptyExpression {
                    expression: "{+}".into(),
                },
            ),
            (
                "s://x{?q}",
                Operator {
                    expression: "{?q}".into(),
                    operator: '?',
                },
            ),
            (
                "s://x{/p}",
                Operator {
                    expression: "{/p}".into(),
                    operator: '/',
                },
            ),
            (
                "s://x{&q}",
                Operator {
                    expression: "{&q}".into(),
                    operator: '&',
                },
            ),
            (
                "s://x{.e}",
                Operator {
                    expression: "{.e}".into(),
                    operator: '.',
                },
            ),
            (
                "s://x{;p}",
                Operator {
                    expression: "{;p}".into(),
                    operator: ';',
                },
            ),
            (
                "s://x{=p}",
                Operator {
                    expression: "{=p}".into(),
                    operator: '=',
                },
            ),
            (
                "s://{a,b}",
                List {
                    expression: "{a,b}".into(),
                },
            ),
            (
                "s://{id:3}",
                Modifier {
                    expression: "{id:3}".into(),
                    modifier: ':',
                },
            ),
            (
                "s://{ids*}",
                Modifier {
                    expression: "{ids*}".into(),
                    modifier: '*',
                },
            ),
            (
                "s://{1id}",
                VariableName {
                    expression: "{1id}".into(),
                    name: "1id".into(),
                },
            ),
            (
                "s://{a-b}",
                VariableName {
                    expression: "{a-b}".into(),
                    name: "a-b".into(),
                },
            ),
            (
                "s://{a.b}",
                VariableName {
                    expression: "{a.b}".into(),
                    name: "a.b".into(),
                },
            ),
            (
                "s://{_}",
                VariableName {
                    expression: "{_}".into(),
                    name: "_".into(),
                },
            ),
            ("s://{a}/{a}", Duplicate { name: "a".into() }),
            ("s://{a}/{+a}", Duplicate { name: "a".into() }),
            ("s://a b", Literal { ch: ' ', at: 5 }),
            ("s://a<b", Literal { ch: '<', at: 5 }),
            ("s://a%2", Percent { at: 5 }),
            ("s://a%zz", Percent { at: 5 }),
        ];
        for (template, expected) in cases {
            assert_eq!(parse(template).as_ref(), Err(expected), "{template}");
            // Every message quotes the template and says what to write.
            let message = expected.describe(template);
            assert!(message.contains(':'), "{message}");
        }
        assert!(Operator {
            expression: "{?q}".into(),
            operator: '?'
        }
        .describe("s://x{?q}")
        .contains("`{var}`, `{+var}`"));
    }
}
