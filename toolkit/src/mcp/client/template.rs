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

use crate::error::ToolError;

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
    /// Every place it appears in.
    places: Vec<Place>,
}

/// One appearance of a variable: its expression's operator (`None`: a
/// simple `{x}`) and its prefix modifier (`{x:3}` takes 3 characters).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Place {
    operator: Option<char>,
    prefix: Option<usize>,
}

impl Variable {
    /// Query (`{?x}`) and continuation (`{&x}`) expressions leave out what
    /// is undefined; every other place needs a value to make sense.
    fn required(&self) -> bool {
        self.places
            .iter()
            .any(|place| !matches!(place.operator, Some('?' | '&')))
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
    /// Values that could still leave their place are refused (see
    /// [`check_value`]): a dot segment in a path, as sent or as a server
    /// may decode it, and a `?` or `#` in a reserved expansion (`{+x}`).
    ///
    /// Values the model must change are [`ToolError::InvalidArguments`]; a
    /// template that does not expand is the server's, [`ToolError::Failed`].
    pub(crate) fn expand(&self, arguments: &Map<String, Value>) -> Result<String, ToolError> {
        let mut context = SimpleContext::new();
        for variable in &self.variables {
            let value = match arguments.get(&variable.name) {
                None | Some(Value::Null) if variable.required() => {
                    return Err(ToolError::InvalidArguments(format!(
                        "`{}` is required to make the URI `{}`",
                        variable.name,
                        self.as_str()
                    )));
                }
                None | Some(Value::Null) => continue,
                Some(Value::String(s)) => s.clone(),
                // Casting and validation have made every value text already.
                Some(other) => other.to_string(),
            };
            for place in &variable.places {
                check_value(*place, &variable.name, &value).map_err(ToolError::InvalidArguments)?;
            }
            context.insert(variable.name.as_str(), value);
        }
        self.template
            .expand::<UriSpec, _>(&context)
            .map(|uri| uri.to_string())
            .map_err(|e| {
                ToolError::failed(format!(
                    "the server's URI template `{}` could not be expanded: {e}",
                    self.as_str()
                ))
            })
    }
}

/// Refuse a value percent-encoding alone cannot keep in its place.
///
/// The value is judged as it goes out (cut to the place's prefix) and as a
/// server may read it (percent-decoded, `\` taken for `/`): in a path, a
/// `.` or `..` segment in either form would walk out of the template's
/// directory. Query and fragment values cannot, and are left alone.
fn check_value(place: Place, name: &str, value: &str) -> Result<(), String> {
    let leaves = |why: &str| {
        Err(format!(
            "the value `{value}` of `{name}` {why}, which would leave its place in the URI; send the plain name"
        ))
    };
    if matches!(place.operator, Some('?' | '&' | '#')) {
        return Ok(());
    }
    let sent: String = match place.prefix {
        Some(length) => value.chars().take(length).collect(),
        None => value.to_owned(),
    };
    if place.operator == Some('+') && sent.contains(['?', '#']) {
        return leaves("has a `?` or `#`");
    }
    let decoded = percent_decoded(&sent);
    if decoded
        .split(['/', '\\'])
        .any(|segment| segment == "." || segment == "..")
    {
        return leaves("has a dot segment");
    }
    Ok(())
}

/// `text` with every `%XX` triplet decoded (invalid UTF-8 replaced).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                i += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
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
            let prefix = spec
                .split_once(':')
                .and_then(|(_, length)| length.parse().ok());
            let place = Place { operator, prefix };
            match found.iter_mut().find(|v| v.name == name) {
                Some(variable) => variable.places.push(place),
                None => found.push(Variable {
                    name: name.to_owned(),
                    places: vec![place],
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
        let simple = Place {
            operator: None,
            prefix: None,
        };
        assert_eq!(template.variables[0].places, [simple]);
        assert_eq!(
            template.variables[1].places,
            [Place {
                operator: Some('/'),
                prefix: None
            }]
        );
        assert_eq!(
            template.variables[2].places,
            [Place {
                operator: Some('/'),
                prefix: Some(3)
            }]
        );
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
            ("1/2", "demo://resource/dynamic/text/1%2F2"),
            ("..x", "demo://resource/dynamic/text/..x"),
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
        // Encoded, these stay in the segment; but a server that decodes the
        // path (`%2F` to `/`) or takes `\` for `/` would walk up with them.
        for value in [
            "..", ".", "%2e%2E", "../1", "1/../2", "..%2Fetc", "a\\..\\b",
        ] {
            let error = text.expand(&args(json!({"name": value}))).unwrap_err();
            assert!(matches!(error, ToolError::InvalidArguments(_)), "{error:?}");
            assert!(
                error.to_string().contains("dot segment"),
                "{value}: {error}"
            );
        }
        // A prefix is judged as it goes out: `..x` cut to two characters is `..`.
        let prefixed = UriTemplate::parse("file:///base/{name:2}").unwrap();
        assert!(prefixed.expand(&args(json!({"name": "..x"}))).is_err());
        assert_eq!(
            prefixed.expand(&args(json!({"name": "abc"}))).unwrap(),
            "file:///base/ab"
        );
        let reserved = UriTemplate::parse("file:///base/{+path}").unwrap();
        let cut = UriTemplate::parse("file:///base/{+path:4}").unwrap();
        assert!(cut.expand(&args(json!({"path": "a/..b"}))).is_err());
        assert_eq!(
            reserved
                .expand(&args(json!({"path": "docs/a b.txt"})))
                .unwrap(),
            "file:///base/docs/a%20b.txt"
        );
        for value in [
            "../etc/passwd",
            "a/./b",
            "a?x",
            "a#x",
            "a/%2E%2E/b",
            "%2E%2E%2Fsecret",
            "a%2F..%2Fb",
        ] {
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
        assert!(matches!(error, ToolError::InvalidArguments(_)), "{error:?}");
        assert!(error.to_string().contains("`b` is required"), "{error}");
        assert!(UriTemplate::parse("x://{unclosed").is_err());
        assert!(UriTemplate::parse("x://{bad name}").is_err());
    }
}
