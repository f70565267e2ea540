//! `#[arg(default = ...)]`: a literal that cannot be a value of the
//! parameter's type, found by the macro, and the function that makes the
//! default, written so the compiler's own errors point at the expression.
//!
//! The macro knows only how types are spelled, so it judges literals only
//! for parameters whose type is plain from its spelling: the primitive
//! numbers, `bool`, `char`, `String` and `PathBuf`. Everything else (an
//! enum variant, `Vec::new()`, a constant) is checked by the compiler, at
//! the expression, against the parameter's type.
//!
//! The same judgement of a literal serves the values of `one_of` (see
//! `one_of`), with the words of what to write instead fitted to each.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, Lit, Type, UnOp};

use crate::ast::{Argument, ToolFn};
use crate::valid::{borrow_inside, impl_trait, is_option};

/// What a parameter's type is, when its spelling says so.
#[derive(Clone, Copy, PartialEq)]
pub enum Kind {
    /// An integer type, with its range (`None` for `usize`/`isize`, whose
    /// width depends on the target).
    Integer {
        signed: bool,
        range: Option<(i128, u128)>,
    },
    Float,
    Bool,
    Char,
    /// `String` or `PathBuf`, made from a string literal.
    Text,
}

/// The kind of `ty` and its name as written, for the types a literal can
/// be judged against.
pub fn kind_of(ty: &Type) -> Option<(Kind, String)> {
    let path = match ty {
        Type::Path(path) if path.qself.is_none() => &path.path,
        Type::Paren(paren) => return kind_of(&paren.elem),
        Type::Group(group) => return kind_of(&group.elem),
        _ => return None,
    };
    let last = path.segments.last()?;
    if !last.arguments.is_none() {
        return None;
    }
    let name = last.ident.to_string();
    // A primitive is written bare; a path ending in `u32` is someone's own type.
    let bare = path.segments.len() == 1 && path.leading_colon.is_none();
    let integer = |signed: bool, bits: u32| Kind::Integer {
        signed,
        range: Some(if signed {
            (i128::MIN >> (128 - bits), u128::MAX >> (129 - bits))
        } else {
            (0, u128::MAX >> (128 - bits))
        }),
    };
    let kind = match name.as_str() {
        "u8" if bare => integer(false, 8),
        "u16" if bare => integer(false, 16),
        "u32" if bare => integer(false, 32),
        "u64" if bare => integer(false, 64),
        "u128" if bare => integer(false, 128),
        "i8" if bare => integer(true, 8),
        "i16" if bare => integer(true, 16),
        "i32" if bare => integer(true, 32),
        "i64" if bare => integer(true, 64),
        "i128" if bare => integer(true, 128),
        "usize" if bare => Kind::Integer {
            signed: false,
            range: None,
        },
        "isize" if bare => Kind::Integer {
            signed: true,
            range: None,
        },
        "f32" | "f64" if bare => Kind::Float,
        "bool" if bare => Kind::Bool,
        "char" if bare => Kind::Char,
        "String" if bare || path_is(path, &["std", "string", "String"]) => Kind::Text,
        "PathBuf" if bare || path_is(path, &["std", "path", "PathBuf"]) => Kind::Text,
        _ => return None,
    };
    Some((kind, name))
}

fn path_is(path: &syn::Path, segments: &[&str]) -> bool {
    path.segments.len() == segments.len()
        && path
            .segments
            .iter()
            .zip(segments)
            .all(|(s, want)| s.ident == want)
}

/// "a `u32`", "an `i64`", "an `f64`".
pub fn a(ty: &str) -> String {
    let article = if ty.starts_with(['i', 'f']) {
        "an"
    } else {
        "a"
    };
    format!("{article} `{ty}`")
}

