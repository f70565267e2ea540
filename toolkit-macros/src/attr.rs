//! Parse `#[tool(...)]` and `#[arg(...)]` into plain values, reporting unknown
//! and repeated keys at their own spans.

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, Lit, LitStr, Token};

use crate::errors::Errors;
use crate::names::closest;

/// A value with the span of the key that set it, for error messages.
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

/// Keys of `#[tool(...)]`.
#[derive(Default)]
pub struct ToolAttrs {
    pub name: Option<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    pub read_only: bool,
    pub exclusive: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
    pub category: Option<Spanned<String>>,
    pub risk: Option<Spanned<String>>,
    pub timeout_ms: Option<Spanned<u64>>,
    pub title: Option<Spanned<String>>,
    /// Each tag, spanned at its literal.
    pub tags: Vec<Spanned<String>>,
    pub icons: Vec<Icon>,
    /// `deprecated = "..."`, or a bare `deprecated` (an empty note).
    pub deprecated: Option<Spanned<String>>,
    /// Each `example = "..."` as written, checked to be a JSON object.
    pub examples: Vec<LitStr>,
    /// `meta = "..."`: MCP's `_meta` entries, a JSON object in a string.
    pub meta: Option<LitStr>,
    /// `strict`: ask providers to enforce the schema.
    pub strict: bool,
    /// `task` or `task = optional | required`: run as an MCP task.
    pub task: Option<Spanned<String>>,
    /// `asks_first`: ask the client, then become a task.
    pub asks_first: bool,
    pub krate: Option<syn::Path>,
    /// Every key as written, so a check can point at the one to change.
    pub keys: Vec<Ident>,
}

impl ToolAttrs {
    /// The key `name` as written, if it was given.
    pub fn key(&self, name: &str) -> Option<&Ident> {
        self.keys.iter().find(|k| *k == name)
    }
}

const TOOL_KEYS: &[&str] = &[
    "name",
    "description",
    "read_only",
    "exclusive",
    "destructive",
    "idempotent",
    "open_world",
    "category",
    "risk",
    "timeout",
    "title",
    "tags",
    "icon",
    "deprecated",
    "example",
    "meta",
    "strict",
    "task",
    "asks_first",
    "crate",
];

/// Keys that may be given more than once, each time adding one more.
const REPEATABLE_TOOL_KEYS: &[&str] = &["icon", "example"];

/// `icon = "https://..."` or `icon(src = "...", mime_type = "...", sizes = [...], theme = dark)`.
pub struct Icon {
    pub src: Option<Spanned<String>>,
    pub mime_type: Option<Spanned<String>>,
    pub sizes: Vec<Spanned<String>>,
    pub theme: Option<Spanned<String>>,
}

const ICON_KEYS: &[&str] = &["src", "mime_type", "sizes", "theme"];

/// Keys of `#[arg(...)]`.
#[derive(Default)]
pub struct ArgAttrs {
    pub default: Option<Spanned<Expr>>,
    pub rename: Option<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    pub minimum: Option<Spanned<Lit>>,
    pub maximum: Option<Spanned<Lit>>,
    pub min_length: Option<Spanned<u64>>,
    pub max_length: Option<Spanned<u64>>,
    pub min_items: Option<Spanned<u64>>,
    pub max_items: Option<Spanned<u64>>,
    pub pattern: Option<Spanned<String>>,
    /// `header = "Region"`: the value is mirrored in the HTTP header
    /// `Mcp-Param-Region` by MCP clients (`x-mcp-header`).
    pub header: Option<Spanned<String>>,
    pub one_of: Option<OneOf>,
    pub flatten: Option<Span>,
    /// Every key as written, across all of the parameter's `#[arg]`s.
    pub keys: Vec<Ident>,
}

/// `one_of = [...]`: the values as written, judged against the parameter's
/// type by `one_of`.
pub struct OneOf {
    pub values: Vec<Expr>,
    /// The key, where a check that concerns the whole list points.
    pub key: Ident,
    /// The brackets, where an empty list is reported.
    pub list: Span,
}

