//! `{{param}}` placeholders in command and action templates.

/// One piece of a template: literal text or a placeholder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Text kept as written.
    Text(String),
    /// `{{name}}`, replaced by the parameter's value.
    Param(String),
}

/// A template split into pieces once, when the definition is loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    pub pieces: Vec<Piece>,
}

impl Template {
    /// Split `text`; placeholders are `{{name}}` with optional spaces inside the braces.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            let Some(close) = rest[open + 2..].find("}}") else {
                return Err(format!(
                    "`{{{{` at byte {} is never closed with `}}}}`",
                    text.len() - rest.len() + open
                ));
            };
            let name = rest[open + 2..open + 2 + close].trim();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!(
                    "`{{{{{name}}}}}` is not a placeholder; write `{{{{param_name}}}}`"
                ));
            }
            if open > 0 {
                pieces.push(Piece::Text(rest[..open].to_owned()));
            }
            pieces.push(Piece::Param(name.to_owned()));
            rest = &rest[open + 2 + close + 2..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_owned()));
        }
        Ok(Self { pieces })
    }

    /// The names of the placeholders, in order of first use.
    pub(crate) fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for piece in &self.pieces {
            if let Piece::Param(name) = piece
                && !names.contains(&name.as_str())
            {
                names.push(name);
            }
        }
        names
    }

    /// The template with each placeholder replaced by `render(name)`.
    pub(crate) fn fill(&self, mut render: impl FnMut(&str) -> String) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Param(name) => out.push_str(&render(name)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_and_text_alternate() {
        let t = Template::parse("get {{ url }} and {{n}}x{{url}}").unwrap();
        assert_eq!(t.names(), ["url", "n"]);
        assert_eq!(t.fill(|name| name.to_uppercase()), "get URL and NxURL");
    }

    #[test]
    fn broken_placeholders_are_refused() {
        assert!(
            Template::parse("echo {{x")
                .unwrap_err()
                .contains("never closed")
        );
        assert!(
            Template::parse("echo {{a b}}")
                .unwrap_err()
                .contains("not a placeholder")
        );
        assert!(Template::parse("echo {{}}").is_err());
    }
}
