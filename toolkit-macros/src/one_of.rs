//! `#[arg(one_of = [...])]`: the values a number or text parameter may
//! take, written into its schema as `enum`.
//!
//! It applies to a number or text type, to an `Option` of one (where `null`
//! stays allowed: `None` is still a value) and to a list of one (`Vec<T>`, a
//! set, an array), where it is the values each item may take.
//!
//! The macro judges the values itself where the type's spelling says what
//! it is, with the literal checks of `defaults`: a string for a `u32`, a
//! fraction for an integer, a negative for an unsigned type, a number out
//! of the type's range. For any other type (an alias, `NonZeroU32`,
//! `Box<str>`, a struct) the compiler checks that the type takes numbers or
//! text, whichever the list holds, at the first value of each kind. The
//! list itself must be worth having: not empty, each value once, and the
//! default among them.

use proc_macro2::Span;
use quote::quote;
use serde_json::Value;
use syn::spanned::Spanned;
use syn::{Expr, GenericArgument, Lit, PathArguments, Type};

use crate::ast::Argument;
use crate::defaults::{Kind, Place, Target, judge, kind_of, literal};
use crate::errors::Errors;
use crate::names::tokens_text;

/// The type the values are values of: `T` of `Option<T>`, of a list, or of
/// an `Option` of a list; and whether that is an item of a list.
fn item_type(ty: &Type) -> (&Type, bool) {
    let mut ty = ty;
    let mut in_list = false;
    loop {
        match ty {
            Type::Paren(paren) => ty = &paren.elem,
            Type::Group(group) => ty = &group.elem,
            Type::Array(array) => {
                ty = &array.elem;
                in_list = true;
            }
            Type::Path(path) if path.qself.is_none() => {
                let Some(last) = path.path.segments.last() else {
                    return (ty, in_list);
                };
                let list = matches!(
                    last.ident.to_string().as_str(),
                    "Vec" | "VecDeque" | "HashSet" | "BTreeSet"
                );
                let inner = match &last.arguments {
                    PathArguments::AngleBracketed(args) => {
                        args.args.first().and_then(|a| match a {
                            GenericArgument::Type(t) => Some(t),
                            _ => None,
                        })
                    }
                    _ => None,
                };
                match inner {
                    Some(inner) if list => {
                        ty = inner;
                        in_list = true;
                    }
                    Some(inner) if last.ident == "Option" => ty = inner,
                    // `Box<[T]>`.
                    Some(Type::Slice(slice)) if last.ident == "Box" => {
                        ty = &slice.elem;
                        in_list = true;
                    }
                    _ => return (ty, in_list),
                }
            }
            _ => return (ty, in_list),
        }
    }
}

/// What the values are judged against, when the macro can tell.
fn target(arg: &Argument) -> Option<Target> {
    let (item, in_list) = item_type(&arg.ty);
    let (kind, ty) = kind_of(item)?;
    let ident = format!("`{}`", arg.ident.to_string().trim_start_matches("r#"));
    Some(if in_list {
        Target {
            kind,
            ty,
            holder: format!("an item of {ident}"),
            retype: "the item type".to_owned(),
        }
    } else {
        Target {
            kind,
            ty,
            holder: ident.clone(),
            retype: ident,
        }
    })
}

/// A value of the list as JSON, or why it cannot be one. Only number and
/// string literals are values; whether they fit the type is judged apart.
fn json(expr: &Expr) -> Result<Value, String> {
    let not_a_value = || {
        format!(
            "each value of `one_of` is a number or a string written out, such as `one_of = [1, 2, 4]` or `one_of = [\"celsius\", \"fahrenheit\"]`, and `{}` is not: the macro writes the values into the schema",
            tokens_text(quote!(#expr))
        )
    };
    let Some((negative, lit)) = literal(expr) else {
        return Err(not_a_value());
    };
    let sign = if negative { "-" } else { "" };
    match lit {
        Lit::Int(int) => {
            let digits = int.base10_digits();
            let number = if negative {
                digits
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n <= i64::MIN.unsigned_abs())
                    .map(|n| Value::from(0i64.wrapping_sub_unsigned(n)))
            } else {
                digits.parse::<u64>().ok().map(Value::from)
            };
            number.ok_or_else(|| {
                format!("`{sign}{digits}` is past what a JSON number holds exactly (64 bits), so the schema cannot list it: keep the values within `i64` and `u64`")
            })
        }
        Lit::Float(float) => {
            let digits = float.base10_digits();
            format!("{sign}{digits}")
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| format!("`{sign}{digits}` is not a finite number"))
        }
        Lit::Str(text) if !negative => Ok(Value::String(text.value())),
        _ => Err(not_a_value()),
    }
}

