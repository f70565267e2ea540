//! Resource templates (RFC 6570 URI templates): their variables as a
//! parameters schema, and the URI a call's arguments make of them.
//!
//! `iri-string` parses and expands; it lists a template's variable names but
//! not the operator of the expression each sits in, which decides whether
//! the variable may be left out, so the expressions are read here too.

use iri_string::spec::UriSpec;
use iri_string::template::UriTemplateString;
use iri_string::template::simple_context::SimpleContext;
use serde_json::{Map, Value, json};

/// A server's URI template, checked, with its variables in order.
#[derive(Debug)]
pub(crate) struct UriTemplate {
    template: UriTemplateString,
    /// Each variable once, in the order it first appears.
    variables: Vec<Variable>,
}

/// One variable of a template and where it appears.
#[derive(Debug, PartialEq)]
struct Variable {
    name: String,
    /// The operator of every expression it appears in (`None`: simple `{x}`).
    operators: Vec<Option<char>>,
}

impl Variable {
    /// Query (`{?x}`) and continuation (`{&x}`) expressions leave out what
    /// is undefined; every other place needs a value to make sense.
    fn required(&self) -> bool {
        self.operators
            .iter()
            .any(|op| !matches!(op, Some('?' | '&')))
    }
}

impl UriTemplate {
    /// Check `text` as an RFC 6570 template and find its variables.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let template = UriTemplateString::try_from(text)
            .map_err(|e| format!("`{text}` is not a valid URI template: {e}"))?;
        let variables = variables(text);
        Ok(Self {
            template,
            variables,
        })
    }

    /// The template as the server wrote it.
    pub(crate) fn as_str(&self) -> &str {
        self.template.as_str()
    }

    /// The parameters schema: every variable a string, required unless it
    /// sits in a query or continuation expression.
    pub(crate) fn schema(&self, template_name: &str) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for variable in &self.variables {
            let description = format!(
                "The `{}` part of the resource template `{template_name}` ({}).",
                variable.name,
                self.as_str()
            );
            properties.insert(
                variable.name.clone(),
                json!({"type": "string", "description": description}),
            );
            if variable.required() {
                required.push(json!(variable.name));
            }
        }
        json!({"type": "object", "properties": properties, "required": required})
    }

    /// The URI for `arguments`: every value percent-encoded for its place
    /// (a `/`, `?` or `#` in a `{x}` value stays inside that one segment).
    /// Values that would still leave their place are refused: `.` and `..`
    /// where they would be path segments, and in reserved expansions
    /// (`{+x}`, which by design lets `/` through) a `?`, a `#` or a dot segment.
    pub(crate) fn expand(&self, arguments: &Map<String, Value>) -> Result<String, String> {
        let mut context = SimpleContext::new();
        for variable in &self.variables {
            let value = match arguments.get(&variable.name) {
                None | Some(Value::Null) if variable.required() => {
                    return Err(format!(
                        "`{}` is required to make the URI `{}`",
                        variable.name,
                        self.as_str()
                    ));
                }
                None | Some(Value::Null) => continue,
                Some(Value::String(s)) => s.clone(),
                // Lenient: a number the model sent reads the same as text.
                Some(other) => other.to_string(),
            };
            for operator in &variable.operators {
                check_value(*operator, &variable.name, &value)?;
            }
            context.insert(variable.name.as_str(), value);
        }
        self.template
            .expand::<UriSpec, _>(&context)
            .map(|uri| uri.to_string())
            .map_err(|e| {
                format!(
                    "the URI template `{}` could not be expanded: {e}",
                    self.as_str()
                )
            })
    }
}

/// Refuse a value percent-encoding alone cannot keep in its place.
fn check_value(operator: Option<char>, name: &str, value: &str) -> Result<(), String> {
    let leaves = |why: &str| {
        Err(format!(
            "the value `{value}` of `{name}` {why}, which would leave its place in the URI; send the plain name"
        ))
    };
    let is_dot_segment = |segment: &str| {
        // `%2E` is `.` once a server normalizes the URI.
        let decoded = segment.replace("%2E", ".").replace("%2e", ".");
        decoded == "." || decoded == ".."
    };
    match operator {
        None | Some('/' | '.') if is_dot_segment(value) => leaves("is a dot segment"),
        Some('+') if value.contains(['?', '#']) => leaves("has a `?` or `#`"),
        Some('+') if value.split('/').any(is_dot_segment) => leaves("has a dot segment"),
        _ => Ok(()),
    }
}

