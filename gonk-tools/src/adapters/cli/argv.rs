//! Argv building: a tool's input schema becomes a clap subcommand (typed
//! flags and positionals), and the parsed matches become the tool's JSON
//! input.
//!
//! Every name that comes from a schema or a hint is checked before it
//! reaches clap, so a hostile or unusual schema (a property called `help`,
//! a name with spaces, an array positional in the middle) degrades to
//! "settable through `--input` only" instead of a clap assertion.

use std::collections::BTreeSet;
use std::io::Read;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{Map, Value};

use super::coerce::{coerce, enum_text, shape_of, Shape, ValueKind};
use super::help;
use crate::definition::ToolDefinition;

/// Id of the `--input` argument.
pub(crate) const INPUT_ID: &str = "gonk-cli:input";
/// Id of the global `--json` flag.
pub(crate) const JSON_ID: &str = "gonk-cli:json";

/// Long flags a property may never take: clap's and the adapter's own.
pub(crate) const RESERVED_LONGS: [&str; 3] = ["help", "input", "json"];

/// How one schema property is read back from the matches.
#[derive(Clone, Debug)]
pub(crate) struct Binding {
    /// The clap argument id.
    id: String,
    /// The property name in the input object.
    property: String,
    /// Whether the property is an array (all occurrences are collected).
    repeated: bool,
}

/// A tool's subcommand, as the runner needs it after parsing.
#[derive(Clone, Debug)]
pub(crate) struct ToolArgs {
    /// The registered tool name (what `invoke` takes).
    pub(crate) tool: String,
    bindings: Vec<Binding>,
}

/// Why the input could not be assembled. Always a usage error (exit 2).
#[derive(Debug, PartialEq)]
pub(crate) struct InputError(pub(crate) String);

