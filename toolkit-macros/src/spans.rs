//! Where the generated code says it is, so that an edit elsewhere in the
//! file does not make the compiler check every tool again.
//!
//! The compiler's incremental cache records a token's position relative to
//! the item it is in when the item's span contains it, and by line and
//! column otherwise. The tokens `quote!` makes are placed at the `#[tool]`
//! attribute, above the function, while the tokens taken from the function
//! (its parameter types, its name) are inside it: each generated item held
//! tokens outside its own span, so any edit that moved the tool in its file
//! (a line added to a tool above it) changed every generated item's record,
//! and the compiler checked, borrow-checked and compiled every tool again.
//!
//! [`relocate`] moves each token placed above the function to its first
//! token, and each closing brace and `;` placed there to the function's
//! body, so every generated item reaches from the start of the function to
//! the end of its body and contains every token inside it. Tokens keep
//! their name resolution (`located_at` changes the place, not the hygiene),
//! and tokens taken from the function keep their places, where errors about
//! them point.

use proc_macro2::{Group, Span, TokenStream, TokenTree};

/// The two places generated tokens are moved to.
#[derive(Clone, Copy)]
pub struct Anchors {
    /// The function's first token (its first attribute, or `pub`, or `fn`).
    start: Span,
    /// The function's body, from `{` to `}`.
    body: Span,
    /// Line and column of `start`, where the function begins.
    begins: (usize, usize),
}

impl Anchors {
    /// The anchors of the function `item` (as emitted), or `None` outside
    /// a compiler (the macro's own unit tests), where spans have no place.
    pub fn of(item: &syn::ItemFn) -> Option<Self> {
        if !proc_macro::is_available() {
            return None;
        }
        let start = quote::ToTokens::to_token_stream(item)
            .into_iter()
            .next()?
            .span();
        let body = item.block.brace_token.span.join();
        Some(Self {
            start,
            body,
            begins: position(start),
        })
    }
}

/// Line and column of the start of `span`.
fn position(span: Span) -> (usize, usize) {
    let span = span.unwrap();
    (span.line(), span.column())
}

/// `tokens` with every token placed above the function moved into it: to
/// the function's start, or, for groups and `;` (the ends of items), to its
/// body. Tokens inside the function stay where they are.
pub fn relocate(tokens: TokenStream, anchors: Option<Anchors>) -> TokenStream {
    let Some(anchors) = anchors else {
        return tokens;
    };
    relocate_in(tokens, &anchors)
}

fn relocate_in(tokens: TokenStream, anchors: &Anchors) -> TokenStream {
    tokens
        .into_iter()
        .map(|token| {
            let above = position(token.span()) < anchors.begins;
            match token {
                TokenTree::Group(group) => {
                    let inner = relocate_in(group.stream(), anchors);
                    let mut moved = Group::new(group.delimiter(), inner);
                    moved.set_span(if above {
                        group.span().located_at(anchors.body)
                    } else {
                        group.span()
                    });
                    TokenTree::Group(moved)
                }
                TokenTree::Punct(mut punct) if above => {
                    let to = if punct.as_char() == ';' {
                        anchors.body
                    } else {
                        anchors.start
                    };
                    punct.set_span(punct.span().located_at(to));
                    TokenTree::Punct(punct)
                }
                mut other => {
                    if above {
                        other.set_span(other.span().located_at(anchors.start));
                    }
                    other
                }
            }
        })
        .collect()
}

/// `tokens` with every token, wherever it was, placed at the function's
/// start: for code no error points into (the arguments struct, whose
/// derives see only types the checks have passed), so that the items
/// derives make of it, which begin and end where the derive was written,
/// contain all of it.
pub fn all_at_start(tokens: TokenStream, anchors: Option<Anchors>) -> TokenStream {
    let Some(anchors) = anchors else {
        return tokens;
    };
    tokens
        .into_iter()
        .map(|token| match token {
            TokenTree::Group(group) => {
                let inner = all_at_start(group.stream(), Some(anchors));
                let mut moved = Group::new(group.delimiter(), inner);
                moved.set_span(group.span().located_at(anchors.start));
                TokenTree::Group(moved)
            }
            mut other => {
                other.set_span(other.span().located_at(anchors.start));
                other
            }
        })
        .collect()
}
