//! Expansion of a validated [`ToolModel`]: the generated type, its
//! [`Tool`] impl, the spanned checks of its input and output types, and the
//! definition ([`definition`]) with its handler ([`handler`]).
//!
//! [`tool_attribute`] is the whole `#[tool]` pipeline: parse the attribute
//! ([`attr`](crate::attr)), build the model, validate it, expand.

mod definition;
mod handler;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Path, Type};

use crate::attr::ToolAttrs;
use crate::errors::Errors;
use crate::model::{Site, ToolModel};
use crate::validate;

/// `#[tool]` on a free `async fn`: the fn, unchanged, followed by what it
/// generates, or by the errors found.
pub fn tool_attribute(args: TokenStream, input: TokenStream) -> TokenStream {
    let item: syn::ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let error = syn::Error::new(
                Span::call_site(),
                "`#[tool]` goes on an `async fn` (or on a method of an impl block marked `#[tools]`)",
            )
            .to_compile_error();
            return quote!(#error #input);
        }
    };
    let attrs = match ToolAttrs::parse(args) {
        Ok(attrs) => attrs,
        Err(error) => {
            let error = error.to_compile_error();
            return quote!(#item #error);
        }
    };
    let model = ToolModel::new(attrs, Site::Free, item.vis.clone(), &item.sig, &item.attrs);
    let mut errors = Errors::default();
    validate::tool(&model, &mut errors);
    if let Err(error) = errors.finish() {
        let error = error.to_compile_error();
        return quote!(#item #error);
    }
    let generated = tool(&model);
    quote!(#item #generated)
}

/// Re-spans every token of `tokens` (so an error in generated code lands
/// on the user's token).
pub fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// The type the handler takes as input.
pub fn input_type(model: &ToolModel) -> TokenStream {
    let krate = &model.krate;
    match model.input() {
        Some(ty) => ty.to_token_stream(),
        None => quote!(#krate::NoInput),
    }
}

/// The output data type.
pub fn output_type(model: &ToolModel) -> TokenStream {
    match model.ret.output() {
        Some(ty) => ty.to_token_stream(),
        None => quote!(()),
    }
}

/// `let () = <T as krate::tool::Requirement>::CHECK;`, spanned on `ty`:
/// the requirement's message (`#[diagnostic::on_unimplemented]`) lands on
/// the user's type when `ty` does not meet it.
fn requirement(krate: &Path, requirement: &str, ty: &Type) -> TokenStream {
    let span = ty.span();
    let requirement = format_ident!("{requirement}", span = span);
    let krate = respan(krate.to_token_stream(), span);
    quote_spanned!(span=> let () = <#ty as #krate::tool::#requirement>::CHECK;)
}

/// For each `mcp(header(field = ..))`, a closure that reads the field and
/// requires `McpHeaderValue` of it, spanned on the user's field ident: a
/// field the input lacks is rustc's "no field" error there, and a field
/// that is not a scalar is the trait's message there.
fn header_fields(model: &ToolModel, input: &Type) -> Vec<TokenStream> {
    let headers = model.attrs.mcp.as_ref().and_then(|m| m.headers.as_ref());
    headers
        .into_iter()
        .flatten()
        .map(|header| {
            let field = &header.field;
            let span = field.span();
            let krate = respan(model.krate.to_token_stream(), span);
            quote_spanned! {span=>
                let _ = |__input: &#input| #krate::definition::McpHeaderValue::__mcp_header_value(&__input.#field);
            }
        })
        .collect()
}

/// Everything one tool expands to, next to the (unchanged) fn.
pub fn tool(model: &ToolModel) -> TokenStream {
    let krate = &model.krate;
    let vis = &model.vis;
    let ty = &model.type_ident;
    let name = &model.name;
    let input = input_type(model);
    let output = output_type(model);
    let fn_ident = &model.fn_ident;

    let mut checks = Vec::new();
    if let Some(ty) = model.input() {
        checks.push(requirement(krate, "DeserializeInput", ty));
        checks.push(requirement(krate, "InputSchema", ty));
        checks.extend(header_fields(model, ty));
    }
    if let Some(out) = model.ret.output() {
        checks.push(requirement(krate, "SerializeOutput", out));
        if model.attrs.output_schema.as_ref().is_none_or(|b| b.value) {
            checks.push(requirement(krate, "OutputSchema", out));
        }
    }

    let definition = definition::definition(model);
    let krate_doc = krate.to_token_stream().to_string().replace(' ', "");
    let doc = match &model.site {
        Site::Free => format!(
            "The tool `{name}`, generated by `#[tool]` from [`{fn_ident}`]. Register it with `{ty}::definition()` ([`StaticTool`]({krate_doc}::StaticTool)); call it with `ctx.call::<{ty}>(..)` or a typed client.",
        ),
        Site::Method { self_ty } => format!(
            "The tool `{name}`, generated by `#[tools]` from `{}::{fn_ident}`. Its definition captures an `Arc` of the receiver ([`MethodTool`]({krate_doc}::MethodTool)).",
            self_ty.to_token_stream(),
        ),
    };
    let definition_impl = match &model.site {
        Site::Free => quote! {
            impl #krate::StaticTool for #ty {
                fn definition() -> #krate::ToolDefinition {
                    #definition
                }
            }
        },
        Site::Method { self_ty } => quote! {
            impl #krate::MethodTool for #ty {
                type Receiver = #self_ty;
                fn definition(__receiver: ::std::sync::Arc<#self_ty>) -> #krate::ToolDefinition {
                    #definition
                }
            }
        },
    };

    let detached = model.attrs.detached == Some(true);
    // `Tool_000` (from `fn tool_000`) keeps its `_`: see `names::camel_case`.
    let type_item = quote_spanned! {model.fn_ident.span()=>
        #[doc = #doc]
        #[allow(dead_code, non_camel_case_types)]
        #vis enum #ty {}
    };
    quote! {
        #type_item

        impl #krate::Tool for #ty {
            const NAME: &'static str = #name;
            const DETACHED: bool = #detached;
            type Input = #input;
            type Output = #output;
        }

        #definition_impl

        #[allow(clippy::all)]
        const _: () = {
            fn __tool_requirements() {
                #(#checks)*
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(args: TokenStream, item: syn::ItemFn, site: Site) -> String {
        let attrs = ToolAttrs::parse(args).unwrap();
        let model = ToolModel::new(attrs, site, item.vis.clone(), &item.sig, &item.attrs);
        let mut errors = Errors::default();
        crate::validate::tool(&model, &mut errors);
        assert!(errors.is_empty());
        tool(&model).to_string()
    }

    #[test]
    fn a_renamed_crate_is_used_everywhere() {
        let item: syn::ItemFn = syn::parse_quote! {
            /// Stream with state and an approval fn.
            async fn t(input: In, ctx: &ToolContext, s: State<S>) -> impl Stream<Item = ToolEvent> { todo!() }
        };
        let out = expand(
            quote!(
                crate = my_gonk,
                approval = pick,
                capabilities(reads_fs),
                mcp(read_only, header(region = "Region")),
                cache_ttl = "5m",
                cli(command = "c"),
                pi(requires_approval),
                authorization(required_role = "r"),
                authorization_resource = "note",
                validate_output = "lax",
                cost = "low",
                latency = "instant",
                visibility = "always"
            ),
            item,
            Site::Free,
        );
        assert!(out.contains("my_gonk"), "{out}");
        assert!(
            !out.contains("gonk_tools"),
            "a path escaped the rename: {out}"
        );

        let item: syn::ItemFn = syn::parse_quote! {
            /// A method.
            async fn m(&self) -> Result<u8, E> { todo!() }
        };
        let site = Site::Method {
            self_ty: Box::new(syn::parse_quote!(Notes)),
        };
        let out = expand(quote!(crate = ::my_gonk), item, site);
        assert!(out.contains(":: my_gonk"), "{out}");
        assert!(
            !out.contains("gonk_tools"),
            "a path escaped the rename: {out}"
        );
    }
}
