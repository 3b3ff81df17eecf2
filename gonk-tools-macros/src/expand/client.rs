//! The typed client of a tool set: `{Set}Client<T: Transport>` with one
//! method per tool, taking the tool's `Input` and returning its `Output`.
//!
//! Each method requires `T: CallTool<Tool>`, which holds when the tool's
//! input serializes and its output deserializes. The bound is on the
//! method, so it is checked where a method is called: a tool set that is
//! only served, never called through its client, needs no `Serialize` on
//! its inputs.

use proc_macro2::{Ident, TokenStream};
use quote::{quote, ToTokens};
use syn::{Path, Visibility};

/// One client method to generate.
pub struct Method {
    /// The method name (snake_case of the tool name).
    pub ident: Ident,
    /// The tool's type.
    pub tool: TokenStream,
    /// The method's doc.
    pub doc: String,
}

/// The client struct `client_ident` of the set described by `set_doc`.
pub fn client(
    krate: &Path,
    vis: &Visibility,
    client_ident: &Ident,
    set_doc: &str,
    methods: &[Method],
) -> TokenStream {
    let k = krate.to_token_stream().to_string().replace(' ', "");
    let doc = format!(
        "Typed client of {set_doc}: one method per tool, over any [`Transport`]({k}::client::Transport).\n\nEach method serializes the tool's input, calls the tool through the transport and returns its typed output, or a [`ClientError`]({k}::client::ClientError)."
    );
    let fns = methods.iter().map(|m| {
        let Method { ident, tool, doc } = m;
        quote! {
            #[doc = #doc]
            #vis fn #ident(
                &self,
                input: <#tool as #krate::Tool>::Input,
            ) -> #krate::client::ToolFuture<'_, <#tool as #krate::Tool>::Output>
            where
                T: #krate::client::CallTool<#tool>,
            {
                <T as #krate::client::CallTool<#tool>>::call_tool(&self.transport, input)
            }
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
    }
}
