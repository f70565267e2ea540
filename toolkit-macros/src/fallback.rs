//! What to emit when the macro reports errors: the function as written plus
//! a stand-in tool type, so the user sees the macro's errors and not a
//! cascade of "cannot find `ReadFileTool`" wherever the tool is used, and
//! editors keep working on the function body.
//!
//! The stand-in also checks the types of the parameters the macro accepted,
//! so a wrong type is reported in the same build as the macro's own errors.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Type;
use syn::spanned::Spanned;

use crate::ast::{Output, Param, ToolFn};
use crate::tool_type;
use crate::valid::{borrow_inside, borrowed_argument, impl_trait};

pub fn fallback(tool: &ToolFn, krate: &TokenStream) -> TokenStream {
    let item = &tool.item;
    // A method (`self`) is inside an `impl`, where a struct cannot go.
    if item.sig.receiver().is_some() {
        return quote!(#item);
    }
    let type_path = tool_type::path(tool);
    let declare_type = tool_type::declare(tool, None);
    let collision_check = tool_type::collision_check(tool);
    let private = quote!(#krate::__private_0_1);
    let checks = type_checks(tool, &private);
    // The defaults' functions, for the compiler to check each default
    // against its type in this build too; nothing calls them.
    let defaults = crate::defaults::functions(tool);
    quote! {
        #item

        #declare_type

        const _: () = {
            #collision_check
            #checks
            #[allow(dead_code)]
            const _: () = { #defaults };
        };

        #[#private::async_trait]
        impl #krate::Tool for #type_path {
            fn spec(&self) -> &#krate::ToolSpec {
                ::core::unreachable!("this tool did not compile")
            }

            async fn call(
                &self,
                _: #krate::Arguments,
                _: &#krate::ToolContext,
            ) -> ::core::result::Result<#krate::ToolOutput, #krate::ToolError> {
                ::core::unreachable!("this tool did not compile")
            }
        }
    }
}

/// One spanned assertion per parameter and for the return type, each
/// reported at that type. Types the macro already refused are skipped, so
/// each mistake is reported once; a generic function is skipped whole,
/// because its type parameters are not in scope here.
pub fn type_checks(tool: &ToolFn, private: &TokenStream) -> TokenStream {
    let sig = &tool.item.sig;
    if !sig.generics.params.is_empty() || sig.receiver().is_some() {
        return TokenStream::new();
    }
    let checkable = |ty: &Type| impl_trait(ty).is_none();
    let mut checks = Vec::new();
    for param in &tool.params {
        match param {
            // A borrow inside is refused already; the compiler would only
            // add errors about lifetimes.
            Param::Argument(arg) if checkable(&arg.ty) && borrow_inside(&arg.ty).is_none() => {
                let ty = &arg.ty;
                checks.push(quote_spanned!(ty.span()=> #private::assert_argument::<#ty>();));
                // A constraint that does not fit the type would be left out
                // of the schema and never checked: refused at the key. (Text
                // and list keys together are refused already, once.)
                let a = &arg.attrs;
                let both = (a.min_length.is_some() || a.max_length.is_some())
                    && (a.min_items.is_some() || a.max_items.is_some());
                for key in a.keys.iter().filter(|_| !both) {
                    let check = match key.to_string().as_str() {
                        "minimum" | "maximum" => quote!(assert_number),
                        "min_length" | "max_length" | "pattern" => quote!(assert_text),
                        "min_items" | "max_items" => quote!(assert_list),
                        _ => continue,
                    };
                    // The type carries the key's span, so the compiler
                    // points at the constraint rather than at the type.
                    let at_key = respan(quote!(#ty), key.span());
                    checks.push(quote_spanned!(key.span()=> #private::#check::<#at_key>();));
                }
            }
            Param::Injected { ty, mutable, .. }
                if !mutable && checkable(ty) && borrowed_argument(ty).is_none() =>
            {
                checks.push(quote_spanned!(ty.span()=> #private::assert_injectable::<#ty>();));
            }
            _ => {}
        }
    }
    if let Output::Type { ty, ok, err } = &tool.output
        && checkable(ty)
    {
        let ok_ty: &Type = ok.as_deref().unwrap_or(ty);
        checks.push(quote_spanned!(ok_ty.span()=> #private::assert_return::<#ok_ty>();));
        if let Some(err) = err {
            checks.push(quote_spanned!(err.span()=> #private::assert_error::<#err>();));
        }
        if sig.asyncness.is_none() {
            checks.push(quote_spanned!(ty.span()=> #private::assert_blocking_return::<#ty>();));
        }
    }
    quote!(#(#checks)*)
}

/// `tokens` with every token (nested groups included) given `span`.
fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let proc_macro2::TokenTree::Group(group) = &token {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                token = proc_macro2::TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}
