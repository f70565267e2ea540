//! `#[tool(category = ...)]` accepts every category the core crate has, by
//! its own name. (The macro crate cannot depend on the core crate, so it
//! keeps its own list; this test keeps the two in step.)

use tk::{Tool, ToolCategory, tool};

/// A tool in the `filesystem_read` category.
#[tool(category = filesystem_read)]
async fn in_filesystem_read() {}

/// A tool in the `filesystem_write` category.
#[tool(category = filesystem_write)]
async fn in_filesystem_write() {}

/// A tool in the `network_read` category.
#[tool(category = network_read)]
async fn in_network_read() {}

/// A tool in the `network_write` category.
#[tool(category = network_write)]
async fn in_network_write() {}

/// A tool in the `shell` category.
#[tool(category = shell)]
async fn in_shell() {}

/// A tool in the `hardware` category.
#[tool(category = hardware)]
async fn in_hardware() {}

/// A tool in the `memory` category.
#[tool(category = memory)]
async fn in_memory() {}

/// A tool in the `messaging` category.
#[tool(category = messaging)]
async fn in_messaging() {}

/// A tool in the `destructive` category.
#[tool(category = destructive)]
async fn in_destructive() {}

#[test]
fn every_category_can_be_named_in_the_attribute() {
    let tools: [&dyn Tool; 9] = [
        &InFilesystemReadTool,
        &InFilesystemWriteTool,
        &InNetworkReadTool,
        &InNetworkWriteTool,
        &InShellTool,
        &InHardwareTool,
        &InMemoryTool,
        &InMessagingTool,
        &InDestructiveTool,
    ];
    // A new category must be added here and to the macro's list.
    assert_eq!(ToolCategory::ALL.len(), tools.len());
    for (tool, category) in tools.iter().zip(ToolCategory::ALL) {
        assert_eq!(tool.spec().category, Some(category));
    }
}
