//! The type `#[tool]` makes (`FooTool`) is an ordinary type wherever the
//! function is declared: at every visibility, used from other modules, in
//! nested modules and in function bodies, beside a hand-written `Tool` and
//! beside another tool; it is a `Tool` as itself, as `Arc<dyn Tool>` and
//! `Box<dyn Tool>`, keeps its derives, and registering it by hand next to
//! the copy the registry collects is still a duplicate.

use std::sync::Arc;

use serde_json::json;
use tk as toolsmith;
use tk::{
    Arguments, RegistryError, Tool, ToolContext, ToolError, ToolFilter, ToolOutput, ToolRegistry,
    ToolSpec, async_trait,
};

/// The registry of the tools this file declares at module level.
fn this_files_tools() -> ToolRegistry {
    ToolRegistry::from_inventory(&ToolFilter::all().module_prefix(module_path!()))
        .expect("the tools of this file register")
}

mod outer {
    pub mod inner {
        /// Echo a text, public everywhere.
        #[tk::tool]
        pub async fn vis_pub(
            /// The text.
            text: String,
        ) -> String {
            format!("pub:{text}")
        }

        /// Echo a text, public in the crate.
        #[tk::tool]
        pub(crate) async fn vis_crate(
            /// The text.
            text: String,
        ) -> String {
            format!("crate:{text}")
        }

        /// Echo a text, public to the parent module.
        #[tk::tool]
        pub(super) fn vis_super(
            /// The text.
            text: String,
        ) -> String {
            format!("super:{text}")
        }

        /// Echo a text, public in `crate::outer`.
        #[tk::tool]
        pub(in crate::outer) fn vis_in_path(
            /// The text.
            text: String,
        ) -> String {
            format!("in:{text}")
        }

        /// Echo a text, private to this module.
        #[tk::tool]
        fn vis_private(
            /// The text.
            text: String,
        ) -> String {
            format!("private:{text}")
        }

        /// This module's own use of its private tool type.
        pub fn private_tool() -> Box<dyn tk::Tool> {
            Box::new(VisPrivateTool)
        }
    }

    /// The tool types of `inner` that only `outer` may name.
    pub fn restricted_tools() -> Vec<std::sync::Arc<dyn tk::Tool>> {
        vec![
            std::sync::Arc::new(inner::VisSuperTool),
            std::sync::Arc::new(inner::VisInPathTool),
            std::sync::Arc::new(inner::VisCrateTool),
        ]
    }
}

/// A hand-written tool in the same module as generated ones.
struct HandMade;

#[async_trait]
impl Tool for HandMade {
    fn spec(&self) -> &ToolSpec {
        static SPEC: std::sync::OnceLock<ToolSpec> = std::sync::OnceLock::new();
        SPEC.get_or_init(|| {
            ToolSpec::new(
                "hand_made".to_owned(),
                "A hand-written tool.".to_owned(),
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
            )
        })
    }

    async fn call(&self, _args: Arguments, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("by hand"))
    }
}

/// The first of two tools in one module.
#[tk::tool]
async fn first_of_two() -> String {
    "first".to_owned()
}

/// The second of two tools in one module.
#[tk::tool]
fn second_of_two() -> String {
    "second".to_owned()
}

/// A tool whose callers are told to move on.
#[deprecated = "use first_of_two"]
#[tk::tool]
fn deprecated_tool() -> String {
    "old".to_owned()
}

/// Every visibility of tool type can be named where its visibility reaches
/// and runs as a `Tool`.
#[tokio::test]
async fn tool_types_of_every_visibility_are_tools_where_they_are_visible() {
    let ctx = ToolContext::new();
    let registry = ToolRegistry::new();
    registry
        .register(outer::inner::VisPubTool)
        .expect("registers");
    for tool in outer::restricted_tools() {
        registry.register_arc(tool).expect("registers");
    }
    registry
        .register_arc(Arc::from(outer::inner::private_tool()))
        .expect("registers");
    assert_eq!(
        registry.names(),
        [
            "vis_crate",
            "vis_in_path",
            "vis_private",
            "vis_pub",
            "vis_super"
        ]
    );
    for (name, want) in [
        ("vis_pub", "pub:x"),
        ("vis_crate", "crate:x"),
        ("vis_super", "super:x"),
        ("vis_in_path", "in:x"),
        ("vis_private", "private:x"),
    ] {
        assert_eq!(
            registry
                .call(name, json!({"text": "x"}), &ctx)
                .await
                .content,
            want,
            "{name}"
        );
    }
}

/// A tool declared in a function body is a type of that body.
#[tokio::test]
async fn a_tool_declared_in_a_function_body_is_a_tool() {
    /// Double a number.
    #[tk::tool]
    fn doubled_in_a_body(
        /// The number.
        n: i64,
    ) -> i64 {
        n * 2
    }

    let registry = ToolRegistry::new();
    registry.register(DoubledInABodyTool).expect("registers");
    let out = registry
        .call("doubled_in_a_body", json!({"n": 21}), &ToolContext::new())
        .await;
    assert_eq!(out.content, "42");
    // The registry collects it too, under this function's module.
    assert!(this_files_tools().contains("doubled_in_a_body"));
}

