//! Checks on the whole model. Each rule reports at the token to change and
//! says how; every rule has a compile-fail case in `tests/ui`.

use std::collections::HashMap;

use syn::{Lit, Type};

use crate::ast::{Output, Param, ToolFn};
use crate::errors::Errors;
use crate::names::{closest, is_valid_tool_name};

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
            }
            let attrs = &arg.attrs;
            if let (Some(default), true) = (&attrs.default, is_option(&arg.ty)) {
                errors.at_span(
                    default.span,
                    format!("`{}` is an `Option`, already optional (absent means `None`): remove `default`, or make the type non-optional to give it a default", arg.ident),
                );
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

fn is_option(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}