const ARG_KEYS: &[&str] = &[
    "default",
    "rename",
    "description",
    "minimum",
    "maximum",
    "min_length",
    "max_length",
    "min_items",
    "max_items",
    "pattern",
    "header",
    "one_of",
    "flatten",
];

/// Parse the tokens inside `#[tool(...)]`.
pub fn parse_tool_attrs(input: ParseStream, errors: &mut Errors) -> syn::Result<ToolAttrs> {
    let mut attrs = ToolAttrs::default();
    while !input.is_empty() {
        let key = input.call(Ident::parse_any_key)?;
        let key_name = key.to_string();
        if attrs.key(&key_name).is_some() && !REPEATABLE_TOOL_KEYS.contains(&key_name.as_str()) {
            errors.at(&key, format!("`{key_name}` is given twice; keep one"));
        }
        attrs.keys.push(key.clone());
        match key_name.as_str() {
            "name" => attrs.name = Some(string_value(input, &key)?),
            "description" => attrs.description = Some(string_value(input, &key)?),
            "read_only" => attrs.read_only = flag(input, &key, errors)?,
            "exclusive" => attrs.exclusive = flag(input, &key, errors)?,
            "destructive" => attrs.destructive = flag(input, &key, errors)?,
            "idempotent" => attrs.idempotent = flag(input, &key, errors)?,
            "open_world" => attrs.open_world = flag(input, &key, errors)?,
            "strict" => attrs.strict = flag(input, &key, errors)?,
            "asks_first" => attrs.asks_first = flag(input, &key, errors)?,
            "task" => {
                attrs.task = Some(if input.peek(Token![=]) {
                    word_value(input, &key)?
                } else {
                    Spanned {
                        value: "optional".into(),
                        span: key.span(),
                    }
                })
            }
            "category" => attrs.category = Some(word_value(input, &key)?),
            "risk" => attrs.risk = Some(word_value(input, &key)?),
            "timeout" => attrs.timeout_ms = Some(timeout_value(input, &key, errors)?),
            "title" => attrs.title = Some(string_value(input, &key)?),
            "tags" => attrs.tags = string_list(input, &key, "\"images\", \"files\"", errors)?,
            "icon" => attrs.icons.push(icon_value(input, &key, errors)?),
            "deprecated" => {
                attrs.deprecated = Some(if input.peek(Token![=]) {
                    string_value(input, &key)?
                } else {
                    Spanned {
                        value: String::new(),
                        span: key.span(),
                    }
                });
            }
            "example" => {
                input
                    .parse::<Token![=]>()
                    .map_err(|_| expected_value(&key, "a JSON object in a string"))?;
                attrs.examples.push(input.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "`example` takes a JSON object in a string, e.g. `example = r#\"{\"path\": \"a.png\"}\"#`",
                    )
                })?);
            }
            "meta" => {
                input
                    .parse::<Token![=]>()
                    .map_err(|_| expected_value(&key, "a JSON object in a string"))?;
                attrs.meta = Some(input.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "`meta` takes a JSON object in a string, e.g. `meta = r#\"{\"com.example/owner\": \"ops\"}\"#`",
                    )
                })?);
            }
            "crate" => {
                input.parse::<Token![=]>()?;
                attrs.krate = Some(if input.peek(LitStr) {
                    input.parse::<LitStr>()?.parse()?
                } else {
                    input.parse()?
                });
            }
            _ => {
                errors.at(&key, unknown_key("`#[tool]`", &key_name, TOOL_KEYS));
                skip_value(input)?;
            }
        }
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(attrs)
}

