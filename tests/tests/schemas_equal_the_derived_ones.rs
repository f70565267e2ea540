//! A tool's argument schema is assembled at run time from its parameters
//! (`Property` values) instead of a `JsonSchema` derive per tool. It must
//! be the schema the derive made, key for key and in the same order: each
//! tool here is compared with a struct of its parameters carrying the
//! attributes `#[tool]` used to write for them, with schemars' derive.

// A tool takes as many parameters as the model fills in.
#![allow(clippy::too_many_arguments)]

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Value, json};
use tk::schemars::{JsonSchema, Schema, SchemaGenerator};
use tk::serde::{Deserialize, Serialize};
use tk::{Tool, tool};

/// The schema `#[tool]` makes of `Derived`, through the same function as
/// a tool's (title and dialect dropped, objects closed).
fn derived<T: JsonSchema>() -> Value {
    tk::__private_0_1::schema_for_args::<T>()
}

/// The two schemas, compared as text so that the order of keys counts.
fn assert_same(tool: impl Tool, derived: Value) {
    let ours = tool.spec().input_schema.clone();
    assert_eq!(
        serde_json::to_string_pretty(&ours).unwrap(),
        serde_json::to_string_pretty(&derived).unwrap(),
        "{}",
        tool.spec().name
    );
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(crate = "tk::serde")]
#[schemars(crate = "tk::schemars")]
pub struct Point {
    /// Across.
    x: i32,
    /// Down.
    y: i32,
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(crate = "tk::serde", rename_all = "snake_case")]
#[schemars(crate = "tk::schemars")]
pub enum Shade {
    Light,
    Dark,
}

/// A type with a schema that does not serialize: its default stays out of
/// the schema.
#[derive(Deserialize, JsonSchema, Default)]
#[serde(crate = "tk::serde")]
#[schemars(crate = "tk::schemars")]
#[allow(dead_code)]
pub struct Opaque {
    level: u8,
}

/// Every attribute on text.
#[tool]
async fn text_rules(
    /// Plain.
    plain: String,
    /// Bounded and patterned.
    #[arg(min_length = 2, max_length = 9, pattern = "^[a-z]+$")]
    word: String,
    /// Maybe bounded.
    #[arg(min_length = 1, pattern = "^x")]
    maybe: Option<String>,
    /// One of three.
    #[arg(one_of = ["red", "green", "blue"])]
    colour: String,
    /// Maybe one of two.
    #[arg(one_of = ["a", "b"])]
    choice: Option<String>,
    /// Sent in a header too.
    #[arg(header = "X-Region")]
    region: String,
    #[arg(description = "")] empty_description: String,
    #[arg(rename = "renamed", description = "Renamed.", default = "d")] r#type: String,
) -> String {
    format!("{plain}{word}{maybe:?}{colour}{choice:?}{region}{empty_description}{type}")
}

#[derive(JsonSchema)]
#[schemars(crate = "tk::schemars")]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct TextRules {
    #[schemars(description = "Plain.")]
    plain: String,
    #[schemars(description = "Bounded and patterned.")]
    #[schemars(length(min = 2u64, max = 9u64))]
    #[schemars(regex(pattern = "^[a-z]+$"))]
    word: String,
    #[schemars(description = "Maybe bounded.")]
    #[schemars(length(min = 1u64))]
    #[schemars(regex(pattern = "^x"))]
    maybe: Option<String>,
    #[schemars(description = "One of three.")]
    #[schemars(transform = tk::__private_0_1::OneOf("[\"red\",\"green\",\"blue\"]"))]
    colour: String,
    #[schemars(description = "Maybe one of two.")]
    #[schemars(transform = tk::__private_0_1::OneOf("[\"a\",\"b\"]"))]
    choice: Option<String>,
    #[schemars(description = "Sent in a header too.")]
    #[schemars(extend("x-mcp-header" = "X-Region"))]
    region: String,
    #[schemars(description = "")]
    empty_description: String,
    #[schemars(description = "Renamed.")]
    #[serde(rename = "renamed")]
    #[serde(default = "text_default")]
    r#type: String,
}

fn text_default() -> String {
    "d".into()
}

#[test]
fn text_attributes_give_the_derived_schema() {
    assert_same(TextRulesTool, derived::<TextRules>());
}

