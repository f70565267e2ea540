//! Steps 1, 3 and 4 of a call: read the payload, cast leniently, validate.
//!
//! All of it is driven by a tool's JSON Schema, compiled once into an
//! [`ArgumentSchema`] when the tool is registered. The registry runs steps 3
//! and 4 through [`ArgumentSchema::check`], which first asks, in one pass
//! and without allocating, whether the call is already valid with nothing to
//! cast (the usual case), and only otherwise casts and validates in full.
//!
//! # Why not a JSON Schema crate
//!
//! Validation is written here rather than delegated to a general JSON
//! Schema validator, for four reasons. The messages are for a model to act
//! on, with paths like `meta.flags[0]` and a did-you-mean for misspelled
//! parameters; a general validator reports JSON pointers and
//! specification terms that would need rewriting case by case. Casting and
//! validation walk the same compiled tree, so they can never disagree about
//! which branch of an `anyOf` a value belongs to. The one-pass fast check
//! needs to know the schema's structure, which a validator keeps private.
//! And tool schemas use a small, known subset of JSON Schema (what schemars
//! and MCP servers emit), which does not justify a large dependency tree.
//!
//! ```
//! use serde_json::json;
//! use toolsmith::args::ArgumentSchema;
//!
//! let schema = ArgumentSchema::compile(&json!({
//!     "type": "object",
//!     "properties": {"timeout": {"type": "integer", "maximum": 600}},
//!     "required": ["timeout"]
//! }))
//! .unwrap();
//!
//! let mut args = json!({"timeout": "60"});
//! let casts = schema.cast(&mut args);
//! assert_eq!(casts[0].to_string(), "timeout: string \"60\" -> integer");
//! assert!(schema.validate(&args).is_ok());
//!
//! let errors = schema.validate(&json!({"timeout": 900})).unwrap_err();
//! assert_eq!(errors[0].to_string(), "timeout must be <= 600");
//! ```

mod budget;
mod cast;
mod compile;
mod depth;
mod describe;
mod equal;
mod flat;
mod node;
mod number;
mod path;
mod payload;
mod quick;
mod repair;
mod sink;
mod validate;
mod walk;

use std::sync::Arc;

use serde_json::Value;

use crate::error::ArgumentError;
use node::{NodeId, Nodes};

pub(crate) use depth::discard;
pub(crate) use node::same_name;
pub(crate) use payload::{is_plain_arguments, normalize_payload, read_payload};

/// Whether `error` says that a check ran out of steps (a value too large or
/// too tangled to check through), not that the value is wrong: the caller
/// decides what an unchecked value is worth.
#[cfg(feature = "mcp")]
pub(crate) fn ran_out_of_steps(error: &ArgumentError) -> bool {
    matches!(&error.problem, crate::error::Problem::Other(text) if text == walk::TOO_COMPLEX)
}

/// A tool's input schema, compiled once for casting and validation.
///
/// Compiling resolves every `$ref`, compiles every `pattern` and reads the
/// bounds implied by numeric `format`s, so casting and validating a call
/// only compare values. Cloning is cheap: the compiled form is shared.
///
/// ```
/// use serde_json::json;
/// use toolsmith::args::ArgumentSchema;
///
/// let schema = ArgumentSchema::compile(&json!({
///     "type": "object",
///     "properties": {"path": {"type": "string"}},
///     "additionalProperties": false
/// }))
/// .unwrap();
/// assert!(schema.has_parameter("path"));
/// let errors = schema.validate(&json!({"pth": "a.txt"})).unwrap_err();
/// assert_eq!(
///     errors[0].to_string(),
///     "pth is not a parameter of this tool; did you mean 'path'?"
/// );
/// ```
#[derive(Debug, Clone)]
pub struct ArgumentSchema {
    nodes: Arc<Nodes>,
}

/// A schema the compiler cannot use (a `$ref` that points nowhere, a bad pattern).
///
/// ```
/// use serde_json::json;
/// use toolsmith::args::ArgumentSchema;
///
/// let err = ArgumentSchema::compile(&json!({"$ref": "#/$defs/Missing"})).unwrap_err();
/// assert_eq!(err.to_string(), "#: $ref \"#/$defs/Missing\" points to nothing in the schema");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SchemaError(pub String);

