//! The rules a tool and a tool set must follow: [`tool`] checks one
//! [`ToolModel`] (name, description, signature, parameters); [`method_set`]
//! and [`toolset_entries`] check a set (duplicate names, two tools on one
//! client method, methods that cannot exist); [`toolset_consts`] writes the
//! set checks that only the compiler can evaluate, because `toolset!` sees
//! types, not names. Every violation is an error spanned on the offending
//! token that says how to fix it.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote_spanned, ToTokens};
use syn::Path;

use crate::errors::Errors;
use crate::expand::respan;
use crate::model::{Param, ReceiverKind, Return, Site, ToolModel};
use crate::{names, rules};

/// Checks one tool; all problems at once.
pub fn tool(model: &ToolModel, errors: &mut Errors) {
    let sig = &model.sig;
    let fn_name = names::unraw(&model.fn_ident);

    if let Err(error) = rules::check_tool_name(&model.name) {
        let fix = if model.attrs.name.is_some() {
            format!("{}, e.g. `notes.search`", rules::NAME_RULE)
        } else {
            format!("the name defaults to the fn name; rename `{fn_name}` or set `#[tool(name = \"...\")]`")
        };
        errors.push_at(
            model.name_span,
            format!("invalid tool name: {} ({fix})", error.describe(&model.name)),
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
    mcp_headers(model, &fn_name, errors);
}

/// `mcp(header(..))`: the tool has an input to take the fields from, and
/// no field or header name comes twice (header names ignore case). That
/// each field exists and is a scalar, only the compiler knows: the
/// expansion asks it ([`expand`](crate::expand)).
fn mcp_headers(model: &ToolModel, fn_name: &str, errors: &mut Errors) {
    let Some(headers) = model.attrs.mcp.as_ref().and_then(|m| m.headers.as_ref()) else {
        return;
    };
    if model.input().is_none() {
        for header in headers {
            errors.push_spanned(
                &header.field,
                format!(
                    "`fn {fn_name}` takes no input, so it has no field `{}` to send as a header: add an input parameter whose type has that field",
                    names::unraw(&header.field)
                ),
            );
        }
        return;
    }
    for (i, header) in headers.iter().enumerate() {
        let field = names::unraw(&header.field);
        let name = header.name.value();
        if let Some(first) = headers[..i]
            .iter()
            .find(|h| names::unraw(&h.field) == field)
        {
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
                    names::unraw(&first.field)
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

/// The tools of a `#[tools]` impl block as a set: no name twice, no client
/// method twice. Returns the client method of each tool, `None` where the
/// tool was refused.
pub fn method_set(models: &[ToolModel], errors: &mut Errors) -> Vec<Option<Ident>> {
    let mut methods = Vec::with_capacity(models.len());
    for (i, model) in models.iter().enumerate() {
        if let Some(first) = models[..i].iter().find(|m| m.name == model.name) {
            errors.push_at(
                model.name_span,
                format!(
                    "duplicate tool name `{}` in this tool set (also used by `{}`): give one of them another `#[tool(name = \"...\")]`",
                    model.name, first.fn_ident
                ),
            );
            methods.push(None);
            continue;
        }
        let method = names::client_method(&model.name);
        if let Some(first) = models[..i]
            .iter()
            .find(|m| rules::same_client_method(&m.name, &model.name))
        {
            errors.push_at(
                model.name_span,
                format!(
                    "tools `{}` and `{}` both map to the client method `{method}`: rename one of them (separators `.` `-` `_` all become `_`)",
                    first.name, model.name
                ),
            );
            methods.push(None);
            continue;
        }
        methods.push(method_ident(&method, model.name_span, &model.name, errors));
    }
    methods
}

/// One entry of `toolset!`: the tool's type, and the client method given
/// for it (`method = Type`), if any.
pub struct Entry<'a> {
    pub ty: &'a Path,
    pub method: Option<&'a Ident>,
}

impl Entry<'_> {
    /// The last segment of the type, without `r#`.
    pub fn type_name(&self) -> String {
        self.ty
            .segments
            .last()
            .map(|s| names::unraw(&s.ident))
            .unwrap_or_default()
    }

    /// The client method: the one given, else the one of the type name.
    pub fn method(&self) -> String {
        match self.method {
            Some(m) => names::unraw(m),
            None => names::client_method(&self.type_name()),
        }
    }

    fn method_span(&self) -> Span {
        self.method
            .map(Ident::span)
            .unwrap_or_else(|| syn::spanned::Spanned::span(self.ty))
    }

    fn display(&self) -> String {
        self.ty.to_token_stream().to_string().replace(' ', "")
    }
}

/// The entries of `toolset!` as far as the macro can see them: not empty,
/// no client method twice. Returns each entry's client method, `None` where
/// it was refused.
pub fn toolset_entries(
    set: &Ident,
    entries: &[Entry<'_>],
    errors: &mut Errors,
) -> Vec<Option<Ident>> {
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

/// The set checks `toolset!` leaves to the compiler, as constants spanned
/// on each entry: no tool name twice, no two names on one client method
/// (names are constants of the tool types, unknown to the macro), and each
/// entry's method is the snake_case of its tool's name.
pub fn toolset_consts(krate: &Path, set: &Ident, entries: &[Entry<'_>]) -> TokenStream {
    let mut checks = TokenStream::new();
    for (j, entry) in entries.iter().enumerate() {
        let span = syn::spanned::Spanned::span(entry.ty);
        let k = respan(krate.to_token_stream(), span);
        let this = respan(entry.ty.to_token_stream(), span);
        let type_name = entry.type_name();
        let method = entry.method();
        let mut tests = Vec::new();
        for earlier in &entries[..j] {
            let other = respan(earlier.ty.to_token_stream(), span);
            let other_name = earlier.display();
            let duplicate = format!(
                "duplicate tool name in tool set `{set}`: `{type_name}` has the same name as `{other_name}`; give one of them another `#[tool(name = \"...\")]`"
            );
            let collision = format!(
                "`{type_name}` and `{other_name}` map to the same client method in tool set `{set}` (their names differ only in separators); rename one of them"
            );
            tests.push(quote_spanned! {span=>
                if #k::__private::str_eq(<#this as #k::Tool>::NAME, <#other as #k::Tool>::NAME) {
                    ::std::panic!(#duplicate);
                }
                if #k::__private::same_client_method(<#this as #k::Tool>::NAME, <#other as #k::Tool>::NAME) {
                    ::std::panic!(#collision);
                }
            });
        }
        let mismatch = format!(
            "in tool set `{set}`, the tool `{type_name}` would get the client method `{method}`, which is not the snake_case of its name: list it as `<snake_case of the name> = {type_name}` (for a tool named `notes.search`: `notes_search = {type_name}`)"
        );
        checks.extend(quote_spanned! {span=>
            const _: () = {
                #(#tests)*
                if !#k::__private::client_method_is(<#this as #k::Tool>::NAME, #method) {
                    ::std::panic!(#mismatch);
                }
            };
            const _: fn() -> #k::ToolDefinition = <#this as #k::StaticTool>::definition;
        });
    }
    checks
}
