//! `#[serde(...)]` and `#[schemars(...)]` written on a tool parameter.
//!
//! They look as if they should work, since the arguments are deserialized by
//! serde, but a parameter is not a field: nothing reads them there, and the
//! compiler's own complaint ("cannot find attribute `serde`") says nothing
//! of what to write instead. Each is refused with the `#[arg(...)]` keys
//! that do the same, where there are any.

use quote::ToTokens;
use syn::{Attribute, Expr, Lit, Token};

use crate::errors::Errors;

/// Whether `attr` is one this module explains.
pub fn is_foreign(attr: &Attribute) -> bool {
    attr.path().is_ident("serde") || attr.path().is_ident("schemars")
}

/// Report `attr` (a `#[serde]` or `#[schemars]` on a parameter) with what
/// to write instead.
pub fn refuse(attr: &Attribute, errors: &mut Errors) {
    let which = if attr.path().is_ident("serde") {
        "serde"
    } else {
        "schemars"
    };
    let mut translated = Vec::new();
    let mut untranslatable = Vec::new();
    let parsed = attr.parse_nested_meta(|meta| {
        let key = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_else(|| meta.path.to_token_stream().to_string());
        let value = if meta.input.peek(Token![=]) {
            Value::Is(meta.value()?.parse::<Expr>()?)
        } else if meta.input.peek(syn::token::Paren) {
            let mut inner = Vec::new();
            meta.parse_nested_meta(|nested| {
                let name = nested
                    .path
                    .get_ident()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                let value = if nested.input.peek(Token![=]) {
                    Some(nested.value()?.parse::<Expr>()?)
                } else {
                    None
                };
                inner.push((name, value));
                Ok(())
            })?;
            Value::List(inner)
        } else {
            Value::None
        };
        match translate(which, &key, &value) {
            Ok(keys) => translated.extend(keys),
            Err(message) => untranslatable.push((meta.path.clone(), message)),
        }
        Ok(())
    });
    if parsed.is_err() || (translated.is_empty() && untranslatable.is_empty()) {
        errors.at(
            attr,
            format!(
                "`#[{which}]` is not read on a tool parameter: `#[arg(...)]` sets what it can (`rename`, `default`, `description`, `minimum`, `maximum`, `min_length`, `max_length`, `min_items`, `max_items`, `pattern`, `header`, `flatten`)"
            ),
        );
        return;
    }
    if !translated.is_empty() {
        errors.at(
            attr,
            format!(
                "`#[{which}]` is not read on a tool parameter: write `#[arg({})]` instead",
                translated.join(", ")
            ),
        );
    }
    for (path, message) in untranslatable {
        errors.at(path, message);
    }
}

/// What came after a key: `= value`, `(a = 1, b)`, or nothing.
enum Value {
    None,
    Is(Expr),
    List(Vec<(String, Option<Expr>)>),
}

/// The `#[arg]` keys that do what `key` of `#[which(...)]` does, or the
/// message that says there are none and what to do.
fn translate(which: &str, key: &str, value: &Value) -> Result<Vec<String>, String> {
    let remove = format!("remove `#[{which}({key})]`");
    let text = |e: &Expr| crate::names::tokens_text(e.to_token_stream());
    let from_list = |names: &[(&str, &str)]| -> Vec<String> {
        let Value::List(items) = value else {
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|(name, v)| {
                let (_, ours) = names.iter().find(|(theirs, _)| theirs == name)?;
                Some(format!("{ours} = {}", text(v.as_ref()?)))
            })
            .collect()
    };
    let keys = match (key, value) {
        ("rename", Value::Is(v)) => vec![format!("rename = {}", text(v))],
        // `rename(deserialize = "...")`: arguments are only deserialized.
        ("rename", Value::List(_)) => from_list(&[("deserialize", "rename")]),
        ("default", Value::None) => vec!["default = Default::default()".to_owned()],
        // serde names a function in a string; `#[arg]` takes the expression.
        ("default", Value::Is(Expr::Lit(lit))) => match &lit.lit {
            Lit::Str(path) => vec![format!("default = {}()", path.value())],
            _ => vec![format!("default = {}", text(&Expr::Lit(lit.clone())))],
        },
        ("flatten", Value::None) => vec!["flatten".to_owned()],
        ("description", Value::Is(v)) => vec![format!("description = {}", text(v))],
        ("range", _) => from_list(&[("min", "minimum"), ("max", "maximum")]),
        ("length", _) => from_list(&[("min", "min_length"), ("max", "max_length")]),
        ("regex" | "pattern", Value::Is(v)) => vec![format!("pattern = {}", text(v))],
        ("regex", _) => from_list(&[("pattern", "pattern")]),
        ("alias", _) => {
            return Err(format!(
                "{remove}: the model is shown one name per parameter, the one `#[arg(rename = \"...\")]` sets"
            ));
        }
        ("skip" | "skip_deserializing", _) => {
            return Err(format!(
                "{remove}: a value the model cannot set is not an argument; compute it in the body, or take it from the context as `&T`"
            ));
        }
        ("deserialize_with" | "with", _) => {
            return Err(format!(
                "{remove}, and give the parameter a type whose own `Deserialize` reads the value that way: `#[arg]` has no equivalent"
            ));
        }
        _ => Vec::new(),
    };
    if keys.is_empty() {
        return Err(format!(
            "{remove}: `#[arg]` has no equivalent (its keys are `rename`, `default`, `description`, `minimum`, `maximum`, `min_length`, `max_length`, `min_items`, `max_items`, `pattern`, `header` and `flatten`); for more, take a struct that derives `Deserialize` and mark it `#[arg(flatten)]`"
        ));
    }
    Ok(keys)
}
