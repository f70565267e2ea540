//! A tool's argument schema assembled from its parameters at run time.
//!
//! `#[tool]` used to declare a struct of the parameters and derive
//! `JsonSchema` for it: for every tool, a derive to expand and a
//! `json_schema` body of its own to type-check, borrow-check and compile,
//! and again after every edit that moves the tool in its file. Now a tool
//! lists its parameters as [`Property`] values, and one function,
//! [`object_schema`], compiled once here, builds from them the schema
//! schemars' derive built, key for key and in the same order (the
//! derive's steps are named at each one below; a test compares the two
//! for every attribute `#[tool]` passes on).
//!
//! Tools whose arguments serde's derive must read (a flattened parameter,
//! more than the core reads as a tuple, one struct of the user's) keep the
//! derive.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;

/// One parameter of a tool, as its schema needs it: what `#[tool]` turned
/// into `#[schemars]` and `#[serde]` attributes on a derived struct's
/// field.
pub struct Property {
    /// The name the model sends (serde's: a `rename`, else the parameter's).
    pub name: &'static str,
    /// The parameter's schema, from its type.
    pub schema: fn(&mut SchemaGenerator) -> Schema,
    /// Whether the type is an `Option` (then the parameter is not required).
    /// Asked as the derive asks it, through `JsonSchema`'s hidden
    /// `_schemars_private_is_option` (as the default's JSON is made with
    /// schemars' hidden `_schemars_maybe_to_value!`): the same answer for
    /// every type, `Option`s behind aliases and wrappers included. Should a
    /// new schemars rename them, this stops compiling; it cannot drift.
    pub is_option: fn() -> bool,
    /// `description`.
    pub description: Option<&'static str>,
    /// `minLength` for text, `minItems` for a list.
    pub min_length: Option<u64>,
    /// `maxLength` for text, `maxItems` for a list.
    pub max_length: Option<u64>,
    /// `minimum`, as the literal the user wrote.
    pub minimum: Option<Value>,
    /// `maximum`, as the literal the user wrote.
    pub maximum: Option<Value>,
    /// `pattern`, for text.
    pub pattern: Option<&'static str>,
    /// The parameter's default, as its JSON when its type serializes (the
    /// parameter is then not required, whatever its type).
    pub default: Option<fn() -> Option<Value>>,
    /// `x-mcp-header`: the HTTP header an MCP client mirrors the value in.
    pub header: Option<&'static str>,
    /// `one_of`: the allowed values, as a JSON list.
    pub one_of: Option<&'static str>,
}

impl Property {
    /// A parameter named `name` of type `T`, with nothing more said of it.
    pub fn of<T: JsonSchema>(name: &'static str) -> Self {
        Self {
            name,
            schema: subschema::<T>,
            is_option: T::_schemars_private_is_option,
            description: None,
            min_length: None,
            max_length: None,
            minimum: None,
            maximum: None,
            pattern: None,
            default: None,
            header: None,
            one_of: None,
        }
    }
}

fn subschema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// The schema of an object of `properties`, unknown keys refused, as
/// schemars' derive makes it for a struct of them with
/// `deny_unknown_fields`.
pub fn object_schema(generator: &mut SchemaGenerator, properties: &[Property]) -> Schema {
    let mut object = serde_json::Map::new();
    object.insert("type".into(), "object".into());
    object.insert("additionalProperties".into(), false.into());
    let mut schema = Schema::from(object);
    for property in properties {
        let reads = generator.contract().is_deserialize();
        let is_optional = reads && (property.default.is_some() || (property.is_option)());
        let name = property.name;
        let sub_schema = property_schema(generator, property);
        insert_property(&mut schema, name, is_optional, sub_schema);
    }
    schema
}

/// A parameter's own schema, its attributes applied in the derive's order:
/// metadata, validation (lengths, range, pattern), the default, then
/// extensions and transforms.
fn property_schema(generator: &mut SchemaGenerator, property: &Property) -> Schema {
    let mut schema = (property.schema)(generator);
    if let Some(description) = property.description.filter(|d| !d.is_empty()) {
        schema.insert("description".into(), description.into());
    }
    let limits = [
        ("string", "minLength", property.min_length.map(Value::from)),
        ("string", "maxLength", property.max_length.map(Value::from)),
        ("array", "minItems", property.min_length.map(Value::from)),
        ("array", "maxItems", property.max_length.map(Value::from)),
        ("number", "minimum", property.minimum.clone()),
        ("number", "maximum", property.maximum.clone()),
        ("string", "pattern", property.pattern.map(Value::from)),
    ];
    for (kind, key, value) in limits {
        if let Some(value) = value {
            insert_validation(&mut schema, kind, key, value);
        }
    }
    if let Some(value) = property.default.and_then(|default| default()) {
        schema.insert("default".into(), value);
    }
    if let Some(header) = property.header {
        schema.insert("x-mcp-header".into(), header.into());
    }
    if let Some(values) = property.one_of {
        schemars::transform::Transform::transform(
            &mut crate::__private_0_1::OneOf(values),
            &mut schema,
        );
    }
    schema
}

/// A validation keyword, where the schema's type is the one it applies to
/// (a number's for an integer too).
fn insert_validation(schema: &mut Schema, kind: &str, key: &str, value: Value) {
    if has_type(schema, kind) || (kind == "number" && has_type(schema, "integer")) {
        schema.insert(key.into(), value);
    }
}

/// Whether `schema`'s `type` is `kind` or lists it.
fn has_type(schema: &Schema, kind: &str) -> bool {
    match schema.get("type") {
        Some(Value::Array(kinds)) => kinds.iter().any(|k| k.as_str() == Some(kind)),
        Some(Value::String(k)) => k == kind,
        _ => false,
    }
}

fn insert_property(schema: &mut Schema, name: &str, is_optional: bool, sub_schema: Schema) {
    let object = schema.ensure_object();
    if let Some(properties) = object
        .entry("properties")
        .or_insert(Value::Object(serde_json::Map::new()))
        .as_object_mut()
    {
        properties.insert(name.to_owned(), sub_schema.into());
    }
    if !is_optional
        && let Some(required) = object
            .entry("required")
            .or_insert(Value::Array(Vec::new()))
            .as_array_mut()
    {
        required.push(name.into());
    }
}
