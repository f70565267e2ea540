//! Tests of `args::compile`.

use super::*;
use serde_json::json;

fn compiled(schema: &Value) -> (Nodes, NodeId) {
    let nodes = compile(schema).expect("compiles");
    let root = nodes.root;
    (nodes, root)
}

fn property(nodes: &Nodes, id: NodeId, name: &str) -> NodeId {
    nodes
        .get(id)
        .object
        .as_ref()
        .unwrap()
        .property(name)
        .unwrap()
        .schema
}

#[test]
fn types_from_a_string_or_a_list() {
    let (nodes, root) = compiled(&json!({"type": "integer"}));
    assert_eq!(nodes.get(root).types, Types::INTEGER);
    let (nodes, root) = compiled(&json!({"type": ["string", "null"]}));
    assert_eq!(nodes.get(root).types, Types::STRING.union(Types::NULL));
    let (nodes, root) = compiled(&json!({"description": "no type"}));
    assert_eq!(nodes.get(root).types, Types::ANY);
}

#[test]
fn openapi_nullable_adds_null() {
    let (nodes, root) = compiled(&json!({"type": "string", "nullable": true, "enum": ["a"]}));
    assert_eq!(nodes.get(root).types, Types::STRING.union(Types::NULL));
    assert_eq!(nodes.get(root).allowed, Some(vec![json!("a"), json!(null)]));
}

#[test]
fn enum_values_give_cast_types_when_no_type_is_named() {
    let (nodes, root) = compiled(&json!({"enum": [1, 2, 3]}));
    assert_eq!(nodes.get(root).types, Types::ANY);
    assert_eq!(nodes.get(root).cast_to, Types::INTEGER);
}

#[test]
fn const_is_a_one_value_enum() {
    let (nodes, root) = compiled(&json!({"const": "x"}));
    assert_eq!(nodes.get(root).allowed, Some(vec![json!("x")]));
}

#[test]
fn format_bounds_apply_unless_the_schema_is_tighter() {
    let (nodes, root) = compiled(&json!({"type": "integer", "format": "uint8", "maximum": 100}));
    let rules = nodes.get(root).number.as_ref().unwrap();
    assert_eq!(rules.lower.as_ref().unwrap().limit, Number::from(0));
    assert_eq!(rules.upper.as_ref().unwrap().limit, Number::from(100));
    let (nodes, root) = compiled(&json!({"type": "integer", "format": "int8", "minimum": -1000}));
    let rules = nodes.get(root).number.as_ref().unwrap();
    assert_eq!(rules.lower.as_ref().unwrap().limit, Number::from(-128));
}

#[test]
fn exclusive_bounds_in_both_drafts() {
    let (nodes, root) =
        compiled(&json!({"exclusiveMinimum": 0, "maximum": 5, "exclusiveMaximum": true}));
    let rules = nodes.get(root).number.as_ref().unwrap();
    assert!(rules.lower.as_ref().unwrap().exclusive);
    assert!(rules.upper.as_ref().unwrap().exclusive);
    // At the same value, the exclusive bound is the tighter one.
    let (nodes, root) = compiled(&json!({"minimum": 0, "exclusiveMinimum": 0}));
    assert!(
        nodes
            .get(root)
            .number
            .as_ref()
            .unwrap()
            .lower
            .as_ref()
            .unwrap()
            .exclusive
    );
}

#[test]
fn refs_to_defs_and_definitions_resolve_to_one_node() {
    let (nodes, root) = compiled(&json!({
        "properties": {
            "a": {"$ref": "#/$defs/Thing"},
            "b": {"$ref": "#/$defs/Thing"},
            "c": {"$ref": "#/definitions/Other"}
        },
        "$defs": {"Thing": {"type": "integer"}},
        "definitions": {"Other": {"type": "boolean"}}
    }));
    let (a, b, c) = (
        property(&nodes, root, "a"),
        property(&nodes, root, "b"),
        property(&nodes, root, "c"),
    );
    assert_eq!(a, b);
    assert_eq!(nodes.get(a).types, Types::INTEGER);
    assert_eq!(nodes.get(c).types, Types::BOOLEAN);
}

