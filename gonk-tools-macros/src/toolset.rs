//! Tool sets: `#[tools]` on an impl block and `toolset!` over `#[tool]`
//! types. Both give the same API — `TOOL_NAMES`, `tool_definitions()`,
//! `register_tools(&registry)` — and a typed client ([`client`](crate::client));
//! both refuse, at compile time, a duplicate tool name and two tools that
//! map to the same client method ([`validate`](crate::validate)).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Attribute, Ident, ImplItem, ItemImpl, Path, Token, Type, Visibility};

use crate::attr::{SetOptions, ToolAttrs};
use crate::client::{self, Method};
use crate::errors::Errors;
use crate::expand;
use crate::model::{Site, ToolModel};
use crate::validate::{self, Entry};

fn first_line(description: &str) -> &str {
    description.lines().next().unwrap_or("")
}

fn default_crate() -> Path {
    syn::parse_quote!(::gonk_tools)
}

fn is_tool_attr(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "tool")
}

/// The `#[tool]` methods of an impl block, as models; their attributes
/// are taken off the methods.
fn method_models(
    item: &mut ItemImpl,
    self_ty: &Type,
    options: &SetOptions,
    errors: &mut Errors,
) -> Vec<ToolModel> {
    let mut models = Vec::new();
    for impl_item in &mut item.items {
        let ImplItem::Fn(method) = impl_item else {
            continue;
        };
        let mut tool_attr = None;
        let mut kept = Vec::new();
        for attr in method.attrs.drain(..) {
            if is_tool_attr(&attr) && tool_attr.is_none() {
                tool_attr = Some(attr);
            } else {
                kept.push(attr);
            }
        }
        method.attrs = kept;
        let Some(attr) = tool_attr else {
            continue;
        };
        let args = match &attr.meta {
            syn::Meta::Path(_) => TokenStream::new(),
            syn::Meta::List(list) => list.tokens.clone(),
            syn::Meta::NameValue(nv) => {
                errors.push_spanned(nv, "write `#[tool]` or `#[tool(key = value, ..)]`");
                continue;
            }
        };
        let mut attrs = match ToolAttrs::parse(args) {
            Ok(attrs) => attrs,
            Err(error) => {
                errors.push(error);
                continue;
            }
        };
        if attrs.krate.is_none() {
            attrs.krate = options.krate.clone();
        }
        let model = ToolModel::new(
            attrs,
            Site::Method {
                self_ty: Box::new(self_ty.clone()),
            },
            method.vis.clone(),
            &method.sig,
            &method.attrs,
        );
        validate::tool(&model, errors);
        models.push(model);
    }
    models
}

/// `#[tools]` on an impl block.
pub fn tools(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let mut options = SetOptions::default();
    let parser = syn::meta::parser(|meta| options.parse_key(meta));
    syn::parse::Parser::parse2(parser, args)?;
    let mut item: ItemImpl = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            "`#[tools]` goes on an inherent impl block: `#[tools] impl MyType { #[tool] async fn .. }`",
        )
    })?;
    if let Some((_, path, _)) = &item.trait_ {
        return Err(syn::Error::new_spanned(
            path,
            "`#[tools]` goes on an inherent impl block (`impl MyType`), not a trait impl",
        ));
    }
    if !item.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &item.generics,
            "`#[tools]` does not support generic impl blocks: the tools' types must be concrete; implement the tools on a concrete type",
        ));
    }
    let self_ty: Type = (*item.self_ty).clone();
    let self_ident = match &self_ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.clone()),
        _ => None,
    };
    let Some(self_ident) = self_ident else {
        return Err(syn::Error::new_spanned(
            &self_ty,
            "`#[tools]` needs a named type: `impl MyType`",
        ));
    };

    let mut errors = Errors::default();
    let models = method_models(&mut item, &self_ty, &options, &mut errors);
    if models.is_empty() && errors.is_empty() {
        errors.push_spanned(
            &item.self_ty,
            "`#[tools]` found no `#[tool]` method in this impl block: mark the tool methods with `#[tool]`",
        );
    }
    let idents = validate::method_set(&models, &mut errors);
    if let Err(error) = errors.finish() {
        let error = error.to_compile_error();
        return Ok(quote!(#item #error));
    }

    let krate = options.krate.clone().unwrap_or_else(default_crate);
    let methods: Vec<Method> = models
        .iter()
        .zip(idents)
        .filter_map(|(model, ident)| {
            let ty = &model.type_ident;
            Some(Method {
                ident: ident?,
                tool: quote!(#ty),
                doc: format!(
                    "Calls `{}`: {}",
                    model.name,
                    first_line(model.description.as_deref().unwrap_or(""))
                ),
            })
        })
        .collect();
    let tools = models.iter().map(expand::tool);
    let types: Vec<&Ident> = models.iter().map(|m| &m.type_ident).collect();
    let vis = models[0].vis.clone();
    let client_ident = options
        .client
        .clone()
        .unwrap_or_else(|| format_ident!("{}Client", self_ident));
    let set_doc = format!("the tools of [`{self_ident}`]");
    let client = client::client(&krate, &vis, &client_ident, &set_doc, &methods);
    Ok(quote! {
        #item

        #(#tools)*

        impl #self_ty {
            /// The names of this type's tools, in order.
            #vis const TOOL_NAMES: &'static [&'static str] = &[#(<#types as #krate::Tool>::NAME),*];

            /// The definitions of this type's tools, bound to this value.
            #vis fn tool_definitions(self: &::std::sync::Arc<Self>) -> ::std::vec::Vec<#krate::ToolDefinition> {
                ::std::vec![#(<#types as #krate::MethodTool>::definition(::std::sync::Arc::clone(self))),*]
            }

            /// Registers this type's tools, bound to this value, in
            /// `registry` (all or none).
            #vis fn register_tools(
                self: &::std::sync::Arc<Self>,
                registry: &#krate::ToolRegistry,
            ) -> ::std::result::Result<(), #krate::RegistryError> {
                registry.register_all(self.tool_definitions())
            }
        }

        #client
    })
}

