//! A tool under another name, with some of its parameters hidden, renamed
//! or given a default: [`ArgTransform`], and the tool it makes.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::args::{ArgumentSchema, SchemaError, is_plain_arguments};
use crate::context::ToolContext;
use crate::error::{ArgumentError, ToolError};
use crate::output::ToolOutput;
use crate::tool::{Arguments, Tool, ToolSpec};

use super::ToolsetError;

/// What to change about one parameter of a tool, for the model's view of it
/// (after FastMCP's `ArgTransform`).
///
/// The tool it makes is a real [`Tool`] whose schema says what the model
/// may send: a hidden parameter is gone from `properties` and `required`,
/// a renamed one appears under its new name in both, and a new default is
/// shown as the parameter's `default`, which makes it optional. Calls are
/// cast and validated against that schema like any other; the tool then
/// puts the parameters back as the original tool takes them.
///
/// ```
/// use serde_json::json;
/// use toolsmith::toolset::ArgTransform;
///
/// // Hidden, and always this value: the model cannot set it.
/// let root = ArgTransform::fixed(json!("/srv/docs"));
/// // Shown under another name, with a default and new words.
/// let path = ArgTransform::new()
///     .rename("file")
///     .default(json!("README.md"))
///     .describe("The document to read, relative to the docs folder.");
/// # let _ = (root, path);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArgTransform {
    pub(super) rename: Option<String>,
    pub(super) description: Option<String>,
    pub(super) default: Option<Value>,
    pub(super) hide: bool,
}

impl ArgTransform {
    /// Nothing changed yet.
    pub fn new() -> Self {
        <Self as Default>::default()
    }

    /// Hidden from the model and always `value`: the tool receives `value`,
    /// and a call that sets the parameter is refused as naming an unknown
    /// parameter.
    pub fn fixed(value: Value) -> Self {
        Self::new().default(value).hide()
    }

    /// Show the parameter under `name` (in `properties` and `required`).
    pub fn rename(mut self, name: impl Into<String>) -> Self {
        self.rename = Some(name.into());
        self
    }

    /// Describe the parameter in these words instead of its own.
    pub fn describe(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// The value the tool receives when the model leaves the parameter out;
    /// the parameter becomes optional and its schema shows the default.
    /// With [`hide`](Self::hide), the value it always receives.
    pub fn default(mut self, value: Value) -> Self {
        self.default = Some(value);
        self
    }

    /// Take the parameter out of the model's view. A required parameter
    /// needs a [`default`](Self::default) to be hidden: the value the tool
    /// then always receives. An optional one without a default is simply
    /// never sent.
    pub fn hide(mut self) -> Self {
        self.hide = true;
        self
    }
}

/// A tool on its way to being transformed: the original, the spec the
/// model will see, and how to turn the model's arguments back into the
/// original's.
#[derive(Clone)]
pub(super) struct Plan {
    pub(super) base: Arc<dyn Tool>,
    pub(super) spec: ToolSpec,
    /// Parameters shown under another name: (shown name, original name).
    renamed: Vec<(String, String)>,
    /// Hidden parameters given a value, by original name.
    fixed: Map<String, Value>,
    /// Hidden parameters never sent, by original name.
    dropped: Vec<String>,
    /// Defaults to fill in when the model leaves a parameter out, by shown name.
    defaults: Vec<(String, Value)>,
}

impl Plan {
    pub(super) fn new(base: Arc<dyn Tool>) -> Self {
        let spec = base.spec().clone();
        Self {
            base,
            spec,
            renamed: Vec::new(),
            fixed: Map::new(),
            dropped: Vec::new(),
            defaults: Vec::new(),
        }
    }

    pub(super) fn name(&self) -> &str {
        &self.spec.name
    }

    /// Whether the model's view has a parameter called `name`.
    pub(super) fn has_parameter(&self, name: &str) -> bool {
        properties(&self.spec.input_schema).is_some_and(|p| p.contains_key(name))
    }

    /// Whether the model's view differs from the original: in anything it
    /// is shown (the whole spec, so a parameter's new description counts
    /// as much as a new name) or in what a call is turned into.
    fn is_transformed(&self) -> bool {
        self.spec != *self.base.spec()
            || !self.renamed.is_empty()
            || !self.fixed.is_empty()
            || !self.dropped.is_empty()
            || !self.defaults.is_empty()
    }

