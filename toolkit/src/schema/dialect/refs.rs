//! Inline `$ref`s for providers that reject them, without looping on
//! recursive types.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::walk::map_subschemas;
use crate::json_size::json_size;

/// How many times a type may be expanded inside itself before the inliner
/// stops: `1` shows a recursive type's structure twice (the type and one
/// nested level), then puts a permissive placeholder where it recurs again.
const RECURSION_LIMIT: usize = 1;

/// `$ref`s expanded in one schema at most; a guard against schemas whose
/// shared definitions would multiply into millions of nodes when inlined.
const EXPANSION_BUDGET: usize = 2048;

/// Schema nesting at most, expanded references included.
const DEPTH_LIMIT: usize = 64;

/// Bytes of JSON that copies of referenced definitions may add to one
/// schema, all copies together. A count of expansions alone does not bound
/// them: a server's schema may refer 2,000 times to a definition of
/// megabytes, which would take gigabytes once copied.
const COPY_BUDGET: usize = 16 << 20;

/// What copying definitions has cost a rewrite so far, each definition's
/// size measured once: a rewrite copies a definition only while the
/// copies stay within [`COPY_BUDGET`].
#[derive(Default)]
pub(super) struct Copies {
    spent: std::cell::Cell<usize>,
    sizes: std::cell::RefCell<std::collections::HashMap<*const Value, usize>>,
}

impl Copies {
    /// Whether `target` may be copied once more; if so, the copy is counted.
    pub(super) fn allow(&self, target: &Value) -> bool {
        let size = *self
            .sizes
            .borrow_mut()
            .entry(std::ptr::from_ref(target))
            .or_insert_with(|| json_size(target));
        let spent = self.spent.get();
        if size > COPY_BUDGET.saturating_sub(spent) {
            return false;
        }
        self.spent.set(spent + size);
        true
    }
}

/// `schema` with every local `$ref` replaced by what it points to, and no
/// `$defs`/`definitions` left.
///
/// For providers that reject `$ref` (Gemini's OpenAPI subset, some
/// OpenAI-compatible servers). Keywords beside a `$ref` are kept and win over
/// the target's own: a field's `description` beats its type's.
///
/// Recursion is cut, never followed forever: a type appears inside itself at
/// most [`RECURSION_LIMIT`] times; where it would recur again the inliner
/// puts a permissive placeholder, an object (or the target's own `type`)
/// whose description says it repeats the structure above. The same
/// placeholder stands in when a pathological schema would grow past a fixed
/// budget of expansions, or of bytes copied ([`COPY_BUDGET`]). References that do not start with `#` or do not resolve are left
/// as they are. The result is deterministic: the same input gives the same
/// bytes.
pub(super) fn inline_refs(schema: &Value) -> Value {
    let mut inliner = Inliner {
        root: schema,
        expanding: Vec::new(),
        expansions: 0,
        copies: Copies::default(),
    };
    inliner.schema(schema, 0)
}

struct Inliner<'a> {
    root: &'a Value,
    /// The references being expanded, outermost first.
    expanding: Vec<&'a str>,
    expansions: usize,
    copies: Copies,
}

impl<'a> Inliner<'a> {
    fn schema(&mut self, schema: &'a Value, depth: usize) -> Value {
        let Value::Object(map) = schema else {
            return schema.clone();
        };
        if let Some(Value::String(reference)) = map.get("$ref") {
            return self.reference(map, reference, depth);
        }
        Value::Object(self.keywords(map, depth))
    }

    /// The keywords of `map` with subschemas inlined and definitions dropped.
    fn keywords(&mut self, map: &'a Map<String, Value>, depth: usize) -> Map<String, Value> {
        let mut copy = map_subschemas(map, |keyword, sub| {
            if is_definitions(keyword) {
                Value::Null
            } else {
                self.schema(sub, depth + 1)
            }
        });
        copy.retain(|keyword, _| keyword != "$ref" && !is_definitions(keyword));
        copy
    }

    fn reference(
        &mut self,
        site: &'a Map<String, Value>,
        reference: &'a str,
        depth: usize,
    ) -> Value {
        let Some(target) = resolve(self.root, reference) else {
            return Value::Object(site.clone());
        };
        let recurrences = self.expanding.iter().filter(|r| **r == reference).count();
        if recurrences > RECURSION_LIMIT
            || self.expansions >= EXPANSION_BUDGET
            || depth >= DEPTH_LIMIT
            || !self.copies.allow(target)
        {
            return placeholder(site, target, reference);
        }
        self.expansions += 1;
        self.expanding.push(reference);
        let expanded = self.schema(target, depth + 1);
        self.expanding.pop();
        let mut inlined = match expanded {
            Value::Object(map) => map,
            Value::Bool(false) => Map::from_iter([("not".to_owned(), json!({}))]),
            _ => Map::new(),
        };
        inlined.retain(|keyword, _| !is_definitions(keyword));
        for (keyword, value) in self.keywords(site, depth) {
            inlined.insert(keyword, value);
        }
        Value::Object(inlined)
    }
}

fn is_definitions(keyword: &str) -> bool {
    keyword == "$defs" || keyword == "definitions"
}

