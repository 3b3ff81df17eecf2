//! The checks that relate parts of one item, or the items of a set, to
//! each other. The line is serde_derive's: a problem with one part — a
//! key's value, the fn's shape, one parameter — is reported where that
//! part is parsed ([`attr`](super::attr)) or modelled
//! ([`model`](super::model)); what needs two parts at once is here:
//!
//! * [`tool`]: the `mcp(header(..))` fields against the tool's input;
//! * [`tool_set`], [`toolset`]: duplicate tool names and two tools on one
//!   client method (`toolset!` sees types, not names, so the expansion
//!   writes its name checks for the compiler);
//! * [`resource`]: the URI template's variables against the fn's
//!   parameters, and the completions against the variables;
//! * [`prompt`]: the completions against the arguments.
//!
//! Every violation is an error spanned on the offending token that says
//! how to fix it.

use proc_macro2::{Ident, Span};

use super::errors::Errors;
use super::model::prompt::PromptModel;
use super::model::resource::ResourceModel;
use super::model::set::{ToolsImpl, Toolset};
use super::model::tool::ToolModel;
use super::names;
use crate::rules;

/// One tool's `mcp(header(..))` against its signature: the tool has an
/// input to take the fields from, and no field or header name comes twice
/// (header names ignore case). That a field named by its Rust name exists
/// and is a scalar only the compiler knows: the expansion asks it
/// ([`expand`](crate::expand)); a property named as a string, as clients
/// see it, is checked at registration.
pub fn tool(model: &ToolModel, errors: &mut Errors) {
    let fn_name = model.f.fn_name();
    let Some(headers) = model.attrs.mcp.as_ref().and_then(|m| m.headers.as_ref()) else {
        return;
    };
    if model.input().is_none() {
        for header in headers {
            errors.push_spanned(
                &header.field,
                format!(
                    "`fn {fn_name}` takes no input, so it has no field `{}` to send as a header: add an input parameter whose type has that field",
                    header.field.name()
                ),
            );
        }
        return;
    }
    for (i, header) in headers.iter().enumerate() {
        let field = header.field.name();
        let name = header.name.value();
        if let Some(first) = headers[..i].iter().find(|h| h.field.name() == field) {
            errors.push_spanned(
                &header.field,
                format!(
                    "the field `{field}` already has a header (`{}`): a field is sent as one header",
                    first.name.value()
                ),
            );
            continue;
        }
        if let Some(first) = headers[..i]
            .iter()
            .find(|h| rules::same_header(&h.name.value(), &name))
        {
            errors.push_spanned(
                &header.name,
                format!(
                    "the header `{}{name}` is already sent for the field `{}` (header names ignore case): give `{field}` another header name",
                    rules::HEADER_PREFIX,
                    first.field.name()
                ),
            );
        }
    }
}

/// Client methods that the generated client itself defines.
const RESERVED_METHODS: &[&str] = &["new", "transport", "into_transport"];

/// The identifier of client method `method` of `tool`, or an error when the
/// client cannot have it.
fn method_ident(method: &str, span: Span, tool: &str, errors: &mut Errors) -> Option<Ident> {
    if RESERVED_METHODS.contains(&method) {
        errors.push_at(
            span,
            format!("tool `{tool}` maps to the client method `{method}`, which the client defines itself; rename the tool"),
        );
        return None;
    }
    let ident = names::method_ident(method, span);
    if ident.is_none() {
        errors.push_at(
            span,
            format!("tool `{tool}` maps to the client method `{method}`, which is not a Rust identifier; rename the tool"),
        );
    }
    ident
}

/// The tools of a `#[tools]` impl block as a set: at least one, no name
/// twice, no client method twice. Returns the client method of each tool,
/// `None` where the tool was refused.
pub fn tool_set(set: &ToolsImpl, errors: &mut Errors) -> Vec<Option<Ident>> {
    if set.tools.is_empty() && errors.is_empty() {
        errors.push_spanned(
            &set.item.self_ty,
            "`#[tools]` found no `#[tool]` method in this impl block: mark the tool methods with `#[tool]`",
        );
    }
    let models = &set.tools;
    let mut methods = Vec::with_capacity(models.len());
    for (i, model) in models.iter().enumerate() {
        if let Some(first) = models[..i].iter().find(|m| m.f.name == model.f.name) {
            errors.push_at(
                model.f.name_span,
                format!(
                    "duplicate tool name `{}` in this tool set (also used by `{}`): give one of them another `#[tool(name = \"...\")]`",
                    model.f.name, first.f.fn_ident
                ),
            );
            methods.push(None);
            continue;
        }
        let method = names::client_method(&model.f.name);
        if let Some(first) = models[..i]
            .iter()
            .find(|m| rules::same_client_method(&m.f.name, &model.f.name))
        {
            errors.push_at(
                model.f.name_span,
                format!(
                    "tools `{}` and `{}` both map to the client method `{method}`: rename one of them (separators `.` `-` `_` all become `_`)",
                    first.f.name, model.f.name
                ),
            );
            methods.push(None);
            continue;
        }
        methods.push(method_ident(
            &method,
            model.f.name_span,
            &model.f.name,
            errors,
        ));
    }
    methods
}

