//! Tool sets: `#[tools]` on an impl block and `toolset!` over `#[tool]`
//! types. Both register all their tools in one call and generate a typed
//! client; both refuse, at compile time, a duplicate tool name and two
//! tools that map to the same client method.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Ident, ImplItem, ItemImpl, Path, Token, Type, Visibility};

use crate::attr::{Errors, ToolAttrs};
use crate::expand::{self, respan};
use crate::model::{Site, ToolModel};
use crate::names;
use crate::validate;

/// Client methods that the client itself defines.
const RESERVED_METHODS: &[&str] = &["new", "transport", "into_transport"];

/// Options of `#[tools(..)]` / `#[toolset(..)]`.
#[derive(Default)]
struct SetOptions {
    krate: Option<Path>,
    client: Option<Ident>,
}

impl SetOptions {
    fn parse_into(&mut self, meta: syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
        if meta.path.is_ident("crate") {
            let value = meta.value()?;
            let path = if value.peek(syn::LitStr) {
                value.parse::<syn::LitStr>()?.parse::<Path>()?
            } else {
                Path::parse_mod_style(value)?
            };
            self.krate = Some(path);
            Ok(())
        } else if meta.path.is_ident("client") {
            self.client = Some(meta.value()?.parse()?);
            Ok(())
        } else {
            let key = meta.path.get_ident().map(names::unraw).unwrap_or_default();
            Err(meta.error(names::unknown_message(
                "tool set option",
                &key,
                &["client", "crate"],
            )))
        }
    }
}

/// One client method to generate.
struct ClientMethod {
    ident: Ident,
    tool: TokenStream,
    doc: String,
    span: Span,
}

fn client(
    krate: &Path,
    vis: &Visibility,
    client_ident: &Ident,
    set_doc: &str,
    methods: &[ClientMethod],
) -> TokenStream {
    let k = krate.to_token_stream().to_string().replace(' ', "");
    let doc = format!(
        "Typed client of {set_doc}: one method per tool, over any [`Transport`]({k}::client::Transport).\n\nEach method serializes the tool's input, calls the tool through the transport and returns its typed output, or a [`ClientError`]({k}::client::ClientError)."
    );
    let fns = methods.iter().map(|m| {
        let ClientMethod {
            ident, tool, doc, ..
        } = m;
        quote! {
            #[doc = #doc]
            #vis async fn #ident(
                &self,
                input: <#tool as #krate::Tool>::Input,
            ) -> ::std::result::Result<<#tool as #krate::Tool>::Output, #krate::client::ClientError> {
                #[allow(unused_imports)]
                use #krate::__private::{SelectFallbackClient as _, SelectTypedClient as _};
                (&&#krate::__private::SelectClient::<#tool>::new())
                    .select()
                    .call(&self.transport, input)
                    .await
            }
        }
    });
    let assertions = methods.iter().map(|m| {
        let span = m.span;
        let tool = respan(m.tool.clone(), span);
        let k = respan(krate.to_token_stream(), span);
        quote_spanned! {span=>
            #k::__private::assert_client_input::<<#tool as #k::Tool>::Input>();
            #k::__private::assert_client_output::<<#tool as #k::Tool>::Output>();
        }
    });
    quote! {
        #[doc = #doc]
        #[derive(Clone, Debug)]
        #vis struct #client_ident<T> {
            transport: T,
        }

        impl<T: #krate::client::Transport> #client_ident<T> {
            /// A client calling tools over `transport`.
            #vis fn new(transport: T) -> Self {
                #client_ident { transport }
            }

            /// The transport.
            #vis fn transport(&self) -> &T {
                &self.transport
            }

            /// Gives the transport back.
            #vis fn into_transport(self) -> T {
                self.transport
            }

            #(#fns)*
        }

        #[allow(clippy::all)]
        const _: () = {
            fn __client_assertions() {
                #(#assertions)*
            }
        };
    }
}

