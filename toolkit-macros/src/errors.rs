//! Collect every independent error with its span, report them all at once.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::fmt::Display;

#[derive(Default)]
pub struct Errors {
    errors: Vec<syn::Error>,
}

impl Errors {
    pub fn at(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    pub fn at_span(&mut self, span: proc_macro2::Span, message: impl Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    pub fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// Each error's message, in the order reported.
    #[cfg(test)]
    pub fn messages(&self) -> Vec<String> {
        self.errors.iter().map(ToString::to_string).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    pub fn to_compile_errors(&self) -> TokenStream {
        self.errors
            .iter()
            .map(syn::Error::to_compile_error)
            .collect()
    }
}
