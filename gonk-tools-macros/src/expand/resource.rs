//! `#[resource]`: the generated unit struct, its `Resource` impl whose
//! `definition()` is the public builder (`ResourceDefinition::builder`)
//! with the handler and the completions, `Resource::uri` written out from
//! the template, and the checks only the compiler can make, spanned on the
//! user's tokens.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::Path;

use super::primitive::{common_calls, complete_calls, handler, output_requirement};
use super::{krate_doc, requirement, requirements_fn, respan};
use crate::internals::model::resource::ResourceModel;
use crate::internals::model::Primitive;
use crate::internals::template::{Operator, Part, Template};
use crate::internals::{self};

/// `#[resource(..)]` on an `async fn`: the fn, unchanged, followed by
/// what it generates, or by the errors found.
pub fn attribute(args: TokenStream, input: TokenStream) -> TokenStream {
    internals::fn_attribute(input, Primitive::Resource, |item| {
        let model = internals::resource(args, item)?;
        Ok(match &model.template {
            Ok(template) => resource(&model, template),
            // `check::resource` reports a bad template; this keeps the
            // error if it did not.
            Err(error) => syn::Error::new(
                model.attrs.uri.span(),
                error.describe(&model.attrs.uri.value()),
            )
            .to_compile_error(),
        })
    })
}

/// The `serde` / `schemars` crate paths for derives in generated code.
fn derive_crates(krate: &Path) -> (String, String) {
    let k = krate_doc(krate);
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
    calls.extend(common_calls(f, &a.item, &a.primitive));
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
    let requirements = requirements_fn("__resource_requirements", requirements);
    // A template variable is a parameter's name, serde's name too.
    let completes = complete_calls(&a.primitive, |target| {
        let name = target.name();
        quote!(#name)
    });

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
                krate_doc = krate_doc(krate),
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

    let krate_doc = krate_doc(krate);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_resource(args: TokenStream, item: syn::ItemFn) -> String {
        let model = internals::resource(args, &item).unwrap();
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

        let item: syn::ItemFn = syn::parse_quote!(
            async fn summarize(args: Args, s: State<S>) -> String {
                todo!()
            }
        );
        let model =
            internals::prompt(quote!(crate = my_gonk, complete(tag = tags)), &item).unwrap();
        let out = super::super::prompt::prompt(&model).to_string();
        assert!(out.contains("my_gonk"), "{out}");
        assert!(
            !out.contains("gonk_tools"),
            "a path escaped the rename: {out}"
        );
    }
}
