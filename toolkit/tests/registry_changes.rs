//! Changing the registry while it is in use: registrations from many
//! threads are all kept, and a group replaced while others read is seen
//! whole or not at all.

use std::sync::Arc;
use std::thread;

use serde_json::json;
use toolsmith::{
    Arguments, RegistryError, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec,
    async_trait,
};

/// A tool whose name is chosen at run time, as MCP tools' are.
struct Named(ToolSpec);

impl Named {
    fn shared(name: String) -> Arc<dyn Tool> {
        Arc::new(Self(ToolSpec::new(
            name,
            "A tool made at run time.",
            json!({"type": "object", "properties": {}}),
        )))
    }
}

#[async_trait]
impl Tool for Named {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(self.0.name.to_string().into())
    }
}

#[test]
fn registrations_from_many_threads_are_all_kept() {
    let registry = Arc::new(ToolRegistry::new());
    let writers: Vec<_> = (0..8)
        .map(|t| {
            let registry = Arc::clone(&registry);
            thread::spawn(move || {
                for i in 0..50 {
                    registry
                        .register_arc(Named::shared(format!("t{t}_{i}")))
                        .unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    assert_eq!(registry.len(), 400);
}

#[test]
fn readers_see_a_replaced_group_whole_or_not_at_all() {
    let registry = Arc::new(ToolRegistry::new());
    let group = |generation: usize| -> Vec<Arc<dyn Tool>> {
        (0..10)
            .map(|i| Named::shared(format!("mcp_s_{generation}_{i}")))
            .collect()
    };
    registry
        .replace(|n| n.starts_with("mcp_s_"), group(0))
        .unwrap();
    let writer = {
        let registry = Arc::clone(&registry);
        thread::spawn(move || {
            for generation in 1..200 {
                registry
                    .replace(|n| n.starts_with("mcp_s_"), group(generation))
                    .unwrap();
            }
        })
    };
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let registry = Arc::clone(&registry);
            thread::spawn(move || {
                for _ in 0..500 {
                    let names = registry.names();
                    assert_eq!(names.len(), 10, "a half-replaced group: {names:?}");
                    let generation = names[0].split('_').nth(2).unwrap().to_owned();
                    assert!(
                        names
                            .iter()
                            .all(|n| n.split('_').nth(2) == Some(&generation))
                    );
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for reader in readers {
        reader.join().unwrap();
    }
}

#[test]
fn replace_refuses_a_tool_outside_its_group() {
    let registry = ToolRegistry::new();
    let error = registry
        .replace(
            |n| n.starts_with("mcp_a_"),
            vec![Named::shared("mcp_b_x".into())],
        )
        .unwrap_err();
    assert_eq!(error, RegistryError::NotInGroup("mcp_b_x".into()));
    assert!(registry.is_empty());
}

#[test]
fn every_change_moves_the_generation_and_a_refresh_that_changes_nothing_does_not() {
    let registry = ToolRegistry::new();
    let group = |names: &[&str]| -> Vec<Arc<dyn Tool>> {
        names
            .iter()
            .map(|n| Named::shared((*n).to_owned()))
            .collect()
    };
    let mut seen = registry.generation();
    let mut moved = |registry: &ToolRegistry| {
        let now = registry.generation();
        let moved = now != seen;
        seen = now;
        moved
    };
    registry
        .register_arc(Named::shared("local".into()))
        .unwrap();
    assert!(moved(&registry), "a registration");
    let mine = |n: &str| n.starts_with("mcp_s_");
    registry
        .replace(mine, group(&["mcp_s_a", "mcp_s_b"]))
        .unwrap();
    assert!(moved(&registry), "a group put in");
    // The same tools again, as new objects in another order: nothing to tell.
    registry
        .replace(mine, group(&["mcp_s_b", "mcp_s_a"]))
        .unwrap();
    assert!(!moved(&registry), "a refresh that found the same tools");
    registry.replace(mine, group(&["mcp_s_a"])).unwrap();
    assert!(moved(&registry), "a tool gone from the group");
    registry.unregister("local");
    assert!(moved(&registry), "a removal");
    assert_eq!(registry.names(), ["mcp_s_a"]);
}

#[tokio::test]
async fn a_waiter_wakes_on_the_next_change() {
    let registry = Arc::new(ToolRegistry::new());
    let seen = registry.generation();
    let waiter = tokio::spawn({
        let registry = Arc::clone(&registry);
        async move { registry.changed(seen).await }
    });
    tokio::task::yield_now().await;
    assert!(!waiter.is_finished(), "nothing has changed yet");
    registry.register_arc(Named::shared("late".into())).unwrap();
    waiter.await.unwrap();
    // Waiting on a generation already past returns at once.
    registry.changed(seen).await;
}
