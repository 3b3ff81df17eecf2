//! An elicitation form on the terminal, without the terminal: the form
//! read from its `requestedSchema`, one prompt per field, and what a typed
//! line means for that field. [`super::ask`] does the reading and writing;
//! everything here is pure, so it is tested line by line. Required fields
//! are asked first, then optional ones, each group in the schema's key
//! order.
//!
//! A field is a string, a number or integer, a boolean (`y`/`n`), a choice
//! of one (an enum: its number or its value) or of several (a list of enum
//! values: numbers or values separated by commas). An empty line takes the
//! field's default, or leaves an optional field out; a required field
//! without a default is asked again. At any prompt `/decline` declines the
//! form and `/cancel` (or end of input, Ctrl-D) cancels it.

use serde_json::{json, Map, Value};

/// Typed at any prompt: decline the whole form.
pub(crate) const DECLINE: &str = "/decline";
/// Typed at any prompt: cancel the whole form (as end of input does).
pub(crate) const CANCEL: &str = "/cancel";

/// One option of a choice: the value sent and the label shown.
#[derive(Clone, Debug, PartialEq)]
struct Choice {
    value: String,
    label: String,
}

/// What kind of answer a field takes, with its limits.
#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Text {
        min_length: Option<u64>,
        max_length: Option<u64>,
        format: Option<String>,
    },
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
    One(Vec<Choice>),
    Many {
        options: Vec<Choice>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
}

/// One field of the form.
#[derive(Clone, Debug, PartialEq)]
struct Field {
    name: String,
    title: Option<String>,
    description: Option<String>,
    required: bool,
    default: Option<Value>,
    kind: Kind,
}

/// An elicitation form: its message and fields, in schema order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Form {
    message: String,
    fields: Vec<Field>,
}

/// What a line typed at a prompt did.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Fed {
    /// The field is answered; the next prompt follows.
    Next,
    /// The line does not fit the field: say why and ask again.
    Again(String),
    /// The form is done: the elicitation result (`{"action": …}`).
    Done(Value),
}

impl Form {
    /// Reads an elicitation request's params (`message`,
    /// `requestedSchema`). A schema the terminal cannot render (a field of
    /// another type) is an error naming the field.
    pub(crate) fn from_params(params: &Value) -> Result<Form, String> {
        let message = params
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let schema = params
            .get("requestedSchema")
            .ok_or("the elicitation has no requestedSchema")?;
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::new();
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, field) in properties {
                let kind = kind(field).map_err(|why| format!("field `{name}` {why}"))?;
                fields.push(Field {
                    name: name.clone(),
                    title: text(field, "title"),
                    description: text(field, "description"),
                    required: required.contains(&name.as_str()),
                    default: field.get("default").filter(|d| !d.is_null()).cloned(),
                    kind,
                });
            }
        }
        // JSON objects here keep no declaration order (they are sorted):
        // required fields first, then the optional ones.
        fields.sort_by_key(|field| !field.required);
        Ok(Form { message, fields })
    }

    /// The message shown above the fields.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }

    /// Starts filling the form in.
    pub(crate) fn fill(&self) -> Filling<'_> {
        Filling {
            form: self,
            at: 0,
            content: Map::new(),
        }
    }
}

fn text(field: &Value, key: &str) -> Option<String> {
    field
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .filter(|s| !s.trim().is_empty())
}

/// The options of an enum schema: `enum` (labelled by `enumNames`), or
/// `oneOf`/`anyOf` of `{const, title}`.
fn choices(schema: &Value) -> Option<Vec<Choice>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        let options = values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let value = v.as_str()?.to_owned();
                let label = names
                    .and_then(|n| n.get(i))
                    .and_then(Value::as_str)
                    .map_or_else(|| value.clone(), str::to_owned);
                Some(Choice { value, label })
            })
            .collect();
        return Some(options);
    }
    let alternatives = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    alternatives
        .iter()
        .map(|alt| {
            let value = alt.get("const")?.as_str()?.to_owned();
            let label = text(alt, "title").unwrap_or_else(|| value.clone());
            Some(Choice { value, label })
        })
        .collect()
}

