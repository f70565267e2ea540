//! Checks on the whole model. Each rule reports at the token to change and
//! says how; every rule has a compile-fail case in `tests/ui`.

use std::collections::HashMap;

use syn::{Lit, Type};

use crate::ast::{Output, Param, ToolFn};
use crate::errors::Errors;
use crate::names::{closest, is_valid_tool_name, type_text};

pub const CATEGORIES: &[&str] = &[
    "filesystem_read",
    "filesystem_write",
    "network_read",
    "network_write",
    "shell",
    "hardware",
    "memory",
    "messaging",
    "destructive",
];

pub const RISKS: &[&str] = &["low", "medium", "high"];

pub fn check(tool: &ToolFn, errors: &mut Errors) {
    check_signature(tool, errors);
    check_name_and_description(tool, errors);
    check_attributes(tool, errors);
    for param in &tool.params {
        check_param(param, errors);
    }
    check_unique_names(tool, errors);
    if let Output::Type { ty, .. } = &tool.output
        && let Some(span) = impl_trait(ty)
    {
        errors.at(
            span,
            "a tool cannot return `impl Trait`: name the type (`String`, `ToolOutput`, a `Serialize` struct, or a `Result` of one)",
        );
    }
}

fn check_signature(tool: &ToolFn, errors: &mut Errors) {
    let sig = &tool.item.sig;
    if let Some(constness) = &sig.constness {
        errors.at(
            constness,
            "a tool runs when the model calls it, never at compile time: remove `const`",
        );
    }
    if let syn::Safety::Unsafe(unsafety) = &sig.safety {
        errors.at(unsafety, "a tool cannot be an `unsafe fn`: the model calls it with any arguments and cannot uphold a safety contract; make it safe and keep the `unsafe` block inside, where you check its conditions");
    }
    if let Some(abi) = &sig.abi {
        errors.at(abi, "a tool cannot have an `extern` ABI: remove it");
    }
    if let Some(variadic) = &sig.variadic {
        errors.at(variadic, "a tool cannot be variadic");
    }
    // `fn f<'a>(text: &'a str)`: the lifetime is there only for the borrow,
    // and the borrow is refused with what to take instead. Once it is owned,
    // the lifetime goes too, so saying "generic" first would mislead.
    let only_lifetimes = sig
        .generics
        .params
        .iter()
        .all(|p| matches!(p, syn::GenericParam::Lifetime(_)))
        && sig.generics.where_clause.is_none();
    if only_lifetimes && tool.params.iter().any(borrows) {
        return;
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.at(
            &sig.generics,
            "a tool cannot be generic: its schema is made from concrete types; name the types (lifetimes of `&` parameters need no names)",
        );
    }
}

