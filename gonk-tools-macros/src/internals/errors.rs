//! [`Errors`]: collects every problem of one macro call, so one build shows
//! all of them; the caller emits them once with [`Errors::finish`].

use proc_macro2::Span;

/// Collected errors, each spanned on the offending token.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    /// Adds `error`.
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// Adds `message`, spanned on `tokens`.
    pub fn push_spanned(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Adds `message` at `span`.
    pub fn push_at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Whether nothing was collected.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// `Ok` when nothing was collected, else every error as one.
    pub fn finish(self) -> syn::Result<()> {
        match self.0 {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}
