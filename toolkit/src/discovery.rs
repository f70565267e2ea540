//! Tools found at link time: every `#[tool]` submits a [`ToolRegistration`]
//! through `inventory`, and a [`ToolFilter`] decides which of them a registry takes.
//!
//! # The linker caveat
//!
//! `inventory` collects registrations with link-time constructors, and rustc
//! only links a dependency that some code in the program mentions. A library
//! crate that exists only to hold tools, and that the binary never names, is
//! left out whole, and its tools with it: a registry then finds none of them.
//! Tools defined in the binary itself, and in any crate the binary uses for
//! anything else, are always found. For a tools-only crate, name it once in
//! the binary with [`link_tools!`](crate::link_tools) (or use any of its
//! items). The integration tests check both sides of this.

use std::collections::HashSet;
use std::sync::Arc;

use crate::tool::{RiskLevel, Tool, ToolCategory, ToolSpec};

/// One `#[tool]` function, as submitted to `inventory` by the macro.
#[doc(hidden)]
pub struct ToolRegistration {
    /// The Rust module the tool was defined in.
    pub module_path: &'static str,
    /// Builds the tool.
    pub make: fn() -> Arc<dyn Tool>,
}

inventory::collect!(ToolRegistration);

/// Which linked `#[tool]` functions a registry takes.
///
/// Nothing dangerous is enabled just because it was linked: the default
/// filter takes every tool except high-risk ones (shell, hardware,
/// destructive), which join only when named or when
/// [`allow_high_risk`](Self::allow_high_risk) is set.
///
/// ```
/// use toolsmith::{ToolCategory, ToolFilter};
///
/// let only_reading = ToolFilter::default()
///     .categories([ToolCategory::FilesystemRead, ToolCategory::NetworkRead]);
/// let from_my_crate = ToolFilter::default().module_prefix("my_agent::tools");
/// let named = ToolFilter::default().names(["read_file", "exec"]);
/// # let _ = (only_reading, from_my_crate, named);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ToolFilter {
    names: Option<HashSet<String>>,
    excluded: HashSet<String>,
    categories: Option<HashSet<ToolCategory>>,
    module_prefixes: Vec<String>,
    tags: Option<HashSet<String>>,
    without_deprecated: bool,
    allow_high_risk: bool,
}

impl ToolFilter {
    /// Every linked tool, high-risk ones included.
    pub fn all() -> Self {
        Self::default().allow_high_risk()
    }

    /// Take only tools with these names (named tools are taken whatever their risk).
    pub fn names<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.names = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Leave out tools with these names.
    pub fn exclude<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.excluded.extend(names.into_iter().map(Into::into));
        self
    }

    /// Take only tools in these categories.
    pub fn categories(mut self, categories: impl IntoIterator<Item = ToolCategory>) -> Self {
        self.categories = Some(categories.into_iter().collect());
        self
    }

    /// Take only tools defined in modules whose path starts with `prefix`
    /// (`my_crate` or `my_crate::tools`); several prefixes add up.
    pub fn module_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.module_prefixes.push(prefix.into());
        self
    }

    /// Take only tools with at least one of these tags.
    pub fn tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = S>) -> Self {
        self.tags = Some(tags.into_iter().map(Into::into).collect());
        self
    }

    /// Leave out deprecated tools, even named ones.
    pub fn without_deprecated(mut self) -> Self {
        self.without_deprecated = true;
        self
    }

    /// Also take high-risk tools that were not named.
    pub fn allow_high_risk(mut self) -> Self {
        self.allow_high_risk = true;
        self
    }

    /// Whether a tool with this spec is taken.
    pub fn accepts(&self, spec: &ToolSpec) -> bool {
        let name = spec.name.as_ref();
        if self.excluded.contains(name) || (self.without_deprecated && spec.deprecated.is_some()) {
            return false;
        }
        let named = match &self.names {
            Some(names) if !names.contains(name) => return false,
            Some(_) => true,
            None => false,
        };
        if let Some(categories) = &self.categories
            && !spec.category.is_some_and(|c| categories.contains(&c))
        {
            return false;
        }
        if let Some(tags) = &self.tags
            && !spec.tags.iter().any(|tag| tags.contains(tag.as_ref()))
        {
            return false;
        }
        if !self.module_prefixes.is_empty()
            && !self
                .module_prefixes
                .iter()
                .any(|prefix| module_has_prefix(&spec.module_path, prefix))
        {
            return false;
        }
        named || self.allow_high_risk || spec.risk_level() < RiskLevel::High
    }
}

