//! What to emit when the macro reports errors: the function as written plus
//! a stand-in tool type, so the user sees the macro's errors and not a
//! cascade of "cannot find `ReadFileTool`" wherever the tool is used, and
//! editors keep working on the function body.
//!
//! The stand-in also checks the types of the parameters the macro accepted,
//! with the expansion's own checks (`expand::type_checks`), so a wrong type
//! is reported in the same build as the macro's own errors.
//!
//! This module takes from `expand`, never the other way: the fallback
//! reuses parts of the expansion, and the expansion knows nothing of what
//! is written in its place.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::ToolFn;
use crate::expand::type_checks;
use crate::tool_type;

pub fn fallback(tool: &ToolFn, krate: &TokenStream) -> TokenStream {
    let item = &tool.item;
    // A method (`self`) is inside an `impl`, where a struct cannot go.
    if item.sig.receiver().is_some() {
        return quote!(#item);
    }
    let type_path = tool_type::path(tool);
    let declare_type = tool_type::declare(tool, None);
    let private = quote!(#krate::__private_0_1);
    let collision_check = tool_type::collision_check(tool, &private);
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
