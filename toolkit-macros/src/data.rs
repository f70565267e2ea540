//! `#[data]`: derive serde's and schemars' traits on a user's own argument
//! or output type through the core crate's re-exports.
//!
//! serde's and schemars' derives name their crate by path (`serde::…`), so
//! a crate that has neither as a dependency of its own must point them at
//! the re-exports with `#[serde(crate = "…")]` and `#[schemars(crate =
//! "…")]`. This attribute writes the derives and those two attributes, with
//! the core crate under whatever name the user's Cargo.toml gives it.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, Item, Token};

use crate::errors::Errors;
use crate::names::closest;

/// The traits `#[data]` can derive, in the order they are written.
const TRAITS: [(&str, &str); 3] = [
    ("Serialize", "serde"),
    ("Deserialize", "serde"),
    ("JsonSchema", "schemars"),
];

/// What the attribute's arguments ask for.
struct DataArgs {
    /// The traits to derive; all of them when none are named.
    traits: Vec<Ident>,
    /// `crate = path`, for a crate that reaches the core crate through a
    /// re-export.
    krate: Option<syn::Path>,
}

impl Parse for DataArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut traits = Vec::new();
        let mut krate = None;
        let items = Punctuated::<DataArg, Token![,]>::parse_terminated(input)?;
        for item in items {
            match item {
                DataArg::Trait(name) => traits.push(name),
                DataArg::Crate(path) if krate.is_some() => {
                    return Err(syn::Error::new_spanned(path, "`crate` is given twice"));
                }
                DataArg::Crate(path) => krate = Some(path),
            }
        }
        Ok(Self { traits, krate })
    }
}

enum DataArg {
    Trait(Ident),
    Crate(syn::Path),
}

impl Parse for DataArg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(Token![crate]) {
            input.parse::<Token![crate]>()?;
            input.parse::<Token![=]>()?;
            // serde's own spelling, a path in a string, is taken too.
            if input.peek(syn::LitStr) {
                return Ok(Self::Crate(input.parse::<syn::LitStr>()?.parse()?));
            }
            return Ok(Self::Crate(input.parse()?));
        }
        Ok(Self::Trait(input.parse()?))
    }
}

/// Expand `#[data(…)]` on `item`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let args = match syn::parse2::<DataArgs>(attr) {
        Ok(args) => args,
        Err(error) => {
            let error = error.to_compile_error();
            return quote!(#error #item);
        }
    };
    let item = match syn::parse2::<Item>(item.clone()) {
        Ok(item @ (Item::Struct(_) | Item::Enum(_))) => item,
        Ok(other) => {
            errors.at(
                crate::item_kind_token(&other),
                "`#[data]` goes on a struct or an enum: the types a tool takes or returns",
            );
            let errors = errors.to_compile_errors();
            return quote!(#errors #other);
        }
        Err(error) => {
            let error = error.to_compile_error();
            return quote!(#error #item);
        }
    };
    let krate = match &args.krate {
        Some(path) => path.to_token_stream(),
        None => crate::krate::core_crate_path(),
    };
    // The traits asked for, each with the word that asked (none when the
    // attribute names no trait and so asks for all three).
    let asked: Vec<(String, Option<&Ident>)> = if args.traits.is_empty() {
        TRAITS
            .iter()
            .map(|(name, _)| ((*name).to_owned(), None))
            .collect()
    } else {
        args.traits
            .iter()
            .map(|ident| (ident.to_string(), Some(ident)))
            .collect()
    };
    let mut derives = Vec::new();
    let mut crates = Vec::new();
    for (name, ident) in asked {
        let Some((name, home)) = TRAITS.iter().find(|(known, _)| *known == name) else {
            let names: Vec<&str> = TRAITS.iter().map(|(known, _)| *known).collect();
            let hint = closest(&name, &names)
                .map(|close| format!(" (did you mean `{close}`?)"))
                .unwrap_or_default();
            errors.at(
                ident,
                format!(
                    "`#[data]` derives Serialize, Deserialize and JsonSchema, not `{name}`{hint}; derive other traits with `#[derive(…)]` as usual"
                ),
            );
            continue;
        };
        if derives.iter().any(|(known, _)| known == name) {
            errors.at(ident, format!("`{name}` is named twice"));
            continue;
        }
        let home_ident = Ident::new(home, proc_macro2::Span::call_site());
        let trait_ident = Ident::new(name, proc_macro2::Span::call_site());
        derives.push((*name, quote!(#krate::#home_ident::#trait_ident)));
        if !crates.contains(home) {
            crates.push(*home);
        }
    }
    if !errors.is_empty() {
        let errors = errors.to_compile_errors();
        return quote!(#errors #item);
    }
    let derive_paths = derives.iter().map(|(_, path)| path);
    // serde and schemars read `crate = "…"` as a path written in a string.
    let krate_text = krate.to_string().replace(' ', "");
    // A type that already says where serde or schemars is keeps its own
    // word for it (writing the attribute twice is an error).
    let item_attrs = match &item {
        Item::Struct(s) => &s.attrs,
        Item::Enum(e) => &e.attrs,
        _ => unreachable!("checked above: a struct or an enum"),
    };
    let says_crate = |home: &str| {
        item_attrs.iter().any(|attr| {
            attr.path().is_ident(home)
                && attr.meta.require_list().is_ok_and(|list| {
                    list.tokens
                        .to_string()
                        .split([' ', ',', '('])
                        .any(|t| t == "crate")
                })
        })
    };
    crates.retain(|home| !says_crate(home));
    let crate_attrs = crates.iter().map(|home| {
        let path = format!("{krate_text}::{home}");
        let home_ident = Ident::new(home, proc_macro2::Span::call_site());
        quote!(#[#home_ident(crate = #path)])
    });
    quote! {
        #[derive(#(#derive_paths),*)]
        #(#crate_attrs)*
        #item
    }
}
