//! What to emit when the macro reports errors: the function as written plus
//! a stand-in tool type, so the user sees the macro's errors and not a
//! cascade of "cannot find `ReadFileTool`" wherever the tool is used, and
//! editors keep working on the function body.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::ToolFn;
use crate::expand::tool_type_ident;

pub fn fallback(tool: &ToolFn, krate: &TokenStream) -> TokenStream {
    let item = &tool.item;
    // A method (`self`) is inside an `impl`, where a struct cannot go.
    if item.sig.receiver().is_some() {
        return quote!(#item);
    }
    let vis = &item.vis;
    let type_ident = tool_type_ident(tool);
    let private = quote!(#krate::__private);
    quote! {
        #item

        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #type_ident;

        #[#private::async_trait]
        impl #krate::Tool for #type_ident {
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