/// The literal an expression is, with its sign: `10`, `-1`, `"ten"`.
pub fn literal(expr: &Expr) -> Option<(bool, &Lit)> {
    match expr {
        Expr::Lit(lit) => Some((false, &lit.lit)),
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => match &*unary.expr {
            Expr::Lit(lit) => Some((true, &lit.lit)),
            _ => None,
        },
        Expr::Paren(paren) => literal(&paren.expr),
        Expr::Group(group) => literal(&group.expr),
        _ => None,
    }
}

/// Where a literal is written, for the words of what to write instead.
#[derive(Clone, Copy, PartialEq)]
pub enum Place {
    /// `#[arg(default = ...)]`.
    Default,
    /// One value of `#[arg(one_of = [...])]`.
    OneOf,
}

impl Place {
    /// What to write, as the message shows it: `default = 1`, or `1`.
    fn write(self, value: &str) -> String {
        match self {
            Place::Default => format!("`default = {value}`"),
            Place::OneOf => format!("`{value}`"),
        }
    }

    /// "its default is a number", "`one_of` lists numbers".
    fn numbers(self) -> &'static str {
        match self {
            Place::Default => "its default is a number",
            Place::OneOf => "`one_of` lists numbers",
        }
    }

    /// "its default is text", "`one_of` lists text".
    fn text(self) -> &'static str {
        match self {
            Place::Default => "its default is text",
            Place::OneOf => "`one_of` lists text",
        }
    }
}

/// The value a literal is judged for.
pub struct Target {
    pub kind: Kind,
    /// The type's name as written: `u32`.
    pub ty: String,
    /// What holds the value, as a message names it: "`limit`", or "an item
    /// of `ids`".
    pub holder: String,
    /// What to give another type: "`limit`", or "the item type".
    pub retype: String,
}

/// Why `arg`'s literal default cannot be a value of its type, with what to
/// write instead; `None` when it fits, or when only the compiler can tell.
pub fn mismatch(arg: &Argument) -> Option<String> {
    let default = &arg.attrs.default.as_ref()?.value;
    let (negative, lit) = literal(default)?;
    let (kind, ty) = kind_of(&arg.ty)?;
    let ident = format!("`{}`", arg.ident.to_string().trim_start_matches("r#"));
    let target = Target {
        kind,
        ty,
        holder: ident.clone(),
        retype: ident,
    };
    judge(&target, negative, lit, Place::Default)
}

