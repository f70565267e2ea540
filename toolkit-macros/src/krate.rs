//! Find the `toolkit` crate under whatever name the user's Cargo.toml gives it.

use proc_macro_crate::{FoundCrate, crate_name};
use proc_macro2::{Span, TokenStream};
use quote::quote;

/// The path to the core crate, e.g. `::toolkit` or `::my_renamed_toolkit`.
///
/// `toolkit` declares `extern crate self as toolkit`, so `::toolkit` also
/// works inside the crate itself. A crate that reaches `toolkit` only
/// through a re-export can say where with `#[tool(crate = path)]`.
pub fn core_crate_path() -> TokenStream {
    let name = match crate_name("toolkit") {
        Ok(FoundCrate::Name(name)) => name,
        Ok(FoundCrate::Itself) | Err(_) => "toolkit".to_owned(),
    };
    let ident = syn::Ident::new(&name, Span::call_site());
    quote!(::#ident)
}