fn kind(field: &Value) -> Result<Kind, String> {
    let number = |key| field.get(key).and_then(Value::as_f64);
    let count = |key| field.get(key).and_then(Value::as_u64);
    match field.get("type").and_then(Value::as_str) {
        Some("string") | None => match choices(field) {
            Some(options) if !options.is_empty() => Ok(Kind::One(options)),
            Some(_) => Err("is an enum without options".to_owned()),
            None if field.get("type").is_none() => {
                Err("has no type the terminal can ask for".to_owned())
            }
            None => Ok(Kind::Text {
                min_length: count("minLength"),
                max_length: count("maxLength"),
                format: text(field, "format"),
            }),
        },
        Some(kind @ ("number" | "integer")) => Ok(Kind::Number {
            integer: kind == "integer",
            minimum: number("minimum"),
            maximum: number("maximum"),
        }),
        Some("boolean") => Ok(Kind::Boolean),
        Some("array") => match field.get("items").and_then(choices) {
            Some(options) if !options.is_empty() => Ok(Kind::Many {
                options,
                min_items: count("minItems"),
                max_items: count("maxItems"),
            }),
            _ => Err("is a list of something other than enum values".to_owned()),
        },
        Some(other) => Err(format!(
            "has type `{other}`, which the terminal cannot ask for"
        )),
    }
}

/// A form being filled in, one field at a time.
pub(crate) struct Filling<'a> {
    form: &'a Form,
    at: usize,
    content: Map<String, Value>,
}

impl Filling<'_> {
    /// The prompt of the field to answer now (`None` once every field is
    /// answered: [`finish`](Self::finish) then gives the answer).
    pub(crate) fn prompt(&self) -> Option<String> {
        self.form.fields.get(self.at).map(Field::prompt)
    }

    /// The answer once every field is answered (an accept with the
    /// content), else `None`.
    pub(crate) fn finish(&self) -> Option<Value> {
        (self.at >= self.form.fields.len())
            .then(|| json!({"action": "accept", "content": Value::Object(self.content.clone())}))
    }

    /// Feeds the line typed at the current prompt (`None`: end of input).
    pub(crate) fn feed(&mut self, line: Option<&str>) -> Fed {
        let Some(line) = line else {
            return Fed::Done(json!({"action": "cancel"}));
        };
        let line = line.trim();
        match line {
            DECLINE => return Fed::Done(json!({"action": "decline"})),
            CANCEL => return Fed::Done(json!({"action": "cancel"})),
            _ => {}
        }
        let Some(field) = self.form.fields.get(self.at) else {
            return Fed::Done(self.finish().unwrap_or(Value::Null));
        };
        let value = if line.is_empty() {
            match (&field.default, field.required) {
                (Some(default), _) => Some(default.clone()),
                (None, false) => None,
                (None, true) => return Fed::Again("An answer is required.".to_owned()),
            }
        } else {
            match field.read(line) {
                Ok(value) => Some(value),
                Err(why) => return Fed::Again(why),
            }
        };
        if let Some(value) = value {
            self.content.insert(field.name.clone(), value);
        }
        self.at += 1;
        match self.finish() {
            Some(answer) => Fed::Done(answer),
            None => Fed::Next,
        }
    }
}

