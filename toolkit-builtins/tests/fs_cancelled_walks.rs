//! A walk whose caller has been cancelled stops: the file and search tools
//! run their bodies through `exec::run_blocking`, whose body context has a
//! token of its own, cancelled with the caller's (and when the caller's
//! future is dropped, see `fs::blocking`'s own tests). The walks check it
//! between entries, so a cancelled grep, glob or recursive listing does
//! not read the tree to its end. Each is called first with a live context,
//! so the tree is known to be found whole when nobody cancels.

mod fs_support;

use std::sync::Arc;
use std::time::Duration;

use fs_support::Env;
use serde_json::{Value, json};
use toolsmith::{Tool, ToolContext, ToolError};

const FILES: usize = 60;

fn env_with_a_tree() -> Env {
    let env = Env::new();
    for i in 0..FILES {
        env.write(&format!("d{}/f{i:02}.txt", i % 6), "needle\n");
    }
    env
}

/// The tool's body as the pipeline runs it, without the pipeline's own
/// checks in front of it (a cancelled call may be refused before it starts).
async fn run(env: &Env, ctx: &ToolContext, name: &str, args: Value) -> Result<String, ToolError> {
    let tool: Arc<dyn Tool> = env.registry.get(name).expect("a file tool");
    let args = tool.bind(args).expect("arguments the tool takes");
    let call = tool.call(args, ctx);
    let out = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .expect("the call ends in time")?;
    Ok(out.content)
}

fn cancelled(ctx: &ToolContext) -> ToolContext {
    let ctx = ctx
        .clone()
        .with_cancellation(ctx.cancellation().child_token());
    ctx.cancellation().cancel();
    ctx
}

fn files_named(text: &str) -> usize {
    (0..FILES)
        .filter(|i| text.contains(&format!("f{i:02}.txt")))
        .count()
}

#[tokio::test]
async fn a_cancelled_callers_walks_stop() {
    let env = env_with_a_tree();
    let stopped = cancelled(&env.ctx);
    for (tool, args) in [
        (
            "grep",
            json!({"pattern": "needle", "output_mode": "files_with_matches", "head_limit": 1000}),
        ),
        ("glob", json!({"pattern": "**/*.txt", "max_results": 1000})),
        (
            "list_dir",
            json!({"path": ".", "recursive": true, "max_entries": 1000}),
        ),
    ] {
        let whole = run(&env, &env.ctx, tool, args.clone()).await.unwrap();
        assert_eq!(files_named(&whole), FILES, "{tool} live: {whole}");
        match run(&env, &stopped, tool, args).await {
            Err(ToolError::Cancelled) => {}
            Ok(part) => assert_eq!(files_named(&part), 0, "{tool} cancelled: {part}"),
            Err(other) => panic!("{tool} cancelled: {other}"),
        }
    }
}