/// Parse the tokens inside one `#[arg(...)]`, adding to `attrs`.
pub fn parse_arg_attrs(
    input: ParseStream,
    attrs: &mut ArgAttrs,
    errors: &mut Errors,
) -> syn::Result<()> {
    while !input.is_empty() {
        let key = input.call(Ident::parse_any_key)?;
        let key_name = key.to_string();
        if attrs.keys.iter().any(|k| *k == key_name) {
            errors.at(&key, format!("`{key_name}` is given twice; keep one"));
        }
        attrs.keys.push(key.clone());
        let span = key.span();
        match key_name.as_str() {
            "default" => {
                input.parse::<Token![=]>()?;
                attrs.default = Some(Spanned {
                    value: input.parse()?,
                    span,
                });
            }
            "rename" => attrs.rename = Some(string_value(input, &key)?),
            "description" => attrs.description = Some(string_value(input, &key)?),
            "minimum" => attrs.minimum = Some(number_value(input, &key)?),
            "maximum" => attrs.maximum = Some(number_value(input, &key)?),
            "min_length" => attrs.min_length = Some(count_value(input, &key)?),
            "max_length" => attrs.max_length = Some(count_value(input, &key)?),
            "min_items" => attrs.min_items = Some(count_value(input, &key)?),
            "max_items" => attrs.max_items = Some(count_value(input, &key)?),
            "pattern" => attrs.pattern = Some(string_value(input, &key)?),
            "header" => attrs.header = Some(string_value(input, &key)?),
            "one_of" => attrs.one_of = one_of_value(input, &key, errors)?,
            "flatten" => {
                if flag(input, &key, errors)? {
                    attrs.flatten = Some(span);
                }
            }
            _ => {
                errors.at(&key, unknown_key("`#[arg]`", &key_name, ARG_KEYS));
                skip_value(input)?;
            }
        }
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(())
}

/// Spellings other libraries use for our keys.
const KEY_ALIASES: &[(&str, &str)] = &[
    ("alias", "rename"),
    ("allowed", "one_of"),
    ("allowed_values", "one_of"),
    ("choices", "one_of"),
    ("desc", "description"),
    ("doc", "description"),
    ("enum", "one_of"),
    ("enum_values", "one_of"),
    ("examples", "example"),
    ("icons", "icon"),
    ("input_example", "example"),
    ("input_examples", "example"),
    ("_meta", "meta"),
    ("metadata", "meta"),
    ("max", "maximum"),
    ("mime", "mime_type"),
    ("min", "minimum"),
    ("oneof", "one_of"),
    ("options", "one_of"),
    ("possible_values", "one_of"),
    ("regex", "pattern"),
    ("size", "sizes"),
    ("tag", "tags"),
    ("timeout_ms", "timeout"),
    ("timeout_secs", "timeout"),
    ("values", "one_of"),
];

/// `place` is where the key was written, as shown: "`#[tool]`".
fn unknown_key(place: &str, key: &str, known: &[&str]) -> String {
    let alias = KEY_ALIASES
        .iter()
        .find(|(alias, k)| *alias == key && known.contains(k))
        .map(|(_, k)| *k);
    match alias.or_else(|| closest(key, known)) {
        Some(k) => format!("unknown key `{key}` in {place}: did you mean `{k}`?"),
        None => format!(
            "unknown key `{key}` in {place}; the keys are: {}",
            known.join(", ")
        ),
    }
}

trait ParseAnyKey {
    fn parse_any_key(input: ParseStream) -> syn::Result<Ident>;
}

impl ParseAnyKey for Ident {
    /// Keys may be Rust keywords (`crate`), so take any identifier.
    fn parse_any_key(input: ParseStream) -> syn::Result<Ident> {
        use syn::ext::IdentExt;
        Ident::parse_any(input)
    }
}

fn string_value(input: ParseStream, key: &Ident) -> syn::Result<Spanned<String>> {
    input
        .parse::<Token![=]>()
        .map_err(|_| expected_value(key, "a string"))?;
    let lit: LitStr = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("`{key}` takes a string, e.g. `{key} = \"...\"`"),
        )
    })?;
    Ok(Spanned {
        value: lit.value(),
        span: lit.span(),
    })
}