/// Whether two values are the same value to the validator: numbers by
/// value (`1` and `1.0` are one), text by its characters.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        _ => a == b,
    }
}

/// The values as the validator lists them to the model: `1, 2, 4`, or
/// `"celsius", "fahrenheit"`.
fn listed(values: &[Value]) -> String {
    values
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Everything about `one_of` the macro can judge, each at its token: each
/// value against the type, the type itself when it is a flag or a
/// character, an empty list, a value given twice, and a default outside
/// the list.
pub fn check(arg: &Argument, errors: &mut Errors) {
    let Some(one_of) = &arg.attrs.one_of else {
        return;
    };
    // Refused with `flatten` already, as every key is.
    if arg.attrs.flatten.is_some() {
        return;
    }
    let target = target(arg);
    if let Some(target) = &target
        && matches!(target.kind, Kind::Bool | Kind::Char)
    {
        let instead = if target.kind == Kind::Bool {
            ", which is `true` or `false` already: drop `one_of`"
        } else {
            ": take a `String` and list the characters as strings, or drop `one_of`"
        };
        errors.at(
            &one_of.key,
            format!(
                "`one_of` lists the values a number or text may take, and {} is {}{instead}",
                target.holder,
                crate::defaults::a(&target.ty)
            ),
        );
        return;
    }
    if one_of.values.is_empty() {
        errors.at_span(
            one_of.list,
            format!(
                "`one_of` lists no values, so no call could pass: list the values `{}` may take, or drop `one_of`",
                arg.ident.to_string().trim_start_matches("r#")
            ),
        );
        return;
    }
    let mut seen: Vec<(Value, &Expr)> = Vec::new();
    let mut all_values = true;
    for expr in &one_of.values {
        if let (Some(target), Some((negative, lit))) = (&target, literal(expr))
            && let Some(message) = judge(target, negative, lit, Place::OneOf)
        {
            errors.at(expr, message);
            all_values = false;
            continue;
        }
        let value = match json(expr) {
            Ok(value) => value,
            Err(message) => {
                errors.at(expr, message);
                all_values = false;
                continue;
            }
        };
        if let Some((_, first)) = seen.iter().find(|(v, _)| same(v, &value)) {
            let (first, this) = (tokens_text(quote!(#first)), tokens_text(quote!(#expr)));
            let message = if first == this {
                format!("`{this}` is listed twice in `one_of`; keep one")
            } else {
                format!(
                    "`{this}` is the same value as `{first}`, listed already in `one_of`; keep one"
                )
            };
            errors.at(expr, message);
            continue;
        }
        seen.push((value, expr));
    }
    // Against a list with a value refused, the default may be the value
    // meant; it is judged once the list is right.
    if all_values {
        check_default(arg, &seen, errors);
    }
}

/// A literal default that fits the type must be one of the values: the
/// schema would show the model a default it refuses when sent, and the
/// function would get it whenever the argument is left out. (A default on
/// an `Option` is refused already, and on a list it is not one value.)
fn check_default(arg: &Argument, values: &[(Value, &Expr)], errors: &mut Errors) {
    let Some(default) = &arg.attrs.default else {
        return;
    };
    let (item, in_list) = item_type(&arg.ty);
    if in_list
        || !std::ptr::eq(item, &*arg.ty)
        || literal(&default.value).is_none()
        || crate::defaults::mismatch(arg).is_some()
    {
        return;
    }
    let Ok(value) = json(&default.value) else {
        return;
    };
    if values.iter().any(|(v, _)| same(v, &value)) {
        return;
    }
    let values: Vec<Value> = values.iter().map(|(v, _)| v.clone()).collect();
    errors.at(
        &default.value,
        format!(
            "the default `{value}` is not one of the values `one_of` lists ({}), so the schema would offer the model a value it refuses: choose a default from the list, or add `{value}` to it",
            listed(&values)
        ),
    );
}

/// The values as a JSON list, for the schema; `None` without `one_of`.
/// Called once the checks passed, so every value is one.
pub fn values_json(arg: &Argument) -> Option<String> {
    let one_of = arg.attrs.one_of.as_ref()?;
    let values: Vec<Value> = one_of
        .values
        .iter()
        .filter_map(|expr| json(expr).ok())
        .collect();
    Some(Value::Array(values).to_string())
}

/// What the list holds, for a compiler check that the type takes it.
#[derive(Clone, Copy)]
pub enum Holds {
    Numbers,
    Text,
}

/// For a type the macro cannot read, what the compiler must check, and
/// where to report it: at the first number, that the type takes numbers
/// (a number type, or an `Option` or a list of one), at the first string,
/// that it takes text. Empty for a type the macro judged itself.
pub fn compiler_checks(arg: &Argument) -> Vec<(Holds, Span)> {
    let Some(one_of) = &arg.attrs.one_of else {
        return Vec::new();
    };
    if target(arg).is_some() || arg.attrs.flatten.is_some() {
        return Vec::new();
    }
    let first = |holds: Holds| {
        one_of.values.iter().find(|expr| {
            matches!(
                (literal(expr), holds),
                (Some((_, Lit::Int(_) | Lit::Float(_))), Holds::Numbers)
                    | (Some((false, Lit::Str(_))), Holds::Text)
            )
        })
    };
    [Holds::Numbers, Holds::Text]
        .into_iter()
        .filter_map(|holds| first(holds).map(|expr| (holds, expr.span())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{item_type, json, same};
    use serde_json::json;

    /// The macro's own errors for `item`, a `#[tool]` function without the
    /// attribute.
    fn errors(item: &str) -> Vec<String> {
        let item: syn::ItemFn = syn::parse_str(item).unwrap();
        let mut errors = crate::errors::Errors::default();
        let tool = crate::ast::ToolFn::from_item(item, Default::default(), &mut errors);
        crate::valid::check(&tool, &mut errors);
        errors.messages()
    }

    #[test]
    fn fitting_lists_are_accepted() {
        let fine = errors(
            r#"/// Fan.
            fn fan(
                #[arg(one_of = [1, 2], default = 2)] a: u32,
                #[arg(one_of = [-1.5, 0, 2e3])] b: Option<f32>,
                #[arg(one_of = ["x", "y"])] c: std::collections::HashSet<String>,
                #[arg(one_of = [1, "x"])] d: Count,
                #[arg(one_of = [18446744073709551615])] e: u64,
            ) {}"#,
        );
        assert!(fine.is_empty(), "{fine:?}");
    }

    #[test]
    fn each_mistake_is_reported_once() {
        // The default of an `Option` is refused for being there at all.
        let found = errors(
            r#"#[doc = "Fan."] fn fan(#[arg(one_of = [1], default = 5)] a: Option<u32>) {}"#,
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("already optional"), "{found:?}");
        // The default may be the value meant by the refused `"2"`.
        let found =
            errors(r#"#[doc = "Fan."] fn fan(#[arg(one_of = [1, "2"], default = 2)] a: u32) {}"#);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("write `2`, without quotes"), "{found:?}");
        // `flatten` says the key has nothing to apply to; nothing more.
        let found = errors(r#"#[doc = "Fan."] fn fan(#[arg(flatten, one_of = [])] a: Args) {}"#);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("`flatten` spreads"), "{found:?}");
    }

    #[test]
    fn values_are_literal_numbers_or_strings() {
        let found = errors(
            r#"#[doc = "Fan."] fn fan(
                #[arg(one_of = [LOW, true])] a: Count,
                #[arg(one_of = ["a"])] b: char,
                #[arg(one_of = [1])] c: Vec<bool>,
                #[arg(one_of = [36893488147419103232])] d: u128,
                #[arg(one_of = "a")] e: String,
            ) {}"#,
        );
        assert_eq!(
            found,
            [
                // Read with the attribute, before the checks.
                "`one_of` takes a list of the values the parameter may take, e.g. `one_of = [\"celsius\", \"fahrenheit\"]` or `one_of = [1, 2, 4]`",
                "each value of `one_of` is a number or a string written out, such as `one_of = [1, 2, 4]` or `one_of = [\"celsius\", \"fahrenheit\"]`, and `LOW` is not: the macro writes the values into the schema",
                "each value of `one_of` is a number or a string written out, such as `one_of = [1, 2, 4]` or `one_of = [\"celsius\", \"fahrenheit\"]`, and `true` is not: the macro writes the values into the schema",
                "`one_of` lists the values a number or text may take, and `b` is a `char`: take a `String` and list the characters as strings, or drop `one_of`",
                "`one_of` lists the values a number or text may take, and an item of `c` is a `bool`, which is `true` or `false` already: drop `one_of`",
                "`36893488147419103232` is past what a JSON number holds exactly (64 bits), so the schema cannot list it: keep the values within `i64` and `u64`",
            ]
        );
    }

    fn item(ty: &str) -> (String, bool) {
        let ty: syn::Type = syn::parse_str(ty).unwrap();
        let (item, in_list) = item_type(&ty);
        (crate::names::type_text(item), in_list)
    }

    #[test]
    fn the_values_are_of_the_innermost_item() {
        assert_eq!(item("u32"), ("u32".to_owned(), false));
        assert_eq!(item("Option<String>"), ("String".to_owned(), false));
        assert_eq!(item("Vec<u8>"), ("u8".to_owned(), true));
        assert_eq!(item("Option<Vec<i64>>"), ("i64".to_owned(), true));
        assert_eq!(
            item("std::collections::BTreeSet<String>"),
            ("String".to_owned(), true)
        );
        assert_eq!(item("[f64; 3]"), ("f64".to_owned(), true));
        assert_eq!(item("Box<[u16]>"), ("u16".to_owned(), true));
        assert_eq!(item("Box<str>"), ("Box<str>".to_owned(), false));
        assert_eq!(item("Mode"), ("Mode".to_owned(), false));
    }

    fn value(expr: &str) -> Result<serde_json::Value, String> {
        json(&syn::parse_str(expr).unwrap())
    }

    #[test]
    fn literals_become_json() {
        assert_eq!(value("4"), Ok(json!(4)));
        assert_eq!(value("-4"), Ok(json!(-4)));
        assert_eq!(value("2.5"), Ok(json!(2.5)));
        assert_eq!(value("\"fast\""), Ok(json!("fast")));
        assert_eq!(value("18446744073709551615"), Ok(json!(u64::MAX)));
        assert_eq!(value("-9223372036854775808"), Ok(json!(i64::MIN)));
        assert!(
            value("18446744073709551616")
                .unwrap_err()
                .contains("64 bits")
        );
        assert!(
            value("-9223372036854775809")
                .unwrap_err()
                .contains("64 bits")
        );
        assert!(value("1e999").unwrap_err().contains("finite"));
        assert!(value("LIMIT").unwrap_err().contains("`LIMIT` is not"));
        assert!(value("true").is_err());
        assert!(value("-\"a\"").is_err());
    }

    #[test]
    fn numbers_are_the_same_by_value() {
        assert!(same(&json!(1), &json!(1.0)));
        assert!(same(&json!(u64::MAX), &json!(u64::MAX)));
        assert!(!same(
            &json!(9007199254740993u64),
            &json!(9007199254740992u64)
        ));
        assert!(!same(&json!(1), &json!("1")));
        assert!(same(&json!("a"), &json!("a")));
    }
}
