//! The typed model of a `#[tool]` function, read from the parsed item.
//!
//! Reading never stops at the first problem: each one goes to [`Errors`] and
//! the model is filled in as well as it can be, so independent mistakes are
//! all reported in one build.

use syn::parse::Parser;
use syn::{Attribute, FnArg, ItemFn, Pat, ReturnType, Type};

use crate::attr::{ArgAttrs, ToolAttrs, parse_arg_attrs};
use crate::errors::Errors;

/// A function under `#[tool]`.
pub struct ToolFn {
    /// The function as the user wrote it, with parameter attributes removed.
    pub item: ItemFn,
    pub attrs: ToolAttrs,
    /// The doc comment, joined into one text, without the sections meant
    /// for programmers (see `docs`).
    pub docs: Option<String>,
    /// The titles of the sections left out of `docs`, to explain a doc
    /// comment that had nothing else.
    pub docs_removed: Vec<String>,
    /// The doc comment as an expression, when part of it is not a literal
    /// (`#[doc = include_str!("...")]`): the compiler joins it, not the macro.
    pub docs_expr: Option<proc_macro2::TokenStream>,
    pub params: Vec<Param>,
    pub output: Output,
    /// The note of the function's own `#[deprecated]`, empty when it has
    /// none; `None` when the function is not deprecated.
    pub deprecated_fn: Option<String>,
}

pub enum Param {
    /// A `&T` parameter, taken from the context. `mutable` marks the refused
    /// `&mut T`, so the fallback knows not to check `T`.
    Injected {
        ident: syn::Ident,
        ty: Box<Type>,
        mutable: bool,
    },
    /// A parameter the model provides.
    Argument(Box<Argument>),
}

pub struct Argument {
    pub ident: syn::Ident,
    pub ty: Box<Type>,
    pub docs: Option<String>,
    pub attrs: ArgAttrs,
}

impl Argument {
    /// The parameter's name in the schema.
    pub fn json_name(&self) -> String {
        match &self.attrs.rename {
            Some(rename) => rename.value.clone(),
            None => self.ident.to_string().trim_start_matches("r#").to_owned(),
        }
    }
}

/// What the function returns.
pub enum Output {
    /// No return type: `()`.
    Unit,
    /// A return type, with its success and error types when it is written
    /// as `Result<T, E>` / `Result<T>`.
    Type {
        ty: Box<Type>,
        ok: Option<Box<Type>>,
        err: Option<Box<Type>>,
    },
}

impl ToolFn {
    pub fn from_item(mut item: ItemFn, attrs: ToolAttrs, errors: &mut Errors) -> Self {
        let doc = doc_text(&item.attrs)
            .map(|text| crate::docs::read(&text))
            .unwrap_or_default();
        let docs_expr = doc_expression(&item.attrs);
        let deprecated_fn = deprecation_note(&item.attrs);
        let mut params = Vec::new();
        for input in item.sig.inputs.iter_mut() {
            match input {
                FnArg::Receiver(receiver) => errors.at(
                    &*receiver,
                    "a tool is a free function, not a method: remove `self`, and reach shared state through a `&State` parameter (taken from the ToolContext)",
                ),
                FnArg::Typed(typed) => {
                    let (docs, arg_attrs, spans) = take_param_attrs(&mut typed.attrs, errors);
                    let ident = match &*typed.pat {
                        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
                        other => {
                            errors.at(
                                other,
                                format!(
                                    "a tool parameter must be a plain name, because the name is the argument's name in the JSON: write `value: {}` and destructure it in the body",
                                    crate::names::type_text(&typed.ty)
                                ),
                            );
                            continue;
                        }
                    };
                    params.push(match &*typed.ty {
                        Type::Reference(reference) => {
                            if let Some(mutability) = &reference.mutability {
                                let and_token = &reference.and_token;
                                errors.at(
                                    quote::quote!(#and_token #mutability),
                                    "a tool cannot take `&mut`: tools may run at the same time and share the context, so take an argument by value, or shared state by `&T` (with a `Mutex` inside if it must change)",
                                );
                            }
                            if !spans.is_empty() || docs.is_some() {
                                let message = "an injected `&T` parameter is not part of the schema, so it takes no `#[arg]` and no doc comment";
                                match spans.first() {
                                    Some(span) => errors.at_span(*span, message),
                                    None => errors.at(&ident, message),
                                }
                            }
                            Param::Injected {
                                ident,
                                ty: reference.elem.clone(),
                                mutable: reference.mutability.is_some(),
                            }
                        }
                        _ => {
                            // Its own doc comment wins over the function's
                            // `# Arguments` entry for it.
                            let docs = docs.or_else(|| {
                                let name = ident.to_string();
                                let rename = arg_attrs.rename.as_ref().map(|r| r.value.as_str());
                                doc.argument(name.trim_start_matches("r#"))
                                    .or_else(|| rename.and_then(|r| doc.argument(r)))
                                    .map(str::to_owned)
                            });
                            Param::Argument(Box::new(Argument {
                                ident,
                                ty: typed.ty.clone(),
                                docs,
                                attrs: arg_attrs,
                            }))
                        }
                    });
                }
            }
        }
        let output = match &item.sig.output {
            ReturnType::Default => Output::Unit,
            ReturnType::Type(_, ty) => {
                let (ok, err) = result_parts(ty);
                Output::Type {
                    ty: ty.clone(),
                    ok,
                    err,
                }
            }
        };
        Self {
            item,
            attrs,
            docs: doc.description,
            docs_removed: doc.removed,
            docs_expr,
            params,
            output,
            deprecated_fn,
        }
    }

    pub fn arguments(&self) -> impl Iterator<Item = &Argument> {
        self.params.iter().filter_map(|p| match p {
            Param::Argument(a) => Some(&**a),
            Param::Injected { .. } => None,
        })
    }

    /// The one argument, when it is a whole-arguments struct (`#[arg(flatten)]`
    /// on the only argument): its type is the arguments type itself.
    pub fn whole_arguments(&self) -> Option<&Argument> {
        let mut args = self.arguments();
        match (args.next(), args.next()) {
            (Some(only), None) if only.attrs.flatten.is_some() => Some(only),
            _ => None,
        }
    }

    pub fn tool_name(&self) -> String {
        match &self.attrs.name {
            Some(name) => name.value.clone(),
            None => self
                .item
                .sig
                .ident
                .to_string()
                .trim_start_matches("r#")
                .to_owned(),
        }
    }

    /// What the tool's deprecation says: `#[tool(deprecated = "...")]`, else
    /// the note of the function's `#[deprecated]`; `None` when neither is
    /// there.
    pub fn deprecation(&self) -> Option<String> {
        self.attrs
            .deprecated
            .as_ref()
            .map(|d| d.value.clone())
            .or_else(|| self.deprecated_fn.clone())
    }

    /// The attribute's description, else the doc comment.
    pub fn description(&self) -> Option<String> {
        self.attrs
            .description
            .as_ref()
            .map(|d| d.value.clone())
            .or_else(|| self.docs.clone())
    }
}

/// The note of `#[deprecated]`, `#[deprecated = "..."]` or
/// `#[deprecated(note = "...")]`: empty when it has none. A malformed one
/// counts as one without a note; the compiler reports it.
fn deprecation_note(attrs: &[Attribute]) -> Option<String> {
    let attr = attrs.iter().find(|a| a.path().is_ident("deprecated"))?;
    let note = match &attr.meta {
        syn::Meta::NameValue(nv) => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        syn::Meta::List(_) => {
            let mut note = None;
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("note") {
                    note = Some(meta.value()?.parse::<syn::LitStr>()?.value());
                } else {
                    // `since = "..."`, or anything the compiler will judge.
                    let _ = meta.value()?.parse::<syn::Expr>()?;
                }
                Ok(())
            });
            note
        }
        syn::Meta::Path(_) => None,
    };
    Some(note.unwrap_or_default().trim().to_owned())
}