/// Every attribute on numbers.
#[tool]
async fn number_rules(
    /// Whole.
    #[arg(minimum = 1, maximum = 14)]
    days: u32,
    /// Negative bounds.
    #[arg(minimum = -40, maximum = -1)]
    below: i64,
    /// Negative bounds past an `i32`, typed by their suffix.
    #[arg(minimum = -3000000000i64, maximum = -2.5f64)]
    far_below: i64,
    /// Bounds past an `i32`, without a suffix.
    #[arg(minimum = -5000000000, maximum = 18000000000000000000)]
    wide: i128,
    /// Fractional bounds.
    #[arg(minimum = 0.5, maximum = 2.5)]
    ratio: f64,
    /// A float bound on an integer.
    #[arg(maximum = 9.5)]
    small: u8,
    /// Maybe bounded.
    #[arg(minimum = 3)]
    maybe: Option<u16>,
    /// One of three numbers.
    #[arg(one_of = [1, 2, 3])]
    level: u8,
    /// With a default.
    #[arg(default = 7, minimum = 1)]
    retries: u32,
    /// With a float default.
    #[arg(default = 0.25)]
    share: f32,
) -> String {
    format!("{days}{below}{far_below}{wide}{ratio}{small}{maybe:?}{level}{retries}{share}")
}

#[derive(JsonSchema)]
#[schemars(crate = "tk::schemars")]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct NumberRules {
    #[schemars(description = "Whole.")]
    #[schemars(range(min = 1, max = 14))]
    days: u32,
    #[schemars(description = "Negative bounds.")]
    #[schemars(range(min = -40, max = -1))]
    below: i64,
    #[schemars(description = "Negative bounds past an `i32`, typed by their suffix.")]
    #[schemars(range(min = -3000000000i64, max = -2.5f64))]
    far_below: i64,
    #[schemars(description = "Bounds past an `i32`, without a suffix.")]
    #[schemars(range(min = -5000000000i64, max = 18000000000000000000u64))]
    wide: i128,
    #[schemars(description = "Fractional bounds.")]
    #[schemars(range(min = 0.5, max = 2.5))]
    ratio: f64,
    #[schemars(description = "A float bound on an integer.")]
    #[schemars(range(max = 9.5))]
    small: u8,
    #[schemars(description = "Maybe bounded.")]
    #[schemars(range(min = 3))]
    maybe: Option<u16>,
    #[schemars(description = "One of three numbers.")]
    #[schemars(transform = tk::__private_0_1::OneOf("[1,2,3]"))]
    level: u8,
    #[schemars(description = "With a default.")]
    #[serde(default = "seven")]
    #[schemars(range(min = 1))]
    retries: u32,
    #[schemars(description = "With a float default.")]
    #[serde(default = "quarter")]
    share: f32,
}

fn seven() -> u32 {
    7
}

fn quarter() -> f32 {
    0.25
}

#[test]
fn number_attributes_give_the_derived_schema() {
    assert_same(NumberRulesTool, derived::<NumberRules>());
    let far_below = &NumberRulesTool.spec().input_schema["properties"]["far_below"];
    assert_eq!(far_below["minimum"], json!(-3_000_000_000_i64));
    assert_eq!(far_below["maximum"], json!(-2.5));
    let wide = &NumberRulesTool.spec().input_schema["properties"]["wide"];
    assert_eq!(wide["minimum"], json!(-5_000_000_000_i64));
    assert_eq!(wide["maximum"], json!(18_000_000_000_000_000_000_u64));
}

/// Lists, maps and types of the user's own.
#[tool]
async fn shaped(
    /// Between one and three.
    #[arg(min_items = 1, max_items = 3)]
    tags: Vec<String>,
    /// Each one of two.
    #[arg(one_of = ["x", "y"])]
    marks: Vec<String>,
    /// A point, by reference.
    at: Point,
    /// Maybe a point.
    near: Option<Point>,
    /// A shade.
    shade: Shade,
    /// Counts by name.
    counts: BTreeMap<String, u32>,
    /// A default that does not serialize.
    #[arg(default = Opaque::default())]
    opaque: Opaque,
    /// Points.
    path: Vec<Point>,
) -> String {
    let _ = (&at, &near, &shade, &opaque, &path);
    format!("{tags:?}{marks:?}{counts:?}")
}

#[derive(JsonSchema)]
#[schemars(crate = "tk::schemars")]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Shaped {
    #[schemars(description = "Between one and three.")]
    #[schemars(length(min = 1u64, max = 3u64))]
    tags: Vec<String>,
    #[schemars(description = "Each one of two.")]
    #[schemars(transform = tk::__private_0_1::OneOf("[\"x\",\"y\"]"))]
    marks: Vec<String>,
    #[schemars(description = "A point, by reference.")]
    at: Point,
    #[schemars(description = "Maybe a point.")]
    near: Option<Point>,
    #[schemars(description = "A shade.")]
    shade: Shade,
    #[schemars(description = "Counts by name.")]
    counts: BTreeMap<String, u32>,
    #[schemars(description = "A default that does not serialize.")]
    #[serde(default = "Opaque::default")]
    opaque: Opaque,
    #[schemars(description = "Points.")]
    path: Vec<Point>,
}