/// The variables of a valid template, each once, with the operators of the
/// expressions they appear in.
fn variables(template: &str) -> Vec<Variable> {
    let mut found: Vec<Variable> = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let expression = &rest[start + 1..start + len];
        rest = &rest[start + len + 1..];
        let (operator, list) = match expression.chars().next() {
            Some(op @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(op), &expression[1..]),
            _ => (None, expression),
        };
        for spec in list.split(',') {
            // `name*` explodes, `name:3` takes a prefix: the name is before either.
            let name = spec.split([':', '*']).next().unwrap_or_default();
            if name.is_empty() {
                continue;
            }
            match found.iter_mut().find(|v| v.name == name) {
                Some(variable) => variable.operators.push(operator),
                None => found.push(Variable {
                    name: name.to_owned(),
                    operators: vec![operator],
                }),
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn variables_are_found_with_their_operators_as_iri_string_lists_them() {
        let text = "demo://{host}/items{/id,rev:3}{?q,tags*}{&page}{#frag}{+rest}";
        let template = UriTemplate::parse(text).unwrap();
        let ours: Vec<&str> = template.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            ours,
            ["host", "id", "rev", "q", "tags", "page", "frag", "rest"]
        );
        let theirs: Vec<&str> = template.template.variables().map(|v| v.as_str()).collect();
        assert_eq!(ours, theirs);
        assert_eq!(template.variables[1].operators, [Some('/')]);
        assert_eq!(template.variables[0].operators, [None]);
    }

    #[test]
    fn the_schema_requires_path_variables_and_leaves_query_ones_optional() {
        let template = UriTemplate::parse("db://{table}/{id}{?fields,limit}{&offset}").unwrap();
        let schema = template.schema("Rows");
        assert_eq!(schema["required"], json!(["table", "id"]));
        let names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["table", "id", "fields", "limit", "offset"]);
        for name in names {
            assert_eq!(schema["properties"][name]["type"], "string");
            let description = schema["properties"][name]["description"].as_str().unwrap();
            assert!(
                description.contains("`Rows`") && description.contains(name),
                "{description}"
            );
        }
        // A variable both in the path and the query is needed for the path.
        let both = UriTemplate::parse("x://{a}{?a,b}").unwrap().schema("T");
        assert_eq!(both["required"], json!(["a"]));
        // No variables: an empty object.
        let none = UriTemplate::parse("x://fixed").unwrap().schema("T");
        assert_eq!(none["properties"], json!({}));
    }

    #[test]
    fn values_are_percent_encoded_for_their_place() {
        let text = UriTemplate::parse("demo://resource/dynamic/text/{resourceId}").unwrap();
        for (value, uri) in [
            ("3", "demo://resource/dynamic/text/3"),
            ("../1", "demo://resource/dynamic/text/..%2F1"),
            ("1/../2", "demo://resource/dynamic/text/1%2F..%2F2"),
            ("1?x=y", "demo://resource/dynamic/text/1%3Fx%3Dy"),
            ("a/b?c#d", "demo://resource/dynamic/text/a%2Fb%3Fc%23d"),
            ("100%", "demo://resource/dynamic/text/100%25"),
            ("é", "demo://resource/dynamic/text/%C3%A9"),
        ] {
            assert_eq!(
                text.expand(&args(json!({"resourceId": value}))).unwrap(),
                uri
            );
        }
        let query = UriTemplate::parse("x://search{?q,lang}").unwrap();
        assert_eq!(
            query.expand(&args(json!({"q": "a&b=c#d"}))).unwrap(),
            "x://search?q=a%26b%3Dc%23d"
        );
        assert_eq!(
            query.expand(&args(json!({"q": "x", "lang": 7}))).unwrap(),
            "x://search?q=x&lang=7"
        );
        assert_eq!(query.expand(&Map::new()).unwrap(), "x://search");
    }

    #[test]
    fn values_that_would_leave_their_place_are_refused() {
        let text = UriTemplate::parse("file:///base/{name}").unwrap();
        for value in ["..", ".", "%2e%2E"] {
            let error = text.expand(&args(json!({"name": value}))).unwrap_err();
            assert!(error.contains("dot segment"), "{value}: {error}");
        }
        let reserved = UriTemplate::parse("file:///base/{+path}").unwrap();
        assert_eq!(
            reserved
                .expand(&args(json!({"path": "docs/a b.txt"})))
                .unwrap(),
            "file:///base/docs/a%20b.txt"
        );
        for value in ["../etc/passwd", "a/./b", "a?x", "a#x", "a/%2E%2E/b"] {
            assert!(
                reserved.expand(&args(json!({"path": value}))).is_err(),
                "{value}"
            );
        }
        // In a query a dot is only a dot.
        let query = UriTemplate::parse("x://s{?q}").unwrap();
        assert_eq!(
            query.expand(&args(json!({"q": ".."}))).unwrap(),
            "x://s?q=.."
        );
    }

    #[test]
    fn a_missing_required_variable_and_a_broken_template_are_errors() {
        let text = UriTemplate::parse("x://{a}/{b}").unwrap();
        let error = text.expand(&args(json!({"a": "1"}))).unwrap_err();
        assert!(error.contains("`b` is required"), "{error}");
        assert!(UriTemplate::parse("x://{unclosed").is_err());
        assert!(UriTemplate::parse("x://{bad name}").is_err());
    }
}