#[test]
fn ref_pointers_unescape() {
    let (nodes, root) = compiled(&json!({
        "properties": {
            "a": {"$ref": "#/$defs/a~1b~0c"},
            "b": {"$ref": "#/$defs/with%20space"}
        },
        "$defs": {"a/b~c": {"type": "string"}, "with space": {"type": "null"}}
    }));
    assert_eq!(nodes.get(property(&nodes, root, "a")).types, Types::STRING);
    assert_eq!(nodes.get(property(&nodes, root, "b")).types, Types::NULL);
}

#[test]
fn a_ref_with_siblings_keeps_both() {
    let (nodes, root) = compiled(&json!({
        "properties": {"a": {"$ref": "#/$defs/N", "maximum": 3}},
        "$defs": {"N": {"type": "integer"}}
    }));
    let a = nodes.get(property(&nodes, root, "a"));
    assert_eq!(a.all_of.len(), 1);
    assert!(a.number.is_some());
}

#[test]
fn recursive_schemas_compile_once() {
    let (nodes, root) = compiled(&json!({
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}
        }}
    }));
    let node = nodes.get(root).all_of[0];
    let children = property(&nodes, node, "children");
    let item = nodes.get(children).array.as_ref().unwrap().rest.unwrap();
    assert_eq!(item, node);
    assert!(nodes.nodes.len() < 6);
}

#[test]
fn the_root_is_reachable_as_hash() {
    let (nodes, root) = compiled(&json!({
        "type": "object",
        "properties": {"next": {"$ref": "#"}}
    }));
    assert_eq!(property(&nodes, root, "next"), root);
}

#[test]
fn loops_that_never_reach_a_value_are_refused() {
    for schema in [
        json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}}),
        json!({"$ref": "#/$defs/A", "$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}}}),
        json!({"allOf": [{"$ref": "#"}]}),
    ] {
        let err = compile(&schema).unwrap_err();
        assert!(err.0.contains("without ever reaching a value"), "{err}");
    }
}

#[test]
fn unresolvable_refs_are_errors() {
    let err = compile(&json!({"properties": {"a": {"$ref": "#/$defs/Nope"}}})).unwrap_err();
    assert_eq!(
        err.0,
        "#/properties/a: $ref \"#/$defs/Nope\" points to nothing in the schema"
    );
    let err = compile(&json!({"$ref": "https://example.com/schema.json"})).unwrap_err();
    assert!(err.0.contains("only references within it"), "{err}");
    let err = compile(&json!({"$ref": "#anchor"})).unwrap_err();
    assert!(err.0.contains("anchor"), "{err}");
    let err = compile(&json!({"$ref": "#/%zz"})).unwrap_err();
    assert!(err.0.contains("not a valid URI fragment"), "{err}");
}

#[test]
fn invalid_patterns_are_errors() {
    let err = compile(&json!({"properties": {"a": {"pattern": "(unclosed"}}})).unwrap_err();
    assert!(
        err.0
            .starts_with("#/properties/a/pattern: the pattern \"(unclosed\""),
        "{err}"
    );
    assert!(compile(&json!({"patternProperties": {"[": {}}})).is_err());
}

#[test]
fn boolean_schemas() {
    let (nodes, root) = compiled(&json!(true));
    assert!(nodes.get(root).is_unconstrained());
    let (nodes, root) = compiled(&json!(false));
    assert!(nodes.get(root).never);
}

#[test]
fn non_schemas_are_errors() {
    assert!(compile(&json!({"properties": {"a": 5}})).is_err());
    assert!(compile(&json!("object")).is_err());
}

#[test]
fn unknown_keywords_and_types_are_ignored() {
    let (nodes, root) = compiled(&json!({"type": "any", "x-custom": {"$ref": 5}, "title": "T"}));
    assert!(nodes.get(root).is_unconstrained());
}

#[test]
fn both_any_of_and_one_of_must_hold() {
    let (nodes, root) = compiled(&json!({"anyOf": [true], "oneOf": [false, true]}));
    let node = nodes.get(root);
    assert_eq!(node.any_of.len(), 1);
    assert_eq!(node.all_of.len(), 1);
    assert_eq!(nodes.get(node.all_of[0]).any_of.len(), 2);
}

#[test]
fn tuple_items_in_both_drafts() {
    let (nodes, root) =
        compiled(&json!({"prefixItems": [{"type": "string"}], "items": {"type": "integer"}}));
    let rules = nodes.get(root).array.as_ref().unwrap();
    assert_eq!(rules.prefix.len(), 1);
    assert!(rules.rest.is_some());
    let (nodes, root) = compiled(&json!({"items": [{"type": "string"}], "additionalItems": false}));
    let rules = nodes.get(root).array.as_ref().unwrap();
    assert_eq!(rules.prefix.len(), 1);
    assert!(nodes.get(rules.rest.unwrap()).never);
}

