//! Generate the tool type, its `GeneratedTool` impl (which makes it a
//! `Tool`) and its `inventory` registration.
//!
//! Everything but the tool type (with its module and name marker, see
//! `tool_type`) lives in an anonymous `const _: () = {...}` block, so
//! nothing else enters the user's namespace.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Type;
use syn::spanned::Spanned;

use crate::ast::{Argument, Output, Param, ToolFn};
use crate::one_of::Holds;
use crate::tool_type;
use crate::valid::{borrow_inside, borrowed_argument, impl_trait};

pub fn expand(tool: &ToolFn, krate: &TokenStream) -> TokenStream {
    let item = &tool.item;
    // The generated code names the type by a path the user's own type of
    // the same name cannot shadow; see `tool_type`.
    let type_path = tool_type::path(tool);
    let hidden = quote!(__ToolsmithTool);
    // The type is declared in a module below the function's.
    let type_doc = format!(
        "The tool made by `#[tool]` from [`{0}`](super::{0}): register it, or let a `ToolRegistry` collect it.",
        item.sig.ident
    );
    let declare_type = tool_type::declare(tool, Some(type_doc));
    let private = quote!(#krate::__private_0_1);
    let collision_check = tool_type::collision_check(tool, &private);
    let args_type = arguments_type(tool);
    let args_struct = arguments_struct(tool, krate, &private);
    let checks = type_checks(tool, &private);
    let assumed = assumed_bounds(tool, &private, &args_type);
    let spec = spec_body(tool, krate, &private, &args_type);
    let call = call_body(tool, krate, &private, &args_type);
    // The function's own `#[deprecated]` is for its other callers; an
    // `allow` is written only where needed, as a crate may forbid the lint.
    let allow_deprecated = tool
        .item
        .attrs
        .iter()
        .any(|a| a.path().is_ident("deprecated"))
        .then(|| quote!(#[allow(deprecated)]));
    // The parameters are bound by their own names in `call`.
    let snake_case_params = tool
        .arguments()
        .map(|arg| crate::names::allow_non_snake_case(&arg.ident))
        .find(|allow| !allow.is_empty());
    let bind = if reads_fields(tool) {
        quote!(#private::bind_fields::<Self, _>(__toolsmith_payload, &__TOOLSMITH_FIELDS))
    } else {
        quote!(#private::bind::<#args_type>(__toolsmith_payload))
    };

    quote! {
        #item

        #declare_type

        const _: () = {
            #args_struct

            // The checks are statements of this constant's own body, so
            // they cost the compiler no body of their own.
            #collision_check
            #checks

            // The spec, the compiled schema, the output's wrapping and the
            // rendered definitions, each made once; read by the `Tool` impl
            // every generated tool has.
            static __TOOLSMITH_STATICS: #private::ToolStatics = #private::ToolStatics::new();

            // The tool itself, declared here rather than in the tool type's
            // module, so that its code is compiled with this module's (a
            // module with code is a codegen unit of its own, and a hundred
            // tools would be a hundred small units for LLVM). Both it and
            // `FooTool` are a `Tool` through `ToolType`. As public as any
            // tool type can be, since `FooTool`'s `ToolType` names it.
            #[doc(hidden)]
            pub struct #hidden;

            impl #private::ToolType for #hidden {
                type Hidden = Self;

                fn fns() -> &'static #private::ToolFns {
                    use #private::probes::*;
                    (&#private::Dispatch::<#hidden>::new()).__toolsmith_fns()
                }
            }

            #[doc(hidden)]
            impl #private::ToolType for #type_path {
                type Hidden = #hidden;
            }

            // Implemented only when the checks above pass; see `GeneratedTool`.
            impl #private::GeneratedTool for #hidden
            where
                #assumed
            {
                fn spec() -> #krate::ToolSpec {
                    #spec
                }

                fn statics() -> &'static #private::ToolStatics {
                    &__TOOLSMITH_STATICS
                }

                fn bind(
                    __toolsmith_payload: #private::serde_json::Value,
                ) -> ::core::result::Result<#krate::Arguments, #krate::ArgumentError> {
                    #bind
                }

                #allow_deprecated
                #snake_case_params
                fn call(
                    __toolsmith_args: #krate::Arguments,
                    __toolsmith_ctx: &#krate::ToolContext,
                ) -> #private::CallFuture<'_> {
                    #call
                }
            }

            // Builds the tool for its registration.
            fn __toolsmith_make() -> #private::Arc<dyn #krate::Tool> {
                #private::Arc::new(#hidden)
            }

            #private::inventory::submit! {
                #private::ToolRegistration {
                    module_path: ::core::module_path!(),
                    make: __toolsmith_make,
                }
            }
        };
    }
}