/// `key = ["a", "b"]`: each element a string literal, spanned at it. An
/// element of another kind is reported and left out.
fn string_list(
    input: ParseStream,
    key: &Ident,
    example: &str,
    errors: &mut Errors,
) -> syn::Result<Vec<Spanned<String>>> {
    let usage = || format!("`{key}` takes a list of strings, e.g. `{key} = [{example}]`");
    input
        .parse::<Token![=]>()
        .map_err(|_| syn::Error::new(key.span(), usage()))?;
    if !input.peek(syn::token::Bracket) {
        let value: Expr = input.parse()?;
        errors.at(value, usage());
        return Ok(Vec::new());
    }
    let content;
    syn::bracketed!(content in input);
    let elements = content.parse_terminated(Expr::parse, Token![,])?;
    let mut values = Vec::new();
    for element in elements {
        match &element {
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            }) => values.push(Spanned {
                value: s.value(),
                span: s.span(),
            }),
            other => errors.at(
                other,
                format!("each element of `{key}` is a string literal, e.g. `{key} = [{example}]`"),
            ),
        }
    }
    Ok(values)
}

/// `one_of = [1, 2, 4]` or `one_of = ["celsius", "fahrenheit"]`: a list of
/// expressions, each judged later against the parameter's type. A value
/// that is not a list is reported here, and the key then sets nothing.
fn one_of_value(
    input: ParseStream,
    key: &Ident,
    errors: &mut Errors,
) -> syn::Result<Option<OneOf>> {
    const USAGE: &str = "`one_of` takes a list of the values the parameter may take, e.g. `one_of = [\"celsius\", \"fahrenheit\"]` or `one_of = [1, 2, 4]`";
    input
        .parse::<Token![=]>()
        .map_err(|_| syn::Error::new(key.span(), USAGE))?;
    if !input.peek(syn::token::Bracket) {
        let value: Expr = input.parse()?;
        errors.at(value, USAGE);
        return Ok(None);
    }
    let content;
    let brackets = syn::bracketed!(content in input);
    let values = content.parse_terminated(Expr::parse, Token![,])?;
    Ok(Some(OneOf {
        values: values.into_iter().collect(),
        key: key.clone(),
        list: brackets.span.join(),
    }))
}

/// `icon = "https://..."`, or `icon(src = "...", ...)` for more than the source.
fn icon_value(input: ParseStream, key: &Ident, errors: &mut Errors) -> syn::Result<Icon> {
    let mut icon = Icon {
        src: None,
        mime_type: None,
        sizes: Vec::new(),
        theme: None,
    };
    if !input.peek(syn::token::Paren) {
        input.parse::<Token![=]>().map_err(|_| {
            syn::Error::new(
                key.span(),
                "`icon` needs a source: `icon = \"https://...\"`, or `icon(src = \"https://...\", mime_type = \"image/png\", sizes = [\"48x48\"], theme = \"dark\")`",
            )
        })?;
        let lit: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "`icon` takes the picture's address as a string, e.g. `icon = \"https://example.com/icon.png\"`",
            )
        })?;
        icon.src = Some(Spanned {
            value: lit.value(),
            span: lit.span(),
        });
        return Ok(icon);
    }
    let content;
    syn::parenthesized!(content in input);
    let mut seen: Vec<Ident> = Vec::new();
    while !content.is_empty() {
        let inner = content.call(Ident::parse_any_key)?;
        let inner_name = inner.to_string();
        if seen.iter().any(|k| *k == inner_name) {
            errors.at(&inner, format!("`{inner_name}` is given twice; keep one"));
        }
        seen.push(inner.clone());
        match inner_name.as_str() {
            "src" => icon.src = Some(string_value(&content, &inner)?),
            "mime_type" => icon.mime_type = Some(string_value(&content, &inner)?),
            "sizes" => icon.sizes = string_list(&content, &inner, "\"48x48\"", errors)?,
            "theme" => icon.theme = Some(word_value(&content, &inner)?),
            _ => {
                errors.at(&inner, unknown_key("`icon(...)`", &inner_name, ICON_KEYS));
                skip_value(&content)?;
            }
        }
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    if icon.src.is_none() {
        errors.at(
            key,
            "`icon(...)` needs the picture's address: `src = \"https://...\"`",
        );
    }
    Ok(icon)
}