    /// Apply `transform` to the parameter the model now sees as `param`.
    pub(super) fn transform(
        &mut self,
        param: &str,
        transform: &ArgTransform,
    ) -> Result<(), ToolsetError> {
        let tool = self.spec.name.to_string();
        let unknown = || ToolsetError::UnknownParameter {
            tool: tool.clone(),
            parameter: param.to_owned(),
        };
        let required = is_required(&self.spec.input_schema, param);
        let schema = properties_mut(&mut self.spec.input_schema).ok_or_else(unknown)?;
        if !schema.contains_key(param) {
            return Err(unknown());
        }
        let original = original_of(&self.renamed, param);
        if transform.hide {
            // A default given earlier is the value it keeps.
            let value = transform.default.clone().or_else(|| {
                self.defaults
                    .iter()
                    .find(|(shown, _)| shown == param)
                    .map(|(_, value)| value.clone())
            });
            if required && value.is_none() {
                return Err(ToolsetError::HiddenWithoutValue {
                    tool,
                    parameter: param.to_owned(),
                });
            }
            schema.shift_remove(param);
            remove_required(&mut self.spec.input_schema, param);
            self.renamed.retain(|(shown, _)| shown != param);
            self.defaults.retain(|(shown, _)| shown != param);
            match value {
                Some(value) => {
                    self.fixed.insert(original, value);
                }
                None => self.dropped.push(original),
            }
            for example in &mut self.spec.input_examples {
                if let Value::Object(map) = example {
                    map.shift_remove(param);
                }
            }
            return Ok(());
        }
        if let Some(Value::Object(property)) = schema.get_mut(param) {
            if let Some(text) = &transform.description {
                property.insert("description".into(), Value::String(text.clone()));
            }
            if let Some(value) = &transform.default {
                property.insert("default".into(), value.clone());
            }
        } else if transform.description.is_some() || transform.default.is_some() {
            // `true` or `{}`-like schemas as a bare boolean: give them a body.
            let mut property = Map::new();
            if let Some(text) = &transform.description {
                property.insert("description".into(), Value::String(text.clone()));
            }
            if let Some(value) = &transform.default {
                property.insert("default".into(), value.clone());
            }
            schema.insert(param.to_owned(), Value::Object(property));
        }
        if let Some(value) = &transform.default {
            remove_required(&mut self.spec.input_schema, param);
            self.defaults.retain(|(shown, _)| shown != param);
            self.defaults.push((param.to_owned(), value.clone()));
        }
        if let Some(new) = &transform.rename {
            self.rename_parameter(param, new, &original)?;
        }
        Ok(())
    }

    fn rename_parameter(
        &mut self,
        param: &str,
        new: &str,
        original: &str,
    ) -> Result<(), ToolsetError> {
        if new == param {
            return Ok(());
        }
        let tool = self.spec.name.to_string();
        if new.is_empty() || self.has_parameter(new) {
            return Err(ToolsetError::ParameterClash {
                tool,
                parameter: new.to_owned(),
            });
        }
        let Some(schema) = properties_mut(&mut self.spec.input_schema) else {
            return Ok(());
        };
        let taken = std::mem::take(schema);
        *schema = taken
            .into_iter()
            .map(|(key, value)| {
                if key == param {
                    (new.to_owned(), value)
                } else {
                    (key, value)
                }
            })
            .collect();
        if let Some(Value::Array(required)) = self.spec.input_schema.get_mut("required") {
            for name in required.iter_mut() {
                if name.as_str() == Some(param) {
                    *name = Value::String(new.to_owned());
                }
            }
        }
        for example in &mut self.spec.input_examples {
            if let Value::Object(map) = example
                && let Some(value) = map.shift_remove(param)
            {
                map.insert(new.to_owned(), value);
            }
        }
        for (shown, _) in &mut self.defaults {
            if shown == param {
                *shown = new.to_owned();
            }
        }
        self.renamed.retain(|(shown, _)| shown != param);
        if new != original {
            self.renamed.push((new.to_owned(), original.to_owned()));
        }
        Ok(())
    }