/// Why the literal (`-` before it when `negative`) cannot be a value of
/// `target`, with what to write at `place` instead; `None` when it fits.
///
/// A value of `one_of` goes into the schema as JSON, where `1` and `1.0`
/// are one number, so an integer is taken for a float there; a default is
/// Rust code, where it is not.
pub fn judge(target: &Target, negative: bool, lit: &Lit, place: Place) -> Option<String> {
    let Target {
        kind,
        ty,
        holder,
        retype,
    } = target;
    let (kind, ty) = (*kind, ty.as_str());
    let sign = if negative { "-" } else { "" };
    let is = format!("{holder} is {}", a(ty));
    // A suffix says the literal's own type: `10u64` is never a `u32`.
    let suffix = match lit {
        Lit::Int(i) => i.suffix(),
        Lit::Float(f) => f.suffix(),
        _ => "",
    };
    let number = match lit {
        Lit::Int(i) => Some(i.base10_digits().to_owned()),
        Lit::Float(f) => Some(f.base10_digits().to_owned()),
        _ => None,
    };
    match (kind, lit) {
        (Kind::Integer { signed, range }, Lit::Int(int)) => {
            let digits = int.base10_digits();
            if !suffix.is_empty() && suffix != ty {
                return Some(format!(
                    "`{sign}{int}` is {}, but {is}: write {}",
                    a(suffix),
                    place.write(&format!("{sign}{digits}"))
                ));
            }
            if negative && !signed {
                let instead = match place {
                    Place::Default => "give a default of 0 or more",
                    Place::OneOf => "list values of 0 or more",
                };
                return Some(format!(
                    "{is}, which cannot be negative: {instead}, or make {retype} a signed type such as `i64`"
                ));
            }
            let (min, max) = range?;
            let fits = match digits.parse::<u128>() {
                Ok(value) if negative => value <= min.unsigned_abs(),
                Ok(value) => value <= max,
                Err(_) => false,
            };
            let instead = match place {
                Place::Default => "give a smaller default",
                Place::OneOf => "list values in that range",
            };
            (!fits).then(|| {
                format!(
                    "`{sign}{digits}` does not fit in {holder}, {} from {min} to {max}: {instead}, or a wider type",
                    a(ty)
                )
            })
        }
        (Kind::Integer { .. }, Lit::Float(float)) => {
            let value: f64 = float.base10_digits().parse().ok()?;
            Some(if value.fract() == 0.0 && value.abs() < 1e18 {
                format!(
                    "{is}, a whole number: write {}",
                    place.write(&format!("{sign}{}", value as i128))
                )
            } else {
                format!(
                    "{is}, a whole number, and `{sign}{}` has a fraction: give a whole number, or make {retype} an `f64`",
                    float.base10_digits()
                )
            })
        }
        (Kind::Float, Lit::Int(_) | Lit::Float(_)) => {
            let digits = number?;
            let as_float = if digits.contains(['.', 'e', 'E']) {
                digits.clone()
            } else {
                format!("{digits}.0")
            };
            if !suffix.is_empty() && suffix != ty {
                Some(format!(
                    "`{sign}{}` is {}, but {is}: write {}",
                    crate::names::tokens_text(quote!(#lit)),
                    a(suffix),
                    place.write(&format!("{sign}{as_float}"))
                ))
            } else if matches!(lit, Lit::Int(_)) && suffix.is_empty() && place == Place::Default {
                // Rust never reads an integer literal as a float.
                Some(format!(
                    "{is}, and `{sign}{digits}` is an integer: write {}",
                    place.write(&format!("{sign}{as_float}"))
                ))
            } else {
                None
            }
        }
        (Kind::Integer { .. } | Kind::Float, Lit::Str(text)) => {
            let value = text.value();
            let number = value.trim();
            let parses = if kind == Kind::Float {
                number.parse::<f64>().is_ok_and(f64::is_finite)
            } else {
                number.parse::<i128>().is_ok()
            };
            let numbers = place.numbers();
            Some(if parses {
                format!(
                    "{is}, so {numbers}, not text: write {}, without quotes",
                    place.write(number)
                )
            } else {
                format!(
                    "{is}, so {numbers}, not text: write a number, such as {}",
                    place.write(if kind == Kind::Float { "1.0" } else { "1" })
                )
            })
        }
        (Kind::Integer { .. } | Kind::Float, _) => Some(format!(
            "{is}, so {}: write one, such as {}",
            place.numbers(),
            place.write(if kind == Kind::Float { "1.0" } else { "1" })
        )),
        (Kind::Bool, Lit::Bool(_)) | (Kind::Char, Lit::Char(_)) | (Kind::Text, Lit::Str(_)) => None,
        (Kind::Bool, Lit::Str(text)) if matches!(text.value().trim(), "true" | "false") => {
            Some(format!(
                "{is}, so its default is a flag, not text: write {}, without quotes",
                place.write(text.value().trim())
            ))
        }
        (Kind::Bool, _) => Some(format!(
            "{is}: write {} or {}",
            place.write("true"),
            place.write("false")
        )),
        (Kind::Char, Lit::Str(text)) if text.value().chars().count() == 1 => Some(format!(
            "{is}, so its default is a character in single quotes: write {}",
            place.write(&format!(
                "{:?}",
                text.value().chars().next().unwrap_or_default()
            ))
        )),
        (Kind::Char, _) => Some(format!(
            "{is}: write one character in single quotes, such as {}",
            place.write("'a'")
        )),
        (Kind::Text, _) => {
            let text = match lit {
                Lit::Char(c) => c.value().to_string(),
                Lit::Bool(b) => b.value.to_string(),
                _ => match number {
                    Some(digits) => format!("{sign}{digits}"),
                    None => {
                        return Some(format!(
                            "{is}, so {}: write it in double quotes, such as {}",
                            place.text(),
                            place.write("\"...\"")
                        ));
                    }
                },
            };
            Some(format!(
                "{is}, so {}: write {}",
                place.text(),
                place.write(&format!("{text:?}"))
            ))
        }
    }
}

/// The name of the function that makes `arg`'s default, for serde's
/// `#[serde(default = "...")]`.
pub fn fn_name(arg: &Argument) -> String {
    format!(
        "__toolsmith_default_{}",
        arg.ident.to_string().trim_start_matches("r#")
    )
}

/// Whether `arg` gets a default function: it has a default the macro did
/// not refuse, on a type the generated code can name.
pub fn has_fn(arg: &Argument) -> bool {
    arg.attrs.default.is_some()
        && arg.attrs.flatten.is_none()
        && !is_option(&arg.ty)
        && impl_trait(&arg.ty).is_none()
        && borrow_inside(&arg.ty).is_none()
        && mismatch(arg).is_none()
}

/// The functions that make the defaults, one per argument with a default.
///
/// The value is bound with the parameter's type (`let value: u32 = ...;`),
/// so a value of another type is reported at the expression as "expected
/// `u32`" with the type pointed out as the reason. A string literal goes
/// through `From<&str>` (`"x"` for a `String` or a `PathBuf`), by a trait
/// whose message says so when the type has no such conversion, instead of
/// the compiler's list of the type's unrelated `From` impls.
///
/// Emitted both by `expand` and by `fallback`, so a wrong default is
/// reported in the same build as the macro's own errors.
pub fn functions(tool: &ToolFn) -> TokenStream {
    let sig = &tool.item.sig;
    // A generic function's type parameters are not in scope here (and it is
    // refused anyway).
    if !sig.generics.params.is_empty() || sig.receiver().is_some() {
        return TokenStream::new();
    }
    let mut text_trait = false;
    let functions: Vec<TokenStream> = tool
        .arguments()
        .filter(|arg| has_fn(arg))
        .filter_map(|arg| {
            let default = arg.attrs.default.as_ref()?;
            let value = &default.value;
            let ty = &arg.ty;
            let span = value.span();
            let fn_ident = format_ident!("{}", fn_name(arg));
            let body = if matches!(
                value,
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(_),
                    ..
                })
            ) {
                text_trait = true;
                quote_spanned!(span=> __ToolsmithFromText::__toolsmith_from_text(#value))
            } else {
                quote!(#value)
            };
            let binding = quote_spanned!(span=> let __toolsmith_default: #ty = #body;);
            // Lifted only where the parameter's own name needs it: a crate
            // that forbids the lint may write no `allow` of it at all.
            let snake_case = crate::names::allow_non_snake_case(&arg.ident);
            Some(quote! {
                #snake_case
                #[allow(clippy::let_and_return)]
                fn #fn_ident() -> #ty {
                    #binding
                    __toolsmith_default
                }
            })
        })
        .collect();
    let text_trait = text_trait.then(|| {
        quote! {
            #[diagnostic::on_unimplemented(
                message = "the default is text, and `{T}` cannot be made from text (it does not implement `From<&str>`)",
                label = "expected `{T}`, found text",
                note = "write an expression of type `{T}` instead (a variant, a constant, a constructor call), or implement `From<&str>` for it"
            )]
            trait __ToolsmithFromText<T> {
                fn __toolsmith_from_text(self) -> T;
            }

            #[diagnostic::do_not_recommend]
            impl<T: ::core::convert::From<&'static str>> __ToolsmithFromText<T> for &'static str {
                fn __toolsmith_from_text(self) -> T {
                    ::core::convert::From::from(self)
                }
            }
        }
    });
    quote!(#text_trait #(#functions)*)
}