/// `category = shell` or `category = "shell"`.
fn word_value(input: ParseStream, key: &Ident) -> syn::Result<Spanned<String>> {
    input
        .parse::<Token![=]>()
        .map_err(|_| expected_value(key, "a name"))?;
    if input.peek(LitStr) {
        let lit: LitStr = input.parse()?;
        Ok(Spanned {
            value: lit.value(),
            span: lit.span(),
        })
    } else {
        let ident: Ident = input.parse()?;
        Ok(Spanned {
            value: ident.to_string(),
            span: ident.span(),
        })
    }
}

fn number_value(input: ParseStream, key: &Ident) -> syn::Result<Spanned<Lit>> {
    input
        .parse::<Token![=]>()
        .map_err(|_| expected_value(key, "a number"))?;
    let negative = input.parse::<Option<Token![-]>>()?.is_some();
    let lit: Lit = input.parse()?;
    let span = lit.span();
    let lit = match (&lit, negative) {
        // With its suffix: `-3000000000i64` is an `i64`, not an `i32`
        // out of range.
        (Lit::Int(i), true) => Lit::Int(syn::LitInt::new(
            &format!("-{}{}", i.base10_digits(), i.suffix()),
            span,
        )),
        (Lit::Float(f), true) => Lit::Float(syn::LitFloat::new(
            &format!("-{}{}", f.base10_digits(), f.suffix()),
            span,
        )),
        (Lit::Int(_) | Lit::Float(_), false) => lit,
        _ => {
            return Err(syn::Error::new(
                span,
                format!("`{key}` takes a number, e.g. `{key} = 1`"),
            ));
        }
    };
    let lit = match lit {
        Lit::Int(int) => Lit::Int(sized_bound(&int, key)?),
        other => other,
    };
    Ok(Spanned { value: lit, span })
}

/// An integer bound typed so that it compiles wherever it is written: the
/// schema holds it as a JSON number, which serde_json makes of a 64-bit
/// integer. Written without a suffix it would be an `i32`, refused past
/// two billion; with a 128-bit or pointer-sized suffix it has no JSON
/// form. So those get `i64` (or `u64` above it), and a bound past both is
/// refused here.
fn sized_bound(int: &syn::LitInt, key: &Ident) -> syn::Result<syn::LitInt> {
    let suffix = int.suffix();
    if !matches!(suffix, "" | "i128" | "u128" | "isize" | "usize") {
        return Ok(int.clone());
    }
    let too_large = || {
        syn::Error::new(
            int.span(),
            format!(
                "`{key}` = {} does not fit a bound in the schema: a whole-number bound lies within the 64-bit integers, from {} to {}",
                int.base10_digits(),
                i64::MIN,
                u64::MAX
            ),
        )
    };
    let value: i128 = int.base10_parse().map_err(|_| too_large())?;
    let suffix = if suffix.is_empty() && i32::try_from(value).is_ok() {
        ""
    } else if i64::try_from(value).is_ok() {
        "i64"
    } else if u64::try_from(value).is_ok() {
        "u64"
    } else {
        return Err(too_large());
    };
    Ok(syn::LitInt::new(
        &format!("{}{suffix}", int.base10_digits()),
        int.span(),
    ))
}

fn count_value(input: ParseStream, key: &Ident) -> syn::Result<Spanned<u64>> {
    input
        .parse::<Token![=]>()
        .map_err(|_| expected_value(key, "a whole number"))?;
    let lit: syn::LitInt = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("`{key}` takes a whole number, e.g. `{key} = 1`"),
        )
    })?;
    Ok(Spanned {
        value: lit.base10_parse()?,
        span: lit.span(),
    })
}

