//! Errors in tool definitions: each names the file, the tool and the field.

use std::fmt;

/// One thing wrong in a definition of tools.
///
/// Displays as `tools.json: tool `deploy`: field `parameters.env.type`:
/// expected one of string, integer, number, boolean`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or plugin executable) the definition came from.
    pub file: String,
    /// The tool, when the problem is inside one.
    pub tool: Option<String>,
    /// The field, as a dotted path (`parameters.env.type`), when there is one.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl ConfigError {
    /// A problem in `file` as a whole.
    pub fn in_file(file: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            tool: None,
            field: None,
            message: message.into(),
        }
    }

    /// The same problem, inside `tool`.
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// The same problem, at `field`.
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file)?;
        if let Some(tool) = &self.tool {
            write!(f, "tool `{tool}`: ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "field `{field}`: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Every problem found in a definition of tools, so all can be fixed at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl ConfigErrors {
    /// The problems.
    pub fn errors(&self) -> &[ConfigError] {
        &self.0
    }
}

impl From<ConfigError> for ConfigErrors {
    fn from(error: ConfigError) -> Self {
        Self(vec![error])
    }
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}