/// One lenient conversion applied to the arguments, for logging.
///
/// As JSON (under [`exec::shape::meta::CASTS`](crate::exec::shape::meta::CASTS)),
/// `{"path": …, "from": …, "to": …}`.
///
/// ```
/// use toolsmith::args::Cast;
///
/// let cast = Cast { path: "timeout".into(), from: "string \"60\"".into(), to: "integer".into() };
/// assert_eq!(cast.to_string(), "timeout: string \"60\" -> integer");
/// ```
///
/// A payload sent as text that was not valid JSON and was repaired gets
/// one cast per kind of repair, before the casts of its arguments: the
/// path is empty, `from` says what was repaired and where in the text, and
/// `to` is `repaired`.
///
/// ```
/// use toolsmith::args::Cast;
///
/// let repair = Cast {
///     path: String::new(),
///     from: "trailing comma at line 1, column 12".into(),
///     to: "repaired".into(),
/// };
/// assert_eq!(repair.to_string(), "trailing comma at line 1, column 12 -> repaired");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cast {
    /// Where, as `meta.flags[0]`; empty for a repair of the payload's text.
    pub path: String,
    /// What was sent, e.g. `string "60"`.
    pub from: String,
    /// What it became: a JSON type such as `integer`; `absent` for a `null`
    /// dropped from an optional parameter; `renamed` for a parameter name
    /// sent in another spelling; `repaired` for a repair of the payload's
    /// text (then the path is empty).
    pub to: std::borrow::Cow<'static, str>,
}

impl std::fmt::Display for Cast {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            return write!(f, "{} -> {}", self.from, self.to);
        }
        write!(f, "{}: {} -> {}", self.path, self.from, self.to)
    }
}

impl ArgumentSchema {
    /// Compile a tool's input schema.
    ///
    /// Supports `type` (with `"null"` and OpenAPI's `nullable`), `properties`,
    /// `required`, `additionalProperties`, `patternProperties`, `items`,
    /// `prefixItems`, `enum`, `const`, numeric bounds in both drafts'
    /// forms, `multipleOf`, lengths, counts, `uniqueItems`, `pattern`,
    /// `anyOf`/`oneOf`/`allOf`, local `$ref`s (recursive ones too), boolean
    /// schemas and the numeric `format`s schemars writes (`uint8`, `int64`,
    /// `float`, ...), whose ranges become bounds. Other keywords are ignored.
    ///
    /// # Errors
    ///
    /// A [`SchemaError`] for a `$ref` outside the schema or to nothing in it,
    /// a pattern the `regex` crate cannot compile, a subschema that is not an
    /// object or a boolean, or references that loop without reaching a value.
    pub fn compile(schema: &Value) -> Result<Self, SchemaError> {
        Ok(Self {
            nodes: Arc::new(compile::compile(schema)?),
        })
    }

