//! Expansion of a validated [`ResourceModel`] or [`PromptModel`]: the
//! generated unit struct, its `Resource` / `Prompt` impl whose
//! `definition()` is the public builder (`ResourceDefinition::builder`,
//! `PromptDefinition::builder`) with the handler and the completions,
//! `Resource::uri` written out from the template, and the checks only the
//! compiler can make, spanned on the user's tokens.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::Path;

use super::attr::Common;
use super::model::{FnModel, PromptModel, ResourceModel};
use super::template::{Operator, Part, Template};
use crate::expand::respan;
use crate::model::{Param, Return};
use crate::names;

/// The builder calls `#[resource]` and `#[prompt]` share: title,
/// description, states, timeout.
fn common_calls(f: &FnModel, common: &Common) -> Vec<TokenStream> {
    let krate = &f.krate;
    let mut calls = Vec::new();
    if let Some(title) = &common.title {
        calls.push(quote!(.title(#title)));
    }
    if let Some(description) = &f.description {
        calls.push(quote!(.description(#description)));
    }
    for state in f.states() {
        let span = state.span();
        calls.push(quote_spanned!(span=> .requires_state::<#state>()));
    }
    for icon in common.icons.iter().flatten() {
        calls.push(quote!(.icon(#krate::resource::Icon::new(#icon))));
    }
    if let Some(timeout) = &common.timeout {
        let secs = timeout.limit.as_secs();
        let nanos = timeout.limit.subsec_nanos();
        calls.push(quote!(.timeout(::core::time::Duration::new(#secs, #nanos))));
    }
    calls
}

/// `.complete("id", note_ids)` for each completer, spanned on the fn path
/// so a completion fn of the wrong shape is reported there.
fn complete_calls(common: &Common) -> Vec<TokenStream> {
    common
        .completers()
        .iter()
        .map(|c| {
            let target = names::unraw(&c.target);
            let f = &c.f;
            let span = f.span();
            quote_spanned!(span=> .complete(#target, #f))
        })
        .collect()
}

/// `let __builder = <select>.handler(__builder, closure);`: the closure
/// over `input: input_ty` (the value the builder hands over) calls the fn
/// with `values` for its value parameters in order, the states extracted,
/// the context passed, the error converted. The handler is attached only
/// when the types meet the builder's bounds (`module::__select`); when
/// they do not, the spanned requirements report it, once.
fn handler(
    f: &FnModel,
    module: &TokenStream,
    input: TokenStream,
    input_ty: TokenStream,
    mut values: Vec<TokenStream>,
) -> TokenStream {
    let krate = &f.krate;
    let output = output_type(f);
    let private = quote!(#krate::__private);
    let fn_ident = &f.fn_ident;
    values.reverse();
    let mut args = Vec::new();
    let mut states = Vec::new();
    for (index, param) in f.params.iter().enumerate() {
        match &param.kind {
            Param::Input(_) => args.push(values.pop().unwrap_or_default()),
            Param::Context { by_ref: true, .. } => args.push(quote!(&__ctx)),
            Param::Context { by_ref: false, .. } => args.push(quote!(__ctx)),
            Param::State(ty) => {
                let var = format_ident!("__state{index}");
                let span = ty.span();
                let state = respan(quote!(#private::state), span);
                states.push(quote_spanned!(span=> let #var = #state::<#ty>(&__ctx)?;));
                args.push(quote!(#var));
            }
        }
    }
    let call = quote!(#fn_ident(#(#args),*));
    let tool_error = quote!(#krate::ToolError);
    let body = match &f.ret {
        Return::Result { err, .. } => {
            let err_span = match err {
                Some(e) => e.span(),
                None => f.sig.output.span(),
            };
            let into_tool_error = respan(
                quote!(#krate::tool::IntoToolError::into_tool_error(__error)),
                err_span,
            );
            quote!({
                #(#states)*
                match #call.await {
                    ::std::result::Result::Ok(__output) => ::std::result::Result::Ok(__output),
                    ::std::result::Result::Err(__error) => ::std::result::Result::Err(#into_tool_error),
                }
            })
        }
        _ => quote!({
            #(#states)*
            ::std::result::Result::Ok::<_, #tool_error>(#call.await)
        }),
    };
    quote! {
        let __builder = {
            #[allow(unused_imports)]
            use #module::__select::{SelectFallback as _, SelectTyped as _};
            (&&#module::__select::Select::<#input_ty, #output>::new()).select()
        }
        .handler(__builder, move |#input: #input_ty, __ctx: #krate::ToolContext| async move #body);
    }
}

/// The output type `O` of the fn (`()` when it returns nothing).
fn output_type(f: &FnModel) -> TokenStream {
    match f.ret.output() {
        Some(ty) => ty.to_token_stream(),
        None => quote!(()),
    }
}

/// `let () = <T as krate::module::Requirement>::CHECK;`, spanned on `ty`:
/// the requirement's message lands on the user's type when it is not met.
fn requirement(krate: &Path, module: &str, requirement: &str, ty: &syn::Type) -> TokenStream {
    let span = ty.span();
    let module = format_ident!("{module}", span = span);
    let requirement = format_ident!("{requirement}", span = span);
    let krate = respan(krate.to_token_stream(), span);
    quote_spanned!(span=> let () = <#ty as #krate::#module::#requirement>::CHECK;)
}

/// The requirement check of the output type, spanned on it (on the fn
/// name when it returns nothing).
fn output_requirement(f: &FnModel, module: &str, name: &str) -> TokenStream {
    match (&f.ret, &f.sig.output) {
        (Return::Plain(ty) | Return::Result { ok: ty, .. }, syn::ReturnType::Type(..)) => {
            requirement(&f.krate, module, name, ty)
        }
        _ => {
            let span = f.fn_ident.span();
            let ty: syn::Type = syn::parse_quote_spanned!(span=> ());
            requirement(&f.krate, module, name, &ty)
        }
    }
}

/// The requirement checks in a fn of their own (never called).
fn checks(name: &str, checks: Vec<TokenStream>) -> TokenStream {
    if checks.is_empty() {
        return quote!();
    }
    let name = format_ident!("{name}");
    quote! {
        #[allow(clippy::all)]
        const _: () = {
            fn #name() {
                #(#checks)*
            }
        };
    }
}

/// The `serde` / `schemars` crate paths for derives in generated code.
fn derive_crates(krate: &Path) -> (String, String) {
    let k = krate.to_token_stream().to_string().replace(' ', "");
    (
        format!("{k}::__private::serde"),
        format!("{k}::__private::schemars"),
    )
}

/// Everything one `#[resource]` expands to, next to the (unchanged) fn.
pub fn resource(model: &ResourceModel, template: &Template) -> TokenStream {
    let f = &model.f;
    let a = &model.attrs;
    let krate = &f.krate;
    let vis = &f.vis;
    let ty = &f.type_ident;
    let fn_ident = &f.fn_ident;
    let uri = &a.uri;
    let name = &f.name;

    // The template variables, in template order, with their parameters.
    let variables: Vec<(&str, Operator, &syn::Ident, &syn::Type)> = template
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Variable { operator, name } => {
                let param = model.param_of(name)?;
                Some((name.as_str(), *operator, param.ident.as_ref()?, &param.ty))
            }
            Part::Literal(_) => None,
        })
        .collect();

    let mut calls = vec![quote!(.name(#name))];
    calls.extend(common_calls(f, &a.common));
    if let Some(mime_type) = &a.mime_type {
        calls.push(quote!(.mime_type(#mime_type)));
    }
    if let Some(size) = a.size {
        calls.push(quote!(.size(#size)));
    }
    if let Some(audience) = &a.audience {
        let roles = audience.iter().map(|role| {
            let variant = format_ident!(
                "{}",
                if role.value == "user" {
                    "User"
                } else {
                    "Assistant"
                },
                span = role.span
            );
            quote!(#krate::resource::Role::#variant)
        });
        calls.push(quote!(.audience(::std::vec![#(#roles),*])));
    }
    if let Some(priority) = a.priority {
        calls.push(quote!(.priority(#priority)));
    }

    let (serde_crate, schemars_crate) = derive_crates(krate);
    // The variables' struct is generic over their types, so a type that
    // is not `Deserialize` fails its requirement, not the derive.
    let (vars_item, input_ty, values) = if variables.is_empty() {
        (quote!(), quote!(#krate::NoInput), Vec::new())
    } else {
        let params: Vec<_> = (0..variables.len())
            .map(|i| format_ident!("__V{i}"))
            .collect();
        let fields = variables
            .iter()
            .zip(&params)
            .map(|((_, _, ident, _), param)| quote!(#ident: #param));
        let types = variables.iter().map(|(_, _, _, ty)| ty);
        let vars_item = quote! {
            /// The template variables of one read, from the URI.
            #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
            #[serde(crate = #serde_crate)]
            #[schemars(crate = #schemars_crate)]
            struct __Variables<#(#params),*> { #(#fields),* }
        };
        let values = f
            .values()
            .filter_map(|p| p.ident.as_ref())
            .map(|ident| quote!(__variables.#ident))
            .collect();
        (vars_item, quote!(__Variables<#(#types),*>), values)
    };
    let module = quote!(#krate::resource);
    let handler = handler(f, &module, quote!(__variables), input_ty, values);
    let mut requirements = Vec::new();
    for (_, _, _, ty) in &variables {
        requirements.push(requirement(krate, "resource", "DeserializeVariable", ty));
        requirements.push(requirement(krate, "resource", "VariableSchema", ty));
    }
    requirements.push(output_requirement(f, "resource", "ResourceOutput"));
    let requirements = checks("__resource_requirements", requirements);
    let completes = complete_calls(&a.common);

    // `Resource::Params` and `Resource::uri`.
    let params_ident = format_ident!("{}Params", ty);
    let (params_item, params_ty) = match variables.as_slice() {
        [] => (quote!(), quote!(())),
        [(_, _, _, ty)] => (quote!(), quote!(#ty)),
        several => {
            let fields = several.iter().map(|(var, _, ident, ty)| {
                let doc = format!("The `{{{var}}}` variable of the URI template.");
                quote!(#[doc = #doc] pub #ident: #ty)
            });
            let doc = format!(
                "The variables of the URI template `{}` of [`{ty}`]: [`{ty}::uri`]({krate_doc}::resource::Resource::uri) writes them into a URI.",
                uri.value(),
                krate_doc = krate.to_token_stream().to_string().replace(' ', ""),
            );
            (
                quote_spanned! {fn_ident.span()=>
                    #[doc = #doc]
                    #vis struct #params_ident { #(#fields),* }
                },
                quote!(#params_ident),
            )
        }
    };
    let single = variables.len() == 1;
    let writes = template.parts.iter().map(|part| match part {
        // As written, as `UriTemplate::expand` does, so the URI matches.
        Part::Literal(text) => quote!(__uri.push_str(#text);),
        Part::Variable { operator, name } => {
            let Some((_, _, ident, var_ty)) = variables.iter().find(|v| v.0 == name) else {
                return quote!();
            };
            let value = if single {
                quote!(__params)
            } else {
                quote!(&__params.#ident)
            };
            let operator = format_ident!("{operator:?}");
            let span = var_ty.span();
            let k = respan(krate.to_token_stream(), span);
            quote_spanned! {span=>
                <#var_ty as #k::resource::UriVariable>::write_uri_variable(#value, #k::resource::UriOperator::#operator, &mut __uri);
            }
        }
    });
    let uri_fn = if variables.is_empty() {
        quote! {
            fn uri(_: &()) -> ::std::string::String {
                ::std::string::String::from(<Self as #krate::resource::Resource>::URI)
            }
        }
    } else {
        let capacity = uri.value().len();
        quote! {
            fn uri(__params: &Self::Params) -> ::std::string::String {
                let mut __uri = ::std::string::String::with_capacity(#capacity);
                #(#writes)*
                __uri
            }
        }
    };

    let krate_doc = krate.to_token_stream().to_string().replace(' ', "");
    let doc = format!(
        "The resource `{name}` (`{}`), generated by `#[resource]` from [`{fn_ident}`]. Register it with `{ty}::definition()` and build its URI with `{ty}::uri(..)` ([`Resource`]({krate_doc}::resource::Resource)).",
        uri.value()
    );
    let type_item = quote_spanned! {fn_ident.span()=>
        #[doc = #doc]
        #[allow(dead_code)]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #ty;
    };
    quote! {
        #type_item
        #params_item

        impl #krate::resource::Resource for #ty {
            const URI: &'static str = #uri;
            type Params = #params_ty;

            fn definition() -> #krate::resource::ResourceDefinition {
                #vars_item
                let __builder = #krate::resource::ResourceDefinition::builder(<Self as #krate::resource::Resource>::URI)
                    #(#calls)*;
                #handler
                __builder
                    #(#completes)*
                    .build()
            }

            #uri_fn
        }

        #requirements
    }
}

/// Everything one `#[prompt]` expands to, next to the (unchanged) fn.
pub fn prompt(model: &PromptModel) -> TokenStream {
    let f = &model.f;
    let common = &model.attrs.common;
    let krate = &f.krate;
    let vis = &f.vis;
    let ty = &f.type_ident;
    let fn_ident = &f.fn_ident;
    let name = &f.name;

    let calls = common_calls(f, common);
    let (arguments, values) = match model.arguments() {
        Some(args) => (args.to_token_stream(), vec![quote!(__arguments)]),
        None => (quote!(#krate::NoInput), Vec::new()),
    };
    let module = quote!(#krate::prompt);
    let handler = handler(f, &module, quote!(__arguments), arguments.clone(), values);
    let completes = complete_calls(common);

    let mut requirements = Vec::new();
    if let Some(args) = model.arguments() {
        requirements.push(requirement(krate, "prompt", "DeserializeArguments", args));
        requirements.push(requirement(krate, "prompt", "ArgumentsSchema", args));
    }
    requirements.push(output_requirement(f, "prompt", "PromptOutput"));
    // `complete(tag = ..)` names a field of the arguments: reading it,
    // spanned on `tag`, makes a missing field rustc's "no field" error
    // there.
    let field_checks = match model.arguments() {
        Some(args) => common
            .completers()
            .iter()
            .map(|c| {
                let field = &c.target;
                let span = field.span();
                let args = respan(args.to_token_stream(), span);
                quote_spanned!(span=> let _ = |__arguments: &#args| { let _ = &__arguments.#field; };)
            })
            .collect(),
        None => Vec::new(),
    };
    requirements.extend(field_checks);
    let checks = checks("__prompt_requirements", requirements);

    let krate_doc = krate.to_token_stream().to_string().replace(' ', "");
    let doc = format!(
        "The prompt `{name}`, generated by `#[prompt]` from [`{fn_ident}`]. Register it with `{ty}::definition()` ([`Prompt`]({krate_doc}::prompt::Prompt))."
    );
    let type_item = quote_spanned! {fn_ident.span()=>
        #[doc = #doc]
        #[allow(dead_code)]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #ty;
    };
    quote! {
        #type_item

        impl #krate::prompt::Prompt for #ty {
            const NAME: &'static str = #name;
            type Arguments = #arguments;

            fn definition() -> #krate::prompt::PromptDefinition {
                let __builder = #krate::prompt::PromptDefinition::builder(<Self as #krate::prompt::Prompt>::NAME)
                    #(#calls)*;
                #handler
                __builder
                    #(#completes)*
                    .build()
            }
        }

        #checks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::Errors;
    use crate::primitives::attr::{PromptAttrs, ResourceAttrs};

    fn expand_resource(args: TokenStream, item: syn::ItemFn) -> String {
        let attrs = ResourceAttrs::parse(args).unwrap();
        let model = ResourceModel::new(attrs, item.vis.clone(), &item.sig, &item.attrs);
        let mut errors = Errors::default();
        crate::primitives::validate::resource(&model, &mut errors);
        assert!(errors.is_empty());
        let template = model.template.clone().unwrap();
        resource(&model, &template).to_string()
    }

    #[test]
    fn a_renamed_crate_is_used_everywhere() {
        let out = expand_resource(
            quote!(
                "notes://{id}/{+rest}",
                crate = my_gonk,
                title = "T",
                mime_type = "text/plain",
                size = 3,
                audience = ["user"],
                priority = 0.5,
                timeout = "1s",
                complete(id = ids)
            ),
            syn::parse_quote!(
                /// A note.
                async fn note(
                    id: u64,
                    rest: String,
                    s: State<S>,
                    ctx: &ToolContext,
                ) -> Result<String, E> {
                    todo!()
                }
            ),
        );
        assert!(out.contains("my_gonk"), "{out}");
        assert!(
            !out.contains("gonk_tools"),
            "a path escaped the rename: {out}"
        );
        assert!(out.contains("struct NoteParams"), "{out}");

        let attrs = PromptAttrs::parse(quote!(crate = my_gonk, complete(tag = tags))).unwrap();
        let item: syn::ItemFn = syn::parse_quote!(
            async fn summarize(args: Args, s: State<S>) -> String {
                todo!()
            }
        );
        let model = PromptModel::new(attrs, item.vis.clone(), &item.sig, &item.attrs);
        let out = prompt(&model).to_string();
        assert!(out.contains("my_gonk"), "{out}");
        assert!(
            !out.contains("gonk_tools"),
            "a path escaped the rename: {out}"
        );
    }
}
