//! Find the `toolsmith` crate under whatever name the user's Cargo.toml gives it.

use proc_macro_crate::{FoundCrate, crate_name};
use proc_macro2::{Span, TokenStream};
use quote::quote;

/// The path to the core crate, e.g. `::toolsmith` or `::my_renamed_toolsmith`.
///
/// `toolsmith` declares `extern crate self as toolsmith`, so `::toolsmith` also
/// works inside the crate itself. A crate that reaches `toolsmith` only
/// through a re-export can say where with `#[tool(crate = path)]`.
pub fn core_crate_path() -> TokenStream {
    let name = match crate_name("toolsmith") {
        Ok(FoundCrate::Name(name)) => name,
        Ok(FoundCrate::Itself) | Err(_) => "toolsmith".to_owned(),
    };
    let ident = syn::Ident::new(&name, Span::call_site());
    quote!(::#ident)
}