    /// Whether `self` and `other` come from one compilation (one is a clone
    /// of the other), not just from equal schemas: how a caller sees that a
    /// kept schema is reused rather than compiled again.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::args::ArgumentSchema;
    ///
    /// let schema = json!({"type": "object"});
    /// let compiled = ArgumentSchema::compile(&schema).unwrap();
    /// assert!(compiled.same_compilation(&compiled.clone()));
    /// assert!(!compiled.same_compilation(&ArgumentSchema::compile(&schema).unwrap()));
    /// ```
    pub fn same_compilation(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.nodes, &other.nodes)
    }

    /// Whether the schema declares a top-level parameter with this name.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::args::ArgumentSchema;
    ///
    /// let schema = ArgumentSchema::compile(&json!({"properties": {"arguments": {}}})).unwrap();
    /// assert!(schema.has_parameter("arguments"));
    /// assert!(!schema.has_parameter("path"));
    /// ```
    pub fn has_parameter(&self, name: &str) -> bool {
        self.declares(self.nodes.root, name, 0)
    }

    /// Whether node `id` declares `name`, itself or through `allOf` (where
    /// a root `$ref` with siblings lands).
    fn declares(&self, id: NodeId, name: &str, depth: usize) -> bool {
        let node = self.nodes.get(id);
        node.object
            .as_ref()
            .is_some_and(|rules| rules.property(name).is_some())
            || (depth < node::MAX_DEPTH
                && node
                    .all_of
                    .iter()
                    .any(|&b| self.declares(b, name, depth + 1)))
    }

    /// Step 3: cast what can be cast, in place; never fails.
    ///
    /// Strings holding an integer, a number, a boolean word
    /// (`true`/`yes`/`1`, `false`/`no`/`0`) or a JSON object or array become
    /// that value where the schema wants that type and not a string;
    /// integral floats become integers where only integers are wanted. Every
    /// change is returned, in the order it was made.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::args::ArgumentSchema;
    ///
    /// let schema = ArgumentSchema::compile(&json!({
    ///     "properties": {"flags": {"type": "array", "items": {"type": "boolean"}}}
    /// }))
    /// .unwrap();
    /// let mut args = json!({"flags": "[\"yes\", false]"});
    /// let casts = schema.cast(&mut args);
    /// assert_eq!(args, json!({"flags": [true, false]}));
    /// assert_eq!(casts.len(), 2);
    /// ```
    ///
    /// Arguments nested more than 128 levels deep are left as they are,
    /// for [`validate`](Self::validate) to refuse.
    pub fn cast(&self, args: &mut Value) -> Vec<Cast> {
        self.cast_logging(args)
    }

    /// Step 4: every problem at once.
    ///
    /// # Errors
    ///
    /// Every [`ArgumentError`] found, each with its path, in schema order:
    /// properties as declared, then keys the schema does not declare.
    /// Arguments nested more than 128 levels deep get one error alone,
    /// found without recursing past that depth.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::args::ArgumentSchema;
    ///
    /// let schema = ArgumentSchema::compile(&json!({
    ///     "type": "object",
    ///     "properties": {
    ///         "path": {"type": "string"},
    ///         "meta": {"properties": {"flags": {"items": {"type": "string"}}}}
    ///     },
    ///     "required": ["path"]
    /// }))
    /// .unwrap();
    /// let errors = schema.validate(&json!({"meta": {"flags": [5]}})).unwrap_err();
    /// let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    /// assert!(text.contains(&"path is required".to_owned()));
    /// assert!(text.contains(&"meta.flags[0] should be string, got integer 5".to_owned()));
    /// ```
    pub fn validate(&self, args: &Value) -> Result<(), Vec<ArgumentError>> {
        // Measured first: deeper arguments are refused before anything,
        // here or in the tool's deserialization, recurses into them.
        if !depth::fits(args, 0) {
            return Err(vec![depth::too_deep()]);
        }
        validate::validate(&self.nodes, args)
    }

    /// Whether `args` are valid as they are: [`validate`](Self::validate)'s
    /// answer without the report, so it costs no memory whatever the
    /// arguments, and stops at the first problem.
    pub(crate) fn accepts(&self, args: &Value) -> bool {
        depth::fits(args, 0)
            && validate::is_valid(
                &self.nodes,
                self.nodes.root,
                args,
                0,
                &budget::Budget::new(),
            )
    }

    /// Steps 3 and 4 together: [`cast`](Self::cast), then
    /// [`validate`](Self::validate), with the same outcome, but fast for
    /// the usual call that is already valid and needs no cast.
    ///
    /// Such a call is recognised in one pass over the arguments, without
    /// allocating; any other goes through both steps in full.
    /// That pass also measures how deep the arguments nest, so arguments
    /// that pass it, or that [`validate`](Self::validate) accepts, are
    /// never more than 128 levels deep: safe to deserialize by recursion.
    ///
    /// # Errors
    ///
    /// What [`validate`](Self::validate) reports after casting; the casts
    /// made on the way are then of no use and are dropped.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::args::ArgumentSchema;
    ///
    /// let schema = ArgumentSchema::compile(&json!({
    ///     "type": "object",
    ///     "properties": {"days": {"type": "integer", "minimum": 1}},
    ///     "required": ["days"]
    /// }))
    /// .unwrap();
    /// assert!(schema.check(&mut json!({"days": 3})).unwrap().is_empty());
    ///
    /// let mut args = json!({"days": "3"});
    /// let casts = schema.check(&mut args).unwrap();
    /// assert_eq!(casts[0].to_string(), "days: string \"3\" -> integer");
    /// assert_eq!(args, json!({"days": 3}));
    ///
    /// let errors = schema.check(&mut json!({"days": "0"})).unwrap_err();
    /// assert_eq!(errors[0].to_string(), "days must be >= 1");
    /// ```
    pub fn check(&self, args: &mut Value) -> Result<Vec<Cast>, Vec<ArgumentError>> {
        self.check_logging(args)
    }

    /// [`check`](Self::check) for a caller that has no use for the list of
    /// casts: the arguments are cast and checked alike, and the casts are
    /// not written out.
    ///
    /// Inlined down to the clean check, which most calls stop at.
    #[inline]
    pub(crate) fn check_unlogged(&self, args: &mut Value) -> Result<(), Vec<ArgumentError>> {
        self.check_logging::<cast::Unwritten>(args).map(drop)
    }

    /// [`check`](Self::check), the casts going to a log of type `L`.
    #[inline]
    fn check_logging<L: cast::CastLog>(&self, args: &mut Value) -> Result<L, Vec<ArgumentError>> {
        if quick::is_clean(&self.nodes, args) {
            return Ok(L::default());
        }
        self.cast_then_check(args)
    }

    /// [`check_logging`](Self::check_logging) for arguments that are not
    /// clean as they came: cast, then checked again. A call of its own, so
    /// the clean check inlines without it.
    #[inline(never)]
    fn cast_then_check<L: cast::CastLog>(&self, args: &mut Value) -> Result<L, Vec<ArgumentError>> {
        let casts = self.cast_logging(args);
        // Cast arguments are mostly valid: the one pass that says so (and
        // measures their depth) costs less than measuring, then reporting.
        if quick::is_clean(&self.nodes, args) {
            return Ok(casts);
        }
        self.validate(args).map(|()| casts)
    }

    /// [`cast`](Self::cast), the casts going to a log of type `L`.
    fn cast_logging<L: cast::CastLog>(&self, args: &mut Value) -> L {
        if !depth::fits(args, 0) {
            return L::default();
        }
        cast::cast_logged(&self.nodes, args, &budget::Budget::new())
    }
}

