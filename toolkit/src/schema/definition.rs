//! [`Definition`]: one tool's rendered definition, shared rather than copied,
//! and [`DefinitionCache`], where a tool keeps its renderings.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::render::{DefinitionFormat, render_definition};
use crate::tool::ToolSpec;

/// One tool's definition in one format, as [`render_definition`] renders it,
/// behind a reference count: cloning it copies a pointer, not the schema.
///
/// It reads as the JSON [`Value`] it holds (it dereferences to one, and
/// compares equal to one), and serializes to exactly that value's bytes.
/// Each tool's definition is rendered once per format and shared by every
/// list it is in ([`ToolRegistry::definitions`](crate::ToolRegistry::definitions)
/// and the lists made from it), so a list of definitions costs one pointer
/// per tool.
///
/// ```
/// use serde_json::json;
/// use toolsmith::{Definition, DefinitionFormat, ToolSpec};
/// use toolsmith::schema::render_definition;
///
/// let spec = ToolSpec::new("greet", "Greet someone.", json!({"type": "object"}));
/// let definition = Definition::from(render_definition(&spec, DefinitionFormat::Anthropic, false));
/// assert_eq!(definition["name"], "greet");
/// assert_eq!(
///     serde_json::to_string(&definition).unwrap(),
///     serde_json::to_string(&*definition).unwrap()
/// );
/// let value: serde_json::Value = definition.into_value();
/// assert_eq!(value["description"], "Greet someone.");
/// ```
#[derive(Clone, PartialEq)]
pub struct Definition(Arc<Value>);

impl Definition {
    /// The definition as a JSON value of its own (copied only if the
    /// definition is shared).
    pub fn into_value(self) -> Value {
        Arc::unwrap_or_clone(self.0)
    }

    /// Whether both are the same rendering, not only equal ones.
    pub fn ptr_eq(this: &Self, other: &Self) -> bool {
        Arc::ptr_eq(&this.0, &other.0)
    }
}

impl Deref for Definition {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.0
    }
}

impl AsRef<Value> for Definition {
    fn as_ref(&self) -> &Value {
        &self.0
    }
}

impl From<Value> for Definition {
    fn from(value: Value) -> Self {
        Self(Arc::new(value))
    }
}

impl From<Definition> for Value {
    fn from(definition: Definition) -> Self {
        definition.into_value()
    }
}

impl PartialEq<Value> for Definition {
    fn eq(&self, other: &Value) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<Definition> for Value {
    fn eq(&self, other: &Definition) -> bool {
        *self == *other.0
    }
}

impl Serialize for Definition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

// As the value, so a definition prints as the JSON it is.
impl fmt::Debug for Definition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Definition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

/// How many renderings one tool can have: every format, full and compact.
const RENDERINGS: usize = DefinitionFormat::ALL.len() * 2;

/// A tool's renderings, one per format and description length, each made on
/// first use and kept: a tool rendered once is never rendered again, by this
/// registry or another.
///
/// A cache belongs to one [`ToolSpec`]: the renderings are of the spec they
/// were first asked for with. `#[tool]` keeps one in a static beside its
/// spec (see [`Tool::definition_cache`](crate::Tool::definition_cache)); a
/// registry keeps one per tool that has none of its own.
pub struct DefinitionCache {
    renderings: [OnceLock<Definition>; RENDERINGS],
}

impl DefinitionCache {
    /// Nothing rendered yet.
    pub const fn new() -> Self {
        Self {
            renderings: [const { OnceLock::new() }; RENDERINGS],
        }
    }

    /// `spec`'s definition in `format` (`compact`: descriptions cut to their
    /// first sentence), rendered on first use.
    pub fn definition(
        &self,
        spec: &ToolSpec,
        format: DefinitionFormat,
        compact: bool,
    ) -> Definition {
        self.renderings[slot(format, compact)]
            .get_or_init(|| Definition::from(render_definition(spec, format, compact)))
            .clone()
    }
}

impl Default for DefinitionCache {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for DefinitionCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rendered = self.renderings.iter().filter(|r| r.get().is_some()).count();
        f.debug_struct("DefinitionCache")
            .field("rendered", &rendered)
            .finish()
    }
}

/// Where the rendering of `format` and `compact` is kept. A `match`, not a
/// cast, so a new format cannot be left without a place of its own.
fn slot(format: DefinitionFormat, compact: bool) -> usize {
    let position = match format {
        DefinitionFormat::OpenAi => 0,
        DefinitionFormat::OpenAiResponses => 1,
        DefinitionFormat::OpenAiStrict => 2,
        DefinitionFormat::Anthropic => 3,
        DefinitionFormat::Gemini => 4,
        DefinitionFormat::Mcp => 5,
    };
    position * 2 + usize::from(compact)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> ToolSpec {
        ToolSpec::new(
            "greet",
            "Greet someone. Politely.",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        )
    }

    #[test]
    fn every_rendering_has_a_place_of_its_own() {
        let mut slots: Vec<usize> = DefinitionFormat::ALL
            .iter()
            .flat_map(|&format| [slot(format, false), slot(format, true)])
            .collect();
        slots.sort_unstable();
        assert_eq!(slots, (0..RENDERINGS).collect::<Vec<_>>());
    }

    #[test]
    fn a_cached_rendering_is_the_rendering_and_is_made_once() {
        let cache = DefinitionCache::new();
        let spec = spec();
        for format in DefinitionFormat::ALL {
            for compact in [false, true] {
                let first = cache.definition(&spec, format, compact);
                assert_eq!(first, render_definition(&spec, format, compact));
                assert!(Definition::ptr_eq(
                    &first,
                    &cache.definition(&spec, format, compact)
                ));
            }
        }
        let full = cache.definition(&spec, DefinitionFormat::Gemini, false);
        let compact = cache.definition(&spec, DefinitionFormat::Gemini, true);
        assert_eq!(full["description"], "Greet someone. Politely.");
        assert_eq!(compact["description"], "Greet someone.");
    }

    #[test]
    fn a_definition_serializes_as_its_value() {
        let spec = spec();
        for format in DefinitionFormat::ALL {
            let value = render_definition(&spec, format, false);
            let definition = Definition::from(value.clone());
            assert_eq!(
                serde_json::to_vec(&definition).unwrap(),
                serde_json::to_vec(&value).unwrap()
            );
            assert_eq!(
                serde_json::to_string_pretty(std::slice::from_ref(&definition)).unwrap(),
                serde_json::to_string_pretty(std::slice::from_ref(&value)).unwrap()
            );
            assert_eq!(definition.to_string(), value.to_string());
            assert_eq!(format!("{definition:?}"), format!("{value:?}"));
            assert_eq!(definition.into_value(), value);
        }
    }
}
