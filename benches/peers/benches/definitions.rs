//! Building a set of 200 tools and fetching their definitions, with this SDK,
//! rmcp and rig, in one run. The 200 tools are the same on every side (see
//! `generator/src/lib.rs`); the build script writes them.
//!
//! Run with `scripts/bench_peers.sh`, which prints the ratios.

use criterion::{Criterion, criterion_group, criterion_main};
use rig_core::effect::HandlerKey;
use rig_core::serve::ErasedHandler;
use std::collections::HashMap;
use std::hint::black_box;
use toolsmith::{DefinitionFormat, ToolFilter, ToolRegistry};

/// The tools the definitions are built from.
const TOOLS: usize = 200;

/// 200 `#[tool]` functions; they are the only tools linked into this binary.
mod ours {
    include!(concat!(env!("OUT_DIR"), "/ours_200.rs"));
}

/// The same 200 tools as methods of one rmcp server with one router.
mod with_rmcp {
    include!(concat!(env!("OUT_DIR"), "/rmcp_200.rs"));
}

/// The same 200 tools with `#[rig_tool]`.
mod with_rig {
    include!(concat!(env!("OUT_DIR"), "/rig_200.rs"));
}

/// Our registry of every linked `#[tool]`, as an application builds it.
fn ours_registry() -> ToolRegistry {
    ToolRegistry::from_inventory(&ToolFilter::all()).expect("no duplicate names")
}

/// rig's handlers keyed as its runtime keys them.
fn rig_handlers() -> HashMap<HandlerKey, ErasedHandler> {
    with_rig::handlers()
        .into_iter()
        .map(|handler| (handler.descriptor().key, handler))
        .collect()
}

/// rig's definitions: each handler's descriptor (name, description, schema).
fn rig_definitions(
    handlers: &HashMap<HandlerKey, ErasedHandler>,
) -> Vec<rig_core::effect::HandlerDescriptor> {
    handlers.values().map(ErasedHandler::descriptor).collect()
}

fn definitions(c: &mut Criterion) {
    // Every side must really hold the 200 tools before it is timed.
    let registry = ours_registry();
    assert_eq!(registry.definitions(DefinitionFormat::OpenAi).len(), TOOLS);
    let router = with_rmcp::Rmcp200::tool_router();
    assert_eq!(router.list_all().len(), TOOLS);
    let handlers = rig_handlers();
    assert_eq!(rig_definitions(&handlers).len(), TOOLS);

    let mut group = c.benchmark_group("peers_definitions");
    // Build the set of tools, then fetch the definitions once.
    group.bench_function("ours_build_and_fetch", |b| {
        b.iter(|| {
            let registry = ours_registry();
            black_box(registry.definitions(DefinitionFormat::OpenAi))
        })
    });
    group.bench_function("rmcp_build_and_fetch", |b| {
        b.iter(|| black_box(with_rmcp::Rmcp200::tool_router().list_all()))
    });
    group.bench_function("rig_build_and_fetch", |b| {
        b.iter(|| black_box(rig_definitions(&rig_handlers())))
    });
    // Build only, to show how the first figures split.
    group.bench_function("ours_build_only", |b| b.iter(|| black_box(ours_registry())));
    group.bench_function("rmcp_build_only", |b| {
        b.iter(|| black_box(with_rmcp::Rmcp200::tool_router()))
    });
    group.bench_function("rig_build_only", |b| b.iter(|| black_box(rig_handlers())));
    // Fetch again from a set already built, as every turn of an agent does.
    group.bench_function("ours_fetch_again", |b| {
        b.iter(|| black_box(registry.definitions(DefinitionFormat::OpenAi)))
    });
    group.bench_function("rmcp_fetch_again", |b| {
        b.iter(|| black_box(router.list_all()))
    });
    group.bench_function("rig_fetch_again", |b| {
        b.iter(|| black_box(rig_definitions(&handlers)))
    });
    // Fetch again and write them out as the JSON that goes on the wire.
    group.bench_function("ours_fetch_again_as_json", |b| {
        b.iter(|| {
            black_box(serde_json::to_string(
                &*registry.definitions(DefinitionFormat::OpenAi),
            ))
        })
    });
    group.bench_function("rmcp_fetch_again_as_json", |b| {
        b.iter(|| black_box(serde_json::to_string(&router.list_all())))
    });
    group.bench_function("rig_fetch_again_as_json", |b| {
        b.iter(|| black_box(serde_json::to_string(&rig_definitions(&handlers))))
    });
    group.finish();
}

criterion_group!(benches, definitions);
criterion_main!(benches);