/// `a::b` has the prefixes `a` and `a::b`, but not `a::bc`.
fn module_has_prefix(module_path: &str, prefix: &str) -> bool {
    module_path
        .strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
}

/// Make sure the linker keeps a crate whose only job is to define tools.
///
/// ```
/// // In the binary: `toolsmith::link_tools!(my_tools_crate);`
/// toolsmith::link_tools!(toolsmith);
/// ```
#[macro_export]
macro_rules! link_tools {
    ($($krate:ident),+ $(,)?) => {
        $( #[allow(unused_imports)] use $krate as _; )+
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(name: &'static str, category: Option<ToolCategory>, module: &'static str) -> ToolSpec {
        let mut spec = ToolSpec::new(name, "d", json!({"type": "object"})).with_module_path(module);
        spec.category = category;
        spec
    }

    #[test]
    fn high_risk_tools_need_to_be_named_or_allowed() {
        let exec = spec("exec", Some(ToolCategory::Shell), "b::shell");
        assert!(!ToolFilter::default().accepts(&exec));
        assert!(ToolFilter::default().names(["exec"]).accepts(&exec));
        assert!(ToolFilter::all().accepts(&exec));
        assert!(ToolFilter::default().accepts(&spec(
            "read",
            Some(ToolCategory::FilesystemRead),
            "b"
        )));
    }

    #[test]
    fn names_categories_modules_and_exclusions_combine() {
        let read = spec("read", Some(ToolCategory::FilesystemRead), "app::tools::fs");
        assert!(
            ToolFilter::default()
                .module_prefix("app::tools")
                .accepts(&read)
        );
        assert!(
            !ToolFilter::default()
                .module_prefix("app::tool")
                .accepts(&read)
        );
        assert!(!ToolFilter::default().module_prefix("other").accepts(&read));
        assert!(
            ToolFilter::default()
                .categories([ToolCategory::FilesystemRead])
                .accepts(&read)
        );
        assert!(
            !ToolFilter::default()
                .categories([ToolCategory::Memory])
                .accepts(&read)
        );
        assert!(!ToolFilter::default().names(["write"]).accepts(&read));
        assert!(!ToolFilter::all().exclude(["read"]).accepts(&read));
        let uncategorised = spec("x", None, "app");
        assert!(
            !ToolFilter::default()
                .categories([ToolCategory::Memory])
                .accepts(&uncategorised)
        );
    }

    #[test]
    fn tags_take_tools_with_any_of_them_and_deprecated_ones_can_be_left_out() {
        let read = spec("read", Some(ToolCategory::FilesystemRead), "app")
            .with_tag("files")
            .with_tag("basic");
        let old = spec("old_read", Some(ToolCategory::FilesystemRead), "app")
            .with_tag("files")
            .with_deprecated("use `read`");
        assert!(ToolFilter::default().tags(["basic", "web"]).accepts(&read));
        assert!(!ToolFilter::default().tags(["web"]).accepts(&read));
        assert!(!ToolFilter::default().tags(["basic"]).accepts(&old));
        assert!(ToolFilter::default().accepts(&old));
        let current = ToolFilter::default().without_deprecated();
        assert!(current.accepts(&read));
        assert!(!current.accepts(&old));
        assert!(!current.names(["old_read"]).accepts(&old));
        assert!(
            !ToolFilter::default()
                .tags(["files"])
                .accepts(&spec("x", None, "app"))
        );
    }
}