/// The type arguments deserialize into: the generated struct, or the user's
/// own struct when it is the only, flattened argument.
fn arguments_type(tool: &ToolFn) -> TokenStream {
    match tool.whole_arguments() {
        Some(whole) => {
            let ty = &whole.ty;
            quote!(#ty)
        }
        None => quote!(__ToolsmithArguments),
    }
}

fn arguments_struct(tool: &ToolFn, krate: &TokenStream, private: &TokenStream) -> TokenStream {
    if tool.whole_arguments().is_some() {
        return TokenStream::new();
    }
    let defaults = crate::defaults::functions(tool);
    if reads_fields(tool) {
        let schema = properties_schema(tool, private);
        let read_as_tuple = fields_const(tool, private);
        return quote! {
            struct __ToolsmithArguments;
            #schema
            #defaults
            #read_as_tuple
        };
    }
    // A flattened parameter, or more than the core reads as a tuple: a
    // struct of the parameters, read by serde's derive. Its schema is the
    // same `Property` list, unless a parameter is flattened, which only
    // schemars' derive describes (it merges the struct's own schema in).
    // serde and schemars take their crate path as a string.
    let krate_path = krate.to_string().replace(' ', "");
    let serde_path = format!("{krate_path}::__private_0_1::serde");
    let schemars_path = format!("{krate_path}::__private_0_1::schemars");
    let any_flatten = tool.arguments().any(|a| a.attrs.flatten.is_some());
    // serde cannot combine `deny_unknown_fields` with `flatten`; the
    // validator rejects unknown parameters either way.
    let deny = (!any_flatten).then(|| quote!(#[serde(deny_unknown_fields)]));
    let fields: Vec<TokenStream> = tool
        .arguments()
        .map(|arg| argument_field(arg, private, any_flatten))
        .collect();
    // The derives would each report a field type that does not fit. With its
    // bounds stated, a derived impl is checked assuming them, and only
    // `assert_argument` reports the type. `for<'__x>` keeps the compiler from
    // checking a bound on a concrete type where it is written; schemars only
    // takes bounds on a generic type, hence the marker parameter. The bounds
    // are text, which cannot hold a `$crate` path (a tool written by a
    // `macro_rules!`): such a type goes unstated, and a type of it without
    // the trait is reported by the derive as well.
    let types: Vec<String> = tool
        .arguments()
        .map(|a| type_string(&a.ty))
        .filter(|ty| !ty.contains("$crate"))
        .collect();
    let serde_bound = types
        .iter()
        .map(|ty| format!("{ty}: {serde_path}::Deserialize<'de>,"))
        .collect::<String>();
    let (derive_schema, schema) = if any_flatten {
        let schemars_bound = types
            .iter()
            .map(|ty| format!("for<'__x> {ty}: {schemars_path}::JsonSchema,"))
            .collect::<String>();
        (
            quote! {
                #[derive(#private::schemars::JsonSchema)]
                #[schemars(crate = #schemars_path, bound = #schemars_bound)]
            },
            TokenStream::new(),
        )
    } else {
        (TokenStream::new(), properties_schema(tool, private))
    };
    let skip_schema = any_flatten.then(|| quote!(#[schemars(skip)]));
    let snake_case = tool
        .arguments()
        .map(|arg| crate::names::allow_non_snake_case(&arg.ident))
        .find(|allow| !allow.is_empty());
    quote! {
        #[derive(#private::serde::Deserialize)]
        #derive_schema
        #[serde(crate = #serde_path, bound(deserialize = #serde_bound))]
        #deny
        #snake_case
        struct __ToolsmithArguments<__ToolsmithMarker = ()> {
            #(#fields,)*
            #[serde(skip)]
            #skip_schema
            __toolsmith_marker: ::core::marker::PhantomData<__ToolsmithMarker>,
        }
        #schema
        #defaults
    }
}

/// `__ToolsmithArguments` of a tool whose arguments are read as a tuple:
/// a type of no data whose `JsonSchema` lists the parameters as
/// `Property` values for the core's one `object_schema` (which makes the
/// schema schemars' derive made for a struct of them, unknown keys
/// refused), instead of a struct and a derived `json_schema` per tool: the
/// compiler checks fewer functions of each tool, again whenever it moves in
/// its file. As with the derive, the bounds are stated, so only
/// `assert_argument` reports a type without a schema.
fn properties_schema(tool: &ToolFn, private: &TokenStream) -> TokenStream {
    let bounds = tool.arguments().map(|arg| {
        let ty = &arg.ty;
        quote!(for<'__x> #ty: #private::schemars::JsonSchema,)
    });
    let properties = tool.arguments().map(|arg| property(arg, private));
    quote! {
        impl #private::schemars::JsonSchema for __ToolsmithArguments
        where
            #(#bounds)*
        {
            fn schema_name() -> #private::Cow<'static, str> {
                #private::Cow::Borrowed("__ToolsmithArguments")
            }

            // The derive's id: a parameter type of the same name (its id
            // that name) must not be taken for this one, the root.
            fn schema_id() -> #private::Cow<'static, str> {
                #private::Cow::Borrowed(::core::concat!(
                    ::core::module_path!(),
                    "::__ToolsmithArguments"
                ))
            }

            fn json_schema(
                __toolsmith_generator: &mut #private::schemars::SchemaGenerator,
            ) -> #private::schemars::Schema {
                #private::object_schema(__toolsmith_generator, &[#(#properties),*])
            }
        }
    }
}

/// One parameter as a `Property`: what `argument_field` says of it in
/// attributes, as values.
fn property(arg: &Argument, private: &TokenStream) -> TokenStream {
    let ty = &arg.ty;
    let attrs = &arg.attrs;
    let name = serde_name(arg);
    let some = |value: Option<TokenStream>| match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    };
    let description = some(
        attrs
            .description
            .as_ref()
            .map(|d| d.value.clone())
            .or_else(|| arg.docs.clone())
            .map(|d| quote!(#d)),
    );
    let count = |value: Option<&crate::attr::Spanned<u64>>| {
        some(value.map(|v| {
            let v = v.value;
            quote!(#v)
        }))
    };
    let min_length = count(attrs.min_length.as_ref().or(attrs.min_items.as_ref()));
    let max_length = count(attrs.max_length.as_ref().or(attrs.max_items.as_ref()));
    let limit = |value: Option<&crate::attr::Spanned<syn::Lit>>| {
        some(value.map(|v| {
            let v = &v.value;
            quote!(#private::serde_json::Value::from(#v))
        }))
    };
    let minimum = limit(attrs.minimum.as_ref());
    let maximum = limit(attrs.maximum.as_ref());
    let text = |value: Option<&crate::attr::Spanned<String>>| {
        some(value.map(|v| {
            let v = &v.value;
            quote!(#v)
        }))
    };
    let pattern = text(attrs.pattern.as_ref());
    let header = text(attrs.header.as_ref());
    let one_of = some(crate::one_of::values_json(arg).map(|values| quote!(#values)));
    // The default's value in the schema, when its type serializes (as the
    // derive decides it, by schemars' own test).
    let default = some(crate::defaults::has_fn(arg).then(|| {
        let function = format_ident!("{}", crate::defaults::fn_name(arg));
        quote!({
            fn __toolsmith_default_value() -> ::core::option::Option<#private::serde_json::Value> {
                #private::schemars::_schemars_maybe_to_value!(#function())
            }
            __toolsmith_default_value
        })
    }));
    quote! {
        #private::Property {
            description: #description,
            min_length: #min_length,
            max_length: #max_length,
            minimum: #minimum,
            maximum: #maximum,
            pattern: #pattern,
            default: #default,
            header: #header,
            one_of: #one_of,
            ..#private::Property::of::<#ty>(#name)
        }
    }
}

/// The name a parameter is sent under: its `rename`, else its own without
/// `r#` (serde's).
fn serde_name(arg: &Argument) -> String {
    match &arg.attrs.rename {
        Some(rename) => rename.value.clone(),
        None => arg.ident.to_string().trim_start_matches("r#").to_owned(),
    }
}

/// The most parameters the core reads as a tuple (its `fields` module has
/// tuples up to this length); a tool with more reads a derived struct.
const MAX_FIELDS: usize = 16;

/// Whether the tool's arguments are read as a tuple of the parameters'
/// types by the core's `Fields` (no serde derive per tool): unless a
/// parameter is flattened (serde's derive then collects the other keys
/// into it) or there are too many.
fn reads_fields(tool: &ToolFn) -> bool {
    tool.whole_arguments().is_none()
        && tool.arguments().all(|a| a.attrs.flatten.is_none())
        && tool.arguments().count() <= MAX_FIELDS
}

/// The tuple of the parameters' types.
fn fields_tuple(tool: &ToolFn) -> TokenStream {
    let types = tool.arguments().map(|a| &a.ty);
    quote!((#(#types,)*))
}

/// `__TOOLSMITH_FIELDS`: the parameters' names as sent (serde's: the
/// `rename`, else the name without `r#`) and their default functions.
fn fields_const(tool: &ToolFn, private: &TokenStream) -> TokenStream {
    let tuple = fields_tuple(tool);
    let names = tool.arguments().map(serde_name);
    let defaults = tool.arguments().map(|arg| {
        if crate::defaults::has_fn(arg) {
            let function = format_ident!("{}", crate::defaults::fn_name(arg));
            let ty = &arg.ty;
            quote!(::core::option::Option::Some(#function as fn() -> #ty))
        } else {
            quote!(::core::option::Option::None)
        }
    });
    quote! {
        const __TOOLSMITH_FIELDS: #private::Fields<#tuple> =
            #private::Fields::new(&[#(#names),*], (#(#defaults,)*));
    }
}

/// One field of the derived arguments struct: serde's attributes, and
/// schemars' when its derive describes the struct (`described`).
fn argument_field(arg: &Argument, private: &TokenStream, described: bool) -> TokenStream {
    let ident = &arg.ident;
    let ty = &arg.ty;
    let attrs = &arg.attrs;
    let mut out = Vec::new();
    if attrs.default.is_some() {
        let fn_name = crate::defaults::fn_name(arg);
        out.push(quote!(#[serde(default = #fn_name)]));
    }
    if let Some(rename) = &attrs.rename {
        let name = &rename.value;
        out.push(quote!(#[serde(rename = #name)]));
    }
    if attrs.flatten.is_some() {
        out.push(quote!(#[serde(flatten)]));
    }
    if !described {
        return quote!(#(#out)* #ident: #ty);
    }
    let description = attrs
        .description
        .as_ref()
        .map(|d| d.value.clone())
        .or_else(|| arg.docs.clone());
    if let Some(description) = description {
        out.push(quote!(#[schemars(description = #description)]));
    }
    let range: Vec<TokenStream> = [
        attrs.minimum.as_ref().map(|m| {
            let v = &m.value;
            quote!(min = #v)
        }),
        attrs.maximum.as_ref().map(|m| {
            let v = &m.value;
            quote!(max = #v)
        }),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !range.is_empty() {
        out.push(quote!(#[schemars(range(#(#range),*))]));
    }
    let length: Vec<TokenStream> = [
        attrs
            .min_length
            .as_ref()
            .or(attrs.min_items.as_ref())
            .map(|m| {
                let v = m.value;
                quote!(min = #v)
            }),
        attrs
            .max_length
            .as_ref()
            .or(attrs.max_items.as_ref())
            .map(|m| {
                let v = m.value;
                quote!(max = #v)
            }),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !length.is_empty() {
        out.push(quote!(#[schemars(length(#(#length),*))]));
    }
    if let Some(pattern) = &attrs.pattern {
        let p = &pattern.value;
        out.push(quote!(#[schemars(regex(pattern = #p))]));
    }
    if let Some(header) = &attrs.header {
        let name = &header.value;
        out.push(quote!(#[schemars(extend("x-mcp-header" = #name))]));
    }
    if let Some(values) = crate::one_of::values_json(arg) {
        // Applied to the field's finished schema: `enum` on the value, or
        // on the items of a list, with `null` where `None` is allowed.
        out.push(quote!(#[schemars(transform = #private::OneOf(#values))]));
    }
    quote!(#(#out)* #ident: #ty)
}

/// What the `GeneratedTool` impl assumes: no more than `type_checks`
/// checks, so it applies whenever the checks pass, and enough for its body
/// to type-check whatever the types are. `for<'__x>` makes each bound an
/// assumption instead of a requirement checked where it is written.
///
/// The body reads an argument only through the arguments type, so an
/// argument's own bound is what its value needs beyond that: being held
/// across the tool's `.await`.
fn assumed_bounds(tool: &ToolFn, private: &TokenStream, args_type: &TokenStream) -> TokenStream {
    let mut bounds = if reads_fields(tool) {
        let tuple = fields_tuple(tool);
        vec![quote! {
            for<'__x> #args_type: #private::schemars::JsonSchema,
            for<'__x> #tuple: #private::ArgTuple,
        }]
    } else {
        vec![quote! {
            for<'__x> #args_type: #private::serde::de::DeserializeOwned
                + #private::schemars::JsonSchema + ::core::marker::Send + 'static,
        }]
    };
    for param in &tool.params {
        bounds.push(match param {
            Param::Argument(arg) => {
                let ty = &arg.ty;
                quote!(for<'__x> #ty: ::core::marker::Send + 'static,)
            }
            Param::Injected { ty, .. } => quote! {
                for<'__x> #ty: ::core::marker::Send + ::core::marker::Sync + 'static,
            },
        });
    }
    if let (Output::Type { ty, .. }, None) = (&tool.output, &tool.item.sig.asyncness) {
        bounds.push(quote!(for<'__x> #ty: ::core::marker::Send + 'static,));
    }
    quote!(#(#bounds)*)
}

/// One spanned assertion per parameter and for the return type, each
/// reported at that type. Types the macro already refused are skipped, so
/// each mistake is reported once; a generic function is skipped whole,
/// because its type parameters are not in scope here.
///
/// Emitted by the expansion and by `fallback`, so a wrong
/// type is reported in the same build as the macro's own errors.
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
                // `one_of` on a type the macro could not read: checked at
                // the first value of each kind the list holds.
                for (holds, span) in crate::one_of::compiler_checks(arg) {
                    let check = match holds {
                        Holds::Numbers => quote!(assert_one_of_numbers),
                        Holds::Text => quote!(assert_one_of_text),
                    };
                    let at_value = respan(quote!(#ty), span);
                    checks.push(quote_spanned!(span=> #private::#check::<#at_value>();));
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

/// A type as serde and schemars read it from a string attribute.
fn type_string(ty: &Type) -> String {
    quote!(#ty).to_string()
}

fn spec_body(
    tool: &ToolFn,
    krate: &TokenStream,
    private: &TokenStream,
    args_type: &TokenStream,
) -> TokenStream {
    let name = tool.tool_name();
    // A description built by the compiler (`include_str!`) is trimmed at run
    // time; a literal one was trimmed by the macro.
    let description = match (&tool.attrs.description, &tool.docs_expr) {
        (None, Some(expr)) => quote!(#expr.trim()),
        _ => {
            let text = tool.description().unwrap_or_default();
            quote!(#text)
        }
    };
    let a = &tool.attrs;
    let (read_only, exclusive, destructive, idempotent, open_world) = (
        a.read_only,
        a.exclusive,
        a.destructive,
        a.idempotent,
        a.open_world,
    );
    let category = a.category.as_ref().map(|c| {
        let variant = format_ident!("{}", pascal(&c.value));
        quote!(__toolsmith_spec = __toolsmith_spec.with_category(#krate::ToolCategory::#variant);)
    });
    let risk = a.risk.as_ref().map(|r| {
        let variant = format_ident!("{}", pascal(&r.value));
        quote!(__toolsmith_spec = __toolsmith_spec.with_risk(#krate::RiskLevel::#variant);)
    });
    let task = a.task.as_ref().map(|t| {
        let variant = format_ident!("{}", pascal(&t.value));
        quote!(__toolsmith_spec = __toolsmith_spec.with_task_support(#krate::TaskSupport::#variant);)
    });
    let asks_first = a
        .asks_first
        .then(|| quote!(__toolsmith_spec = __toolsmith_spec.with_asks_first();));
    let timeout = a.timeout_ms.as_ref().map(|t| {
        let ms = t.value;
        quote!(__toolsmith_spec = __toolsmith_spec.with_timeout(::core::time::Duration::from_millis(#ms));)
    });
    let metadata = metadata(tool, krate, private);
    let ok_type = success_type(tool);
    quote! {
        use #private::probes::*;
        let mut __toolsmith_spec = #krate::ToolSpec::new(#name, #description, #private::schema_for_args::<#args_type>())
            .with_annotations(#krate::ToolAnnotations {
                read_only: #read_only,
                exclusive: #exclusive,
                destructive: #destructive,
                idempotent: #idempotent,
                open_world: #open_world,
            })
            .with_module_path(::core::module_path!());
        #category
        #risk
        #task
        #asks_first
        #timeout
        #metadata
        if let ::core::option::Option::Some(__toolsmith_schema) = (&&&#private::OutputOf::<#ok_type>::new()).__toolsmith_output_schema() {
            __toolsmith_spec = __toolsmith_spec.with_output_schema(__toolsmith_schema);
        }
        __toolsmith_spec
    }
}

/// `__toolsmith_spec = __toolsmith_spec.with_...;` for the title, tags, icons, deprecation and
/// examples.
fn metadata(tool: &ToolFn, krate: &TokenStream, private: &TokenStream) -> TokenStream {
    let a = &tool.attrs;
    let mut out = Vec::new();
    if let Some(title) = &a.title {
        let title = &title.value;
        out.push(quote!(__toolsmith_spec = __toolsmith_spec.with_title(#title);));
    }
    for tag in &a.tags {
        let tag = &tag.value;
        out.push(quote!(__toolsmith_spec = __toolsmith_spec.with_tag(#tag);));
    }
    for icon in &a.icons {
        let Some(src) = &icon.src else { continue };
        let src = &src.value;
        let mime_type = icon.mime_type.as_ref().map(|m| {
            let m = &m.value;
            quote!(.with_mime_type(#m))
        });
        let sizes = icon.sizes.iter().map(|size| {
            let size = &size.value;
            quote!(.with_size(#size))
        });
        let theme = icon.theme.as_ref().map(|t| {
            let variant = format_ident!("{}", pascal(&t.value));
            quote!(.with_theme(#krate::IconTheme::#variant))
        });
        out.push(quote! {
            __toolsmith_spec = __toolsmith_spec.with_icon(#krate::ToolIcon::new(#src) #mime_type #(#sizes)* #theme);
        });
    }
    if let Some(note) = tool.deprecation() {
        out.push(quote!(__toolsmith_spec = __toolsmith_spec.with_deprecated(#note);));
    }
    if a.strict {
        out.push(quote!(__toolsmith_spec = __toolsmith_spec.with_strict();));
    }
    for example in &a.examples {
        // Checked to be a JSON object when the tool was compiled.
        out.push(quote! {
            __toolsmith_spec = __toolsmith_spec.with_input_example(
                #private::serde_json::from_str(#example)
                    .expect("#[tool] checked that the example is a JSON object"),
            );
        });
    }
    if let Some(meta) = &a.meta {
        // Checked to be a JSON object when the tool was compiled.
        out.push(quote! {
            if let #private::serde_json::Value::Object(__toolsmith_entries) =
                #private::serde_json::from_str(#meta)
                    .expect("#[tool] checked that `meta` is a JSON object")
            {
                for (__toolsmith_key, __toolsmith_value) in __toolsmith_entries {
                    __toolsmith_spec = __toolsmith_spec.with_meta(__toolsmith_key, __toolsmith_value);
                }
            }
        });
    }
    quote!(#(#out)*)
}

/// The type whose values become output: `T` of `Result<T, E>`, else the return type.
fn success_type(tool: &ToolFn) -> TokenStream {
    match &tool.output {
        Output::Unit => quote!(()),
        Output::Type { ok: Some(ok), .. } => quote!(#ok),
        Output::Type { ty, .. } => quote!(#ty),
    }
}

/// The body of `GeneratedTool::call`. The arguments are unpacked and the
/// values injected before the tool's future is made; `call_with` awaits it
/// and hands what it returned to the closure written here, which converts
/// it. The awaiting is one generic function of the core, so a tool brings
/// no coroutine of its own for the compiler to build and check, only a
/// closure that converts a value.
fn call_body(
    tool: &ToolFn,
    krate: &TokenStream,
    private: &TokenStream,
    args_type: &TokenStream,
) -> TokenStream {
    let fn_ident = &tool.item.sig.ident;
    let is_async = tool.item.sig.asyncness.is_some();
    // Before the future exists a failure is a call refused at once; inside
    // a blocking body, the body's own error.
    let fail = if is_async {
        quote!(return #private::refused(__toolsmith_error))
    } else {
        quote!(return ::core::result::Result::Err(__toolsmith_error))
    };
    let parsed = match tool.whole_arguments() {
        Some(whole) => {
            let ident = &whole.ident;
            quote!(let #ident)
        }
        None if reads_fields(tool) => {
            let idents = tool.arguments().map(|a| &a.ident);
            quote!(let (#(#idents,)*))
        }
        None => {
            let idents = tool.arguments().map(|a| &a.ident);
            quote!(let __ToolsmithArguments { #(#idents,)* .. })
        }
    };
    let parse = if reads_fields(tool) {
        quote!(#private::parse_fields::<Self, _>(__toolsmith_args, &__TOOLSMITH_FIELDS))
    } else {
        quote!(__toolsmith_args.parse::<#args_type>())
    };
    let unpack = quote! {
        #parsed = match #parse {
            ::core::result::Result::Ok(__toolsmith_parsed) => __toolsmith_parsed,
            ::core::result::Result::Err(__toolsmith_error) => return #private::refused(__toolsmith_error),
        };
    };
    let mut injections = Vec::new();
    let mut call_args = Vec::new();
    for (i, param) in tool.params.iter().enumerate() {
        match param {
            Param::Injected { ty, .. } => {
                let local = format_ident!("__toolsmith_inject_{}", i);
                injections.push(quote! {
                    let #local: &#ty = match (&&#private::Inject::<#ty>::new()).__toolsmith_inject(__toolsmith_ctx) {
                        ::core::result::Result::Ok(__toolsmith_value) => __toolsmith_value,
                        ::core::result::Result::Err(__toolsmith_error) => #fail,
                    };
                });
                call_args.push(quote!(#local));
            }
            Param::Argument(arg) => {
                let ident = &arg.ident;
                call_args.push(quote!(#ident));
            }
        }
    }
    let (future, returned) = if is_async {
        (
            quote! {
                #(#injections)*
                __toolsmith_fn(#(#call_args),*)
            },
            TokenStream::new(),
        )
    } else {
        (
            quote! {
                #private::run_blocking(__toolsmith_ctx, move |__toolsmith_ctx: &#krate::ToolContext| -> ::core::result::Result<_, #krate::ToolError> {
                    #(#injections)*
                    ::core::result::Result::Ok(__toolsmith_fn(#(#call_args),*))
                })
            },
            quote!(let __toolsmith_ret = __toolsmith_ret??;),
        )
    };
    let convert = quote! {
        #returned
        match (&#private::Split::of(&__toolsmith_ret)).__toolsmith_split(__toolsmith_ret) {
            ::core::result::Result::Ok(__toolsmith_value) => {
                // Whether the output schema wraps the value, read from the
                // spec once, and asked only for a value with a schema (text
                // has none, and most tools return text).
                let __toolsmith_wrapped = || __TOOLSMITH_STATICS.output_is_wrapped(__TOOLSMITH_STATICS.spec(<Self as #private::GeneratedTool>::spec));
                ::core::result::Result::Ok((&&&#private::OutputOf::of(&__toolsmith_value)).__toolsmith_to_output(__toolsmith_value, __toolsmith_wrapped))
            }
            ::core::result::Result::Err(__toolsmith_error) => {
                ::core::result::Result::Err((&&#private::ErrorOf::of(&__toolsmith_error)).__toolsmith_to_tool_error(__toolsmith_error))
            }
        }
    };
    quote! {
        use #private::probes::*;
        // Named before the parameters are bound: one may have the
        // function's own name (`fn echo(echo: String)`).
        let __toolsmith_fn = #fn_ident;
        #unpack
        let __toolsmith_future = { #future };
        #private::call_with(__toolsmith_future, move |__toolsmith_ret| { #convert })
    }
}

/// `filesystem_read` -> `FilesystemRead`.
fn pascal(snake: &str) -> String {
    snake
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}
