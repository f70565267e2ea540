//! The names `#[tool]` puts beside the function: the tool type
//! (`read_file` gets `ReadFileTool`) and a marker of the tool's name.
//!
//! The tool type is declared in a module of its own and brought into the
//! function's module by a glob import (`use __toolsmith_tool_read_file::*`).
//! An item of the module's own shadows a glob import without an error, so
//! when the user already has a `ReadFileTool`, theirs wins, everything the
//! macro generates reaches its own type by the module's path, and a single
//! check reports the clash in words, where two declarations of one name
//! would make the compiler report the name and then every impl it gets
//! twice.
//!
//! The marker is a constant named after the tool, declared directly in
//! the module, so two tools given one name in one module collide there, at
//! compile time, pointing at both names. Across modules the registry
//! reports the clash when both are registered (a crate has no namespace
//! common to its modules that a macro could use).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Visibility;

use crate::ast::ToolFn;
use crate::names::{is_valid_tool_name, tool_type_name};

/// `ReadFileTool`, spanned at the function's name.
pub fn ident(tool: &ToolFn) -> syn::Ident {
    let ident = &tool.item.sig.ident;
    syn::Ident::new(&tool_type_name(&ident.to_string()), ident.span())
}

/// The module that declares the tool type: `__toolsmith_tool_read_file`.
fn module(tool: &ToolFn) -> syn::Ident {
    let name = tool.item.sig.ident.to_string();
    format_ident!("__toolsmith_tool_{}", name.trim_start_matches("r#"))
}

