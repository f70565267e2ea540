//! Names: the generated type's name, tool-name rules, and near-miss hints.

/// `read_file` -> `ReadFileTool`.
pub fn tool_type_name(fn_name: &str) -> String {
    let mut out = String::new();
    for part in fn_name
        .trim_start_matches("r#")
        .split('_')
        .filter(|p| !p.is_empty())
    {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out.push_str("Tool");
    out
}

/// `#[allow(non_snake_case)]` for an item the macro names after a
/// parameter whose own name is not snake case, else nothing: a crate that
/// forbids the lint may write no `allow` of it, and its parameters are
/// snake case anyway.
pub fn allow_non_snake_case(param: &syn::Ident) -> proc_macro2::TokenStream {
    if param.to_string().chars().any(char::is_uppercase) {
        quote::quote!(#[allow(non_snake_case)])
    } else {
        proc_macro2::TokenStream::new()
    }
}

/// Names models accept everywhere: `[A-Za-z0-9_-]{1,64}`. The same rule as
/// `toolsmith::is_valid_tool_name`, which this crate cannot depend on.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A type as a person writes it: `Vec<String>`, not `Vec < String >`.
pub fn type_text(ty: &syn::Type) -> String {
    tokens_text(quote::quote!(#ty))
}

/// Tokens as a person writes them: `Mode::Fast`, not `Mode :: Fast`.
pub fn tokens_text(tokens: proc_macro2::TokenStream) -> String {
    let text = tokens.to_string();
    [
        (" :: ", "::"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        ("& ", "&"),
        ("( ", "("),
        (" )", ")"),
        ("[ ", "["),
        (" ]", "]"),
        (" ;", ";"),
    ]
    .iter()
    .fold(text, |text, (from, to)| text.replace(from, to))
}

/// The known word within two edits of `word`, if exactly one is that close.
pub fn closest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    let mut best: Option<(&str, usize)> = None;
    let mut tied = false;
    for candidate in known {
        let d = distance(word, candidate);
        match best {
            _ if d > 2 => {}
            Some((_, b)) if d == b => tied = true,
            Some((_, b)) if d > b => {}
            _ => {
                best = Some((candidate, d));
                tied = false;
            }
        }
    }
    best.filter(|_| !tied).map(|(c, _)| c)
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names() {
        assert_eq!(tool_type_name("read_file"), "ReadFileTool");
        assert_eq!(tool_type_name("r#type"), "TypeTool");
        assert_eq!(tool_type_name("echo"), "EchoTool");
        assert_eq!(tool_type_name("__odd__name"), "OddNameTool");
    }

    #[test]
    fn closest_keys() {
        assert_eq!(
            closest("readonly", &["read_only", "name"]),
            Some("read_only")
        );
        assert_eq!(closest("nmae", &["name", "rename"]), Some("name"));
        assert_eq!(closest("zzzzzz", &["name"]), None);
    }

    #[test]
    fn types_read_as_written() {
        let ty: syn::Type = syn::parse_quote!(std::collections::HashMap<String, Vec<(u32, u32)>>);
        assert_eq!(
            type_text(&ty),
            "std::collections::HashMap<String, Vec<(u32, u32)>>"
        );
        let ty: syn::Type = syn::parse_quote!(&'a [u8; 4]);
        assert_eq!(type_text(&ty), "&'a [u8; 4]");
    }

    #[test]
    fn tool_names() {
        assert!(is_valid_tool_name("read_file-2"));
        assert!(!is_valid_tool_name("read file"));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name(&"x".repeat(65)));
    }
}