#[cfg(test)]
mod schemars_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parameters_are_the_root_properties() {
        let schema = ArgumentSchema::compile(&json!({
            "type": "object",
            "properties": {"path": {"type": "object", "properties": {"inner": {}}}}
        }))
        .unwrap();
        assert!(schema.has_parameter("path"));
        assert!(!schema.has_parameter("inner"));
        assert!(!schema.has_parameter("Path"));
    }

    #[test]
    fn parameters_are_found_behind_a_root_ref() {
        let schema = ArgumentSchema::compile(&json!({
            "$ref": "#/$defs/Args",
            "description": "beside the ref",
            "$defs": {"Args": {"properties": {"arguments": {"type": "string"}}}}
        }))
        .unwrap();
        assert!(schema.has_parameter("arguments"));
        let with_siblings = ArgumentSchema::compile(&json!({
            "$ref": "#/$defs/Args",
            "required": ["arguments"],
            "$defs": {"Args": {"properties": {"arguments": {"type": "string"}}}}
        }))
        .unwrap();
        assert!(with_siblings.has_parameter("arguments"));
    }

    #[test]
    fn no_properties_no_parameters() {
        for schema in [json!(true), json!({}), json!({"type": "object"})] {
            assert!(!ArgumentSchema::compile(&schema).unwrap().has_parameter("x"));
        }
    }

    #[test]
    fn clones_share_the_compiled_schema() {
        let schema = ArgumentSchema::compile(&json!({"properties": {"a": {}}})).unwrap();
        let copy = schema.clone();
        assert!(Arc::ptr_eq(&schema.nodes, &copy.nodes));
    }
}
