//! The rules a `#[resource]` and a `#[prompt]` fn must follow: the fn
//! shape both share ([`signature`]), then [`resource`] (the URI template
//! and the fn's parameters name the same variables; completions name
//! template variables) and [`prompt`] (one arguments struct). Each
//! violation is an error spanned on the offending token that says how to
//! fix it. That a prompt's `complete(tag = ..)` names a field of its
//! arguments only the compiler knows: [`expand`](super::expand) asks it.

use quote::ToTokens;
use syn::Type;

use super::model::{FnModel, PromptModel, ResourceModel};
use crate::errors::Errors;
use crate::model::{last_segment, Param, Return};
use crate::names;

/// The fn shape both macros need: a free, non-generic, safe `async fn`,
/// `ToolContext` at most once, a returned value (not a stream).
fn signature(f: &FnModel, attribute: &str, returns: &str, errors: &mut Errors) {
    let sig = &f.sig;
    let fn_name = names::unraw(&f.fn_ident);
    if sig.asyncness.is_none() {
        errors.push_spanned(
            sig.fn_token,
            format!("`#[{attribute}]` needs an `async fn`: write `async fn {fn_name}(..)`"),
        );
    }
    if let Some(constness) = &sig.constness {
        errors.push_spanned(
            constness,
            format!("a `#[{attribute}]` fn cannot be a `const fn`: remove `const`"),
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.push_spanned(
            unsafety,
            format!("a `#[{attribute}]` fn cannot be an `unsafe fn`: it is called with values from the network; keep the `unsafe` block inside a safe fn"),
        );
    }
    if let Some(abi) = &sig.abi {
        errors.push_spanned(
            abi,
            format!("a `#[{attribute}]` fn cannot have an `extern` ABI: remove it"),
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.push_spanned(
            variadic,
            format!("a `#[{attribute}]` fn cannot be variadic"),
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        let tokens = if sig.generics.params.is_empty() {
            sig.generics.where_clause.to_token_stream()
        } else {
            sig.generics.to_token_stream()
        };
        errors.push_spanned(
            tokens,
            format!("a `#[{attribute}]` fn cannot be generic: what it advertises is fixed at compile time; use concrete types in `fn {fn_name}`"),
        );
    }
    if let Some(span) = f.receiver {
        errors.push_at(
            span,
            format!("a `#[{attribute}]` fn is a free fn, not a method: take the data it needs as `State<T>` (registered with `ToolRegistry::builder().state(..)`)"),
        );
    }
    let mut ctx_seen = false;
    for param in &f.params {
        if let Param::Context { span, .. } = &param.kind {
            if ctx_seen {
                errors.push_at(
                    *span,
                    format!("a `#[{attribute}]` fn takes `ToolContext` at most once"),
                );
            }
            ctx_seen = true;
        }
    }
    if f.name.is_empty() {
        errors.push_at(
            f.name_span,
            format!("the {attribute} name is empty: write `name = \"...\"`, or leave it out to use the fn name"),
        );
    }
    match &f.ret {
        Return::Plain(_) | Return::Result { .. } => {}
        _ => {
            let span = match &sig.output {
                syn::ReturnType::Type(_, ty) => syn::spanned::Spanned::span(ty),
                syn::ReturnType::Default => f.fn_ident.span(),
            };
            errors.push_at(
                span,
                format!("a `#[{attribute}]` fn returns {returns}, or a `Result` of one"),
            );
        }
    }
}

/// A type the generated type's name would shadow (`async fn note(..) ->
/// Note`), refused with the `type_name` advice.
fn type_clash<'a>(
    f: &FnModel,
    types: impl IntoIterator<Item = &'a Type>,
    attribute: &str,
    errors: &mut Errors,
) {
    let generated = names::unraw(&f.type_ident);
    for ty in types {
        if let Type::Path(path) = ty {
            if path.qself.is_none()
                && path.path.segments.len() == 1
                && names::unraw(&path.path.segments[0].ident) == generated
            {
                errors.push_spanned(
                    ty,
                    format!(
                        "`#[{attribute}]` generates a type `{generated}` for `fn {}`, and this type has the same name: rename the type or set `#[{attribute}(type_name = {generated}{})]`",
                        names::unraw(&f.fn_ident),
                        if attribute == "resource" { "Resource" } else { "Prompt" },
                    ),
                );
            }
        }
    }
}

/// Checks one resource; all problems at once.
pub fn resource(model: &ResourceModel, errors: &mut Errors) {
    let f = &model.f;
    let fn_name = names::unraw(&f.fn_ident);
    signature(
        f,
        "resource",
        "its contents: `String` (text), `Vec<u8>` (bytes), `ResourceContents`, `Vec<ResourceContents>` or `Json<T>`",
        errors,
    );
    let uri = &model.attrs.uri;
    let uri_text = uri.value();
    for param in &f.params {
        if !param.is_value() {
            continue;
        }
        if matches!(param.ty, Type::Reference(_)) {
            errors.push_spanned(
                &param.pat,
                "a template variable is read from the URI into an owned value: take `String`, not `&str` (or another owned type, e.g. `u64`)",
            );
            continue;
        }
        if matches!(param.ty, Type::ImplTrait(_)) {
            errors.push_spanned(
                &param.pat,
                "a template variable cannot be `impl Trait`: use a concrete type that deserializes from the URI text (`String`, `u64`, ..)",
            );
            continue;
        }
        let Some(ident) = &param.ident else {
            errors.push_spanned(
                &param.pat,
                "a template variable parameter is a plain name, the variable's: `id: u64` for `{id}`",
            );
            continue;
        };
        let name = names::unraw(ident);
        let Ok(template) = &model.template else {
            continue;
        };
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
    match &model.template {
        Err(error) => errors.push_spanned(uri, error.describe(&uri_text)),
        Ok(template) => {
            for variable in template.variables() {
                if model.param_of(variable).is_none() {
                    errors.push_spanned(
                        uri,
                        format!("the URI template variable `{{{variable}}}` has no parameter in `fn {fn_name}`: add a parameter `{variable}: String` (or another type that deserializes from the URI text, e.g. `u64`)"),
                    );
                }
            }
            let variables: Vec<&str> = template.variables().collect();
            for completer in model.attrs.common.completers() {
                let target = names::unraw(&completer.target);
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
    }
    let values = f.values().map(|p| &p.ty);
    type_clash(f, values.chain(f.ret.output()), "resource", errors);
}

/// Types that are certainly not a struct of arguments.
fn not_a_struct(ty: &Type) -> Option<String> {
    match ty {
        Type::Reference(_) | Type::Ptr(_) => Some("a reference".to_owned()),
        Type::Tuple(_) => Some("a tuple".to_owned()),
        Type::Array(_) | Type::Slice(_) => Some("an array".to_owned()),
        Type::ImplTrait(_) | Type::TraitObject(_) => Some("a trait type".to_owned()),
        Type::BareFn(_) | Type::Never(_) => Some("not data".to_owned()),
        _ => {
            let segment = last_segment(ty)?;
            let name = segment.ident.to_string();
            const SCALARS: &[&str] = &[
                "String", "str", "bool", "char", "u8", "u16", "u32", "u64", "u128", "usize", "i8",
                "i16", "i32", "i64", "i128", "isize", "f32", "f64", "Vec", "VecDeque", "Option",
                "HashMap", "BTreeMap", "HashSet", "BTreeSet", "Value", "Box", "Arc", "NoInput",
            ];
            SCALARS
                .contains(&name.as_str())
                .then(|| format!("`{name}`"))
        }
    }
}

/// Checks one prompt; all problems at once.
pub fn prompt(model: &PromptModel, errors: &mut Errors) {
    let f = &model.f;
    let fn_name = names::unraw(&f.fn_ident);
    signature(
        f,
        "prompt",
        "its messages: `String` (one user message), `Vec<PromptMessage>` or `PromptResult`",
        errors,
    );
    let mut first: Option<String> = None;
    for param in f.values() {
        let this = param.ty.to_token_stream().to_string();
        if let Some(first) = &first {
            errors.push_spanned(
                &param.pat,
                format!("a prompt takes one arguments struct, here `{first}`, whose fields are the prompt's arguments: make this a field of `{first}`, or take it as `State<T>` or `&ToolContext`"),
            );
            continue;
        }
        if let Some(what) = not_a_struct(&param.ty) {
            let args = format!("{}Args", names::unraw(&f.type_ident));
            let fields = match &param.ident {
                Some(ident) => format!("pub {}: {this}", names::unraw(ident)),
                None => "pub id: String, pub tag: Option<String>".to_owned(),
            };
            errors.push_spanned(
                &param.ty,
                format!("a prompt's arguments are a struct whose fields are the arguments, and this is {what}: write `struct {args} {{ {fields} }}` deriving `Deserialize` and `JsonSchema`, and take `args: {args}`"),
            );
        }
        first = Some(this);
    }
    if first.is_none() {
        for completer in model.attrs.common.completers() {
            errors.push_spanned(
                &completer.target,
                format!("`fn {fn_name}` takes no arguments, so there is no `{}` to complete: add an arguments struct with that field, or remove `complete`", names::unraw(&completer.target)),
            );
        }
    }
    let values = f.values().map(|p| &p.ty);
    type_clash(f, values.chain(f.ret.output()), "prompt", errors);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitives::attr::{PromptAttrs, ResourceAttrs};
    use proc_macro2::TokenStream;
    use quote::quote;

    fn resource_errors(args: TokenStream, item: syn::ItemFn) -> Vec<String> {
        let attrs = ResourceAttrs::parse(args).unwrap();
        let model = ResourceModel::new(attrs, item.vis.clone(), &item.sig, &item.attrs);
        let mut errors = Errors::default();
        resource(&model, &mut errors);
        match errors.finish() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    fn prompt_errors(args: TokenStream, item: syn::ItemFn) -> Vec<String> {
        let attrs = PromptAttrs::parse(args).unwrap();
        let model = PromptModel::new(attrs, item.vis.clone(), &item.sig, &item.attrs);
        let mut errors = Errors::default();
        prompt(&model, &mut errors);
        match errors.finish() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
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
