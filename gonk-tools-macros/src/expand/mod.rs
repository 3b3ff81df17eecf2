//! Expansion: what each macro writes from a checked model, one module per
//! macro — [`tool`], [`set`] (`#[tools]` and `toolset!`, with their typed
//! [`client`]), [`resource`], [`prompt`] — and the pieces they share
//! below. Generated code names everything through the runtime crate's
//! path (`::gonk_tools::…`, or `crate = ..`), and it expands to the public
//! builders, so a macro-made definition is one a user could write.

pub mod client;
mod primitive;
pub mod prompt;
pub mod resource;
pub mod set;
pub mod skills;
pub mod tool;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Path, Type};

use crate::internals::model::Return;

/// Re-spans every token of `tokens` (so an error in generated code lands
/// on the user's token).
pub fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// The crate path as rustdoc links write it (`::gonk_tools`).
fn krate_doc(krate: &Path) -> String {
    krate.to_token_stream().to_string().replace(' ', "")
}

/// The output data type `O` (`()` when the fn returns nothing readable).
fn output_type(ret: &Return) -> TokenStream {
    match ret.output() {
        Some(ty) => ty.to_token_stream(),
        None => quote!(()),
    }
}

/// `::core::time::Duration::new(secs, nanos)`.
fn duration(duration: &std::time::Duration) -> TokenStream {
    let secs = duration.as_secs();
    let nanos = duration.subsec_nanos();
    quote!(::core::time::Duration::new(#secs, #nanos))
}

/// `let () = <T as krate::module::Requirement>::CHECK;`, spanned on `ty`:
/// the requirement's message (`#[diagnostic::on_unimplemented]`) lands on
/// the user's type when `ty` does not meet it.
fn requirement(krate: &Path, module: &str, requirement: &str, ty: &Type) -> TokenStream {
    let span = ty.span();
    let module = format_ident!("{module}", span = span);
    let requirement = format_ident!("{requirement}", span = span);
    let krate = respan(krate.to_token_stream(), span);
    quote_spanned!(span=> let () = <#ty as #krate::#module::#requirement>::CHECK;)
}

/// `let var = state::<T>(&__ctx)?;`, spanned on `T`: a state type that is
/// not `Send + Sync + 'static` is reported there.
fn state_binding(krate: &Path, var: &proc_macro2::Ident, ty: &Type) -> TokenStream {
    let span = ty.span();
    let state = respan(quote!(#krate::__private::state), span);
    quote_spanned!(span=> let #var = #state::<#ty>(&__ctx)?;)
}

/// The body of a handler: the states extracted, then `call` awaited and
/// its value returned as `Ok`; or, for a fn returning `Result`
/// (`err_span` is its error type), its error converted into a
/// `ToolError`, the conversion spanned there.
fn call_body(
    krate: &Path,
    states: &[TokenStream],
    call: &TokenStream,
    err_span: Option<Span>,
) -> TokenStream {
    match err_span {
        Some(span) => {
            let into_tool_error = respan(
                quote!(#krate::tool::IntoToolError::into_tool_error(__error)),
                span,
            );
            quote!({
                #(#states)*
                match #call.await {
                    ::std::result::Result::Ok(__output) => ::std::result::Result::Ok(__output),
                    ::std::result::Result::Err(__error) => ::std::result::Result::Err(#into_tool_error),
                }
            })
        }
        None => {
            let tool_error = quote!(#krate::ToolError);
            quote!({
                #(#states)*
                ::std::result::Result::Ok::<_, #tool_error>(#call.await)
            })
        }
    }
}

/// The requirement checks in a fn of their own, never called: they only
/// have to compile.
fn requirements_fn(name: &str, checks: Vec<TokenStream>) -> TokenStream {
    let name = format_ident!("{name}");
    quote! {
        #[allow(clippy::all)]
        const _: () = {
            fn #name() {
                #(#checks)*
            }
        };
    }
}
