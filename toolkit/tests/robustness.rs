//! The testing helpers: arguments generated from real tools' schemas, and
//! the robustness check run against good and broken tools.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::json;
use toolsmith::testing::{ArgumentGenerator, CaseKind, Robustness, assert_tool_is_robust};
use toolsmith::{Tool, ToolError, ToolRegistry, data, tool};

/// Where something happens.
#[data(Deserialize, JsonSchema)]
pub struct Place {
    /// The city.
    city: String,
    /// The floor, if it matters.
    floor: Option<i32>,
}

/// How urgent.
#[data(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Urgency {
    /// Whenever.
    Low,
    /// Now.
    High,
}

/// Schedule a meeting.
// As many parameters as a model-facing tool has, to exercise the generator.
#[allow(clippy::too_many_arguments)]
#[tool]
async fn schedule(
    /// What it is about.
    #[arg(min_length = 3, max_length = 40)]
    title: String,
    /// In how many minutes.
    #[arg(minimum = 1, maximum = 1440)]
    in_minutes: u32,
    /// How urgent.
    urgency: Urgency,
    /// Labels.
    #[arg(max_items = 4)]
    tags: Vec<String>,
    /// Whether to tell everyone.
    notify_all: bool,
    /// A share between 0 and 1.
    #[arg(minimum = 0.0, maximum = 1.0)]
    share: Option<f64>,
    /// The room code.
    #[arg(pattern = "^[A-Z]{2}-\\d{3}$")]
    room: String,
    /// Where.
    place: Place,
    /// The channel.
    #[arg(one_of = ["mail", "chat"], default = "mail".to_string())]
    channel: String,
) -> String {
    let _ = (urgency, share, channel);
    format!(
        "{title} in {in_minutes} min in {room} ({}, floor {:?}), {} tags, notify {notify_all}",
        place.city,
        place.floor,
        tags.len()
    )
}

/// Divide two numbers.
#[tool]
async fn divide(a: i64, b: i64) -> Result<String, ToolError> {
    if b == 0 {
        return Err(ToolError::failed("b must not be 0: division by zero"));
    }
    Ok(a.checked_div(b)
        .map_or("overflow".into(), |q| q.to_string()))
}

/// Take a number, badly.
#[tool]
async fn fragile(n: i64) -> String {
    assert!(n < 100, "a number this large was never expected");
    n.to_string()
}

/// Fail without saying why.
#[tool]
async fn mute(n: i64) -> Result<String, ToolError> {
    let _ = n;
    Err(ToolError::failed(""))
}

/// Never answer.
#[tool]
async fn stuck(n: i64) -> String {
    let _ = n;
    std::future::pending::<()>().await;
    unreachable!()
}

async fn bounded<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("the test took too long")
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    for tool in [
        std::sync::Arc::new(ScheduleTool) as std::sync::Arc<dyn Tool>,
        std::sync::Arc::new(DivideTool),
        std::sync::Arc::new(FragileTool),
        std::sync::Arc::new(MuteTool),
        std::sync::Arc::new(StuckTool),
    ] {
        registry.register_arc(tool).unwrap();
    }
    registry
}

