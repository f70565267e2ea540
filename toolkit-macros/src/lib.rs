//! The `#[tool]` attribute. Use it through the `toolsmith` crate, which
//! documents it and re-exports everything the generated code needs.
//!
//! `lib.rs` only dispatches: `attr` parses the attribute keys, `ast` builds
//! the typed model of the function (`docs` reads its doc comment), `valid`
//! checks it (with `defaults` and `one_of` for the literals written in
//! `#[arg]`), `expand` writes the code, and `fallback` stands in when there
//! were errors, reusing parts of `expand`.

mod ast;
mod attr;
mod data;
mod defaults;
mod docs;
mod errors;
mod expand;
mod fallback;
mod foreign;
mod krate;
mod names;
mod one_of;
mod tool_type;
mod valid;

use proc_macro::TokenStream;
use syn::parse::Parser;

use crate::errors::Errors;

/// Turn an `fn` into a tool. Documented, with examples, where `toolsmith`
/// re-exports it.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_tool(attr.into(), item.into()).into()
}

/// Derive serde's and schemars' traits on a tool's own argument or output
/// type through the core crate's re-exports. Documented, with examples,
/// where `toolsmith` re-exports it.
#[proc_macro_attribute]
pub fn data(attr: TokenStream, item: TokenStream) -> TokenStream {
    data::expand(attr.into(), item.into()).into()
}

fn expand_tool(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let mut errors = Errors::default();
    let item_fn = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(syn::Item::Fn(item_fn)) => item_fn,
        Ok(other) => {
            errors.at(item_kind_token(&other), not_a_function(&other));
            let compile_errors = errors.to_compile_errors();
            return quote::quote!(#compile_errors #item);
        }
        Err(e) => {
            let compile_error = e.to_compile_error();
            return quote::quote!(#compile_error #item);
        }
    };
    let attrs = match (|input: syn::parse::ParseStream| attr::parse_tool_attrs(input, &mut errors))
        .parse2(attr)
    {
        Ok(attrs) => attrs,
        Err(e) => {
            errors.push(e);
            attr::ToolAttrs::default()
        }
    };
    let krate = match &attrs.krate {
        Some(path) => quote::quote!(#path),
        None => krate::core_crate_path(),
    };
    let model = ast::ToolFn::from_item(item_fn, attrs, &mut errors);
    valid::check(&model, &mut errors);
    if errors.is_empty() {
        expand::expand(&model, &krate)
    } else {
        let compile_errors = errors.to_compile_errors();
        let fallback = fallback::fallback(&model, &krate);
        quote::quote!(#compile_errors #fallback)
    }
}

/// Why `#[tool]` cannot go on `item`, and where it goes instead.
fn not_a_function(item: &syn::Item) -> String {
    let kind = match item {
        syn::Item::Struct(s) => {
            return format!(
                "`#[tool]` goes on a function, not on a struct: put it on the `fn` that does the work; to take this struct as the tool's arguments, make it the only parameter: `#[arg(flatten)] args: {}`",
                s.ident
            );
        }
        syn::Item::Impl(_) => {
            return "`#[tool]` goes on a free function, not on an `impl` block: a method cannot be a tool".to_owned();
        }
        syn::Item::Enum(_) => "an enum",
        syn::Item::Trait(_) => "a trait",
        syn::Item::Mod(_) => "a module",
        syn::Item::Const(_) => "a constant",
        syn::Item::Static(_) => "a static",
        syn::Item::Type(_) => "a type alias",
        syn::Item::Use(_) => "a `use`",
        _ => "this item",
    };
    format!("`#[tool]` goes on a function, not on {kind}: put it on the `fn` that does the work")
}

/// The token that names what kind of item this is (`struct`, `impl`, ...).
fn item_kind_token(item: &syn::Item) -> proc_macro2::TokenStream {
    use quote::ToTokens;
    match item {
        syn::Item::Fn(i) => i.sig.fn_token.to_token_stream(),
        syn::Item::Struct(i) => i.struct_token.to_token_stream(),
        syn::Item::Enum(i) => i.enum_token.to_token_stream(),
        syn::Item::Impl(i) => i.impl_token.to_token_stream(),
        syn::Item::Trait(i) => i.trait_token.to_token_stream(),
        syn::Item::Mod(i) => i.mod_token.to_token_stream(),
        syn::Item::Const(i) => i.const_token.to_token_stream(),
        syn::Item::Static(i) => i.static_token.to_token_stream(),
        syn::Item::Type(i) => i.type_token.to_token_stream(),
        syn::Item::Use(i) => i.use_token.to_token_stream(),
        other => other.to_token_stream(),
    }
}
