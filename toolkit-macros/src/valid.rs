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
pub const TASKS: &[&str] = &["optional", "required"];

pub const ICON_THEMES: &[&str] = &["light", "dark"];

pub fn check(tool: &ToolFn, errors: &mut Errors) {
    check_signature(tool, errors);
    check_name_and_description(tool, errors);
    check_attributes(tool, errors);
    check_metadata(tool, errors);
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
        ("task", &tool.attrs.task, TASKS),
    ] {
        if let Some(given) = given
            && !known.contains(&given.value.as_str())
        {
            errors.at_span(given.span, unknown_word(what, &given.value, known));
        }
    }
    if tool.attrs.asks_first
        && tool.attrs.task.is_none()
        && let Some(key) = tool.attrs.key("asks_first")
    {
        errors.at(
            key,
            "`asks_first` is for a tool that runs as a task: add `task` (or `task = required`), or remove it",
        );
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

/// Title, tags, icons and examples: what people and clients see of the
/// tool besides its name and description.
fn check_metadata(tool: &ToolFn, errors: &mut Errors) {
    let attrs = &tool.attrs;
    if let Some(title) = &attrs.title
        && title.value.trim().is_empty()
    {
        errors.at_span(
            title.span,
            "the title is empty: give the name people see for the tool (`title = \"Resize image\"`), or leave `title` out",
        );
    }
    let mut seen: Vec<&str> = Vec::new();
    for tag in &attrs.tags {
        if tag.value.trim().is_empty() {
            errors.at_span(
                tag.span,
                "this tag is empty: a tag is a word for choosing tools (`ToolFilter::tags`)",
            );
        } else if seen.contains(&tag.value.as_str()) {
            errors.at_span(
                tag.span,
                format!("the tag `{}` is given twice; keep one", tag.value),
            );
        } else {
            seen.push(&tag.value);
        }
    }
    for icon in &attrs.icons {
        if let Some(src) = &icon.src
            && !is_safe_icon_source(&src.value)
        {
            errors.at_span(
                src.span,
                "an icon must be an `https://` URL or a `data:` URI of a PNG, JPEG, GIF, WebP, AVIF or icon image: MCP clients load only those, inline SVG can carry script, and definitions leave any other icon out",
            );
        }
        if let Some(theme) = &icon.theme
            && !ICON_THEMES.contains(&theme.value.as_str())
        {
            errors.at_span(
                theme.span,
                unknown_word("icon theme", &theme.value, ICON_THEMES),
            );
        }
    }
    for example in &attrs.examples {
        check_json_object(example, Written::Example, errors);
    }
    if let Some(meta) = &attrs.meta {
        check_json_object(meta, Written::Meta, errors);
    }
}

/// Which key holds a JSON object in a string.
#[derive(Clone, Copy, PartialEq)]
enum Written {
    Example,
    Meta,
}

/// The source rule of `ToolIcon::is_safe`, which this crate cannot call
/// (keep the two alike): an `https://` URL, or a `data:` URI of a raster
/// image; never inline SVG, which can carry script.
fn is_safe_icon_source(src: &str) -> bool {
    const RASTER: [&str; 7] = [
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "image/avif",
        "image/x-icon",
        "image/vnd.microsoft.icon",
    ];
    let lower = src.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("https://") {
        !rest.is_empty()
    } else if let Some(rest) = lower.strip_prefix("data:") {
        let media = rest.split([';', ',']).next().unwrap_or("");
        RASTER.contains(&media) && rest.len() > media.len()
    } else {
        false
    }
}

/// An example is the arguments of one call, and `meta` is MCP's `_meta`:
/// each a JSON object. Whether an example fits the schema is checked when
/// the tool is registered, where the schema is; `meta` may not set the keys
/// this crate writes for other `#[tool]` keys.
fn check_json_object(example: &syn::LitStr, written: Written, errors: &mut Errors) {
    let text = example.value();
    let key = match written {
        Written::Example => "example",
        Written::Meta => "meta",
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(map)) => {
            let own = map.keys().find(|k| k.starts_with("toolsmith/"));
            if written == Written::Meta
                && let Some(own) = own
            {
                errors.at(
                    example,
                    format!("`meta` may not set `{own}`: keys under `toolsmith/` carry `tags`, `deprecated` and `example`; use those keys"),
                );
            }
        }
        Ok(other) => {
            let kind = match other {
                serde_json::Value::Null => "`null`",
                serde_json::Value::Bool(_) => "a boolean",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Array(_) => "an array",
                serde_json::Value::Object(_) => unreachable!(),
            };
            let what = match written {
                Written::Example => {
                    "an `example` is the arguments of one call, a JSON object such as `{\"path\": \"a.png\"}`"
                }
                Written::Meta => {
                    "`meta` holds MCP's `_meta` entries, a JSON object such as `{\"com.example/owner\": \"ops\"}`"
                }
            };
            errors.at(example, format!("{what}; this one is {kind}"));
        }
        Err(error) => {
            let mut at = json_error_offset(&text, &error);
            // serde_json finds a trailing comma at the bracket after it.
            let what = error.to_string();
            let what = what
                .strip_suffix(&format!(
                    " at line {} column {}",
                    error.line(),
                    error.column()
                ))
                .unwrap_or(&what);
            if what == "trailing comma"
                && let Some(comma) = text[..at].trim_end().strip_suffix(',')
            {
                at = comma.len();
            }
            let line = text[..at].matches('\n').count() + 1;
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let column = text[line_start..at].chars().count() + 1;
            errors.at_span(
                literal_subspan(example, &text, at).unwrap_or(example.span()),
                format!(
                    "this `{key}` is not valid JSON: {what} at line {line}, column {column}:\n{}",
                    pointer(&text, at)
                ),
            );
        }
    }
}

