//! The path of a call's arguments: payload -> cast -> validate -> deserialize.
//!
//! The first byte picks one of the tools below, whose parameters cover the
//! shapes `#[tool]` accepts (numbers with bounds, strings with patterns,
//! unit, untagged and internally tagged enums, nested and recursive
//! structs, options, lists, maps, tuples, flattened structs); the rest is
//! the payload. Invariants:
//! - nothing panics;
//! - what `check` accepts, `bind` deserializes, the tool runs, and `call`
//!   returns no error;
//! - checked arguments are checked again unchanged, with nothing to cast;
//! - `ArgumentSchema::check` (with its fast path) has the outcome of
//!   `cast` then `validate`.
#![no_main]

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use toolsmith::args::ArgumentSchema;
use toolsmith::fuzzing::normalize_payload;
use toolsmith::schemars::JsonSchema;
use toolsmith::serde::Deserialize;
use toolsmith::serde_json::Value;
use toolsmith::{ToolContext, ToolRegistry, tool};
use toolsmith_fuzz::{block_on, payload_of};

/// A speed, sent as a plain string.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "toolsmith::serde", rename_all = "snake_case")]
#[schemars(crate = "toolsmith::schemars")]
pub enum Mode {
    /// Quick.
    Fast,
    /// Careful.
    VerySlow,
}

/// A target given by number, by name or as a pair.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "toolsmith::serde", untagged)]
#[schemars(crate = "toolsmith::schemars")]
pub enum Target {
    /// By number.
    Id(u32),
    /// By name.
    Name(String),
    /// As a pair.
    Pair {
        /// First.
        a: i8,
        /// Second.
        b: Option<bool>,
    },
}

/// A shape, tagged by `kind`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "toolsmith::serde", tag = "kind", rename_all = "lowercase")]
#[schemars(crate = "toolsmith::schemars")]
pub enum Shape {
    /// Round.
    Circle {
        /// Radius.
        r: f64,
    },
    /// Square.
    Square {
        /// Side.
        side: u16,
    },
}

/// A value in one of two externally tagged forms.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "toolsmith::serde", rename_all = "snake_case")]
#[schemars(crate = "toolsmith::schemars")]
pub enum Change {
    /// Set to a number.
    Set(i64),
    /// Move by an offset and a reason.
    Move {
        /// How far.
        by: i32,
        /// Why.
        reason: Option<String>,
    },
    /// Clear.
    Clear,
}

/// Who owns something. Closed: unknown fields are refused.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "toolsmith::serde", deny_unknown_fields)]
#[schemars(crate = "toolsmith::schemars")]
pub struct Person {
    /// Name.
    pub name: String,
    /// E-mail.
    pub email: Option<String>,
}

/// Facts about an item.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "toolsmith::serde")]
#[schemars(crate = "toolsmith::schemars")]
pub struct Meta {
    /// Flags.
    pub flags: Vec<String>,
    /// From 0 to 9.
    #[schemars(range(max = 9))]
    pub level: u8,
    /// The owner.
    pub owner: Option<Person>,
}

/// A tree of labels.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "toolsmith::serde")]
#[schemars(crate = "toolsmith::schemars")]
pub struct Tree {
    /// Label.
    pub label: String,
    /// Subtrees.
    #[serde(default)]
    pub children: Vec<Tree>,
}

/// Search settings, flattened into the tool's parameters.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "toolsmith::serde")]
#[schemars(crate = "toolsmith::schemars")]
pub struct Search {
    /// What to look for.
    pub query: String,
    /// How many results.
    #[serde(default = "ten")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: u32,
    /// Only these modes.
    #[serde(default)]
    pub modes: Vec<Mode>,
}

fn ten() -> u32 {
    10
}

/// Numbers at their bounds, strings with lengths and patterns.
#[tool]
pub async fn scalars(
    /// Bounded.
    #[arg(minimum = 1, maximum = 100)]
    count: u8,
    /// A float.
    ratio: f32,
    /// Signed.
    big: i64,
    /// Unsigned.
    huge: u64,
    /// A flag.
    flag: bool,
    /// Lowercase, 1 to 8.
    #[arg(min_length = 1, max_length = 8, pattern = "^[a-z]+$")]
    name: String,
    /// A path.
    path: PathBuf,
    /// One character.
    letter: char,
    /// With a default.
    #[arg(default = 0.5, minimum = 0.0, maximum = 1.0)]
    share: f64,
) -> String {
    format!("{count} {ratio} {big} {huge} {flag} {name} {path:?} {letter} {share}")
}

/// Enums of every tagging.
#[tool]
pub async fn enums(
    /// Unit variants.
    mode: Mode,
    /// Untagged.
    target: Target,
    /// Internally tagged.
    shape: Shape,
    /// Externally tagged.
    change: Option<Change>,
    /// A list of shapes.
    more: Option<Vec<Shape>>,
) -> String {
    format!("{mode:?} {target:?} {shape:?} {change:?} {more:?}")
}

