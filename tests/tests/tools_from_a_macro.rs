//! Tools written by a `macro_rules!` macro, whose types are paths through
//! `$crate`: on every path of the expansion (read as a tuple, more than 16
//! parameters, a flattened one beside another).

use serde_json::json;
use tk::{ToolContext, ToolRegistry, data};

/// A number of the crate's own.
#[data(Deserialize, JsonSchema)]
pub struct Level(pub u8);

/// Two numbers, taken flattened.
#[data(Deserialize, JsonSchema)]
pub struct Pair {
    /// The first.
    pub x: u8,
    /// The second.
    pub y: u8,
}

macro_rules! wide_tool {
    () => {
        /// Add seventeen levels.
        #[tk::tool]
        #[allow(clippy::too_many_arguments)]
        pub async fn wide(
            a: $crate::Level,
            b: $crate::Level,
            c: $crate::Level,
            d: $crate::Level,
            e: $crate::Level,
            f: $crate::Level,
            g: $crate::Level,
            h: $crate::Level,
            i: $crate::Level,
            j: $crate::Level,
            k: $crate::Level,
            l: $crate::Level,
            m: $crate::Level,
            n: $crate::Level,
            o: $crate::Level,
            p: $crate::Level,
            q: $crate::Level,
        ) -> String {
            [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q]
                .iter()
                .map(|level| u32::from(level.0))
                .sum::<u32>()
                .to_string()
        }

        /// Add a flattened pair and one more.
        #[tk::tool]
        pub async fn mixed(#[arg(flatten)] pair: $crate::Pair, z: $crate::Level) -> String {
            (u32::from(pair.x) + u32::from(pair.y) + u32::from(z.0)).to_string()
        }

        /// Echo a level.
        #[tk::tool]
        pub async fn narrow(level: $crate::Level) -> String {
            level.0.to_string()
        }
    };
}

wide_tool!();

#[tokio::test]
async fn crate_paths_reach_the_arguments() {
    let registry = ToolRegistry::new();
    registry.register(WideTool).unwrap();
    registry.register(NarrowTool).unwrap();
    registry.register(MixedTool).unwrap();
    let levels: serde_json::Map<String, serde_json::Value> = ('a'..='q')
        .map(|name| (name.to_string(), json!(2)))
        .collect();
    let ctx = ToolContext::new();
    assert_eq!(
        registry.call("wide", levels.into(), &ctx).await.content,
        "34"
    );
    assert_eq!(
        registry
            .call("narrow", json!({"level": 7}), &ctx)
            .await
            .content,
        "7"
    );
    assert_eq!(
        registry
            .call("mixed", json!({"x": 1, "y": 2, "z": 3}), &ctx)
            .await
            .content,
        "6"
    );
}
