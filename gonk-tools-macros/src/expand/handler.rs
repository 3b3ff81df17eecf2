//! The handler closure of a tool: extract the state, call the fn as
//! written, convert its error, pick the builder method for its return form.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::{input_type, respan};
use crate::model::{Param, Return, Site, ToolModel};

/// The `.handler(..)` / `.handler_with_output(..)` / `.stream_handler(..)`
/// call.
pub fn handler(model: &ToolModel, select: &TokenStream) -> TokenStream {
    let krate = &model.krate;
    let input = input_type(model);
    let fn_ident = &model.fn_ident;
    let private = quote!(#krate::__private);

    let mut args = Vec::new();
    let mut states = Vec::new();
    let mut index = 0usize;
    for (param, _) in &model.params {
        match param {
            Param::Input(_) => args.push(quote!(__input)),
            Param::Context { by_ref: true, .. } => args.push(quote!(&__ctx)),
            Param::Context { by_ref: false, .. } => args.push(quote!(__ctx)),
            Param::State(ty) => {
                let var = format_ident!("__state{index}");
                index += 1;
                let span = ty.span();
                let state = respan(quote!(#private::state), span);
                states.push(quote_spanned!(span=> let #var = #state::<#ty>(&__ctx)?;));
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
    let tool_error = quote!(#krate::ToolError);
    let ok = quote!(::std::result::Result::Ok::<_, #tool_error>);
    let err_span = match &model.ret {
        Return::Result { err: Some(e), .. } | Return::ResultOutput { err: Some(e), .. } => e.span(),
        _ => match &model.sig.output {
            syn::ReturnType::Type(_, ty) => ty.span(),
            syn::ReturnType::Default => model.fn_ident.span(),
        },
    };
    let into_tool_error = respan(
        quote!(#krate::tool::IntoToolError::into_tool_error(__error)),
        err_span,
    );
    let plain = quote!({ #(#states)* #ok(#call.await) });
    let converted = quote!({
        #(#states)*
        match #call.await {
            ::std::result::Result::Ok(__output) => ::std::result::Result::Ok(__output),
            ::std::result::Result::Err(__error) => ::std::result::Result::Err(#into_tool_error),
        }
    });
    let (method, body) = match &model.ret {
        Return::Plain(_) => (quote!(handler), plain),
        Return::Output(_) => (quote!(handler_with_output), plain),
        Return::Result { .. } => (quote!(handler), converted),
        Return::ResultOutput { .. } => (quote!(handler_with_output), converted),
        Return::Stream(_) | Return::BadStream(_) => {
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