fn check_name_and_description(tool: &ToolFn, errors: &mut Errors) {
    let name = tool.tool_name();
    if !is_valid_tool_name(&name) {
        let message = format!(
            "`{name}` is not a valid tool name: use 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`"
        );
        match &tool.attrs.name {
            Some(attr) => errors.at_span(attr.span, message),
            None => errors.at(&tool.item.sig.ident, message),
        }
    }
    match &tool.attrs.description {
        Some(d) if d.value.trim().is_empty() => errors.at_span(
            d.span,
            "the description is empty: say what the tool does and when to use it",
        ),
        Some(_) => {}
        None if tool.docs.is_none() && tool.docs_expr.is_none() => {
            if tool.docs_removed.is_empty() {
                errors.at(
                    &tool.item.sig.ident,
                    "a tool needs a description, the model's only guide to when to call it: add a doc comment (`/// Reads a file.`) or `#[tool(description = \"...\")]`",
                );
            } else {
                let sections = tool
                    .docs_removed
                    .iter()
                    .map(|title| format!("`# {title}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                errors.at(
                    &tool.item.sig.ident,
                    format!("a tool needs a description, the model's only guide to when to call it, and the doc comment has only sections the model is not shown ({sections}): add a line above them that says what the tool does"),
                );
            }
        }
        None => {}
    }
}

fn check_attributes(tool: &ToolFn, errors: &mut Errors) {
    for (what, given, known) in [
        ("category", &tool.attrs.category, CATEGORIES),
        ("risk", &tool.attrs.risk, RISKS),
    ] {
        if let Some(given) = given
            && !known.contains(&given.value.as_str())
        {
            errors.at_span(given.span, unknown_word(what, &given.value, known));
        }
    }
    if tool.attrs.read_only && tool.attrs.destructive {
        let message =
            "a tool cannot be both `read_only` and `destructive`: keep the one that is true";
        match tool.attrs.key("destructive") {
            Some(key) => errors.at(key, message),
            None => errors.at(&tool.item.sig.ident, message),
        }
    }
}

fn unknown_word(what: &str, word: &str, known: &[&str]) -> String {
    match closest(word, known) {
        Some(k) => format!("unknown {what} `{word}`: did you mean `{k}`?"),
        None => format!("unknown {what} `{word}`; use one of: {}", known.join(", ")),
    }
}

fn check_param(param: &Param, errors: &mut Errors) {
    match param {
        Param::Injected { ident, ty, .. } => {
            if let Some(span) = impl_trait(ty) {
                errors.at(
                    span,
                    "an injected parameter needs a concrete type, not `impl Trait`",
                );
            } else if let Some(borrowed) = borrowed_argument(ty) {
                errors.at(
                    ty,
                    format!(
                        "`{ident}` borrows a `{borrowed}`, but arguments from the model are owned: take `{}` instead (a `&T` parameter is injected from the context)",
                        owned_form(borrowed)
                    ),
                );
            }
        }
        Param::Argument(arg) => {
            if let Some(span) = impl_trait(&arg.ty) {
                errors.at(span, "`impl Trait` makes the tool generic: name a concrete type so a schema can be made for it");
            } else if let Some(borrow) = borrow_inside(&arg.ty) {
                report_borrow(&arg.ident, &arg.ty, &borrow, errors);
            }
            let attrs = &arg.attrs;
            if let (Some(default), true) = (&attrs.default, is_option(&arg.ty)) {
                errors.at_span(
                    default.span,
                    format!("`{}` is an `Option`, already optional (absent means `None`): remove `default`, or make the type non-optional to give it a default", arg.ident),
                );
            }
            if let (Some(default), Some(message)) = (&attrs.default, crate::defaults::mismatch(arg))
            {
                errors.at(&default.value, message);
            }
            if attrs.flatten.is_some() {
                for key in attrs.keys.iter().filter(|k| *k != "flatten") {
                    errors.at(
                        key,
                        format!("`flatten` spreads the struct's own fields into the arguments, so `{key}` has nothing to apply to: put it on the struct's field"),
                    );
                }
            }
            check_bounds(
                attrs.minimum.as_ref().map(|m| &m.value),
                attrs.maximum.as_ref().map(|m| (&m.value, m.span)),
                errors,
            );
            check_pattern(attrs.pattern.as_ref(), errors);
            // Both become one `length` rule in the schema: a string has a
            // length, a list has items, a parameter is one or the other.
            for (length, items) in [
                (&attrs.min_length, &attrs.min_items),
                (&attrs.max_length, &attrs.max_items),
            ] {
                if let (Some(_), Some(items)) = (length, items) {
                    errors.at_span(
                        items.span,
                        "a parameter is either text (`min_length`/`max_length`) or a list (`min_items`/`max_items`), not both: keep the pair that fits its type",
                    );
                }
            }
            for (min, max, what) in [
                (&attrs.min_length, &attrs.max_length, "length"),
                (&attrs.min_items, &attrs.max_items, "item count"),
            ] {
                if let (Some(min), Some(max)) = (min, max)
                    && min.value > max.value
                {
                    errors.at_span(
                        max.span,
                        format!(
                            "the maximum {what} ({}) is below the minimum ({})",
                            max.value, min.value
                        ),
                    );
                }
            }
        }
    }
}

/// A pattern the validator could not compile would make registration fail
/// at run time; say so at the literal instead. (Validation uses the `regex`
/// crate, whose syntax this parser checks.)
fn check_pattern(pattern: Option<&crate::attr::Spanned<String>>, errors: &mut Errors) {
    let Some(pattern) = pattern else { return };
    if let Err(error) = regex_syntax::Parser::new().parse(&pattern.value) {
        let reason = error
            .to_string()
            .lines()
            .last()
            .unwrap_or_default()
            .trim_start_matches("error: ")
            .to_owned();
        errors.at_span(
            pattern.span,
            format!("this `pattern` is not a valid regular expression: {reason}"),
        );
    }
}

fn check_bounds(min: Option<&Lit>, max: Option<(&Lit, proc_macro2::Span)>, errors: &mut Errors) {
    let value = |lit: &Lit| match lit {
        Lit::Int(i) => i.base10_digits().parse::<f64>().ok(),
        Lit::Float(f) => f.base10_digits().parse::<f64>().ok(),
        _ => None,
    };
    if let (Some(min), Some((max, span))) = (min, max)
        && let (Some(lo), Some(hi)) = (value(min), value(max))
        && lo > hi
    {
        errors.at_span(
            span,
            format!("`maximum` ({hi}) is below `minimum` ({lo}): no value could pass"),
        );
    }
}

fn check_unique_names(tool: &ToolFn, errors: &mut Errors) {
    let mut seen: HashMap<String, &syn::Ident> = HashMap::new();
    for arg in tool.arguments().filter(|a| a.attrs.flatten.is_none()) {
        let name = arg.json_name();
        if let Some(first) = seen.get(&name) {
            let at = arg
                .attrs
                .rename
                .as_ref()
                .map_or(arg.ident.span(), |r| r.span);
            errors.at_span(at, format!("two parameters are named `{name}` in the schema (`{first}` and `{}`): rename one", arg.ident));
        } else {
            seen.insert(name, &arg.ident);
        }
    }
}

/// The first `impl Trait` anywhere inside `ty`.
pub fn impl_trait(ty: &Type) -> Option<syn::TypeImplTrait> {
    use syn::visit::Visit;
    struct Find(Option<syn::TypeImplTrait>);
    impl<'ast> Visit<'ast> for Find {
        fn visit_type_impl_trait(&mut self, node: &'ast syn::TypeImplTrait) {
            self.0.get_or_insert_with(|| node.clone());
        }
    }
    let mut find = Find(None);
    find.visit_type(ty);
    find.0
}

/// Whether the parameter is refused for borrowing: a `&str`, `&[T]` or
/// `&Path`, or an argument type with a borrow inside.
fn borrows(param: &Param) -> bool {
    match param {
        Param::Injected { ty, .. } => borrowed_argument(ty).is_some(),
        Param::Argument(arg) => impl_trait(&arg.ty).is_none() && borrow_inside(&arg.ty).is_some(),
    }
}

/// A borrow inside an argument's type.
pub enum Borrow {
    /// `&T` anywhere inside, such as `Option<&str>`. (A `&T` parameter is
    /// injected, so only a nested one reaches an argument.)
    Reference(syn::TypeReference),
    /// A lifetime other than `'static`, such as `Cow<'_, str>`.
    Lifetime(syn::Lifetime),
}

/// The first borrow inside `ty`, which a value parsed from the model's JSON
/// cannot hold: the JSON is gone once the arguments are parsed. The
/// compiler's own errors for it are about lifetimes the user never named
/// (`'_` in the generated struct, a `Deserialize` "not general enough").
/// Function pointers and trait objects are left to the argument check:
/// their borrows are not what makes them unusable.
pub fn borrow_inside(ty: &Type) -> Option<Borrow> {
    use syn::visit::Visit;
    struct Find(Option<Borrow>);
    impl<'ast> Visit<'ast> for Find {
        fn visit_type_reference(&mut self, node: &'ast syn::TypeReference) {
            if self.0.is_none() {
                self.0 = Some(Borrow::Reference(node.clone()));
            }
        }
        fn visit_lifetime(&mut self, node: &'ast syn::Lifetime) {
            if self.0.is_none() && node.ident != "static" {
                self.0 = Some(Borrow::Lifetime(node.clone()));
            }
        }
        fn visit_type_fn_ptr(&mut self, _: &'ast syn::TypeFnPtr) {}
        fn visit_type_trait_object(&mut self, _: &'ast syn::TypeTraitObject) {}
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {}
    }
    let mut find = Find(None);
    find.visit_type(ty);
    find.0
}

/// Refuse an argument whose type borrows, saying what to take instead.
fn report_borrow(ident: &syn::Ident, ty: &Type, borrow: &Borrow, errors: &mut Errors) {
    let whole = type_text(ty);
    let owned = owned_type(ty);
    match borrow {
        Borrow::Reference(reference) => {
            let what = match borrowed_argument(&reference.elem) {
                Some("slice") => "slice".to_owned(),
                _ => format!("`{}`", type_text(&reference.elem)),
            };
            let inner = type_text(&Type::Reference(reference.clone()));
            errors.at(
                reference,
                format!(
                    "`{ident}` borrows a {what} (`{inner}` in `{whole}`), but arguments from the model are owned: take `{}` instead",
                    type_text(&owned)
                ),
            );
        }
        Borrow::Lifetime(lifetime) if borrow_inside(&owned).is_none() => errors.at(
            lifetime,
            format!(
                "`{ident}` borrows through the lifetime `{lifetime}` in `{whole}`, but arguments from the model are owned: take `{}` instead",
                type_text(&owned)
            ),
        ),
        Borrow::Lifetime(lifetime) => errors.at(
            lifetime,
            format!(
                "`{ident}` borrows through the lifetime `{lifetime}` in `{whole}`, but arguments from the model are owned: take a type that owns its data, without a lifetime (or with `'static`)"
            ),
        ),
    }
}

/// `ty` with each borrow replaced by what owns the same data: `&str` by
/// `String`, `&[T]` by `Vec<T>`, `&Path` by `PathBuf`, `&T` by `T`, and a
/// `Cow<'_, T>` by the owned form of `T`. Other lifetimes are left, for the
/// caller to notice.
fn owned_type(ty: &Type) -> Type {
    let mut owned = match ty {
        Type::Reference(reference) => return owned_type(&owned_form_of(&reference.elem)),
        Type::Path(path) if path.qself.is_none() => match cow_inner(path) {
            Some(inner) => return owned_type(&owned_form_of(inner)),
            None => ty.clone(),
        },
        _ => ty.clone(),
    };
    match &mut owned {
        Type::Path(path) => {
            for segment in &mut path.path.segments {
                if let syn::PathArguments::AngleBracketed(args) = &mut segment.arguments {
                    for arg in &mut args.args {
                        if let syn::GenericArgument::Type(inner) = arg {
                            *inner = owned_type(inner);
                        }
                    }
                }
            }
        }
        Type::Tuple(tuple) => {
            for elem in &mut tuple.elems {
                *elem = owned_type(elem);
            }
        }
        Type::Array(array) => *array.elem = owned_type(&array.elem),
        Type::Slice(slice) => *slice.elem = owned_type(&slice.elem),
        Type::Paren(paren) => *paren.elem = owned_type(&paren.elem),
        Type::Group(group) => *group.elem = owned_type(&group.elem),
        _ => {}
    }
    owned
}

/// `T` of `Cow<'_, T>`.
fn cow_inner(path: &syn::TypePath) -> Option<&Type> {
    let last = path.path.segments.last()?;
    if last.ident != "Cow" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    args.args.iter().find_map(|arg| match arg {
        syn::GenericArgument::Type(ty) => Some(ty),
        _ => None,
    })
}

/// The owned type with the data a `&T` points at.
fn owned_form_of(elem: &Type) -> Type {
    match elem {
        Type::Slice(slice) => {
            let item = &slice.elem;
            syn::parse_quote!(Vec<#item>)
        }
        _ => match borrowed_argument(elem) {
            Some("str") => syn::parse_quote!(String),
            Some("Path") => syn::parse_quote!(PathBuf),
            _ => elem.clone(),
        },
    }
}

/// `str`, `[T]` or `Path` behind a reference: a borrowed form of an argument
/// type, which a model cannot supply.
pub fn borrowed_argument(ty: &Type) -> Option<&'static str> {
    match ty {
        Type::Slice(_) => Some("slice"),
        Type::Path(p) if p.qself.is_none() => {
            match p.path.segments.last()?.ident.to_string().as_str() {
                "str" => Some("str"),
                "Path" => Some("Path"),
                _ => None,
            }
        }
        _ => None,
    }
}

fn owned_form(borrowed: &str) -> &'static str {
    match borrowed {
        "str" => "String",
        "Path" => "PathBuf",
        _ => "Vec<T>",
    }
}

/// Whether `ty` is spelled as an `Option`.
pub fn is_option(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}