/// Whether `name` can be a long flag or a subcommand name as it is.
pub(crate) fn is_plain_word(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// `delay_ms` → `delay-ms`, `maxResults` → `max-results`.
fn kebab(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' {
            out.push('-');
            prev_lower = false;
        } else if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

fn arg_id(property: &str) -> String {
    format!("gonk-cli:property:{property}")
}

fn value_arg(arg: Arg, kind: &ValueKind) -> Arg {
    match kind {
        ValueKind::Enum(values) => {
            let mut texts: Vec<String> = Vec::new();
            for value in values {
                let text = enum_text(value);
                if !texts.contains(&text) {
                    texts.push(text);
                }
            }
            let values = values.clone();
            let parser = PossibleValuesParser::new(texts).map(move |text: String| {
                values
                    .iter()
                    .find(|v| enum_text(v) == text)
                    .cloned()
                    .unwrap_or(Value::String(text))
            });
            arg.value_parser(parser)
        }
        kind => {
            let value_name = kind.value_name();
            let kind = kind.clone();
            arg.value_parser(move |text: &str| coerce(&kind, text))
                .value_name(value_name)
        }
    }
}

/// Builds the subcommand `name` of `def`. `reserved` holds the long flags
/// taken by global arguments.
///
/// Required properties are required arguments (so help and usage say so),
/// unless `relaxed`: the parse used when `--input` is given, where the JSON
/// may hold them and dispatch enforces `required` against the schema.
pub(crate) fn tool_command(
    def: &ToolDefinition,
    bin: &str,
    name: &str,
    aliases: &[String],
    reserved: &BTreeSet<String>,
    relaxed: bool,
) -> (Command, ToolArgs) {
    let schema = def.effective_input_schema();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();

    let mut command = Command::new(name.to_owned())
        .about(def.advertised_description().to_owned())
        .visible_aliases(aliases.to_vec());
    let mut bindings = Vec::new();
    let mut input_only = Vec::new();
    // The usage line, with the `--input` form as a second line.
    let mut usage_positionals = Vec::new();
    let mut usage_flags = Vec::new();
    let mut order = 0;

    // Positionals, in hint order: known properties, each once; only the
    // last one may be an array (clap takes the remaining words for it).
    let mut positional: Vec<&str> = Vec::new();
    for p in &def.hints.cli.positional {
        if properties.contains_key(p) && !positional.contains(&p.as_str()) {
            positional.push(p);
        }
    }
    while let Some(pos) = positional
        .iter()
        .take(positional.len().saturating_sub(1))
        .position(|p| matches!(shape_of(&properties[*p]), Shape::Repeated(_)))
    {
        positional.remove(pos);
    }
    let mut all_required_so_far = true;
    for (index, property) in positional.iter().enumerate() {
        let prop_schema = &properties[*property];
        let shape = shape_of(prop_schema);
        let is_required = required.contains(property);
        // A required positional after an optional one cannot be told apart
        // on the command line; dispatch still enforces `required`.
        let enforce = is_required && all_required_so_far;
        all_required_so_far &= is_required;
        let id = arg_id(property);
        let mut arg = Arg::new(id.clone())
            .index(index + 1)
            .help(help::argument_help(prop_schema, &shape, is_required));
        let (kind, repeated) = match &shape {
            Shape::Single(kind) => (kind, false),
            Shape::Repeated(kind) => (kind, true),
        };
        let value_name = property.to_uppercase();
        arg = value_arg(arg, kind).value_name(value_name.clone());
        if repeated {
            arg = arg.num_args(1..).action(ArgAction::Append);
        } else {
            arg = arg.action(ArgAction::Set);
        }
        if matches!(kind, ValueKind::Integer | ValueKind::Number) {
            // `-3` is a number here, not an unknown flag.
            arg = arg.allow_negative_numbers(true);
        }
        let dots = if repeated { "..." } else { "" };
        if enforce {
            arg = arg.required(!relaxed);
            usage_positionals.push(format!("<{value_name}>{dots}"));
        } else {
            usage_positionals.push(format!("[{value_name}]{dots}"));
        }
        command = command.arg(arg);
        bindings.push(Binding {
            id,
            property: (*property).to_owned(),
            repeated,
        });
    }

    // Flags for every other property.
    let mut taken: BTreeSet<String> = reserved.clone();
    taken.extend(RESERVED_LONGS.iter().map(|s| (*s).to_owned()));
    let flag_properties: Vec<(&String, &Value)> = properties
        .iter()
        .filter(|(p, _)| !positional.contains(&p.as_str()))
        .collect();
    // Raw property names win over kebab-cased spellings of other properties.
    let raw_names: BTreeSet<&str> = flag_properties.iter().map(|(p, _)| p.as_str()).collect();
    for (property, prop_schema) in flag_properties {
        let candidates = [kebab(property), property.clone()];
        let mut names = candidates.iter().filter(|c| {
            is_plain_word(c)
                && !taken.contains(c.as_str())
                && (c.as_str() == property.as_str() || !raw_names.contains(c.as_str()))
        });
        let Some(long) = names.next().cloned() else {
            input_only.push(if is_plain_word(property) {
                property.clone()
            } else {
                Value::String(property.clone()).to_string()
            });
            continue;
        };
        let alias = names.find(|c| **c != long).cloned();
        taken.insert(long.clone());
        let shape = shape_of(prop_schema);
        let is_required = required.contains(property.as_str());
        let id = arg_id(property);
        order += 1;
        let mut arg = Arg::new(id.clone())
            .long(long.clone())
            .display_order(order)
            .help(help::argument_help(prop_schema, &shape, is_required));
        if let Some(alias) = alias {
            taken.insert(alias.clone());
            arg = arg.alias(alias);
        }
        let repeated = match &shape {
            Shape::Single(ValueKind::Boolean) => {
                arg = value_arg(arg, &ValueKind::Boolean)
                    .num_args(0..=1)
                    .require_equals(true)
                    .default_missing_value("true")
                    .action(ArgAction::Set);
                false
            }
            // A flag's value may start with `-` (`--body "- item"`, `--delta -3`).
            Shape::Single(kind) => {
                arg = value_arg(arg, kind)
                    .allow_hyphen_values(true)
                    .action(ArgAction::Set);
                false
            }
            Shape::Repeated(kind) => {
                arg = value_arg(arg, kind)
                    .allow_hyphen_values(true)
                    .action(ArgAction::Append);
                true
            }
        };
        if let Shape::Single(ValueKind::Enum(_)) | Shape::Repeated(ValueKind::Enum(_)) = &shape {
            arg = arg.value_name(property.to_uppercase());
        }
        if is_required {
            arg = arg.required(!relaxed);
            let value_name = arg
                .get_value_names()
                .and_then(|names| names.first())
                .map(|name| name.to_string())
                .unwrap_or_else(|| "VALUE".to_owned());
            usage_flags.push(format!("--{long} <{value_name}>"));
        }
        command = command.arg(arg);
        bindings.push(Binding {
            id,
            property: property.clone(),
            repeated,
        });
    }

    let mut usage = format!("{bin} {name}");
    for word in usage_flags.iter().chain(&usage_positionals) {
        usage.push(' ');
        usage.push_str(word);
    }
    usage.push_str(" [OPTIONS]");
    if !usage_flags.is_empty() || usage_positionals.iter().any(|p| p.starts_with('<')) {
        usage.push_str(&format!("\n       {bin} {name} --input <JSON> [OPTIONS]"));
    }
    command = command
        .override_usage(usage)
        .arg(
            Arg::new(INPUT_ID)
                .long("input")
                .value_name("JSON")
                .display_order(order + 1)
                .help("The whole input as a JSON object ('-' reads it from stdin)")
                .action(ArgAction::Set),
        )
        .after_help(help::after_help(&def.hints.cli.examples, &input_only));
    (
        command,
        ToolArgs {
            tool: def.name.clone(),
            bindings,
        },
    )
}

impl ToolArgs {
    /// The tool's input: `--input` (if given), with every argument given
    /// on the command line set on top.
    pub(crate) fn input(&self, matches: &ArgMatches) -> Result<Value, InputError> {
        let mut input = match matches.get_one::<String>(INPUT_ID) {
            Some(text) => parse_input(text)?,
            None => Value::Object(Map::new()),
        };
        let mut given = Map::new();
        for binding in &self.bindings {
            let value = if binding.repeated {
                matches
                    .get_many::<Value>(&binding.id)
                    .map(|values| Value::Array(values.cloned().collect()))
            } else {
                matches.get_one::<Value>(&binding.id).cloned()
            };
            if let Some(value) = value {
                given.insert(binding.property.clone(), value);
            }
        }
        if !given.is_empty() {
            let Value::Object(object) = &mut input else {
                return Err(InputError(
                    "--input must be a JSON object when arguments are given as well".into(),
                ));
            };
            object.extend(given);
        }
        Ok(input)
    }
}

fn parse_input(text: &str) -> Result<Value, InputError> {
    let owned;
    let text = if text == "-" {
        let mut buffer = String::new();
        std::io::stdin()
            .read_to_string(&mut buffer)
            .map_err(|e| InputError(format!("--input -: could not read stdin: {e}")))?;
        owned = buffer;
        owned.as_str()
    } else {
        text
    };
    serde_json::from_str(text).map_err(|e| InputError(format!("--input must be valid JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::CliHints;
    use crate::event::ToolOutput;
    use serde_json::json;

    fn def(schema: Value, positional: &[&str]) -> ToolDefinition {
        ToolDefinition::builder("t.tool")
            .description("A test tool.")
            .input_json_schema(schema)
            .cli(CliHints {
                positional: positional.iter().map(|s| (*s).to_owned()).collect(),
                ..CliHints::default()
            })
            .raw_handler(|input, _| async move { Ok(ToolOutput::new(input)) })
            .build()
    }

    fn parse(def: &ToolDefinition, argv: &[&str]) -> Result<Value, String> {
        let relaxed = argv.contains(&"--input");
        let (command, args) = tool_command(def, "app", "t.tool", &[], &BTreeSet::new(), relaxed);
        let root = Command::new("app").subcommand(command);
        let matches = root
            .try_get_matches_from(
                std::iter::once("app")
                    .chain(std::iter::once("t.tool"))
                    .chain(argv.iter().copied()),
            )
            .map_err(|e| e.to_string())?;
        let (_, sub) = matches.subcommand().expect("subcommand");
        args.input(sub).map_err(|e| e.0)
    }

    #[test]
    fn typed_flags_positionals_and_arrays_become_json() {
        let tool = def(
            json!({"type": "object", "required": ["query"], "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer"},
                "ratio": {"type": "number"},
                "exact": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "sort": {"type": "string", "enum": ["asc", "desc"]},
                "delay_ms": {"type": "integer"},
                "filter": {"type": "object"}
            }}),
            &["query"],
        );
        let input = parse(
            &tool,
            &[
                "rust",
                "--limit",
                "5",
                "--ratio",
                "0.5",
                "--exact",
                "--tags",
                "a",
                "--tags",
                "b",
                "--sort",
                "desc",
                "--delay-ms",
                "3",
                "--filter",
                r#"{"x":1}"#,
            ],
        )
        .unwrap();
        assert_eq!(
            input,
            json!({"query": "rust", "limit": 5, "ratio": 0.5, "exact": true,
                   "tags": ["a", "b"], "sort": "desc", "delay_ms": 3, "filter": {"x": 1}})
        );
        // Flag values may start with a hyphen.
        let input = parse(
            &tool,
            &["q", "--tags", "-x", "--limit", "-2", "--ratio", "-0.5"],
        )
        .unwrap();
        assert_eq!(
            input,
            json!({"query": "q", "tags": ["-x"], "limit": -2, "ratio": -0.5})
        );
        // The raw property name is an alias; booleans take `=false`.
        let input = parse(&tool, &["q", "--delay_ms", "1", "--exact=false"]).unwrap();
        assert_eq!(input, json!({"query": "q", "delay_ms": 1, "exact": false}));
    }

    #[test]
    fn argv_errors_are_reported_not_panicked() {
        let tool = def(
            json!({"type": "object", "required": ["query"], "properties": {
                "query": {"type": "string"}, "limit": {"type": "integer"},
                "sort": {"enum": ["asc", "desc"]}
            }}),
            &["query"],
        );
        assert!(parse(&tool, &["q", "--limit", "five"])
            .unwrap_err()
            .contains("expected an integer"));
        assert!(parse(&tool, &["q", "--sort", "up"])
            .unwrap_err()
            .contains("possible values: asc, desc"));
        assert!(parse(&tool, &[]).unwrap_err().contains("<QUERY>"));
        assert!(parse(&tool, &["q", "--nope"]).is_err());
    }

    #[test]
    fn input_json_is_the_base_and_arguments_override_it() {
        let tool = def(
            json!({"type": "object", "required": ["query"], "properties": {
                "query": {"type": "string"}, "limit": {"type": "integer"}
            }}),
            &["query"],
        );
        // With `--input`, the required positional may come from the JSON.
        assert_eq!(
            parse(&tool, &["--input", r#"{"query":"a","limit":1}"#]).unwrap(),
            json!({"query": "a", "limit": 1})
        );
        assert_eq!(
            parse(
                &tool,
                &["--input", r#"{"query":"a","limit":1}"#, "--limit", "2"]
            )
            .unwrap(),
            json!({"query": "a", "limit": 2})
        );
        assert!(parse(&tool, &["--input", "{"])
            .unwrap_err()
            .contains("--input must be valid JSON"));
        assert!(parse(&tool, &["--input", "[1]", "--limit", "2"])
            .unwrap_err()
            .contains("must be a JSON object"));
        // A non-object input alone is passed on (dispatch rejects it).
        assert_eq!(parse(&tool, &["--input", "[1]"]).unwrap(), json!([1]));
    }

    #[test]
    fn hostile_schemas_degrade_to_input_only_fields() {
        let tool = def(
            json!({"type": "object", "required": ["b", "a"], "properties": {
                "help": {"type": "string"},
                "input": {"type": "string"},
                "json": {"type": "boolean"},
                "with space": {"type": "string"},
                "-dash": {"type": "string"},
                "": {"type": "string"},
                "fooBar": {"type": "string"},
                "foo-bar": {"type": "string"},
                "list": {"type": "array", "items": {"type": "integer"}},
                "a": {"type": "array"},
                "b": {"type": "string"},
                "c": {"type": "string"}
            }}),
            // An array first, unknown names, duplicates, a required after an optional.
            &["list", "missing", "c", "c", "b", "a"],
        );
        for relaxed in [false, true] {
            let (command, _) = tool_command(
                &tool,
                "app",
                "t.tool",
                &["alias".into()],
                &BTreeSet::new(),
                relaxed,
            );
            command.debug_assert();
        }
        let (command, _) = tool_command(
            &tool,
            "app",
            "t.tool",
            &["alias".into()],
            &BTreeSet::new(),
            false,
        );
        let help = command.clone().render_help().to_string();
        assert!(
            help.contains(
                r#"Only settable through --input: "", "-dash", help, input, json, "with space""#
            ),
            "{help}"
        );
        let input = parse(
            &tool,
            &[
                "c1",
                "b1",
                "1",
                "2",
                "--foo-bar",
                "x",
                "--fooBar",
                "y",
                "--list",
                "3",
            ],
        )
        .unwrap();
        assert_eq!(
            input,
            json!({"c": "c1", "b": "b1", "a": [1, 2], "foo-bar": "x", "fooBar": "y", "list": [3]})
        );
    }

    #[test]
    fn schemas_without_properties_take_input_only() {
        let tool = def(
            json!({"anyOf": [{"type": "object"}, {"type": "string"}]}),
            &["x"],
        );
        assert_eq!(parse(&tool, &["--input", "\"s\""]).unwrap(), json!("s"));
        assert_eq!(parse(&tool, &[]).unwrap(), json!({}));
    }

    #[test]
    fn kebab_case_spelling() {
        assert_eq!(kebab("delay_ms"), "delay-ms");
        assert_eq!(kebab("maxResults"), "max-results");
        assert_eq!(kebab("URL"), "url");
        assert_eq!(kebab("v2Name"), "v2-name");
    }
}