/// `timeout = 30` (seconds), `timeout = 2.5`, or `timeout = "500ms"` / `"30s"` / `"2m"`.
fn timeout_value(
    input: ParseStream,
    key: &Ident,
    errors: &mut Errors,
) -> syn::Result<Spanned<u64>> {
    input
        .parse::<Token![=]>()
        .map_err(|_| expected_value(key, "a duration"))?;
    let lit: Lit = input.parse()?;
    let span = lit.span();
    let ms = match &lit {
        Lit::Int(i) => i.base10_parse::<u64>()?.checked_mul(1000),
        Lit::Float(f) => {
            let secs: f64 = f.base10_parse()?;
            (secs.is_finite() && secs > 0.0).then(|| (secs * 1000.0).round() as u64)
        }
        Lit::Str(s) => parse_duration_ms(&s.value()),
        _ => None,
    };
    match ms {
        Some(ms) if ms > 0 => Ok(Spanned { value: ms, span }),
        _ => {
            errors.at_span(
                span,
                "`timeout` takes a positive duration: seconds (`timeout = 30`) or a string such as `\"500ms\"`, `\"30s\"`, `\"2m\"`",
            );
            Ok(Spanned { value: 1, span })
        }
    }
}

fn parse_duration_ms(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit() && c != '.')?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let factor = match unit.trim() {
        "ms" => 1.0,
        "s" => 1000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return None,
    };
    let ms = number * factor;
    (ms.is_finite() && ms >= 1.0).then(|| ms.round() as u64)
}

/// A bare key is `true`; `key = true/false` is allowed too.
fn flag(input: ParseStream, key: &Ident, errors: &mut Errors) -> syn::Result<bool> {
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        match input.parse::<Lit>()? {
            Lit::Bool(b) => Ok(b.value),
            other => {
                errors.at(
                    &other,
                    format!("`{key}` is a flag: write `{key}` or `{key} = false`"),
                );
                Ok(false)
            }
        }
    } else {
        Ok(true)
    }
}

fn skip_value(input: ParseStream) -> syn::Result<()> {
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        input.parse::<Expr>()?;
    } else if input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        content.parse::<proc_macro2::TokenStream>()?;
    }
    Ok(())
}

fn expected_value(key: &Ident, what: &str) -> syn::Error {
    syn::Error::new(key.span(), format!("`{key}` needs {what}: `{key} = ...`"))
}

#[cfg(test)]
mod tests {
    use super::{ARG_KEYS, ICON_KEYS, TOOL_KEYS, parse_duration_ms, unknown_key};

    #[test]
    fn unknown_keys_are_told_the_metadata_keys() {
        let listed = unknown_key("`#[tool]`", "zzzzzz", TOOL_KEYS);
        for key in ["title", "tags", "icon", "deprecated", "example"] {
            assert!(listed.contains(&format!(" {key},")), "{listed}");
        }
        for (written, meant) in [
            ("tag", "tags"),
            ("titel", "title"),
            ("icons", "icon"),
            ("examples", "example"),
            ("input_examples", "example"),
            ("depreciated", "deprecated"),
        ] {
            assert_eq!(
                unknown_key("`#[tool]`", written, TOOL_KEYS),
                format!("unknown key `{written}` in `#[tool]`: did you mean `{meant}`?")
            );
        }
        assert_eq!(
            unknown_key("`icon(...)`", "size", ICON_KEYS),
            "unknown key `size` in `icon(...)`: did you mean `sizes`?"
        );
    }

    #[test]
    fn other_names_for_a_list_of_values_mean_one_of() {
        for written in [
            "enum",
            "choices",
            "allowed",
            "values",
            "possible_values",
            "oneof",
        ] {
            assert_eq!(
                unknown_key("`#[arg]`", written, ARG_KEYS),
                format!("unknown key `{written}` in `#[arg]`: did you mean `one_of`?")
            );
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("500ms"), Some(500));
        assert_eq!(parse_duration_ms("30s"), Some(30_000));
        assert_eq!(parse_duration_ms("1.5s"), Some(1500));
        assert_eq!(parse_duration_ms("2m"), Some(120_000));
        assert_eq!(parse_duration_ms("2 h"), Some(7_200_000));
        assert_eq!(parse_duration_ms("2 weeks"), None);
        assert_eq!(parse_duration_ms("fast"), None);
        assert_eq!(parse_duration_ms("0.1ms"), None);
    }
}