/// Generated and hand-written tools share a module and a registry.
#[tokio::test]
async fn generated_tools_sit_beside_a_hand_written_one() {
    let registry = ToolRegistry::new();
    registry.register(HandMade).expect("registers");
    registry.register(FirstOfTwoTool).expect("registers");
    registry.register(SecondOfTwoTool).expect("registers");
    let ctx = ToolContext::new();
    assert_eq!(
        registry.call("hand_made", json!({}), &ctx).await.content,
        "by hand"
    );
    assert_eq!(
        registry.call("first_of_two", json!({}), &ctx).await.content,
        "first"
    );
    assert_eq!(
        registry
            .call("second_of_two", json!({}), &ctx)
            .await
            .content,
        "second"
    );
}

/// `Arc<dyn Tool>` and `Box<dyn Tool>` of a tool type are the tool, with
/// the same spec as the copy the registry collects.
#[tokio::test]
async fn a_tool_type_behind_arc_and_box_is_the_same_tool() {
    let arc: Arc<dyn Tool> = Arc::new(FirstOfTwoTool);
    let boxed: Box<dyn Tool> = Box::new(SecondOfTwoTool);
    let collected = this_files_tools();
    assert_eq!(
        arc.spec(),
        collected.get("first_of_two").expect("collected").spec()
    );
    assert_eq!(
        boxed.spec(),
        collected.get("second_of_two").expect("collected").spec()
    );
    let out = boxed
        .call(boxed.bind(json!({})).expect("binds"), &ToolContext::new())
        .await
        .expect("runs");
    assert_eq!(out.content, "second");
    // The spec is built once, for both the type and the collected copy.
    assert!(std::ptr::eq(
        FirstOfTwoTool.spec(),
        collected.get("first_of_two").expect("collected").spec()
    ));
}

/// A tool registered by hand in a registry that also collected it is a
/// duplicate, whichever comes first.
#[test]
fn registering_a_collected_tool_again_is_a_duplicate() {
    let registry = this_files_tools();
    let err = registry
        .register(FirstOfTwoTool)
        .expect_err("already collected");
    assert!(
        matches!(&err, RegistryError::Duplicate { name, .. } if name == "first_of_two"),
        "{err:?}"
    );

    let registry = ToolRegistry::new();
    registry.register(SecondOfTwoTool).expect("registers");
    let err = registry
        .register_inventory(&ToolFilter::all().module_prefix(module_path!()))
        .expect_err("already registered by hand");
    assert!(
        matches!(&err, RegistryError::Duplicate { name, .. } if name == "second_of_two"),
        "{err:?}"
    );
}

/// The tool type keeps its derives.
#[test]
#[allow(clippy::default_constructed_unit_structs, clippy::clone_on_copy)]
fn the_tool_type_is_default_clone_copy_and_debug() {
    let made = FirstOfTwoTool::default();
    let copied = made;
    let cloned = made.clone();
    assert_eq!(format!("{copied:?}"), "FirstOfTwoTool");
    assert_eq!(format!("{cloned:?}"), "FirstOfTwoTool");
    assert_eq!(format!("{:?}", outer::inner::VisPubTool), "VisPubTool");
}

/// A deprecated function's tool runs, and the registry collects it.
#[tokio::test]
async fn a_deprecated_tool_is_still_a_tool() {
    let registry = this_files_tools();
    assert_eq!(
        registry
            .call("deprecated_tool", json!({}), &ToolContext::new())
            .await
            .content,
        "old"
    );
    let by_hand = ToolRegistry::new();
    by_hand.register(DeprecatedToolTool).expect("registers");
    assert!(by_hand.contains("deprecated_tool"));
}

/// A tool from the second crate, named by its type, is the tool the
/// registry collects from that crate.
#[test]
fn a_tool_type_from_another_crate_is_a_tool() {
    let registry = ToolRegistry::new();
    registry
        .register(extra_tools::ReverseTextTool)
        .expect("registers");
    let err = registry
        .register_inventory(&ToolFilter::all().module_prefix("extra_tools"))
        .expect_err("reverse_text is already there");
    assert!(
        matches!(&err, RegistryError::Duplicate { name, .. } if name == "reverse_text"),
        "{err:?}"
    );
}

extra_tools::echo_tool!(echo_number_by_macro, u32);

/// A tool declared by a macro of another crate is collected and runs.
#[tokio::test]
async fn a_tool_declared_by_a_macro_of_another_crate_is_a_tool() {
    let registry = this_files_tools();
    assert_eq!(
        registry
            .call(
                "echo_number_by_macro",
                json!({"value": 7}),
                &ToolContext::new()
            )
            .await
            .content,
        "7"
    );
    let by_hand = ToolRegistry::new();
    by_hand.register(EchoNumberByMacroTool).expect("registers");
}