fn check_method(method: &str, span: Span, tool: &str, errors: &mut Errors) -> Option<Ident> {
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

fn first_line(description: &str) -> &str {
    description.lines().next().unwrap_or("")
}

/// `#[tools]` on an impl block.
pub fn tools(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let mut options = SetOptions::default();
    let parser = syn::meta::parser(|meta| options.parse_into(meta));
    syn::parse::Parser::parse2(parser, args)?;
    let mut item: ItemImpl = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            "`#[tools]` goes on an inherent impl block: `#[tools] impl MyType { #[tool] async fn .. }`",
        )
    })?;
    let mut errors = Errors::default();
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
        validate::tool(&model, &mut errors);
        models.push(model);
    }
    if models.is_empty() && errors.is_empty() {
        errors.push_spanned(
            &item.self_ty,
            "`#[tools]` found no `#[tool]` method in this impl block: mark the tool methods with `#[tool]`",
        );
    }

    let krate: Path = options
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::gonk_tools));
    let mut methods: Vec<ClientMethod> = Vec::new();
    for (i, model) in models.iter().enumerate() {
        if let Some(first) = models[..i].iter().find(|m| m.name == model.name) {
            errors.push_at(
                model.name_span,
                format!(
                    "duplicate tool name `{}` in this tool set (also used by `{}`): give one of them another `#[tool(name = \"...\")]`",
                    model.name, first.fn_ident
                ),
            );
            continue;
        }
        let method = names::client_method(&model.name);
        if let Some(first) = models[..i]
            .iter()
            .find(|m| names::client_method(&m.name) == method)
        {
            errors.push_at(
                model.name_span,
                format!(
                    "tools `{}` and `{}` both map to the client method `{method}`: rename one of them (separators `.` `-` `_` all become `_`)",
                    first.name, model.name
                ),
            );
            continue;
        }
        let Some(ident) = check_method(&method, model.name_span, &model.name, &mut errors) else {
            continue;
        };
        let ty = &model.type_ident;
        methods.push(ClientMethod {
            ident,
            tool: quote!(#ty),
            doc: format!(
                "Calls `{}`: {}",
                model.name,
                first_line(model.description.as_deref().unwrap_or(""))
            ),
            span: model.input().map(|t| t.span()).unwrap_or(model.name_span),
        });
    }
    if !errors.is_empty() {
        let error = errors.finish().unwrap_err().to_compile_error();
        return Ok(quote!(#item #error));
    }

    let tools = models.iter().map(expand::tool);
    let types: Vec<&Ident> = models.iter().map(|m| &m.type_ident).collect();
    let vis = models[0].vis.clone();
    let client_ident = options
        .client
        .clone()
        .unwrap_or_else(|| format_ident!("{}Client", self_ident));
    let set_doc = format!("the tools of [`{self_ident}`]");
    let client = client(&krate, &vis, &client_ident, &set_doc, &methods);
    Ok(quote! {
        #item

        #(#tools)*

        impl #self_ty {
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

fn is_tool_attr(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "tool")
}

/// One entry of `toolset!`: `Type` or `method = Type`.
struct Entry {
    method: Option<Ident>,
    ty: Path,
}

impl Parse for Entry {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.peek(Ident) && input.peek2(Token![=]) {
            let method: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            Ok(Entry {
                method: Some(method),
                ty: input.parse()?,
            })
        } else {
            Ok(Entry {
                method: None,
                ty: input.parse()?,
            })
        }
    }
}

/// The input of `toolset!`.
struct Toolset {
    attrs: Vec<Attribute>,
    options: SetOptions,
    vis: Visibility,
    ident: Ident,
    entries: Punctuated<Entry, Token![,]>,
}

impl Parse for Toolset {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut attrs = Vec::new();
        let mut options = SetOptions::default();
        for attr in input.call(Attribute::parse_outer)? {
            if attr.path().is_ident("toolset") {
                attr.parse_nested_meta(|meta| options.parse_into(meta))?;
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
        let entries = content.parse_terminated(Entry::parse, Token![,])?;
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
    let krate: Path = set
        .options
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::gonk_tools));
    let mut errors = Errors::default();
    if set.entries.is_empty() {
        errors.push_spanned(
            &set.ident,
            "this tool set has no tools: list the types `#[tool]` generates, `{ NotesSearch, NotesCreate }`",
        );
    }
    let set_ident = &set.ident;
    let mut methods: Vec<ClientMethod> = Vec::new();
    let mut checks = Vec::new();
    let entries: Vec<&Entry> = set.entries.iter().collect();
    for (j, entry) in entries.iter().enumerate() {
        let ty = &entry.ty;
        let span = ty.span();
        let Some(last) = ty.segments.last() else {
            continue;
        };
        let type_name = names::unraw(&last.ident);
        let method = match &entry.method {
            Some(m) => names::unraw(m),
            None => names::client_method(&type_name),
        };
        let method_span = entry.method.as_ref().map(Ident::span).unwrap_or(span);
        if let Some(i) = methods.iter().position(|m| m.ident == method) {
            errors.push_at(
                method_span,
                format!(
                    "`{}` and `{type_name}` both map to the client method `{method}` in tool set `{set_ident}`: list each tool once, and give tools distinct names",
                    entries[i].ty.to_token_stream().to_string().replace(' ', "")
                ),
            );
            continue;
        }
        let Some(ident) = check_method(&method, method_span, &type_name, &mut errors) else {
            continue;
        };
        let k = respan(krate.to_token_stream(), span);
        let this = respan(ty.to_token_stream(), span);
        let mut tests = Vec::new();
        for earlier in &entries[..j] {
            let other = respan(earlier.ty.to_token_stream(), span);
            let other_name = earlier.ty.to_token_stream().to_string().replace(' ', "");
            let duplicate = format!(
                "duplicate tool name in tool set `{set_ident}`: `{type_name}` has the same name as `{other_name}`; give one of them another `#[tool(name = \"...\")]`"
            );
            let collision = format!(
                "`{type_name}` and `{other_name}` map to the same client method in tool set `{set_ident}` (their names differ only in separators); rename one of them"
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
            "in tool set `{set_ident}`, the tool `{type_name}` would get the client method `{method}`, which is not the snake_case of its name: list it as `<snake_case of the name> = {type_name}` (for a tool named `notes.search`: `notes_search = {type_name}`)"
        );
        checks.push(quote_spanned! {span=>
            const _: () = {
                #(#tests)*
                if !#k::__private::client_method_is(<#this as #k::Tool>::NAME, #method) {
                    ::std::panic!(#mismatch);
                }
            };
            const _: fn() = #k::__private::assert_tool::<#this>;
        });
        methods.push(ClientMethod {
            ident,
            tool: ty.to_token_stream(),
            doc: format!("Calls the tool [`{type_name}`]."),
            span,
        });
    }
    errors.finish()?;

    let vis = &set.vis;
    let attrs = &set.attrs;
    let types: Vec<&Path> = entries.iter().map(|e| &e.ty).collect();
    let client_ident = set
        .options
        .client
        .clone()
        .unwrap_or_else(|| format_ident!("{}Client", set_ident));
    let set_doc = format!("the tool set [`{set_ident}`]");
    let client = client(&krate, vis, &client_ident, &set_doc, &methods);
    Ok(quote! {
        #(#attrs)*
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #set_ident;

        impl #set_ident {
            /// The names of the tools of this set, in order.
            #vis const NAMES: &'static [&'static str] = &[#(<#types as #krate::Tool>::NAME),*];

            /// The definitions of the tools of this set, in order.
            #vis fn definitions() -> ::std::vec::Vec<#krate::ToolDefinition> {
                ::std::vec![#(<#types as #krate::StaticTool>::definition()),*]
            }

            /// Registers every tool of this set in `registry` (all or none).
            #vis fn register(
                registry: &#krate::ToolRegistry,
            ) -> ::std::result::Result<(), #krate::RegistryError> {
                registry.register_all(Self::definitions())
            }
        }

        #(#checks)*

        #client
    })
}
