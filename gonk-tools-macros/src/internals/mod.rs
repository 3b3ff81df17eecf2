//! The front end all five macros share: parse → model → check. Only the
//! expansion ([`expand`](crate::expand)) differs between them.
//!
//! * [`attr`] parses the macros' arguments: the value shapes, "did you
//!   mean" for a misspelt key, the duplicate-key check, every key named
//!   once in [`keys`];
//! * [`model`] turns the annotated fn (or impl block, or `toolset!` input)
//!   into a typed model that keeps the user's tokens, checking each part
//!   as it goes (the URI template of a resource is parsed by [`template`]);
//! * [`check`] makes the checks that relate parts or items to each other;
//! * [`skills`] reads and checks the folders `embed_skills!` embeds;
//! * [`errors`] collects every problem of one call, so one build shows all
//!   of them; [`names`] holds how the macros name things.
//!
//! The functions below run the whole front end for one macro call and
//! hand the expansion a model with nothing wrong in it.

pub mod attr;
pub mod check;
pub mod errors;
pub mod keys;
pub mod model;
pub mod names;
pub mod skills;
pub mod template;

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;
use syn::{ItemFn, Path};

use attr::primitive::{PromptAttrs, ResourceAttrs};
use attr::tool::ToolAttrs;
use errors::Errors;
use model::prompt::PromptModel;
use model::resource::ResourceModel;
use model::set::{ToolsImpl, Toolset};
use model::tool::{Site, ToolModel};
use model::Primitive;

/// The runtime crate's path when `crate = ..` is not given.
pub fn default_crate() -> Path {
    syn::parse_quote!(::gonk_tools)
}

/// What a fn attribute (`#[tool]`, `#[resource]`, `#[prompt]`) expands
/// to: the fn, unchanged, followed by what `expand` makes of it, or by
/// the errors found — the fn stays, so its callers do not fail too.
pub fn fn_attribute(
    input: TokenStream,
    primitive: Primitive,
    expand: impl FnOnce(&ItemFn) -> syn::Result<TokenStream>,
) -> TokenStream {
    let item: ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let message = match primitive {
                Primitive::Tool => "`#[tool]` goes on an `async fn` (or on a method of an impl block marked `#[tools]`)".to_owned(),
                other => format!("`#[{}]` goes on a free `async fn`", other.attribute()),
            };
            let error = syn::Error::new(Span::call_site(), message).to_compile_error();
            return quote!(#error #input);
        }
    };
    match expand(&item) {
        Ok(generated) => quote!(#item #generated),
        Err(error) => {
            let error = error.to_compile_error();
            quote!(#item #error)
        }
    }
}

/// `#[tool(args)]` on the free fn `item`, parsed, modelled and checked.
pub fn tool(args: TokenStream, item: &ItemFn) -> syn::Result<ToolModel> {
    let attrs = ToolAttrs::parse(args)?;
    let mut errors = Errors::default();
    let model = ToolModel::new(
        attrs,
        Site::Free,
        item.vis.clone(),
        &item.sig,
        &item.attrs,
        &mut errors,
    );
    check::tool(&model, &mut errors);
    errors.finish()?;
    Ok(model)
}

/// `#[resource(args)]` on `item`, parsed, modelled and checked.
pub fn resource(args: TokenStream, item: &ItemFn) -> syn::Result<ResourceModel> {
    let attrs = ResourceAttrs::parse(args)?;
    let mut errors = Errors::default();
    let model = ResourceModel::new(attrs, item.vis.clone(), &item.sig, &item.attrs, &mut errors);
    check::resource(&model, &mut errors);
    errors.finish()?;
    Ok(model)
}

/// `#[prompt(args)]` on `item`, parsed, modelled and checked.
pub fn prompt(args: TokenStream, item: &ItemFn) -> syn::Result<PromptModel> {
    let attrs = PromptAttrs::parse(args)?;
    let mut errors = Errors::default();
    let model = PromptModel::new(attrs, item.vis.clone(), &item.sig, &item.attrs, &mut errors);
    check::prompt(&model, &mut errors);
    errors.finish()?;
    Ok(model)
}

/// A tool set call refused: every error, and the user's code to emit
/// next to them, so its other uses do not fail too.
pub struct Refused {
    pub code: TokenStream,
    pub error: syn::Error,
}

impl Refused {
    /// The code, then the errors.
    pub fn into_tokens(self) -> TokenStream {
        let code = self.code;
        let error = self.error.to_compile_error();
        quote!(#code #error)
    }
}

/// `#[tools(args)]` on the impl block `item`, parsed, modelled and checked,
/// with each tool's client method.
pub fn tools(args: TokenStream, item: TokenStream) -> Result<(ToolsImpl, Vec<Ident>), Refused> {
    let mut errors = Errors::default();
    let set = ToolsImpl::parse(args, item.clone(), &mut errors)
        .map_err(|error| Refused { code: item, error })?;
    let methods = check::tool_set(&set, &mut errors);
    if let Err(error) = errors.finish() {
        let item = &set.item;
        return Err(Refused {
            code: quote!(#item),
            error,
        });
    }
    // Every tool has its method: a refused one is an error above.
    Ok((set, methods.into_iter().flatten().collect()))
}

/// The input of `toolset!`, parsed and checked, with each entry's client
/// method.
pub fn toolset(input: TokenStream) -> Result<(Toolset, Vec<Ident>), Refused> {
    let refused = |error| Refused {
        code: TokenStream::new(),
        error,
    };
    let set: Toolset = syn::parse2(input).map_err(refused)?;
    let mut errors = Errors::default();
    let methods = check::toolset(&set, &mut errors);
    errors.finish().map_err(refused)?;
    Ok((set, methods.into_iter().flatten().collect()))
}