/// One entry of `toolset!`: `Type` or `method = Type`.
struct EntryTokens {
    method: Option<Ident>,
    ty: Path,
}

impl Parse for EntryTokens {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let method = if input.peek(Ident) && input.peek2(Token![=]) {
            let method: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            Some(method)
        } else {
            None
        };
        Ok(EntryTokens {
            method,
            ty: input.parse()?,
        })
    }
}

/// The input of `toolset!`.
struct Toolset {
    attrs: Vec<Attribute>,
    options: SetOptions,
    vis: Visibility,
    ident: Ident,
    entries: Punctuated<EntryTokens, Token![,]>,
}

impl Parse for Toolset {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut attrs = Vec::new();
        let mut options = SetOptions::default();
        for attr in input.call(Attribute::parse_outer)? {
            if attr.path().is_ident("toolset") {
                attr.parse_nested_meta(|meta| options.parse_key(meta))?;
            } else {
                attrs.push(attr);
            }
        }
        let vis: Visibility = input.parse()?;
        input.parse::<Token![struct]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "write `toolset! { pub struct MyTools { ToolA, ToolB } }`",
            )
        })?;
        let ident: Ident = input.parse()?;
        let content;
        syn::braced!(content in input);
        let entries = content.parse_terminated(EntryTokens::parse, Token![,])?;
        Ok(Toolset {
            attrs,
            options,
            vis,
            ident,
            entries,
        })
    }
}

/// `toolset! { pub struct NotesTools { NotesSearch, NotesCreate } }`.
pub fn toolset(input: TokenStream) -> syn::Result<TokenStream> {
    let set: Toolset = syn::parse2(input)?;
    let krate = set.options.krate.clone().unwrap_or_else(default_crate);
    let set_ident = &set.ident;
    let entries: Vec<Entry<'_>> = set
        .entries
        .iter()
        .map(|e| Entry {
            ty: &e.ty,
            method: e.method.as_ref(),
        })
        .collect();
    let mut errors = Errors::default();
    let idents = validate::toolset_entries(set_ident, &entries, &mut errors);
    errors.finish()?;

    let checks = validate::toolset_consts(&krate, set_ident, &entries);
    let methods: Vec<Method> = entries
        .iter()
        .zip(idents)
        .filter_map(|(entry, ident)| {
            Some(Method {
                ident: ident?,
                tool: entry.ty.to_token_stream(),
                doc: format!("Calls the tool [`{}`].", entry.type_name()),
            })
        })
        .collect();
    let vis = &set.vis;
    let attrs = &set.attrs;
    let types: Vec<&Path> = entries.iter().map(|e| e.ty).collect();
    let client_ident = set
        .options
        .client
        .clone()
        .unwrap_or_else(|| format_ident!("{}Client", set_ident));
    let set_doc = format!("the tool set [`{set_ident}`]");
    let client = client::client(&krate, vis, &client_ident, &set_doc, &methods);
    Ok(quote! {
        #(#attrs)*
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #set_ident;

        impl #set_ident {
            /// The names of the tools of this set, in order.
            #vis const TOOL_NAMES: &'static [&'static str] = &[#(<#types as #krate::Tool>::NAME),*];

            /// The definitions of the tools of this set, in order.
            #vis fn tool_definitions() -> ::std::vec::Vec<#krate::ToolDefinition> {
                ::std::vec![#(<#types as #krate::StaticTool>::definition()),*]
            }

            /// Registers every tool of this set in `registry` (all or none).
            #vis fn register_tools(
                registry: &#krate::ToolRegistry,
            ) -> ::std::result::Result<(), #krate::RegistryError> {
                registry.register_all(Self::tool_definitions())
            }
        }

        #checks

        #client
    })
}
