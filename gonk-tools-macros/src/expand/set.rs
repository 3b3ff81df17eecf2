//! Tool sets: `#[tools]` on an impl block and `toolset!` over `#[tool]`
//! types. Both give the same API — `TOOL_NAMES`, `tool_definitions()`,
//! `register_tools(&registry)` — and a typed client ([`super::client`]).
//! Both refuse a duplicate tool name and two tools on one client method:
//! `#[tools]` in [`check::tool_set`](crate::internals::check::tool_set),
//! `toolset!` partly there and partly through constants the compiler
//! evaluates ([`name_checks`]).

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::Path;

use super::client::{self, Method};
use super::respan;
use crate::internals::model::set::ToolsetEntry;
use crate::internals::{self, default_crate};

fn first_line(description: &str) -> &str {
    description.lines().next().unwrap_or("")
}

/// `#[tools]` on an impl block.
pub fn tools(args: TokenStream, input: TokenStream) -> TokenStream {
    let (set, idents) = match internals::tools(args, input) {
        Ok(checked) => checked,
        Err(refused) => return refused.into_tokens(),
    };
    let item = &set.item;
    let self_ty = &set.self_ty;
    let self_ident = &set.self_ident;
    let models = &set.tools;
    let krate = set.options.krate.clone().unwrap_or_else(default_crate);
    let methods: Vec<Method> = models
        .iter()
        .zip(idents)
        .map(|(model, ident)| {
            let ty = &model.f.type_ident;
            Method {
                ident,
                tool: quote!(#ty),
                doc: format!(
                    "Calls `{}`: {}",
                    model.f.name,
                    first_line(model.f.description.as_deref().unwrap_or(""))
                ),
            }
        })
        .collect();
    let tools = models.iter().map(super::tool::tool);
    let types: Vec<&Ident> = models.iter().map(|m| &m.f.type_ident).collect();
    let vis = models[0].f.vis.clone();
    let client_ident = set
        .options
        .client
        .clone()
        .unwrap_or_else(|| format_ident!("{}Client", self_ident));
    let set_doc = format!("the tools of [`{self_ident}`]");
    let client = client::client(&krate, &vis, &client_ident, &set_doc, &methods);
    quote! {
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
    }
}

/// `toolset! { pub struct NotesTools { NotesSearch, NotesCreate } }`.
pub fn toolset(input: TokenStream) -> TokenStream {
    let (set, idents) = match internals::toolset(input) {
        Ok(checked) => checked,
        Err(refused) => return refused.into_tokens(),
    };
    let krate = set.options.krate.clone().unwrap_or_else(default_crate);
    let set_ident = &set.ident;
    let entries = &set.entries;
    let checks = name_checks(&krate, set_ident, entries);
    let methods: Vec<Method> = entries
        .iter()
        .zip(idents)
        .map(|(entry, ident)| Method {
            ident,
            tool: entry.ty.to_token_stream(),
            doc: format!("Calls the tool [`{}`].", entry.type_name()),
        })
        .collect();
    let vis = &set.vis;
    let attrs = &set.attrs;
    let types: Vec<&Path> = entries.iter().map(|e| &e.ty).collect();
    let client_ident = set
        .options
        .client
        .clone()
        .unwrap_or_else(|| format_ident!("{}Client", set_ident));
    let set_doc = format!("the tool set [`{set_ident}`]");
    let client = client::client(&krate, vis, &client_ident, &set_doc, &methods);
    quote! {
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
    }
}

/// The set checks `toolset!` leaves to the compiler, as constants spanned
/// on each entry: no tool name twice, no two names on one client method
/// (names are constants of the tool types, unknown to the macro, so
/// [`check::toolset`](crate::internals::check::toolset) cannot see them),
/// and each entry's method is the snake_case of its tool's name.
fn name_checks(krate: &Path, set: &Ident, entries: &[ToolsetEntry]) -> TokenStream {
    let mut checks = TokenStream::new();
    for (j, entry) in entries.iter().enumerate() {
        let span = syn::spanned::Spanned::span(&entry.ty);
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