/// Nested, recursive and keyed.
#[tool]
pub async fn nested(
    /// Nested struct.
    meta: Meta,
    /// Recursive struct.
    tree: Option<Tree>,
    /// A map of lists.
    lists: HashMap<String, Vec<u16>>,
    /// A sorted map of floats.
    scores: BTreeMap<String, f64>,
    /// A tuple.
    pair: (u8, String),
    /// Lists of options and lists of lists.
    #[arg(min_items = 1, max_items = 4)]
    items: Vec<Option<i32>>,
    /// Grid.
    grid: Vec<Vec<bool>>,
) -> String {
    format!("{meta:?} {tree:?} {lists:?} {scores:?} {pair:?} {items:?} {grid:?}")
}

/// A flattened struct, and a parameter named `arguments` (which changes
/// how the payload is read).
#[tool]
pub async fn flattened(
    /// Flattened.
    #[arg(flatten)]
    search: Search,
) -> String {
    format!("{search:?}")
}

/// A parameter named `arguments`.
#[tool]
pub async fn wrapped(
    /// Named like the wrapper some models put around arguments.
    arguments: Vec<String>,
    /// Any JSON at all.
    extra: Option<Value>,
) -> String {
    format!("{arguments:?} {extra:?}")
}

const TOOLS: [&str; 5] = ["scalars", "enums", "nested", "flattened", "wrapped"];

struct Fixture {
    registry: ToolRegistry,
    schemas: Vec<ArgumentSchema>,
    ctx: ToolContext,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: std::sync::OnceLock<Fixture> = std::sync::OnceLock::new();
    FIXTURE.get_or_init(|| {
        let registry = ToolRegistry::new();
        registry.register(ScalarsTool).unwrap();
        registry.register(EnumsTool).unwrap();
        registry.register(NestedTool).unwrap();
        registry.register(FlattenedTool).unwrap();
        registry.register(WrappedTool).unwrap();
        let schemas = TOOLS
            .iter()
            .map(|name| registry.get(name).unwrap().argument_schema().unwrap())
            .collect();
        Fixture {
            registry,
            schemas,
            ctx: ToolContext::new(),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let index = usize::from(pick) % TOOLS.len();
    let name = TOOLS[index];
    let Fixture {
        registry,
        schemas,
        ctx,
    } = fixture();
    let payload = payload_of(rest);

    // The registry's path: check, bind, run; and `call`, which
    // deserializes inside the tool's future instead.
    let checked = registry.check(name, payload.clone());
    let called = block_on(registry.call(name, payload.clone(), ctx));
    match checked {
        Ok(checked) => {
            assert!(
                !called.is_error,
                "{name}: checked, but call failed: {}",
                called.content
            );
            let args = checked.arguments().clone();
            let prepared = match checked.bind() {
                Ok(prepared) => prepared,
                Err(error) => panic!("{name}: checked {args}, but binding failed: {error}"),
            };
            let output = block_on(prepared.run(ctx))
                .unwrap_or_else(|e| panic!("{name}: bound, but the run failed: {e}"));
            assert!(!output.is_error, "{name}: {}", output.content);

            let again = registry
                .check(name, args.clone())
                .unwrap_or_else(|e| panic!("{name}: checked {args}, refused the second time: {e}"));
            assert!(
                again.casts().is_empty(),
                "{name}: checked {args}, cast again: {:?}",
                again.casts()
            );
            assert_eq!(
                again.arguments(),
                &args,
                "{name}: a second check changed the arguments"
            );
        }
        Err(_) => assert!(called.is_error, "{name}: refused by check, run by call"),
    }

    // The fast path against the full one.
    let schema = &schemas[index];
    if let Ok(args) = normalize_payload(payload, schema.has_parameter("arguments")) {
        let mut fast = args.clone();
        let mut full = args;
        let checked = schema.check(&mut fast);
        let casts = schema.cast(&mut full);
        let validated = schema.validate(&full);
        match (&checked, &validated) {
            (Ok(fast_casts), Ok(())) => {
                assert_eq!(
                    fast, full,
                    "{name}: check and cast disagree on the arguments"
                );
                assert_eq!(
                    fast_casts, &casts,
                    "{name}: check and cast disagree on the casts"
                );
            }
            (Err(fast_errors), Err(full_errors)) => {
                let text = |errors: &[toolsmith::ArgumentError]| {
                    errors.iter().map(ToString::to_string).collect::<Vec<_>>()
                };
                assert_eq!(
                    text(fast_errors),
                    text(full_errors),
                    "{name}: different errors"
                );
            }
            _ => panic!("{name}: check says {checked:?}, cast + validate say {validated:?}"),
        }
    }
});