#[test]
fn lists_and_own_types_give_the_derived_schema() {
    assert_same(ShapedTool, derived::<Shaped>());
}

/// No parameters at all.
#[tool]
async fn nothing() -> String {
    String::new()
}

#[derive(JsonSchema)]
#[schemars(crate = "tk::schemars")]
#[serde(deny_unknown_fields)]
struct Nothing {}

#[test]
fn no_parameters_give_the_derived_schema() {
    assert_same(NothingTool, derived::<Nothing>());
    assert_eq!(
        NothingTool.spec().input_schema,
        json!({"type": "object", "additionalProperties": false, "properties": {}})
    );
}

/// A type of the user's with a schema written by hand, named as the
/// generated arguments type is, and no id of its own (its id is then its
/// name).
#[derive(Deserialize)]
#[serde(crate = "tk::serde")]
pub struct Namesake(#[allow(dead_code)] String);

impl JsonSchema for Namesake {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("__ToolsmithArguments")
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        tk::schemars::json_schema!({"type": "string"})
    }
}

/// Take a namesake.
#[tool]
async fn namesake(value: Namesake) -> String {
    let _ = value;
    String::new()
}

#[derive(JsonSchema)]
#[schemars(crate = "tk::schemars")]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct NamesakeArguments {
    value: Namesake,
}

/// The arguments' schema keeps the derive's id (the module's path and the
/// name), so a parameter type whose id is the bare name is not taken for
/// the root (`{"$ref": "#"}`, the whole arguments object) but gets a
/// definition of its own.
#[test]
fn a_parameter_type_named_like_the_arguments_type_keeps_its_own_schema() {
    assert_same(NamesakeTool, derived::<NamesakeArguments>());
    assert_eq!(
        NamesakeTool.spec().input_schema["properties"]["value"],
        json!({"$ref": "#/$defs/__ToolsmithArguments"})
    );
}

/// More parameters than are read as a tuple: read by serde's derive, and
/// described by the same `Property` list.
#[tool]
async fn seventeen(
    /// First, bounded.
    #[arg(minimum = 1, maximum = 9)]
    n01: u8,
    /// Second, renamed with a default.
    #[arg(rename = "second", default = 2)]
    n02: u8,
    /// Third, one of two.
    #[arg(one_of = ["x", "y"])]
    n03: String,
    /// Fourth, maybe.
    #[arg(min_length = 1)]
    n04: Option<String>,
    n05: u8,
    n06: u8,
    n07: u8,
    n08: u8,
    n09: u8,
    n10: u8,
    n11: u8,
    n12: u8,
    n13: u8,
    n14: u8,
    n15: u8,
    n16: u8,
    /// Last.
    n17: Vec<u8>,
) -> String {
    format!(
        "{n01}{n02}{n03}{n04:?}{n05}{n06}{n07}{n08}{n09}{n10}{n11}{n12}{n13}{n14}{n15}{n16}{n17:?}"
    )
}

#[derive(JsonSchema)]
#[schemars(crate = "tk::schemars")]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Seventeen {
    #[schemars(description = "First, bounded.")]
    #[schemars(range(min = 1, max = 9))]
    n01: u8,
    #[schemars(description = "Second, renamed with a default.")]
    #[serde(rename = "second")]
    #[serde(default = "two")]
    n02: u8,
    #[schemars(description = "Third, one of two.")]
    #[schemars(transform = tk::__private_0_1::OneOf("[\"x\",\"y\"]"))]
    n03: String,
    #[schemars(description = "Fourth, maybe.")]
    #[schemars(length(min = 1u64))]
    n04: Option<String>,
    n05: u8,
    n06: u8,
    n07: u8,
    n08: u8,
    n09: u8,
    n10: u8,
    n11: u8,
    n12: u8,
    n13: u8,
    n14: u8,
    n15: u8,
    n16: u8,
    #[schemars(description = "Last.")]
    n17: Vec<u8>,
}

fn two() -> u8 {
    2
}

#[test]
fn seventeen_parameters_give_the_derived_schema() {
    assert_same(SeventeenTool, derived::<Seventeen>());
}