/// `concat!` of every doc line, when some line is not a string literal
/// (`#[doc = include_str!("usage.md")]`); `None` when all are literals.
fn doc_expression(attrs: &[Attribute]) -> Option<proc_macro2::TokenStream> {
    let values: Vec<&syn::Expr> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => Some(&nv.value),
            _ => None,
        })
        .collect();
    let literal = |e: &syn::Expr| {
        matches!(
            e,
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(_),
                ..
            })
        )
    };
    if values.iter().all(|e| literal(e)) {
        return None;
    }
    let parts = values.iter().map(|e| match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => {
            let line = s.value();
            let line = line.strip_prefix(' ').unwrap_or(&line).to_owned();
            quote::quote!(#line, "\n")
        }
        other => quote::quote!(#other, "\n"),
    });
    Some(quote::quote!(::core::concat!(#(#parts),*)))
}

/// Remove `#[doc]` and `#[arg]` from a parameter (the compiler rejects them
/// there) and read them; refuse `#[serde]` and `#[schemars]` there.
fn take_param_attrs(
    attrs: &mut Vec<Attribute>,
    errors: &mut Errors,
) -> (Option<String>, ArgAttrs, Vec<proc_macro2::Span>) {
    let docs = doc_text(attrs);
    let mut arg_attrs = ArgAttrs::default();
    let mut spans = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("arg")) {
        spans.push(attr_span(attr));
        let parsed = match &attr.meta {
            syn::Meta::List(list) => {
                (|input: syn::parse::ParseStream| parse_arg_attrs(input, &mut arg_attrs, errors))
                    .parse2(list.tokens.clone())
            }
            _ => Err(syn::Error::new_spanned(
                attr,
                "write `#[arg(key = value, ...)]`",
            )),
        };
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    for attr in attrs.iter().filter(|a| crate::foreign::is_foreign(a)) {
        crate::foreign::refuse(attr, errors);
    }
    // Refused above with what to write instead; left in, the compiler would
    // add a "cannot find attribute" of its own.
    attrs.retain(|a| {
        !a.path().is_ident("doc") && !a.path().is_ident("arg") && !crate::foreign::is_foreign(a)
    });
    (docs, arg_attrs, spans)
}

fn attr_span(attr: &Attribute) -> proc_macro2::Span {
    attr.path()
        .segments
        .first()
        .map_or_else(proc_macro2::Span::call_site, |s| s.ident.span())
}

/// Join `///` lines: strip the one space rustdoc strips, keep paragraphs.
pub fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        // `"".lines()` is empty, but a bare `///` is a paragraph break.
        .flat_map(|text| text.split('\n').map(str::to_owned).collect::<Vec<_>>())
        .map(|line| line.strip_prefix(' ').map(str::to_owned).unwrap_or(line))
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// `Result<T, E>` -> (T, E); `Result<T>` (an alias such as `anyhow::Result`) -> (T, none).
fn result_parts(ty: &Type) -> (Option<Box<Type>>, Option<Box<Type>>) {
    let Type::Path(path) = ty else {
        return (None, None);
    };
    let Some(last) = path.path.segments.last() else {
        return (None, None);
    };
    if last.ident != "Result" {
        return (None, None);
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return (None, None);
    };
    let mut types = args.args.iter().filter_map(|a| match a {
        syn::GenericArgument::Type(t) => Some(Box::new(t.clone())),
        _ => None,
    });
    (types.next(), types.next())
}