/// Where in `text` `error` was found: the byte offset of the character
/// serde_json stopped at. (Its lines count from 1; its columns count bytes
/// from 1, and are 0 before a line's first character.)
fn json_error_offset(text: &str, error: &serde_json::Error) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(error.line().saturating_sub(1))
        .map(str::len)
        .sum();
    let mut at = (line_start + error.column().saturating_sub(1)).min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The line of `text` that holds `at`, and under it a `^` at `at`; a long
/// line is cut around it.
fn pointer(text: &str, at: usize) -> String {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line: Vec<char> = text[start..end]
        .trim_end()
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .collect();
    let caret = text[start..at].chars().count();
    let from = caret.saturating_sub(40).min(line.len());
    let to = (caret + 20).min(line.len()).max(from);
    let mut shown: String = line[from..to].iter().collect();
    let mut column = caret - from;
    if from > 0 {
        shown.insert_str(0, "...");
        column += 3;
    }
    if to < line.len() {
        shown.push_str("...");
    }
    format!("  {shown}\n  {}^", " ".repeat(column))
}

/// The span of the character at `at` in the literal's value, where the
/// compiler can point inside a literal (on nightly) and the value is
/// written as it is (a raw string, or one without escapes).
fn literal_subspan(lit: &syn::LitStr, value: &str, at: usize) -> Option<proc_macro2::Span> {
    let source = lit.token().to_string();
    let opening = source.find('"')? + 1;
    if !source.starts_with('r') && source.get(opening..opening + value.len()) != Some(value) {
        return None;
    }
    let width = value[at..].chars().next().map_or(0, char::len_utf8);
    lit.token().subspan(opening + at..opening + at + width)
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
            check_header(attrs.header.as_ref(), errors);
            crate::one_of::check(arg, errors);
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

/// A header name clients cannot send would make every call of the tool
/// fail at a server that checks mirrored parameters: it must be a plain
/// HTTP field name (letters, digits and `-`), as `Mcp-Param-{name}`.
fn check_header(header: Option<&crate::attr::Spanned<String>>, errors: &mut Errors) {
    let Some(header) = header else { return };
    let name = &header.value;
    let plain = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !plain {
        errors.at_span(
            header.span,
            format!("`header = {name:?}` cannot name an HTTP header: use letters, digits and inner `-` (at most 64), e.g. `header = \"Region\"`, sent as `Mcp-Param-Region`"),
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

#[cfg(test)]
mod tests {
    use super::{is_safe_icon_source, json_error_offset, pointer};

    fn where_json_fails(text: &str) -> String {
        let error = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
        pointer(text, json_error_offset(text, &error))
    }

    #[test]
    fn the_pointer_is_at_the_character_serde_json_stopped_at() {
        assert_eq!(
            where_json_fails(r#"{"a": 1 "b": 2}"#),
            "  {\"a\": 1 \"b\": 2}\n          ^"
        );
        assert_eq!(where_json_fails("{\n  \"a\": 1,\n}"), "  }\n  ^");
        assert_eq!(where_json_fails(r#"{"a": "#), "  {\"a\":\n       ^");
        assert_eq!(where_json_fails("{\"é\": x}"), "  {\"é\": x}\n        ^");
    }

    #[test]
    fn a_long_line_is_cut_around_the_pointer() {
        let text = format!(
            "{{\"a\": \"{}\" \"b\": \"{}\"}}",
            "x".repeat(60),
            "y".repeat(60)
        );
        let shown = where_json_fails(&text);
        let (line, caret) = shown.split_once('\n').unwrap();
        assert!(
            line.starts_with("  ...x") && line.ends_with("y..."),
            "{shown}"
        );
        assert_eq!(&line[caret.len() - 1..caret.len()], "\"", "{shown}");
    }

    #[test]
    fn icons_are_https_or_data() {
        assert!(is_safe_icon_source("https://example.com/a.png"));
        assert!(is_safe_icon_source("DATA:image/png;base64,AA=="));
        assert!(!is_safe_icon_source("http://example.com/a.png"));
        assert!(!is_safe_icon_source("/icon.png"));
        assert!(!is_safe_icon_source("javascript:alert(1)"));
    }
}