/// The path the generated code names the tool type by, which the user's
/// own type of the same name cannot shadow.
pub fn path(tool: &ToolFn) -> TokenStream {
    let module = module(tool);
    let ident = ident(tool);
    quote!(#module::#ident)
}

/// The tool type's module, its glob import, and the name marker.
pub fn declare(tool: &ToolFn, doc: Option<String>) -> TokenStream {
    let vis = &tool.item.vis;
    let inner_vis = inner_visibility(vis);
    let module = module(tool);
    let ident = ident(tool);
    let doc = doc.map(|doc| quote!(#[doc = #doc]));
    let marker = name_marker(tool);
    quote! {
        mod #module {
            #doc
            #[derive(Debug, Clone, Copy, Default)]
            #inner_vis struct #ident;
        }

        // Unused only when the user's own type of this name shadows it,
        // which `collision_check` refuses (no `allow`: a crate may forbid
        // the lint).
        #vis use #module::*;

        #marker
    }
}

/// The visibility, inside the tool type's module, that gives the type the
/// function's visibility outside it. (`pub(super)` there is private here.)
fn inner_visibility(vis: &Visibility) -> TokenStream {
    match vis {
        Visibility::Public(_) => quote!(pub),
        Visibility::Inherited => quote!(pub(super)),
        Visibility::Restricted(restricted) => {
            let path = &restricted.path;
            let first = path.segments.first().map(|s| s.ident.to_string());
            match first.as_deref() {
                Some("crate") if path.segments.len() == 1 => quote!(pub(crate)),
                Some("crate") => quote!(pub(in #path)),
                Some("self") => {
                    let rest = path.segments.iter().skip(1);
                    quote!(pub(in super #(::#rest)*))
                }
                _ => quote!(pub(in super::#path)),
            }
        }
    }
}

/// A check, for a `const` block, that the name `ReadFileTool` in the
/// function's module is the generated type; if the user's own type of that
/// name shadows it, compiling stops with a message that says so.
///
/// The check picks an associated constant by type: the generated type's
/// inherent constant, declared here, wins over the default of
/// `NotGenerated`, which every type has. A failed `assert` in a constant is
/// one error with this message, where a trait bound would add notes about
/// impls. One inherent impl per tool is all the compiler checks; the trait
/// is the core crate's.
pub fn collision_check(tool: &ToolFn, private: &TokenStream) -> TokenStream {
    let generated = path(tool);
    let ident = ident(tool);
    let fn_ident = &tool.item.sig.ident;
    let fn_name = fn_ident.to_string();
    let fn_name = fn_name.trim_start_matches("r#");
    let rename = match &tool.attrs.name {
        Some(name) => format!(
            "rename the function (the tool keeps its name, `{}`)",
            name.value
        ),
        None => format!(
            "rename the function and keep the tool's name with `#[tool(name = \"{fn_name}\")]`"
        ),
    };
    let message = format!(
        "`#[tool]` makes a type named `{ident}` for `fn {fn_name}`, and this module already has a `{ident}`: rename yours, or {rename}"
    );
    let span = fn_ident.span();
    let panic = quote_spanned!(span=> ::core::panic!(#message));
    quote! {
        impl #generated {
            // Unused only when the name is taken, which is refused below
            // (no `allow`: a crate may forbid the lint).
            const __TOOLSMITH_GENERATED: bool = true;
        }
        {
            use #private::NotGenerated as _;
            if !<#ident>::__TOOLSMITH_GENERATED {
                #panic
            }
        }
    }
}

/// `const __TOOL_NAMED_READ_FILE: () = ();`, spanned at the name as
/// written, or nothing for a name that is refused anyway. A constant in
/// upper case, read once, so that no naming or dead-code lint fires on it:
/// a crate that forbids those lints (where no `allow` may lift them) can
/// use `#[tool]` too.
fn name_marker(tool: &ToolFn) -> TokenStream {
    let name = tool.tool_name();
    if !is_valid_tool_name(&name) {
        return TokenStream::new();
    }
    let span = tool
        .attrs
        .name
        .as_ref()
        .map_or_else(|| tool.item.sig.ident.span(), |n| n.span);
    let marker = syn::Ident::new(&marker_name(&name), span);
    // Every token at the name, so the compiler's "defined multiple times"
    // points at the two names rather than at the two attributes.
    quote_spanned! {span=>
        #[doc(hidden)]
        const #marker: () = ();
        const _: () = #marker;
    }
}

/// The marker's name: `__TOOL_NAMED_READ_FILE` for a name of lowercase
/// letters, digits and `_`, which upper case keeps apart. Any other name
/// (an uppercase letter, a `-`) is spelled so that two tool names never
/// share a marker: `Read-file` is `__TOOL_CODED__READ_1FILE`, where a
/// lowercase letter is its capital, an uppercase one is `_` and itself,
/// `_` is `_0` and `-` is `_1`.
fn marker_name(tool_name: &str) -> String {
    if tool_name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        return format!("__TOOL_NAMED_{}", tool_name.to_ascii_uppercase());
    }
    let mut coded = String::from("__TOOL_CODED_");
    for c in tool_name.chars() {
        match c {
            '_' => coded.push_str("_0"),
            '-' => coded.push_str("_1"),
            c if c.is_ascii_uppercase() => {
                coded.push('_');
                coded.push(c);
            }
            c => coded.push(c.to_ascii_uppercase()),
        }
    }
    coded
}

#[cfg(test)]
mod tests {
    use super::marker_name;

    #[test]
    fn marker_names_differ_for_different_tool_names() {
        assert_eq!(marker_name("read_file"), "__TOOL_NAMED_READ_FILE");
        assert_eq!(marker_name("Read-file"), "__TOOL_CODED__READ_1FILE");
        let names = [
            "a-b", "a_b", "a__b", "a-_b", "a_-b", "a_hb", "a_h_b", "a--b", "A_b", "a_B", "AB",
            "ab", "Ab", "aB", "a_0b", "a0b", "A0B", "a_1b", "a-1b", "_a", "a_", "_", "-", "__",
            "A", "a", "_A", "0", "_0", "A_0",
        ];
        let mut markers: Vec<String> = names.iter().map(|n| marker_name(n)).collect();
        markers.sort();
        markers.dedup();
        assert_eq!(markers.len(), names.len(), "{markers:?}");
        for marker in &markers {
            assert!(
                !marker.chars().any(|c| c.is_lowercase()),
                "{marker} is not upper case"
            );
        }
    }
}
