//! `#[resource]` and `#[prompt]`: MCP's other two server primitives, with
//! the `#[tool]` discipline. Each goes parse ([`attr`]) → model
//! ([`model`], the URI template parsed by [`template`]) → validate
//! ([`validate`]) → expand ([`expand`]); every misuse is a compile error
//! spanned on the offending token.

mod attr;
mod expand;
mod model;
mod template;
mod validate;

use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::errors::Errors;
use attr::{PromptAttrs, ResourceAttrs};
use model::{PromptModel, ResourceModel};

/// The fn the attribute is on, or the error saying where it goes.
fn item_fn(input: TokenStream, attribute: &str) -> Result<syn::ItemFn, TokenStream> {
    syn::parse2(input.clone()).map_err(|_| {
        let error = syn::Error::new(
            Span::call_site(),
            format!("`#[{attribute}]` goes on a free `async fn`"),
        )
        .to_compile_error();
        quote!(#error #input)
    })
}

/// `#[resource(..)]` on an `async fn`: the fn, unchanged, followed by
/// what it generates, or by the errors found.
pub fn resource_attribute(args: TokenStream, input: TokenStream) -> TokenStream {
    let item = match item_fn(input, "resource") {
        Ok(item) => item,
        Err(tokens) => return tokens,
    };
    let attrs = match ResourceAttrs::parse(args) {
        Ok(attrs) => attrs,
        Err(error) => {
            let error = error.to_compile_error();
            return quote!(#item #error);
        }
    };
    let model = ResourceModel::new(attrs, item.vis.clone(), &item.sig, &item.attrs);
    let mut errors = Errors::default();
    validate::resource(&model, &mut errors);
    if let Err(error) = errors.finish() {
        let error = error.to_compile_error();
        return quote!(#item #error);
    }
    let generated = match &model.template {
        Ok(template) => expand::resource(&model, template),
        // `validate` reports a bad template; this keeps the error if it did not.
        Err(error) => syn::Error::new(
            model.attrs.uri.span(),
            error.describe(&model.attrs.uri.value()),
        )
        .to_compile_error(),
    };
    quote!(#item #generated)
}

/// `#[prompt(..)]` on an `async fn`: the fn, unchanged, followed by what
/// it generates, or by the errors found.
pub fn prompt_attribute(args: TokenStream, input: TokenStream) -> TokenStream {
    let item = match item_fn(input, "prompt") {
        Ok(item) => item,
        Err(tokens) => return tokens,
    };
    let attrs = match PromptAttrs::parse(args) {
        Ok(attrs) => attrs,
        Err(error) => {
            let error = error.to_compile_error();
            return quote!(#item #error);
        }
    };
    let model = PromptModel::new(attrs, item.vis.clone(), &item.sig, &item.attrs);
    let mut errors = Errors::default();
    validate::prompt(&model, &mut errors);
    if let Err(error) = errors.finish() {
        let error = error.to_compile_error();
        return quote!(#item #error);
    }
    let generated = expand::prompt(&model);
    quote!(#item #generated)
}
