//! The definition of one tool as `ToolDefinition::builder(NAME)` calls:
//! one function per attribute group, then the handler and the schemas.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{LitStr, Path};

use super::handler;
use super::input_type;
use crate::expand::{duration, output_type};
use crate::internals::attr::tool::{Approval, ToolAttrs};
use crate::internals::attr::{Choice, Flag};
use crate::internals::model::tool::ToolModel;

/// `ToolDefinition::builder(NAME) ... .build()`.
pub fn definition(model: &ToolModel) -> TokenStream {
    let krate = &model.f.krate;
    let a = &model.attrs;
    let description = model.f.description.clone().unwrap_or_default();
    let mut calls = vec![quote!(.description(#description))];
    calls.extend(listing(krate, a));
    calls.extend(approval(krate, a));
    calls.extend(capabilities(krate, a));
    calls.extend(hints(krate, a));
    calls.extend(authorization(krate, a));
    calls.extend(behaviour(krate, a));
    calls.extend(ui(krate, a));
    for state in model.f.states() {
        let span = state.span();
        calls.push(quote_spanned!(span=> .requires_state::<#state>()));
    }

    let select = select(model);
    let approval_fn = approval_fn(model, &select);
    let handler = handler::handler(model, &select);
    let schemas = schemas(model);
    quote! {
        let __builder = #krate::ToolDefinition::builder(<Self as #krate::Tool>::NAME)
            #(#calls)*;
        #approval_fn
        #handler
        #schemas
        __builder.build()
    }
}

fn strings(list: &[LitStr]) -> TokenStream {
    quote!(::std::vec![#(::std::string::String::from(#list)),*])
}

fn some_string(value: &LitStr) -> TokenStream {
    quote!(::std::option::Option::Some(::std::string::String::from(#value)))
}

/// `krate::definition::Type::Variant` of a choice: `"on-demand"` of
/// `Visibility` is `Visibility::OnDemand`.
fn choice_path(krate: &Path, ty: &str, choice: &Choice) -> TokenStream {
    let ty = format_ident!("{ty}");
    let variant: String = choice
        .value
        .split('-')
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => String::new(),
            }
        })
        .collect();
    let variant = format_ident!("{variant}", span = choice.span);
    quote!(#krate::definition::#ty::#variant)
}

/// Flags as `target.field = value;` statements.
fn flag_sets(target: TokenStream, flags: &[Flag], wrap: fn(bool) -> TokenStream) -> TokenStream {
    let sets = flags.iter().map(|f| {
        let field = format_ident!("{}", f.name);
        let value = wrap(f.value);
        quote!(#target.#field = #value;)
    });
    quote!(#(#sets)*)
}

/// Where the tool is listed and found: category, visibility, tags,
/// keywords, related tools, cost, latency.
fn listing(krate: &Path, a: &ToolAttrs) -> Vec<TokenStream> {
    let mut calls = Vec::new();
    if let Some(category) = &a.category {
        calls.push(quote!(.category(#category)));
    }
    if let Some(v) = &a.visibility {
        let v = choice_path(krate, "Visibility", v);
        calls.push(quote!(.visibility(#v)));
    }
    for (method, list) in [
        ("tags", &a.tags),
        ("keywords", &a.keywords),
        ("related_to", &a.related_to),
    ] {
        if let Some(list) = list {
            let method = format_ident!("{method}");
            calls.push(quote!(.#method::<&'static str>([#(#list),*])));
        }
    }
    if let Some(c) = &a.cost {
        let c = choice_path(krate, "Cost", c);
        calls.push(quote!(.cost(#c)));
    }
    if let Some(l) = &a.latency {
        let l = choice_path(krate, "Latency", l);
        calls.push(quote!(.latency(#l)));
    }
    calls
}

/// A static approval (`approval = "read"` or `approval(..)`); an approval
/// fn is attached with the handler ([`approval_fn`]).
fn approval(krate: &Path, a: &ToolAttrs) -> Option<TokenStream> {
    match a.approval.as_ref()? {
        Approval::Tier(t) => {
            let t = choice_path(krate, "ApprovalTier", t);
            Some(quote!(.approval(#t)))
        }
        Approval::Spec {
            tier,
            overridable,
            reason,
        } => {
            let t = choice_path(krate, "ApprovalTier", tier);
            let reason = match reason {
                Some(r) => some_string(r),
                None => quote!(::std::option::Option::None),
            };
            Some(quote! {
                .approval({
                    let mut spec = #krate::definition::ApprovalSpec::from(#t);
                    spec.overridable = #overridable;
                    spec.reason = #reason;
                    spec
                })
            })
        }
        Approval::Fn(_) => None,
    }
}

fn capabilities(krate: &Path, a: &ToolAttrs) -> Option<TokenStream> {
    let sets = flag_sets(quote!(caps), a.capabilities.as_ref()?, |v| quote!(#v));
    Some(quote! {
        .capabilities({
            let mut caps = #krate::definition::Capabilities::default();
            #sets
            caps
        })
    })
}

/// `hints.<name_field> = ..; hints.visibility = ..;` of a surface's
/// `name = ".."` and `visibility = ".."`.
fn surface_name_and_visibility(
    krate: &Path,
    name_field: &str,
    name: &Option<LitStr>,
    visibility: &Option<Choice>,
) -> Vec<TokenStream> {
    let mut sets = Vec::new();
    if let Some(name) = name {
        let field = format_ident!("{name_field}");
        let name = some_string(name);
        sets.push(quote!(hints.#field = #name;));
    }
    if let Some(v) = visibility {
        let v = choice_path(krate, "Visibility", v);
        sets.push(quote!(hints.visibility = ::std::option::Option::Some(#v);));
    }
    sets
}

/// Per-surface hints: `cli(..)`, `mcp(..)`, `pi(..)`.
fn hints(krate: &Path, a: &ToolAttrs) -> Vec<TokenStream> {
    let mut calls = Vec::new();
    if let Some(cli) = &a.cli {
        let mut sets = Vec::new();
        if let Some(command) = &cli.command {
            let command = some_string(command);
            sets.push(quote!(hints.command = #command;));
        }
        for (field, list) in [
            ("positional", &cli.positional),
            ("aliases", &cli.aliases),
            ("examples", &cli.examples),
        ] {
            if let Some(list) = list {
                let field = format_ident!("{field}");
                let list = strings(list);
                sets.push(quote!(hints.#field = #list;));
            }
        }
        calls.push(quote! {
            .cli({
                let mut hints = #krate::definition::CliHints::default();
                #(#sets)*
                hints
            })
        });
    }
    if let Some(mcp) = &a.mcp {
        let mut sets = surface_name_and_visibility(krate, "mcp_name", &mcp.name, &mcp.visibility);
        sets.push(flag_sets(
            quote!(hints.annotations),
            &mcp.annotations,
            |v| quote!(::std::option::Option::Some(#v)),
        ));
        calls.push(quote! {
            .mcp({
                let mut hints = #krate::definition::McpHints::default();
                #(#sets)*
                hints
            })
        });
        for header in mcp.headers.iter().flatten() {
            let property = header.field.name();
            let name = &header.name;
            calls.push(quote!(.mcp_header(#property, #name)));
        }
    }
    if let Some(pi) = &a.pi {
        let mut sets = surface_name_and_visibility(krate, "pi_name", &pi.name, &pi.visibility);
        if let Some(value) = pi.requires_approval {
            sets.push(quote!(hints.requires_approval = ::std::option::Option::Some(#value);));
        }
        if let Some(glyph) = &pi.status_glyph {
            let glyph = some_string(glyph);
            sets.push(quote!(hints.status_glyph = #glyph;));
        }
        calls.push(quote! {
            .pi({
                let mut hints = #krate::definition::PiHints::default();
                #(#sets)*
                hints
            })
        });
    }
    calls
}

/// `authorization(..)` and `authorization_resource`.
fn authorization(krate: &Path, a: &ToolAttrs) -> Vec<TokenStream> {
    let mut calls = Vec::new();
    if let Some(auth) = &a.authorization {
        let mut sets = Vec::new();
        if let Some(level) = &auth.auth_level {
            let level = some_string(level);
            sets.push(quote!(spec.auth_level = #level;));
        }
        if let Some(role) = &auth.required_role {
            let role = some_string(role);
            sets.push(quote!(spec.required_role = #role;));
        }
        if let Some(callers) = &auth.allowed_callers {
            let callers = strings(callers);
            sets.push(quote!(spec.allowed_callers = #callers;));
        }
        calls.push(quote! {
            .authorization({
                let mut spec = #krate::definition::AuthorizationSpec::default();
                #(#sets)*
                spec
            })
        });
    }
    if let Some(resource) = &a.authorization_resource {
        let kind = &resource.kind;
        let fields = resource.required_fields.as_ref().map(|f| {
            let f = strings(f);
            quote!(resource.required_fields = #f;)
        });
        calls.push(quote! {
            .authorization_resource({
                #[allow(unused_mut)]
                let mut resource = #krate::definition::AuthorizationResource::new(#kind);
                #fields
                resource
            })
        });
    }
    calls
}

/// Output validation, registration predicate, capability probe,
/// timeout, listing cache lifetime, detached dispatch and required OAuth
/// scopes.
fn behaviour(krate: &Path, a: &ToolAttrs) -> Vec<TokenStream> {
    let mut calls = Vec::new();
    if let Some(mode) = &a.validate_output {
        let mode = choice_path(krate, "ValidateOutput", mode);
        calls.push(quote!(.validate_output(#mode)));
    }
    if let Some(f) = &a.requires {
        calls.push(quote!(.requires(#f)));
    }
    if let Some(f) = &a.capability_for {
        calls.push(quote!(.capability_for(#f)));
    }
    if let Some(d) = &a.degraded_description {
        calls.push(quote!(.degraded_description(#d)));
    }
    if let Some(timeout) = &a.item.timeout {
        let limit = duration(&timeout.limit);
        calls.push(quote!(.timeout(#limit)));
    }
    if let Some(ttl) = &a.cache_ttl {
        let ttl = duration(ttl);
        calls.push(quote!(.cache_ttl(#ttl)));
    }
    if a.detached == Some(true) {
        calls.push(quote!(.detached()));
    }
    if let Some(scopes) = &a.scopes {
        calls.push(quote!(.scopes::<&'static str>([#(#scopes),*])));
    }
    calls
}

/// `ui = ".."` / `ui(uri = .., visibility = ..)`: the linked MCP App.
fn ui(krate: &Path, a: &ToolAttrs) -> Vec<TokenStream> {
    let Some(ui) = &a.ui else {
        return Vec::new();
    };
    let uri = &ui.uri;
    let mut calls = vec![quote!(.ui(#uri))];
    if let Some(visibility) = &ui.visibility {
        let visibility = visibility
            .iter()
            .map(|v| choice_path(krate, "UiVisibility", v));
        calls.push(quote!(.ui_visibility([#(#visibility),*])));
    }
    calls
}

/// The typed builder calls, or no-ops when the input/output types miss a
/// bound (the spanned requirement check reports it once): autoref
/// specialization over `__private::Select`.
fn select(model: &ToolModel) -> TokenStream {
    let private = {
        let krate = &model.f.krate;
        quote!(#krate::__private)
    };
    let input = input_type(model);
    let output = output_type(&model.f.ret);
    quote! {{
        #[allow(unused_imports)]
        use #private::{SelectFallback as _, SelectTyped as _};
        (&&#private::Select::<#input, #output>::new()).select()
    }}
}

/// `approval = path::to_fn`: a fn of the validated input.
fn approval_fn(model: &ToolModel, select: &TokenStream) -> Option<TokenStream> {
    let Some(Approval::Fn(f)) = &model.attrs.approval else {
        return None;
    };
    let input = input_type(model);
    Some(
        quote!(let __builder = #select.approval_with(__builder, |__input: &#input| (#f)(__input));),
    )
}

/// The `input_json_schema` override and the output schema (when the
/// output type has one and it is not opted out).
fn schemas(model: &ToolModel) -> TokenStream {
    let krate = &model.f.krate;
    let a = &model.attrs;
    let private = quote!(#krate::__private);
    let input_json_schema = a
        .input_json_schema
        .as_ref()
        .map(|schema| quote!(let __builder = __builder.input_json_schema(#schema);));
    let output_schema = match model.f.ret.output() {
        Some(out) if a.output_schema.as_ref().is_none_or(|b| b.value) => Some(quote! {
            let __builder = {
                #[allow(unused_imports)]
                use #private::{SelectFallbackSchema as _, SelectTypedSchema as _};
                (&&#private::SelectSchema::<#out>::new()).select()
            }
            .output_schema(__builder);
        }),
        _ => None,
    };
    quote!(#input_json_schema #output_schema)
}