/// What stands where a recursive type would be expanded once too often.
fn placeholder(site: &Map<String, Value>, target: &Value, reference: &str) -> Value {
    let name = reference
        .rsplit_once('/')
        .map(|(_, last)| last)
        .filter(|last| !last.is_empty())
        .unwrap_or("schema");
    let description = match description_of(Some(site)).or(description_of(target.as_object())) {
        Some(text) => format!("{text} (recursive {name}; structure as above)"),
        None => format!("{name} (recursive; structure as above)"),
    };
    let kind = target
        .get("type")
        .cloned()
        .unwrap_or_else(|| Value::String("object".into()));
    json!({"type": kind, "description": description})
}

fn description_of(map: Option<&Map<String, Value>>) -> Option<&str> {
    map?.get("description")?
        .as_str()
        .map(str::trim)
        .filter(|text| !text.is_empty())
}

/// The schema a local reference (`#`, `#/$defs/Name`, `#/definitions/Name`,
/// any JSON pointer) points to in `root`.
pub(super) fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = percent_decode(reference.strip_prefix('#')?)?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(&pointer)
}

/// A URI fragment with `%XX` escapes decoded; `None` when they are malformed.
fn percent_decode(fragment: &str) -> Option<Cow<'_, str>> {
    if !fragment.contains('%') {
        return Some(Cow::Borrowed(fragment));
    }
    let bytes = fragment.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = fragment.get(i + 1..i + 3)?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(decoded).ok().map(Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> Value {
        json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Tree", "description": "The outline."}},
            "$defs": {"Tree": {
                "type": "object",
                "description": "A node.",
                "properties": {
                    "label": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
                },
            }},
        })
    }

    #[test]
    fn a_recursive_type_is_expanded_twice_then_cut() {
        let inlined = inline_refs(&tree());
        assert!(inlined.get("$defs").is_none());
        let first = &inlined["properties"]["tree"];
        assert_eq!(first["description"], json!("The outline."));
        let second = &first["properties"]["children"]["items"];
        assert_eq!(second["description"], json!("A node."));
        assert_eq!(second["properties"]["label"], json!({"type": "string"}));
        assert_eq!(
            second["properties"]["children"]["items"],
            json!({"type": "object", "description": "A node. (recursive Tree; structure as above)"})
        );
        assert!(!inlined.to_string().contains("$ref"));
    }

    #[test]
    fn a_cut_without_a_description_names_the_type() {
        let schema = json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Tree"}},
            "$defs": {"Tree": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
            }},
        });
        let inlined = inline_refs(&schema);
        assert!(inlined.get("$defs").is_none());
        let once = &inlined["properties"]["tree"]["properties"]["children"]["items"];
        assert_eq!(once["type"], "object");
        let cut = &once["properties"]["children"]["items"];
        assert_eq!(cut["description"], "Tree (recursive; structure as above)");
    }

    #[test]
    fn mutual_and_root_recursion_end() {
        let mutual = json!({
            "$ref": "#/$defs/A",
            "$defs": {
                "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
                "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},
            },
        });
        let inlined = inline_refs(&mutual);
        let cut =
            &inlined["properties"]["b"]["properties"]["a"]["properties"]["b"]["properties"]["a"];
        assert_eq!(
            cut["description"],
            json!("A (recursive; structure as above)")
        );

        let root = json!({"type": "object", "properties": {"next": {"$ref": "#"}}});
        let inlined = inline_refs(&root);
        assert_eq!(
            inlined["properties"]["next"]["properties"]["next"]["properties"]["next"],
            json!({"type": "object", "description": "schema (recursive; structure as above)"})
        );
    }

    #[test]
    fn shared_definitions_cannot_multiply_without_bound() {
        // Each level refers to the next twice: 2^40 copies if inlined naively.
        let mut defs = Map::new();
        for level in 0..40 {
            let next = json!({"$ref": format!("#/$defs/L{}", level + 1)});
            defs.insert(
                format!("L{level}"),
                json!({"type": "object", "properties": {"a": next, "b": next}}),
            );
        }
        defs.insert("L40".into(), json!({"type": "string"}));
        let schema = json!({"$ref": "#/$defs/L0", "$defs": defs});
        let inlined = inline_refs(&schema);
        assert!(inlined.to_string().len() < 1_000_000);
        assert!(!inlined.to_string().contains("$ref"));
    }

    #[test]
    fn unresolved_and_external_references_stay() {
        let schema = json!({"properties": {
            "a": {"$ref": "#/$defs/Missing"},
            "b": {"$ref": "https://example.com/schema"},
        }});
        assert_eq!(inline_refs(&schema), schema);
    }

    #[test]
    fn escaped_pointers_resolve() {
        let schema = json!({
            "properties": {"a": {"$ref": "#/$defs/a%20b~1c"}},
            "$defs": {"a b/c": {"type": "boolean"}},
        });
        assert_eq!(
            inline_refs(&schema),
            json!({"properties": {"a": {"type": "boolean"}}})
        );
    }

    #[test]
    fn inlining_is_deterministic() {
        let once = serde_json::to_string(&inline_refs(&tree())).unwrap();
        let twice = serde_json::to_string(&inline_refs(&tree())).unwrap();
        assert_eq!(once, twice);
    }
}
