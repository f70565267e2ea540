//! A catalog of 1,000 tools: how long a `tool_search` takes, and how many
//! bytes of definitions a turn sends with and without deferred loading.
//!
//! Run with `cargo bench -p toolsmith --bench catalog`; the sizes are
//! printed first, and the times against the baseline (rendering every
//! definition of the turn, nothing deferred) by
//! `python3 scripts/bench_ratios.py catalog`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolsmith::{
    Arguments, DeferredTools, Definition, DefinitionFormat, Tool, ToolContext, ToolError,
    ToolOutput, ToolRegistry, ToolSearch, ToolSpec, async_trait,
};

/// A tool known only by its spec, as one mounted from an MCP server is.
struct Listed(ToolSpec);

#[async_trait]
impl Tool for Listed {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok("ok".into())
    }
}

const SERVERS: [&str; 33] = [
    "github",
    "gitlab",
    "slack",
    "discord",
    "calendar",
    "drive",
    "dropbox",
    "jira",
    "linear",
    "notion",
    "confluence",
    "email",
    "sms",
    "stripe",
    "shopify",
    "salesforce",
    "hubspot",
    "zendesk",
    "postgres",
    "mysql",
    "redis",
    "s3",
    "kubernetes",
    "docker",
    "aws",
    "gcp",
    "sentry",
    "datadog",
    "pagerduty",
    "figma",
    "spotify",
    "maps",
    "weather",
];
const VERBS: [&str; 10] = [
    "list", "get", "create", "update", "delete", "search", "archive", "share", "export", "sync",
];
const NOUNS: [&str; 3] = ["item", "record", "report"];

/// 10 local tools and 990 from 33 MCP servers (30 each), with descriptions
/// and 3 to 5 described parameters, as a large real catalog has.
fn catalog() -> Vec<Listed> {
    let mut tools = Vec::new();
    for local in [
        "read_file",
        "write_file",
        "edit_file",
        "list_dir",
        "grep",
        "glob",
        "shell",
        "fetch_url",
        "web_search",
        "memory",
    ] {
        tools.push(spec(
            local.to_owned(),
            format!("The local `{local}` tool."),
            3,
        ));
    }
    for server in SERVERS {
        for verb in VERBS {
            for noun in NOUNS {
                let name = format!("mcp_{server}_{verb}_{noun}");
                let description = format!(
                    "{verb} a {server} {noun}. Works with the {server} API; returns the {noun} \
                     as JSON with its id, owner, timestamps and status. Fails when the {noun} \
                     does not exist or the token lacks the scope to {verb} it.",
                );
                tools.push(spec(name, description, 3 + (verb.len() % 3)));
            }
        }
    }
    tools
}

fn spec(name: String, description: String, parameters: usize) -> Listed {
    let words = ["id", "owner", "query", "limit", "cursor"];
    let properties: serde_json::Map<String, Value> = words[..parameters]
        .iter()
        .map(|p| {
            (
                (*p).to_owned(),
                json!({"type": "string", "description": format!("The {p} to use.")}),
            )
        })
        .collect();
    Listed(ToolSpec::new(
        name,
        description,
        json!({"type": "object", "properties": properties, "required": ["id"]}),
    ))
}

fn bytes(definitions: &[Definition]) -> usize {
    serde_json::to_vec(definitions).unwrap().len()
}

fn catalog_bench(c: &mut Criterion) {
    let registry = Arc::new(ToolRegistry::new());
    for tool in catalog() {
        registry.register(tool).unwrap();
    }
    let deferred = Arc::new(DeferredTools::new().defer_prefix("mcp_").with_native(false));
    registry
        .register(ToolSearch::new(&registry, deferred.clone()))
        .unwrap();
    let native = DeferredTools::new().defer_prefix("mcp_");
    let ctx = ToolContext::new().with_session_key("bench");
    let found = deferred.search(&registry, "create a stripe report", 5);
    assert_eq!(found[0], "mcp_stripe_create_report");

    println!("catalog: {} tools", registry.len());
    for format in [DefinitionFormat::OpenAi, DefinitionFormat::Anthropic] {
        let all = registry.definitions(format);
        let first = deferred.definitions(&registry, format, &ToolContext::new());
        deferred.load("bench", &found);
        let loaded = deferred.definitions(&registry, format, &ctx);
        deferred.forget_session("bench");
        println!(
            "  {format:?}: every definition {} bytes ({} tools); deferred: {} bytes ({} tools), \
             {} bytes with 5 loaded ({} tools)",
            bytes(&all),
            all.len(),
            bytes(&first),
            first.len(),
            bytes(&loaded),
            loaded.len(),
        );
    }
    let anthropic = native.definitions(&registry, DefinitionFormat::Anthropic, &ctx);
    println!(
        "  Anthropic, deferred natively: {} bytes sent ({} entries), the deferred ones \
         kept out of the model's context by the provider",
        bytes(&anthropic),
        anthropic.len()
    );

    let mut group = c.benchmark_group("catalog");
    // A copy of every definition's JSON, as a host that edits them would make.
    group.bench_function("baseline", |b| {
        b.iter(|| {
            let all = registry.definitions(DefinitionFormat::OpenAi);
            black_box(all.iter().map(|d| Value::clone(d)).collect::<Vec<Value>>())
        })
    });
    group.bench_function("turn_deferred_5_loaded", |b| {
        deferred.load("bench", &found);
        b.iter(|| black_box(deferred.definitions(&registry, DefinitionFormat::OpenAi, &ctx)))
    });
    group.bench_function("search_bm25", |b| {
        b.iter(|| black_box(deferred.search(&registry, black_box("create a stripe report"), 5)))
    });
    group.bench_function("search_regex", |b| {
        b.iter(|| {
            black_box(
                deferred
                    .search_regex(&registry, black_box("^mcp_stripe_.*report"), 5)
                    .unwrap(),
            )
        })
    });
    group.finish();
}

criterion_group!(benches, catalog_bench);
criterion_main!(benches);
