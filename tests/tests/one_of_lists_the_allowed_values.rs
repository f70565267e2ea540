//! `#[arg(one_of = [...])]` puts the values a parameter may take in its
//! schema as `enum`: on the value, on each item of a list, and beside `null`
//! for an `Option`. A call with another value is refused with an error that
//! names the values; a value cast to one of them (`"16"` for `16`) passes.
//!
//! The tool is registered by hand, not collected.

use serde_json::{Value, json};
use tk::{Tool, ToolContext, ToolRegistry, tool};

/// Order a pizza.
#[tool]
async fn order_pizza(
    /// Across, in inches.
    #[arg(one_of = [10, 12, 16], default = 12)]
    size: u32,
    #[arg(one_of = ["thin", "thick"])] crust: String,
    /// How much cheese, in portions.
    #[arg(one_of = [0.5, 1, 1.5])]
    cheese: Option<f64>,
    #[arg(one_of = ["olives", "basil", "mushrooms"], max_items = 2)] toppings: Vec<String>,
) -> String {
    format!("{size} {crust} cheese={cheese:?} {toppings:?}")
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(OrderPizzaTool)
        .expect("the tool registers");
    registry
}

async fn call(payload: Value) -> (bool, String) {
    let out = registry()
        .call("order_pizza", payload, &ToolContext::new())
        .await;
    (out.is_error, out.content)
}

#[test]
fn the_values_are_the_schemas_enum() {
    let schema = &OrderPizzaTool.spec().input_schema["properties"];
    assert_eq!(schema["size"]["enum"], json!([10, 12, 16]));
    assert_eq!(schema["size"]["default"], json!(12));
    assert_eq!(schema["size"]["description"], json!("Across, in inches."));
    assert_eq!(schema["crust"]["enum"], json!(["thin", "thick"]));
    // `None` stays a value of an `Option`.
    assert_eq!(schema["cheese"]["enum"], json!([0.5, 1, 1.5, null]));
    // On a list, each item is one of the values.
    assert_eq!(
        schema["toppings"]["items"]["enum"],
        json!(["olives", "basil", "mushrooms"])
    );
    assert_eq!(schema["toppings"]["maxItems"], json!(2));
    assert!(schema["toppings"].get("enum").is_none());
}

#[tokio::test]
async fn a_value_outside_the_list_is_refused_with_the_values() {
    let (is_error, text) = call(json!({"size": 14, "crust": "thin", "toppings": []})).await;
    assert!(is_error, "{text}");
    assert!(text.contains("size must be one of 10, 12, 16"), "{text}");

    let (is_error, text) = call(json!({
        "crust": "deep",
        "cheese": 2,
        "toppings": ["basil", "ham"],
    }))
    .await;
    assert!(is_error, "{text}");
    for problem in [
        r#"crust must be one of "thin", "thick""#,
        "cheese must be one of 0.5, 1, 1.5, null",
        r#"toppings[1] must be one of "olives", "basil", "mushrooms""#,
    ] {
        assert!(text.contains(problem), "{problem:?} in {text}");
    }
}

#[tokio::test]
async fn a_value_cast_into_the_list_is_accepted() {
    let (is_error, text) = call(json!({
        "size": "16",
        "crust": "thick",
        "cheese": "1.5",
        "toppings": ["olives"],
    }))
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(text, r#"16 thick cheese=Some(1.5) ["olives"]"#);

    let casts: Vec<String> = registry()
        .prepare(
            "order_pizza",
            json!({"size": 10.0, "crust": "thin", "toppings": []}),
        )
        .expect("valid after casting")
        .casts()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(casts, ["size: number 10.0 -> integer"]);
}

#[tokio::test]
async fn an_option_may_still_be_null_or_left_out_and_the_default_applies() {
    let (is_error, text) = call(json!({"crust": "thin", "cheese": null, "toppings": []})).await;
    assert!(!is_error, "{text}");
    assert_eq!(text, "12 thin cheese=None []");
}
