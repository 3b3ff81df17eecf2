//! The models of the two tool sets: a `#[tools]` impl block, whose
//! `#[tool]` methods become [`ToolModel`]s, and the input of `toolset!`, a
//! list of `#[tool]` types. What is wrong with the set as a whole
//! (duplicates, client-method collisions) is
//! [`check::tool_set`](crate::internals::check::tool_set) and
//! [`check::toolset`](crate::internals::check::toolset).

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Attribute, Ident, ImplItem, ItemImpl, Path, Token, Type, Visibility};

use super::tool::{Site, ToolModel};
use crate::internals::attr::set::SetOptions;
use crate::internals::attr::tool::ToolAttrs;
use crate::internals::errors::Errors;
use crate::internals::{keys, names};

/// A `#[tools]` impl block.
pub struct ToolsImpl {
    /// The impl block, with the `#[tool]` attributes taken off its methods.
    pub item: ItemImpl,
    pub options: SetOptions,
    pub self_ty: Type,
    /// The last segment of the type's path (`Notes`), which names the
    /// client (`NotesClient`).
    pub self_ident: Ident,
    /// The `#[tool]` methods, in order.
    pub tools: Vec<ToolModel>,
}

impl ToolsImpl {
    /// Reads `#[tools(args)]` on `item`. An error refuses the block as a
    /// whole (bad options; not an inherent, non-generic impl of a named
    /// type). Otherwise every problem of one method, in its attribute or
    /// its model, is in `errors`.
    pub fn parse(args: TokenStream, item: TokenStream, errors: &mut Errors) -> syn::Result<Self> {
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
        let tools = method_models(&mut item, &self_ty, &options, errors);
        Ok(ToolsImpl {
            item,
            options,
            self_ty,
            self_ident,
            tools,
        })
    }
}

fn is_tool_attr(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == keys::TOOL_ATTRIBUTE)
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
        if attrs.item.krate.is_none() {
            attrs.item.krate = options.krate.clone();
        }
        let model = ToolModel::new(
            attrs,
            Site::Method {
                self_ty: Box::new(self_ty.clone()),
            },
            method.vis.clone(),
            &method.sig,
            &method.attrs,
            errors,
        );
        crate::internals::check::tool(&model, errors);
        models.push(model);
    }
    models
}

/// One entry of `toolset!`: the tool's type, and the client method given
/// for it (`method = Type`), if any.
pub struct ToolsetEntry {
    pub ty: Path,
    pub method: Option<Ident>,
}

impl Parse for ToolsetEntry {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let method = if input.peek(Ident) && input.peek2(Token![=]) {
            let method: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            Some(method)
        } else {
            None
        };
        Ok(ToolsetEntry {
            method,
            ty: input.parse()?,
        })
    }
}

impl ToolsetEntry {
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
        match &self.method {
            Some(m) => names::unraw(m),
            None => names::client_method(&self.type_name()),
        }
    }

    /// Where the client method comes from: the method given, else the type.
    pub fn method_span(&self) -> Span {
        self.method
            .as_ref()
            .map(Ident::span)
            .unwrap_or_else(|| syn::spanned::Spanned::span(&self.ty))
    }

    /// The type as written, for messages.
    pub fn display(&self) -> String {
        self.ty.to_token_stream().to_string().replace(' ', "")
    }
}

/// The input of `toolset!`.
pub struct Toolset {
    pub attrs: Vec<Attribute>,
    pub options: SetOptions,
    pub vis: Visibility,
    pub ident: Ident,
    pub entries: Vec<ToolsetEntry>,
}

impl Parse for Toolset {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut attrs = Vec::new();
        let mut options = SetOptions::default();
        for attr in input.call(Attribute::parse_outer)? {
            if attr.path().is_ident(keys::TOOLSET_ATTRIBUTE) {
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
        let entries: Punctuated<ToolsetEntry, Token![,]> =
            content.parse_terminated(ToolsetEntry::parse, Token![,])?;
        Ok(Toolset {
            attrs,
            options,
            vis,
            ident,
            entries: entries.into_iter().collect(),
        })
    }
}
