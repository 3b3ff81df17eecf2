//! What `#[resource]` and `#[prompt]` expand alike: the builder calls of
//! the keys they share, the completions, the handler closure, the output's
//! requirement.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::{call_body, duration, output_type, requirement, state_binding};
use crate::internals::attr::primitive::PrimitiveAttrs;
use crate::internals::attr::{FieldName, ItemAttrs};
use crate::internals::model::{FnModel, Param, Return};

/// The builder calls `#[resource]` and `#[prompt]` share: title,
/// description, states, icons, timeout.
pub fn common_calls(f: &FnModel, item: &ItemAttrs, primitive: &PrimitiveAttrs) -> Vec<TokenStream> {
    let krate = &f.krate;
    let mut calls = Vec::new();
    if let Some(title) = &primitive.title {
        calls.push(quote!(.title(#title)));
    }
    if let Some(description) = &f.description {
        calls.push(quote!(.description(#description)));
    }
    for state in f.states() {
        let span = state.span();
        calls.push(quote_spanned!(span=> .requires_state::<#state>()));
    }
    for icon in primitive.icons.iter().flatten() {
        calls.push(quote!(.icon(#krate::resource::Icon::new(#icon))));
    }
    if let Some(timeout) = &item.timeout {
        let limit = duration(&timeout.limit);
        calls.push(quote!(.timeout(#limit)));
    }
    calls
}

/// `.complete("id", note_ids)` for each completer, the argument as
/// `argument` writes it, spanned on the fn path so a completion fn of the
/// wrong shape is reported there.
pub fn complete_calls(
    primitive: &PrimitiveAttrs,
    argument: impl Fn(&FieldName) -> TokenStream,
) -> Vec<TokenStream> {
    primitive
        .completers()
        .iter()
        .map(|c| {
            let target = argument(&c.target);
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
pub fn handler(
    f: &FnModel,
    module: &TokenStream,
    input: TokenStream,
    input_ty: TokenStream,
    mut values: Vec<TokenStream>,
) -> TokenStream {
    let krate = &f.krate;
    let output = output_type(&f.ret);
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
                states.push(state_binding(krate, &var, ty));
                args.push(quote!(#var));
            }
        }
    }
    let call = quote!(#fn_ident(#(#args),*));
    let err_span = match &f.ret {
        Return::Result { err, .. } => Some(match err {
            Some(e) => e.span(),
            None => f.sig.output.span(),
        }),
        _ => None,
    };
    let body = call_body(krate, &states, &call, err_span);
    quote! {
        let __builder = {
            #[allow(unused_imports)]
            use #module::__select::{SelectFallback as _, SelectTyped as _};
            (&&#module::__select::Select::<#input_ty, #output>::new()).select()
        }
        .handler(__builder, move |#input: #input_ty, __ctx: #krate::ToolContext| async move #body);
    }
}

/// The requirement check of the output type, spanned on it (on the fn
/// name when it returns nothing).
pub fn output_requirement(f: &FnModel, module: &str, name: &str) -> TokenStream {
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