/// Writes a number as JSON: an integer when it is one.
fn number_value(n: f64, integer: bool) -> Value {
    if integer {
        // Whole numbers within i64 only (checked by the caller).
        json!(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

impl Field {
    /// The prompt: the field's title (or name), its description, what it
    /// takes, and its default.
    fn prompt(&self) -> String {
        let mut out = String::new();
        let title = self.title.as_deref().unwrap_or(&self.name);
        out.push_str(title);
        if let Some(description) = &self.description {
            if description != title {
                out.push_str(&format!(" — {description}"));
            }
        }
        out.push('\n');
        match &self.kind {
            Kind::One(options) | Kind::Many { options, .. } => {
                for (i, option) in options.iter().enumerate() {
                    out.push_str(&format!("  {}) {}\n", i + 1, option.label));
                }
            }
            _ => {}
        }
        let hint = match &self.kind {
            Kind::Text { format, .. } => format.clone().unwrap_or_else(|| "text".to_owned()),
            Kind::Number { integer: true, .. } => "integer".to_owned(),
            Kind::Number { .. } => "number".to_owned(),
            Kind::Boolean => "y/n".to_owned(),
            Kind::One(_) => "number or value".to_owned(),
            Kind::Many { .. } => "numbers or values, comma-separated".to_owned(),
        };
        let default = match (&self.default, self.required) {
            (Some(default), _) => format!(", Enter for {}", show(default)),
            (None, false) => ", Enter to skip".to_owned(),
            (None, true) => String::new(),
        };
        out.push_str(&format!("  [{hint}{default}] > "));
        out
    }

    /// The value of a non-empty line, or why it does not fit.
    fn read(&self, line: &str) -> Result<Value, String> {
        match &self.kind {
            Kind::Text {
                min_length,
                max_length,
                ..
            } => {
                let length = line.chars().count() as u64;
                if let Some(min) = min_length.filter(|min| length < *min) {
                    return Err(format!("At least {min} characters, please."));
                }
                if let Some(max) = max_length.filter(|max| length > *max) {
                    return Err(format!("At most {max} characters, please."));
                }
                Ok(Value::String(line.to_owned()))
            }
            Kind::Number {
                integer,
                minimum,
                maximum,
            } => {
                let n: f64 = line
                    .parse()
                    .ok()
                    .filter(|n: &f64| n.is_finite())
                    .ok_or_else(|| format!("`{line}` is not a number."))?;
                if *integer && (n.fract() != 0.0 || n.abs() > 9.007_199_254_740_991e15) {
                    return Err(format!("`{line}` is not a whole number."));
                }
                if let Some(min) = minimum.filter(|min| n < *min) {
                    return Err(format!("At least {min}, please."));
                }
                if let Some(max) = maximum.filter(|max| n > *max) {
                    return Err(format!("At most {max}, please."));
                }
                Ok(number_value(n, *integer))
            }
            Kind::Boolean => match line.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Ok(Value::Bool(true)),
                "n" | "no" | "false" => Ok(Value::Bool(false)),
                _ => Err("Answer y or n.".to_owned()),
            },
            Kind::One(options) => pick(options, line).map(Value::String),
            Kind::Many {
                options,
                min_items,
                max_items,
            } => {
                let mut picked: Vec<Value> = Vec::new();
                for part in line.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let value = Value::String(pick(options, part)?);
                    if !picked.contains(&value) {
                        picked.push(value);
                    }
                }
                let count = picked.len() as u64;
                if let Some(min) = min_items.filter(|min| count < *min) {
                    return Err(format!("Pick at least {min}."));
                }
                if let Some(max) = max_items.filter(|max| count > *max) {
                    return Err(format!("Pick at most {max}."));
                }
                Ok(Value::Array(picked))
            }
        }
    }
}

/// The option `typed` names: its number (from 1), its value, or its label
/// (case-insensitively when that is unambiguous).
fn pick(options: &[Choice], typed: &str) -> Result<String, String> {
    if let Ok(n) = typed.parse::<usize>() {
        if let Some(option) = n.checked_sub(1).and_then(|i| options.get(i)) {
            return Ok(option.value.clone());
        }
    }
    if let Some(option) = options
        .iter()
        .find(|o| o.value == typed || o.label == typed)
    {
        return Ok(option.value.clone());
    }
    let folded: Vec<&Choice> = options
        .iter()
        .filter(|o| o.value.eq_ignore_ascii_case(typed) || o.label.eq_ignore_ascii_case(typed))
        .collect();
    match folded.as_slice() {
        [one] => Ok(one.value.clone()),
        _ => Err(format!(
            "`{typed}` is not one of the choices; type its number (1–{}) or its value.",
            options.len()
        )),
    }
}

/// A default as the prompt shows it.
fn show(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "y".to_owned(),
        Value::Bool(false) => "n".to_owned(),
        Value::Array(items) => items.iter().map(show).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(schema: Value) -> Form {
        Form::from_params(&json!({"message": "Tell me", "requestedSchema": schema})).unwrap()
    }

    /// Feeds `lines` in order; returns what each did.
    fn run(form: &Form, lines: &[Option<&str>]) -> Vec<Fed> {
        let mut filling = form.fill();
        lines.iter().map(|line| filling.feed(*line)).collect()
    }

    fn everything() -> Form {
        form(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "minLength": 2},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "size": {"type": "string", "enum": ["s", "l"], "enumNames": ["Small", "Large"]},
                "colours": {"type": "array", "items": {"anyOf": [
                    {"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]}},
                "ok": {"type": "boolean", "default": true},
                "ratio": {"type": "number"}
            },
            "required": ["name", "age", "size"]
        }))
    }

    #[test]
    fn every_field_kind_reads_its_line() {
        let form = everything();
        let fed = run(
            &form,
            &[
                Some("36"),
                Some("Ada"),
                Some("2"),
                Some("Red, g"),
                Some("n"),
                Some("0.5"),
            ],
        );
        assert_eq!(fed[..5], vec![Fed::Next; 5]);
        assert_eq!(
            fed[5],
            Fed::Done(json!({"action": "accept", "content": {
                "name": "Ada", "age": 36, "size": "l", "colours": ["r", "g"], "ok": false, "ratio": 0.5
            }}))
        );
    }

    #[test]
    fn empty_lines_take_defaults_and_skip_optional_fields() {
        let form = everything();
        let fed = run(
            &form,
            &[
                Some("1"),
                Some("Ada"),
                Some("s"),
                Some(""),
                Some(""),
                Some(""),
            ],
        );
        assert_eq!(
            fed.last().unwrap(),
            &Fed::Done(json!({"action": "accept", "content": {
                "name": "Ada", "age": 1, "size": "s", "ok": true
            }}))
        );
    }

    #[test]
    fn a_line_that_does_not_fit_is_asked_again_with_the_reason() {
        let form = everything();
        let mut filling = form.fill();
        assert_eq!(
            filling.feed(Some("")),
            Fed::Again("An answer is required.".into())
        );
        assert!(matches!(filling.feed(Some("old")), Fed::Again(m) if m.contains("not a number")));
        assert!(matches!(filling.feed(Some("1.5")), Fed::Again(m) if m.contains("whole number")));
        assert_eq!(
            filling.feed(Some("200")),
            Fed::Again("At most 150, please.".into())
        );
        assert_eq!(filling.feed(Some("40")), Fed::Next);
        assert_eq!(
            filling.feed(Some("A")),
            Fed::Again("At least 2 characters, please.".into())
        );
        assert_eq!(filling.feed(Some("Ada")), Fed::Next);
        assert!(
            matches!(filling.feed(Some("3")), Fed::Again(m) if m.contains("type its number (1–2)"))
        );
        assert_eq!(filling.feed(Some("LARGE")), Fed::Next);
        assert!(matches!(filling.feed(Some("r, blue")), Fed::Again(m) if m.contains("`blue`")));
        assert_eq!(filling.feed(Some("")), Fed::Next);
        assert_eq!(
            filling.feed(Some("maybe")),
            Fed::Again("Answer y or n.".into())
        );
        assert_eq!(filling.feed(Some("yes")), Fed::Next);
        assert!(filling.finish().is_none());
    }

    #[test]
    fn decline_cancel_and_end_of_input_end_the_form() {
        let form = everything();
        assert_eq!(
            run(&form, &[Some("/decline")]),
            [Fed::Done(json!({"action": "decline"}))]
        );
        assert_eq!(
            run(&form, &[Some("36"), Some(" /cancel ")]),
            [Fed::Next, Fed::Done(json!({"action": "cancel"}))]
        );
        assert_eq!(
            run(&form, &[None]),
            [Fed::Done(json!({"action": "cancel"}))]
        );
    }

    #[test]
    fn the_approval_question_is_one_yes_no_prompt() {
        let form = form(json!({
            "type": "object",
            "properties": {"approve": {"type": "boolean", "title": "Approve", "description": "Let notes.create run"}},
            "required": ["approve"]
        }));
        assert_eq!(form.message(), "Tell me");
        let filling = form.fill();
        assert_eq!(
            filling.prompt().unwrap(),
            "Approve — Let notes.create run\n  [y/n] > "
        );
        assert_eq!(
            run(&form, &[Some("y")]),
            [Fed::Done(
                json!({"action": "accept", "content": {"approve": true}})
            )]
        );
    }

    #[test]
    fn prompts_show_choices_hints_and_defaults() {
        let form = everything();
        let mut filling = form.fill();
        assert_eq!(filling.prompt().unwrap(), "age\n  [integer] > ");
        filling.feed(Some("3"));
        assert_eq!(filling.prompt().unwrap(), "Name\n  [text] > ");
        filling.feed(Some("Ada"));
        assert_eq!(
            filling.prompt().unwrap(),
            "size\n  1) Small\n  2) Large\n  [number or value] > "
        );
        filling.feed(Some("1"));
        assert!(filling
            .prompt()
            .unwrap()
            .ends_with("[numbers or values, comma-separated, Enter to skip] > "));
        filling.feed(Some(""));
        assert_eq!(filling.prompt().unwrap(), "ok\n  [y/n, Enter for y] > ");
    }

    #[test]
    fn an_empty_form_is_accepted_at_once_and_odd_fields_are_refused() {
        let empty = form(json!({"type": "object", "properties": {}}));
        assert_eq!(
            empty.fill().finish(),
            Some(json!({"action": "accept", "content": {}}))
        );
        let error = Form::from_params(&json!({"requestedSchema": {
            "type": "object", "properties": {"where": {"type": "object"}}}}))
        .unwrap_err();
        assert_eq!(
            error,
            "field `where` has type `object`, which the terminal cannot ask for"
        );
        assert!(Form::from_params(&json!({"message": "no schema"})).is_err());
    }
}