/// The entries of `toolset!` as far as the macro can see them: not empty,
/// no client method twice. Returns each entry's client method, `None` where
/// it was refused.
pub fn toolset(toolset: &Toolset, errors: &mut Errors) -> Vec<Option<Ident>> {
    let set = &toolset.ident;
    let entries = &toolset.entries;
    if entries.is_empty() {
        errors.push_spanned(
            set,
            "this tool set has no tools: list the types `#[tool]` generates, `{ NotesSearch, NotesCreate }`",
        );
    }
    let mut methods: Vec<Option<Ident>> = Vec::with_capacity(entries.len());
    for (j, entry) in entries.iter().enumerate() {
        let method = entry.method();
        if let Some(i) = entries[..j].iter().position(|e| e.method() == method) {
            errors.push_at(
                entry.method_span(),
                format!(
                    "`{}` and `{}` both map to the client method `{method}` in tool set `{set}`: list each tool once, and give tools distinct names",
                    entries[i].display(),
                    entry.type_name(),
                ),
            );
            methods.push(None);
            continue;
        }
        methods.push(method_ident(
            &method,
            entry.method_span(),
            &entry.type_name(),
            errors,
        ));
    }
    methods
}

/// One resource's URI template against its fn: every parameter that is a
/// value is a template variable, every variable has a parameter, and
/// every completion names a variable.
pub fn resource(model: &ResourceModel, errors: &mut Errors) {
    let fn_name = model.f.fn_name();
    let uri = &model.attrs.uri;
    let uri_text = uri.value();
    if let Ok(template) = &model.template {
        for (param, ident) in model.variable_params() {
            let name = names::unraw(ident);
            if !template.variables().any(|v| v == name) {
                let has = if template.is_fixed() {
                    format!("the URI `{uri_text}` has no variables")
                } else {
                    format!("the URI template `{uri_text}` has no `{{{name}}}`")
                };
                errors.push_spanned(
                    &param.pat,
                    format!("the parameter `{name}` of `fn {fn_name}` is not a template variable ({has}): add `{{{name}}}` to the template, or take it as `State<T>` or `&ToolContext`"),
                );
            }
        }
    }
    let template = match &model.template {
        Ok(template) => template,
        Err(error) => {
            errors.push_spanned(uri, error.describe(&uri_text));
            return;
        }
    };
    for variable in template.variables() {
        if model.param_of(variable).is_none() {
            errors.push_spanned(
                uri,
                format!("the URI template variable `{{{variable}}}` has no parameter in `fn {fn_name}`: add a parameter `{variable}: String` (or another type that deserializes from the URI text, e.g. `u64`)"),
            );
        }
    }
    let variables: Vec<&str> = template.variables().collect();
    for completer in model.attrs.primitive.completers() {
        let target = completer.target.name();
        if variables.contains(&target.as_str()) {
            continue;
        }
        let message = if variables.is_empty() {
            format!("`complete({target} = ..)` names no variable: the URI `{uri_text}` is fixed, so there is nothing to complete; remove `complete`")
        } else {
            let list = variables
                .iter()
                .map(|v| format!("`{v}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let hint = match names::did_you_mean(&target, &variables) {
                Some(best) => format!("did you mean `{best}`?"),
                None => format!("complete one of {list}"),
            };
            format!("`{target}` is not a variable of the URI template `{uri_text}`: {hint}")
        };
        errors.push_spanned(&completer.target, message);
    }
}

/// One prompt's completions against its arguments: a prompt without an
/// arguments struct has nothing to complete. That a completion names a
/// field by its Rust name only the compiler knows: the expansion asks it
/// ([`expand`](crate::expand)); which argument serde makes of the field,
/// or whether a name given as a string is one, only the schema knows, at
/// run time (registration refuses a completion on no argument).
pub fn prompt(model: &PromptModel, errors: &mut Errors) {
    if model.arguments().is_some() {
        return;
    }
    let fn_name = model.f.fn_name();
    for completer in model.attrs.primitive.completers() {
        errors.push_spanned(
            &completer.target,
            format!("`fn {fn_name}` takes no arguments, so there is no `{}` to complete: add an arguments struct with that field, or remove `complete`", completer.target.name()),
        );
    }
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use quote::quote;

    /// Every error the front end finds, model and checks together.
    fn messages<T>(result: syn::Result<T>) -> Vec<String> {
        match result {
            Ok(_) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    fn resource_errors(args: TokenStream, item: syn::ItemFn) -> Vec<String> {
        messages(crate::internals::resource(args, &item))
    }

    fn prompt_errors(args: TokenStream, item: syn::ItemFn) -> Vec<String> {
        messages(crate::internals::prompt(args, &item))
    }

    #[test]
    fn resources() {
        let ok = resource_errors(
            quote!("notes://{id}/{+rest}", complete(id = ids)),
            syn::parse_quote!(
                async fn note(id: u64, s: State<S>, rest: String, ctx: &ToolContext) -> String {
                    todo!()
                }
            ),
        );
        assert!(ok.is_empty(), "{ok:?}");
        let fixed = resource_errors(
            quote!("notes://recent"),
            syn::parse_quote!(
                async fn recent(ctx: ToolContext) -> Result<Json<Vec<u8>>, E> {
                    todo!()
                }
            ),
        );
        assert!(fixed.is_empty(), "{fixed:?}");

        let missing = resource_errors(
            quote!("notes://{id}/{rev}"),
            syn::parse_quote!(
                async fn note(id: u64, extra: String) -> String {
                    todo!()
                }
            ),
        );
        assert_eq!(missing.len(), 2, "{missing:?}");
        assert!(
            missing[0].starts_with("the parameter `extra` of `fn note` is not a template variable"),
            "{missing:?}"
        );
        assert!(
            missing[1].starts_with("the URI template variable `{rev}` has no parameter"),
            "{missing:?}"
        );

        let completion = resource_errors(
            quote!("notes://{id}", complete(idd = f)),
            syn::parse_quote!(
                async fn note(id: u64) -> String {
                    todo!()
                }
            ),
        );
        assert_eq!(
            completion,
            ["`idd` is not a variable of the URI template `notes://{id}`: did you mean `id`?"]
        );

        let shape = resource_errors(
            quote!("notes://{id}"),
            syn::parse_quote!(
                fn note(&self, id: &str) -> impl Stream<Item = ToolEvent<u8>> {
                    todo!()
                }
            ),
        );
        assert_eq!(shape.len(), 4, "{shape:?}");
    }

    #[test]
    fn prompts() {
        let ok = prompt_errors(
            quote!(complete(tag = tags)),
            syn::parse_quote!(
                async fn summarize(
                    s: State<S>,
                    args: Args,
                    ctx: ToolContext,
                ) -> Vec<PromptMessage> {
                    todo!()
                }
            ),
        );
        assert!(ok.is_empty(), "{ok:?}");
        let two = prompt_errors(
            quote!(),
            syn::parse_quote!(
                async fn p(a: A, b: B) -> String {
                    todo!()
                }
            ),
        );
        assert_eq!(two.len(), 1);
        assert!(two[0].contains("one arguments struct, here `A`"), "{two:?}");
        let scalar = prompt_errors(
            quote!(),
            syn::parse_quote!(
                async fn p(a: String) -> String {
                    todo!()
                }
            ),
        );
        assert!(scalar[0].contains("this is `String`"), "{scalar:?}");
        let none = prompt_errors(
            quote!(complete(tag = f)),
            syn::parse_quote!(
                async fn p() -> String {
                    todo!()
                }
            ),
        );
        assert!(none[0].contains("takes no arguments"), "{none:?}");
        let clash = prompt_errors(
            quote!(),
            syn::parse_quote!(
                async fn summarize(a: Summarize) -> String {
                    todo!()
                }
            ),
        );
        assert!(
            clash[0].contains("type_name = SummarizePrompt"),
            "{clash:?}"
        );
    }
}