#[test]
fn required_names_outside_properties_are_kept() {
    let (nodes, root) = compiled(&json!({"properties": {"a": {}}, "required": ["a", "b", "b"]}));
    let rules = nodes.get(root).object.as_ref().unwrap();
    assert!(rules.properties[0].required);
    assert_eq!(rules.required_elsewhere, vec!["b".to_owned()]);
}

#[test]
fn counts_accept_integral_floats() {
    assert_eq!(count(Some(&json!(2.0))), Some(2));
    assert_eq!(count(Some(&json!(-1))), None);
    assert_eq!(count(Some(&json!("2"))), None);
}

#[test]
fn allowed_values_nested_too_deep_are_refused() {
    use super::super::depth::{Shape, nested};
    for keyword in ["enum", "const"] {
        let deep = nested(100_000, Shape::Alternating);
        let value = if keyword == "enum" {
            Value::Array(vec![deep])
        } else {
            deep
        };
        let mut map = Map::new();
        map.insert(keyword.to_owned(), value);
        let schema = Value::Object(map);
        let err = compile(&schema).unwrap_err();
        assert!(err.0.contains("nests deeper than 128 levels"), "{err}");
        super::super::depth::discard(schema);
    }
    let fine = nested(ARGUMENT_DEPTH - 1, Shape::Objects);
    assert!(compile(&json!({"enum": [fine]})).is_ok());
}

#[test]
fn deep_schemas_are_refused_not_overflowed() {
    let mut schema = json!({"type": "string"});
    for _ in 0..(MAX_DEPTH + 10) {
        schema = json!({"items": schema});
    }
    let err = compile(&schema).unwrap_err();
    assert!(err.0.contains("nests deeper"), "{err}");
}

/// A server's tool may refer through 100,000 definitions, each to the
/// next: refused before the compiler's recursion takes more stack than a
/// thread polling a connection has to spare (1.5 MiB here, of a tokio
/// worker's 2 MiB).
#[test]
fn a_chain_of_references_is_refused_within_a_workers_stack() {
    let n = 100_000;
    let mut defs = Map::new();
    for i in 0..n {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {"x": {"$ref": next}}}),
        );
    }
    defs.insert(format!("d{n}"), json!({"type": "string"}));
    let schema =
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs});
    let err = std::thread::Builder::new()
        .stack_size(3 << 19)
        .spawn(move || compile(&schema).map(|_| ()))
        .unwrap()
        .join()
        .unwrap()
        .unwrap_err();
    assert!(err.0.contains("nests deeper"), "{err}");
}

#[test]
fn only_kinds_whose_type_check_is_the_whole_answer_are_settled_by_it() {
    let settled = |schema: Value| {
        let (nodes, root) = compiled(&schema);
        nodes.get(root).settled_by_type
    };
    assert_eq!(settled(json!({"type": "string"})), Types::STRING);
    assert_eq!(
        settled(json!({"type": ["boolean", "null", "integer"]})),
        Types::BOOLEAN.union(Types::NULL)
    );
    // Anything goes: every kind but numbers (finiteness, integral floats).
    assert_eq!(settled(json!({})), Types::SCALARS_WITHOUT_NUMBERS);
    // A rule, a value list, a branch, `false`, or a cast: the walk looks.
    for schema in [
        json!({"type": "string", "minLength": 2}),
        json!({"type": "string", "pattern": "^a"}),
        json!({"type": "string", "enum": ["a"]}),
        json!({"const": true}),
        json!({"type": "string", "anyOf": [{"maxLength": 3}]}),
        json!({"allOf": [{"type": "string"}, {"maxLength": 3}]}),
        json!({"type": "integer"}),
        json!(false),
    ] {
        assert_eq!(settled(schema.clone()), Types::NONE, "{schema}");
    }
    // The fallback node settles what compiling `true` settles.
    let (nodes, root) = compiled(&json!(true));
    assert_eq!(
        nodes.get(root).settled_by_type,
        Node::ANYTHING.settled_by_type
    );
}