#[test]
fn the_same_seed_gives_the_same_cases_and_another_seed_others() {
    let spec = ScheduleTool.spec();
    let a = ArgumentGenerator::new(spec, 11).unwrap().cases(40);
    let b = ArgumentGenerator::new(spec, 11).unwrap().cases(40);
    let c = ArgumentGenerator::new(spec, 12).unwrap().cases(40);
    assert_eq!(a.len(), 40);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn every_case_is_what_it_says_for_the_registry() {
    let registry = registry();
    let mut kinds = HashSet::new();
    for seed in 0..5 {
        let mut generator = ArgumentGenerator::new(ScheduleTool.spec(), seed).unwrap();
        for case in generator.cases(60) {
            kinds.insert(case.kind);
            let checked = registry.check("schedule", case.arguments.clone());
            match case.kind {
                CaseKind::Valid => {
                    let checked = checked.unwrap_or_else(|e| panic!("{case:?}: {e}"));
                    assert!(checked.casts().is_empty(), "{case:?}");
                    assert_eq!(Some(checked.arguments()), case.expected.as_ref());
                }
                CaseKind::Sloppy => {
                    let checked = checked.unwrap_or_else(|e| panic!("{case:?}: {e}"));
                    assert_eq!(
                        Some(checked.arguments()),
                        case.expected.as_ref(),
                        "{case:?}"
                    );
                    assert_ne!(&case.arguments, checked.arguments(), "{case:?}");
                }
                CaseKind::Invalid => assert!(checked.is_err(), "{case:?}"),
            }
        }
    }
    assert_eq!(kinds.len(), 3);
}

#[test]
fn sloppy_cases_are_sloppy_in_every_way_casting_accepts() {
    let mut notes = String::new();
    for seed in 0..20 {
        let mut generator = ArgumentGenerator::new(ScheduleTool.spec(), seed).unwrap();
        for _ in 0..20 {
            if let Some(case) = generator.sloppy() {
                notes.push_str(&case.note);
                notes.push('\n');
            }
        }
    }
    for kind in [
        "as the text",      // a number as text
        "notify_all as \"", // a boolean as a word
        "as JSON text",     // a list or object as JSON text
        "as null",          // an optional parameter as null
        "spelled ",         // a camelCase name
        "as a JSON string", // the whole arguments as a string
    ] {
        assert!(notes.contains(kind), "no sloppy case `{kind}` in:\n{notes}");
    }
}

#[test]
fn invalid_cases_cover_each_kind_of_mistake() {
    let mut notes = String::new();
    for seed in 0..20 {
        let mut generator = ArgumentGenerator::new(ScheduleTool.spec(), seed).unwrap();
        for _ in 0..20 {
            if let Some(case) = generator.invalid() {
                notes.push_str(&case.note);
                notes.push('\n');
            }
        }
    }
    for kind in [
        "missing required",
        "unknown unexpected_parameter_zq",
        "not an object",
        "of the wrong type",
        "past its maximum",
        "too short",
        "with too many items",
        "not one of the values allowed",
        "not matching its pattern",
    ] {
        assert!(
            notes.contains(kind),
            "no invalid case `{kind}` in:\n{notes}"
        );
    }
}

#[tokio::test]
async fn well_made_tools_are_robust() {
    bounded(async {
        let registry = registry();
        let report = assert_tool_is_robust(&registry, "schedule", 150).await;
        assert!(
            report.valid > 20 && report.sloppy > 20 && report.invalid > 20,
            "{report}"
        );
        // Division by zero is the tool's own error, with words: allowed.
        Robustness::new(&registry, "divide")
            .cases(150)
            .seed(5)
            .allow_tool_errors()
            .assert()
            .await;
    })
    .await;
}

#[tokio::test]
async fn broken_tools_are_caught() {
    bounded(async {
        let registry = registry();
        let report = Robustness::new(&registry, "fragile").cases(100).run().await;
        assert!(
            report
                .failures
                .iter()
                .any(|f| f.problem == "the tool panicked"),
            "{report}"
        );

        let report = Robustness::new(&registry, "mute").cases(30).run().await;
        assert!(
            report
                .failures
                .iter()
                .any(|f| f.problem == "an error without text"),
            "{report}"
        );

        let report = Robustness::new(&registry, "stuck")
            .cases(3)
            .per_call_timeout(Duration::from_millis(100))
            .run()
            .await;
        assert!(
            report
                .failures
                .iter()
                .any(|f| f.problem.starts_with("no answer within")),
            "{report}"
        );
    })
    .await;
}

#[test]
fn the_assertion_panics_with_the_report() {
    let registry = registry();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runtime.block_on(async {
            tokio::time::timeout(
                Duration::from_secs(60),
                assert_tool_is_robust(&registry, "fragile", 100),
            )
            .await
        })
    }))
    .expect_err("fragile is not robust");
    let text = caught.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(text.contains("the tool `fragile` is not robust"), "{text}");
    assert!(text.contains("the tool panicked"), "{text}");
}

#[test]
fn the_generator_works_from_a_schema_alone() {
    let schema = json!({
        "type": "object",
        "properties": {
            "ids": {"type": "array", "items": {"$ref": "#/$defs/Id"}, "minItems": 1},
            "mode": {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]}
        },
        "required": ["ids"],
        "additionalProperties": false,
        "$defs": {"Id": {"type": "integer", "minimum": 10, "maximum": 20}}
    });
    let cases = ArgumentGenerator::from_schema(&schema, 1)
        .unwrap()
        .cases(50);
    let valid: Vec<_> = cases.iter().filter(|c| c.kind == CaseKind::Valid).collect();
    assert!(!valid.is_empty());
    for case in valid {
        for id in case.arguments["ids"].as_array().unwrap() {
            assert!((10..=20).contains(&id.as_i64().unwrap()), "{case:?}");
        }
    }
}
