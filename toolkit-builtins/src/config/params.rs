//! Typed parameters declared in configuration, and the JSON Schema made
//! from them, so the registry casts and validates like for any tool.

use serde_json::{Map, Value, json};

use super::error::ConfigError;

/// The type of a declared parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    /// Text.
    String,
    /// A whole number.
    Integer,
    /// Any number.
    Number,
    /// `true` or `false`.
    Boolean,
}

impl ParamType {
    const NAMES: &'static str = "string, integer, number, boolean";

    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "string" => Self::String,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "boolean" => Self::Boolean,
            _ => return None,
        })
    }

    /// The JSON Schema type name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
        }
    }

    fn accepts(self, value: &Value) -> bool {
        match self {
            Self::String => value.is_string(),
            Self::Integer => value.is_i64() || value.is_u64(),
            Self::Number => value.is_number(),
            Self::Boolean => value.is_boolean(),
        }
    }
}

/// One declared parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Its name, as the model passes it and as placeholders name it.
    pub name: String,
    /// Its type.
    pub kind: ParamType,
    /// What it means, for the model.
    pub description: Option<String>,
    /// Whether the model must give it.
    pub required: bool,
    /// The value used when it is not given.
    pub default: Option<Value>,
    /// The only values allowed.
    pub allowed: Option<Vec<Value>>,
    /// Whether a value may begin with `-` where the command would read it as
    /// an option (`"allow_leading_dash": true`); off by default.
    pub allow_leading_dash: bool,
}

/// The declared parameters of a tool, in declaration order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Params(pub Vec<Param>);

/// Where a definition is being read, for error messages.
pub(crate) struct Place<'a> {
    pub file: &'a str,
    pub tool: &'a str,
}

impl Place<'_> {
    pub(crate) fn error(
        &self,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> ConfigError {
        ConfigError::in_file(self.file, message)
            .tool(self.tool)
            .field(field)
    }
}

impl Params {
    /// Read `parameters`: an object from name to either a type name
    /// (`"string"`) or `{ "type", "description", "required", "default", "enum" }`
    /// (`param_type` is accepted for `type`). Every problem is reported.
    pub(crate) fn parse(
        value: Option<&Value>,
        place: &Place<'_>,
        errors: &mut Vec<ConfigError>,
    ) -> Self {
        let Some(value) = value else {
            return Self::default();
        };
        let Some(object) = value.as_object() else {
            errors.push(place.error(
                "parameters",
                "expected an object from parameter name to its type or declaration",
            ));
            return Self::default();
        };
        let mut params = Vec::new();
        for (name, declaration) in object {
            let field = format!("parameters.{name}");
            if !valid_param_name(name) {
                errors.push(place.error(
                    &field,
                    "a parameter name uses letters, digits and '_', and does not start with a digit",
                ));
                continue;
            }
            if let Some(param) = parse_param(name, declaration, &field, place, errors) {
                params.push(param);
            }
        }
        Self(params)
    }

    /// The JSON Schema of the arguments object.
    pub fn schema(&self) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for param in &self.0 {
            let mut schema = Map::new();
            schema.insert("type".into(), json!(param.kind.as_str()));
            if let Some(description) = &param.description {
                schema.insert("description".into(), json!(description));
            }
            if let Some(default) = &param.default {
                schema.insert("default".into(), default.clone());
            }
            if let Some(allowed) = &param.allowed {
                schema.insert("enum".into(), Value::Array(allowed.clone()));
            }
            properties.insert(param.name.clone(), Value::Object(schema));
            if param.required {
                required.push(json!(param.name));
            }
        }
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })
    }

    /// Whether the parameter `name` lets its values begin with `-`.
    pub fn allows_leading_dash(&self, name: &str) -> bool {
        self.0
            .iter()
            .any(|p| p.name == name && p.allow_leading_dash)
    }

    /// Whether a parameter of this name is declared.
    pub fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|p| p.name == name)
    }

    /// The value of every declared parameter in `args`, defaults filled in;
    /// parameters neither given nor defaulted are left out.
    pub fn values(&self, args: &Value) -> Vec<(String, Value)> {
        self.0
            .iter()
            .filter_map(|param| {
                let value = args
                    .get(&param.name)
                    .filter(|v| !v.is_null())
                    .or(param.default.as_ref())?;
                Some((param.name.clone(), value.clone()))
            })
            .collect()
    }
}

fn valid_param_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn parse_param(
    name: &str,
    declaration: &Value,
    field: &str,
    place: &Place<'_>,
    errors: &mut Vec<ConfigError>,
) -> Option<Param> {
    let type_error = |at: String| place.error(at, format!("expected one of {}", ParamType::NAMES));
    if let Some(type_name) = declaration.as_str() {
        let Some(kind) = ParamType::parse(type_name) else {
            errors.push(type_error(field.to_owned()));
            return None;
        };
        return Some(Param {
            name: name.to_owned(),
            kind,
            description: None,
            required: true,
            default: None,
            allowed: None,
            allow_leading_dash: false,
        });
    }
    let Some(object) = declaration.as_object() else {
        errors.push(place.error(
            field,
            format!(
                "expected a type name ({}) or an object with `type`",
                ParamType::NAMES
            ),
        ));
        return None;
    };
    let before = errors.len();
    const KEYS: [&str; 7] = [
        "type",
        "param_type",
        "description",
        "required",
        "default",
        "enum",
        "allow_leading_dash",
    ];
    for key in object.keys() {
        if !KEYS.contains(&key.as_str()) {
            errors.push(place.error(
                format!("{field}.{key}"),
                format!("unknown field; expected one of {}", KEYS.join(", ")),
            ));
        }
    }
    let (type_key, type_value) = match (object.get("type"), object.get("param_type")) {
        (Some(v), _) => ("type", v),
        (None, Some(v)) => ("param_type", v),
        (None, None) => {
            errors.push(place.error(
                format!("{field}.type"),
                "missing; every parameter needs a type",
            ));
            return None;
        }
    };
    let kind = type_value.as_str().and_then(ParamType::parse);
    if kind.is_none() {
        errors.push(type_error(format!("{field}.{type_key}")));
    }
    let description = match object.get("description") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            errors.push(place.error(format!("{field}.description"), "expected a string"));
            None
        }
    };
    let required = match object.get("required") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => {
            errors.push(place.error(format!("{field}.required"), "expected true or false"));
            None
        }
    };
    let allow_leading_dash = match object.get("allow_leading_dash") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            errors.push(place.error(
                format!("{field}.allow_leading_dash"),
                "expected true or false",
            ));
            false
        }
    };
    let default = object.get("default").cloned();
    let allowed = match object.get("enum") {
        None => None,
        Some(Value::Array(values)) if !values.is_empty() => Some(values.clone()),
        Some(_) => {
            errors.push(place.error(
                format!("{field}.enum"),
                "expected a non-empty array of values",
            ));
            None
        }
    };
    let kind = kind?;
    if let Some(default) = &default
        && !kind.accepts(default)
    {
        errors.push(place.error(
            format!("{field}.default"),
            format!("expected a {} like the parameter's type", kind.as_str()),
        ));
    }
    if let Some(values) = &allowed
        && let Some(bad) = values.iter().find(|v| !kind.accepts(v))
    {
        errors.push(place.error(
            format!("{field}.enum"),
            format!("{bad} is not a {}", kind.as_str()),
        ));
    }
    if errors.len() > before {
        return None;
    }
    Some(Param {
        name: name.to_owned(),
        kind,
        description,
        // A parameter with a default need not be given.
        required: required.unwrap_or(default.is_none()),
        default,
        allowed,
        allow_leading_dash,
    })
}