#[test]
fn plain_kinds_are_those_every_node_check_passes_whatever_the_value() {
    let plain = |schema: Value| {
        let (nodes, root) = compiled(&schema);
        nodes.get(root).plain
    };
    // The kinds the type allows; never a float, whose cast depends on it.
    assert_eq!(
        plain(json!({"type": "integer", "minimum": 1})),
        Types::INTEGER
    );
    assert_eq!(plain(json!({"type": "number"})), Types::INTEGER);
    assert_eq!(
        plain(json!({"type": "object", "properties": {"a": {}}})),
        Types::OBJECT
    );
    assert_eq!(
        plain(json!({"type": ["string", "null"], "maxLength": 3})),
        Types::STRING.union(Types::NULL)
    );
    assert_eq!(plain(json!({})), Types::ALL_BUT_FLOATS);
    // A value list, a branch or `false`: every check runs.
    for schema in [
        json!({"type": "integer", "enum": [1, 2]}),
        json!({"const": {"a": 1}}),
        json!({"type": "object", "anyOf": [{"required": ["a"]}]}),
        json!({"allOf": [{"type": "integer"}, {"minimum": 1}]}),
        json!(false),
    ] {
        assert_eq!(plain(schema.clone()), Types::NONE, "{schema}");
    }
    // What is plain is also what the type check alone settles, and more.
    for schema in [
        json!({"type": "string"}),
        json!({}),
        json!({"type": "boolean"}),
    ] {
        let (nodes, root) = compiled(&schema);
        let node = nodes.get(root);
        assert!(node.plain.contains(node.settled_by_type), "{schema}");
    }
    let (nodes, root) = compiled(&json!(true));
    assert_eq!(nodes.get(root).plain, Node::ANYTHING.plain);
}

/// An object of `count` string properties, each with `pattern`.
fn patterned(count: usize, pattern: &str) -> Value {
    let properties: Map<String, Value> = (0..count)
        .map(|i| {
            (
                format!("p{i}"),
                json!({"type": "string", "pattern": pattern}),
            )
        })
        .collect();
    json!({"type": "object", "properties": properties})
}

/// A server's schema of many patterns, each compiling to megabytes (a
/// `\w` repeated: 5,000 of them took 11 GiB), is refused once its patterns
/// pass the schema's budget, before the rest are compiled; a pattern too
/// large alone is refused as such; many small ones, and a few large
/// ones, compile.
#[test]
fn a_schemas_patterns_are_compiled_within_a_budget() {
    let error = compile(&patterned(5_000, r"\w{1,20}N")).expect_err("compiled");
    assert!(
        error.0.contains("too many or too large patterns"),
        "{error}"
    );
    let error = compile(&patterned(1, r"\w{1,40}N")).expect_err("compiled");
    assert!(error.0.contains("more than 1024 KiB"), "{error}");
    compile(&patterned(100, "^[a-z0-9_-]+$")).expect("small patterns");
    compile(&patterned(100, r"^\w+$")).expect("a Unicode class each");
    compile(&patterned(7, r"\w{1,20}N")).expect("a few large patterns");
    // Patterns of property names count too.
    let names: Map<String, Value> = (0..5_000)
        .map(|i| (format!(r"\w{{1,20}}{i}"), json!({})))
        .collect();
    let error =
        compile(&json!({"type": "object", "patternProperties": names})).expect_err("compiled");
    assert!(
        error.0.contains("too many or too large patterns"),
        "{error}"
    );
}

/// The process's budget for patterns: charged while it has room, refused
/// past it, and room again once a charge is given back.
#[test]
fn the_process_budget_for_patterns_refuses_past_it_and_frees_with_drops() {
    let held = std::sync::atomic::AtomicUsize::new(0);
    assert!(charge(&held, 10, 6));
    assert!(!charge(&held, 10, 5), "past the budget");
    assert!(charge(&held, 10, 4));
    held.fetch_sub(6, std::sync::atomic::Ordering::Relaxed);
    assert!(charge(&held, 10, 5));
    assert!(!charge(&held, 10, usize::MAX), "an overflow is refused");
    // A live schema holds its charge; dropped, it gives it back.
    let nodes = compile(&patterned(3, "^[a-z]+$")).expect("compiles");
    assert!(PROCESS_PATTERNS.load(std::sync::atomic::Ordering::Relaxed) >= 3 * (64 << 10));
    drop(nodes);
}
