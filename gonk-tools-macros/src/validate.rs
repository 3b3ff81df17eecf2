//! The rules a tool must follow, checked on the [`ToolModel`]; every
//! violation is an error spanned on the offending token that says how to
//! fix it.

use quote::ToTokens;

use crate::attr::Errors;
use crate::model::{Param, ReceiverKind, Return, Site, ToolModel};
use crate::names;

/// Checks one tool; all problems at once.
pub fn tool(model: &ToolModel, errors: &mut Errors) {
    let sig = &model.sig;
    let fn_name = names::unraw(&model.fn_ident);

    if let Err(reason) = names::check_tool_name(&model.name) {
        let fix = if model.attrs.name.is_some() {
            "a tool name is 1-128 characters of A-Z a-z 0-9 `_` `.` `-` starting with a letter, e.g. `notes.search`".to_owned()
        } else {
            format!("the name defaults to the fn name; rename `{fn_name}` or set `#[tool(name = \"...\")]`")
        };
        errors.push_at(
            model.name_span,
            format!("invalid tool name: {reason} ({fix})"),
        );
    }

    if model.description.is_none() {
        errors.push_spanned(
            &model.fn_ident,
            format!(
                "tool `{}` has no description: add a doc comment (`/// What it does.`) above `fn {fn_name}` or `#[tool(description = \"...\")]`; models read it to pick the tool",
                model.name
            ),
        );
    }

    if sig.asyncness.is_none() {
        errors.push_spanned(
            sig.fn_token,
            format!("`#[tool]` needs an `async fn`: write `async fn {fn_name}(..)`"),
        );
    }
    if let Some(constness) = &sig.constness {
        errors.push_spanned(constness, "a tool cannot be a `const fn`: remove `const`");
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.push_spanned(
            unsafety,
            "a tool cannot be an `unsafe fn`: dispatch calls it with inputs from the network; keep the `unsafe` block inside a safe fn",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.push_spanned(abi, "a tool cannot have an `extern` ABI: remove it");
    }
    if let Some(variadic) = &sig.variadic {
        errors.push_spanned(variadic, "a tool cannot be variadic");
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        let tokens = if sig.generics.params.is_empty() {
            sig.generics.where_clause.to_token_stream()
        } else {
            sig.generics.to_token_stream()
        };
        errors.push_spanned(
            tokens,
            format!("a tool cannot be generic: its input and output schemas are fixed at compile time; use concrete types in `fn {fn_name}` (write one `#[tool]` fn per type)"),
        );
    }

    match (&model.site, &model.receiver) {
        (Site::Free, Some(_)) => {
            let receiver = sig.inputs.first();
            errors.push_spanned(
                receiver,
                "a `#[tool]` method needs `#[tools]` on its impl block: write `#[tools] impl MyType { #[tool] async fn .. }`",
            );
        }
        (Site::Method { .. }, None) => {
            errors.push_spanned(
                &model.fn_ident,
                format!("`{fn_name}` in a `#[tools]` impl has no `&self`: take `&self`, or move it out of the impl as a free `#[tool]` fn"),
            );
        }
        (_, Some(ReceiverKind::Value(span))) => errors.push_at(
            *span,
            "a tool method takes `&self`, not `self`: a tool is called many times, so it cannot consume its receiver",
        ),
        (_, Some(ReceiverKind::RefMut(span))) => errors.push_at(
            *span,
            "a tool method takes `&self`, not `&mut self`: calls run concurrently; keep mutable state behind a `Mutex` or `RwLock`",
        ),
        (_, Some(ReceiverKind::Typed(span))) => errors.push_at(
            *span,
            "a tool method takes plain `&self` (the tool set holds the receiver in an `Arc`)",
        ),
        _ => {}
    }

    let mut input_seen: Option<String> = None;
    let mut ctx_seen = false;
    for (param, span) in &model.params {
        match param {
            Param::Input(ty) => {
                if let syn::Type::ImplTrait(_) = &**ty {
                    errors.push_at(*span, "a tool's input cannot be `impl Trait`: use a concrete type that derives `Deserialize` and `JsonSchema`");
                    continue;
                }
                if let syn::Type::Reference(_) = &**ty {
                    errors.push_at(*span, "a tool's input is owned: take it by value (`input: MyInput`), not by reference");
                    continue;
                }
                let this = ty.to_token_stream().to_string();
                match &input_seen {
                    Some(first) => errors.push_at(
                        *span,
                        format!("a tool takes one input parameter, and `{first}` is already the input: put every field in one struct that derives `Deserialize` and `JsonSchema`, or take `ToolContext` / `State<T>` here"),
                    ),
                    None => input_seen = Some(this),
                }
            }
            Param::Context { span: ctx_span, .. } => {
                if ctx_seen {
                    errors.push_at(*ctx_span, "a tool takes `ToolContext` at most once");
                }
                ctx_seen = true;
            }
            Param::State(_) => {}
        }
    }

    let generated = names::unraw(&model.type_ident);
    let mut clashing: Vec<&syn::Type> = model
        .params
        .iter()
        .filter_map(|(p, _)| match p {
            Param::Input(ty) | Param::State(ty) => Some(&**ty),
            Param::Context { .. } => None,
        })
        .collect();
    clashing.extend(model.ret.output());
    for ty in clashing {
        if let syn::Type::Path(path) = ty {
            if path.qself.is_none()
                && path.path.segments.len() == 1
                && names::unraw(&path.path.segments[0].ident) == generated
            {
                let fix = if model.attrs.type_name.is_some() {
                    "choose another `type_name`".to_owned()
                } else {
                    format!("rename the type (e.g. `{generated}Input`) or set `#[tool(type_name = {generated}Tool)]`")
                };
                errors.push_spanned(
                    ty,
                    format!("`#[tool]` generates a type `{generated}` for `fn {fn_name}`, and this type has the same name: {fix}"),
                );
            }
        }
    }

    if let Return::BadStream(span) = &model.ret {
        errors.push_at(
            *span,
            "a streaming tool returns `impl Stream<Item = ToolEvent<O>>`: name the item type so the output type `O` is known",
        );
    }

    if model.attrs.output_schema.as_ref().is_some_and(|b| b.value) {
        let lit = model.attrs.output_schema.as_ref();
        errors.push_spanned(
            lit,
            "`output_schema = true` is the default; write `output_schema = false` to opt out, or remove the key",
        );
    }
    if model.attrs.degraded_description.is_some() && model.attrs.capability_for.is_none() {
        errors.push_spanned(
            model.attrs.degraded_description.as_ref(),
            "`degraded_description` is shown only when `capability_for` reports Degraded: add `capability_for = path::to_probe`",
        );
    }
}
