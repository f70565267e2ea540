//! A call's bounds from another thread of a multi-threaded runtime: its
//! timeout and its cancellation stop a tool that never answers (and the
//! call's future, sent between threads, is `Send`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use toolsmith::pipeline::Pipeline;
use toolsmith::{Arguments, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec};

struct Forever {
    spec: ToolSpec,
    dropped_futures: Arc<AtomicUsize>,
}

struct Counted(Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[async_trait]
impl Tool for Forever {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        let _c = Counted(self.dropped_futures.clone());
        std::future::pending::<()>().await;
        unreachable!()
    }
}

fn make(pipeline: Pipeline) -> (Arc<ToolRegistry>, Arc<AtomicUsize>) {
    let dropped = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::new().with_pipeline(pipeline);
    registry
        .register_arc(Arc::new(Forever {
            spec: ToolSpec::new("forever", "A tool.", json!({"type": "object"})),
            dropped_futures: dropped.clone(),
        }))
        .unwrap();
    (Arc::new(registry), dropped)
}

#[test]
fn timeout_and_cancellation_on_another_thread() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (registry, dropped) = make(Pipeline::new().with_timeout(Duration::from_millis(20)));
        let r = registry.clone();
        let out = tokio::time::timeout(
            Duration::from_secs(20),
            tokio::spawn(async move {
                let ctx = ToolContext::new();
                r.call("forever", json!({}), &ctx).await
            }),
        )
        .await
        .expect("bounded")
        .unwrap();
        assert!(
            out.is_error && out.content.contains("did not finish"),
            "{}",
            out.content
        );
        assert_eq!(dropped.load(Ordering::SeqCst), 1);

        let (registry, dropped) = make(Pipeline::new());
        let ctx = ToolContext::new();
        let token = ctx.cancellation().clone();
        let r = registry.clone();
        let task = tokio::spawn(async move { r.call("forever", json!({}), &ctx).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        token.cancel();
        let out = tokio::time::timeout(Duration::from_secs(20), task)
            .await
            .expect("bounded")
            .unwrap();
        assert!(
            out.is_error && out.content.contains("cancelled"),
            "{}",
            out.content
        );
        assert_eq!(dropped.load(Ordering::SeqCst), 1);
    });
}
