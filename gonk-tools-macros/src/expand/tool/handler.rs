//! The handler closure of a tool: extract the state, call the fn as
//! written, convert its error, pick the builder method for its return form.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;

use super::input_type;
use crate::expand::{call_body, state_binding};
use crate::internals::model::tool::{Site, ToolModel};
use crate::internals::model::{Param, Return};

/// The `.handler(..)` / `.handler_with_output(..)` / `.stream_handler(..)`
/// call.
pub fn handler(model: &ToolModel, select: &TokenStream) -> TokenStream {
    let f = &model.f;
    let krate = &f.krate;
    let input = input_type(model);
    let fn_ident = &f.fn_ident;
    let private = quote!(#krate::__private);

    let mut args = Vec::new();
    let mut states = Vec::new();
    let mut index = 0usize;
    for param in &f.params {
        match &param.kind {
            Param::Input(_) => args.push(quote!(__input)),
            Param::Context { by_ref: true, .. } => args.push(quote!(&__ctx)),
            Param::Context { by_ref: false, .. } => args.push(quote!(__ctx)),
            Param::State(ty) => {
                let var = format_ident!("__state{index}");
                index += 1;
                states.push(state_binding(krate, &var, ty));
                args.push(quote!(#var));
            }
        }
    }
    let (clone_receiver, call) = match &model.site {
        Site::Free => (quote!(), quote!(#fn_ident(#(#args),*))),
        Site::Method { self_ty } => (
            quote!(let __this = ::std::sync::Arc::clone(&__receiver);),
            quote!(<#self_ty>::#fn_ident(&*__this, #(#args),*)),
        ),
    };
    let err_span = match &f.ret {
        Return::Result { err: Some(e), .. } | Return::ResultOutput { err: Some(e), .. } => e.span(),
        _ => match &f.sig.output {
            syn::ReturnType::Type(_, ty) => ty.span(),
            syn::ReturnType::Default => f.fn_ident.span(),
        },
    };
    let plain = call_body(krate, &states, &call, None);
    let converted = call_body(krate, &states, &call, Some(err_span));
    let (method, body) = match &f.ret {
        Return::Plain(_) => (quote!(handler), plain),
        Return::Output(_) => (quote!(handler_with_output), plain),
        Return::Result { .. } => (quote!(handler), converted),
        Return::ResultOutput { .. } => (quote!(handler_with_output), converted),
        Return::Stream(_) | Return::BadStream(_) => {
            let ok = quote!(::std::result::Result::Ok::<_, #krate::ToolError>);
            let body = if states.is_empty() {
                quote!({ #call.await })
            } else {
                quote!({
                    #private::stream_or_error(async move {
                        #(#states)*
                        #ok(#call.await)
                    }.await)
                })
            };
            (quote!(stream_handler), body)
        }
    };
    quote! {
        let __builder = #select.#method(__builder, move |__input: #input, __ctx: #krate::ToolContext| {
            #clone_receiver
            async move #body
        });
    }
}