    /// The tool the model will call: the original itself when nothing
    /// about it changed.
    pub(super) fn build(self) -> Result<Arc<dyn Tool>, ToolsetError> {
        if !self.is_transformed() {
            return Ok(self.base);
        }
        let tool = self.spec.name.to_string();
        if !crate::registry::is_valid_tool_name(&tool) {
            return Err(ToolsetError::InvalidName(tool));
        }
        let invalid = |reason: String| ToolsetError::InvalidValue {
            tool: tool.clone(),
            reason,
        };
        let schema =
            ArgumentSchema::compile(&self.spec.input_schema).map_err(|e| invalid(e.to_string()))?;
        let original = self
            .base
            .argument_schema()
            .map_err(|e| invalid(e.to_string()))?;
        // The values the host chose must be ones the original takes: cast
        // once here, as a model's would be, and checked.
        let mut fixed = Value::Object(self.fixed);
        check_values(&original, &mut fixed).map_err(&invalid)?;
        let Value::Object(fixed) = fixed else {
            unreachable!("an object stays an object")
        };
        let mut defaults = Vec::with_capacity(self.defaults.len());
        for (shown, value) in self.defaults {
            let mut one = Value::Object(Map::from_iter([(
                original_of(&self.renamed, &shown),
                value,
            )]));
            check_values(&original, &mut one).map_err(&invalid)?;
            let value = one
                .as_object_mut()
                .and_then(|m| m.values_mut().next())
                .map(std::mem::take)
                .unwrap_or_default();
            defaults.push((shown, value));
        }
        let shown: Vec<&str> = properties(&self.spec.input_schema)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let forbidden: Vec<String> = fixed
            .keys()
            .chain(&self.dropped)
            .chain(self.renamed.iter().map(|(_, original)| original))
            .filter(|name| !shown.contains(&name.as_str()))
            .cloned()
            .collect();
        Ok(Arc::new(TransformedTool {
            base_takes_arguments: original.has_parameter("arguments"),
            base: self.base,
            spec: self.spec,
            schema,
            renamed: self.renamed,
            fixed,
            defaults,
            forbidden,
        }))
    }
}

fn original_of(renamed: &[(String, String)], shown: &str) -> String {
    renamed
        .iter()
        .find(|(s, _)| s == shown)
        .map_or_else(|| shown.to_owned(), |(_, original)| original.clone())
}

/// Cast `values` (some of a tool's parameters) against the tool's schema
/// and report what is wrong with them, leaving out what is missing.
fn check_values(schema: &ArgumentSchema, values: &mut Value) -> Result<(), String> {
    schema.cast(values);
    let Err(errors) = schema.validate(values) else {
        return Ok(());
    };
    let names: Vec<String> = values
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let ours = |error: &ArgumentError| {
        names.iter().any(|name| {
            error.path == *name
                || error.path.starts_with(&format!("{name}."))
                || error.path.starts_with(&format!("{name}["))
        })
    };
    let wrong: Vec<String> = errors
        .iter()
        .filter(|e| ours(e))
        .map(ToString::to_string)
        .collect();
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("; "))
    }
}

fn properties(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties")?.as_object()
}

fn properties_mut(schema: &mut Value) -> Option<&mut Map<String, Value>> {
    schema.get_mut("properties")?.as_object_mut()
}

fn is_required(schema: &Value, name: &str) -> bool {
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)))
}

fn remove_required(schema: &mut Value, name: &str) {
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.retain(|n| n.as_str() != Some(name));
    }
    if schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
        && let Some(root) = schema.as_object_mut()
    {
        root.shift_remove("required");
    }
}

/// The tool a [`Plan`] makes: the original under the model's view of it.
struct TransformedTool {
    base: Arc<dyn Tool>,
    spec: ToolSpec,
    schema: ArgumentSchema,
    renamed: Vec<(String, String)>,
    fixed: Map<String, Value>,
    defaults: Vec<(String, Value)>,
    /// Names the model may not send: hidden parameters, and renamed ones
    /// under their old names.
    forbidden: Vec<String>,
    /// Whether the original has a parameter named `arguments`: if not, it
    /// (or the server behind a mounted tool) reads `{"arguments": {...}}`
    /// as the arguments inside.
    base_takes_arguments: bool,
}

#[async_trait::async_trait]
impl Tool for TransformedTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn argument_schema(&self) -> Result<ArgumentSchema, SchemaError> {
        Ok(self.schema.clone())
    }

    async fn call(&self, args: Arguments, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let mut args = match args.into_json() {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ToolError::InvalidArguments(format!(
                    "the arguments must be an object, not {other}"
                )));
            }
        };
        // A schema that lets unknown keys through (a server's, say) must
        // not let the model set what the host hid or renamed.
        if let Some(name) = self.forbidden.iter().find(|n| args.contains_key(*n)) {
            let allowed: Vec<&str> = properties(&self.spec.input_schema)
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            return Err(ToolError::InvalidArguments(format!(
                "{name} is not a parameter of this tool; its parameters are: {}",
                allowed.join(", ")
            )));
        }
        for (shown, value) in &self.defaults {
            if !args.contains_key(shown) {
                args.insert(shown.clone(), value.clone());
            }
        }
        let moved: Vec<(String, Value)> = self
            .renamed
            .iter()
            .filter_map(|(shown, original)| Some((original.clone(), args.remove(shown)?)))
            .collect();
        args.extend(moved);
        for (name, value) in &self.fixed {
            args.insert(name.clone(), value.clone());
        }
        // The check above holds for what the original receives only if it
        // reads these keys as they are: arguments still wrapped (the
        // registry takes one envelope off) would be unwrapped by the
        // original, past the check, so they are refused.
        let args = Value::Object(args);
        if !is_plain_arguments(&args, self.base_takes_arguments) {
            return Err(ToolError::InvalidArguments(
                "the arguments are wrapped in `arguments` more than once; send them as one object"
                    .into(),
            ));
        }
        self.base.call(Arguments::json(args), ctx).await
    }
}
