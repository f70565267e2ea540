//! A tool's code that panics anywhere around a call: while its future is
//! made, as its future is dropped (after a timeout or a cancellation), as
//! the tool itself is dropped (its last reference held by a call), and in
//! its `spec()`. On every path (`registry.call` with and without layers,
//! `try_call`, `prepare().run()`, the batch `Runner`) the panic is the
//! call's failure or is contained, and never unwinds into the host. The
//! same with a tracing subscriber set is in `panics_in_tool_code_traced.rs`.

use async_trait::async_trait;
use toolsmith::pipeline::{Call, Layer, Next};
use toolsmith::{CallError, ToolOutput};

/// A layer that does nothing: the call goes through the layered path.
struct PassThrough;

#[async_trait]
impl Layer for PassThrough {
    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        next.run(call).await
    }
}

/// A panic while a tool's future is made (its arguments read, its
/// injected values taken) is the tool's failure on every path, like a panic
/// while it runs: through a layered pipeline, through `registry.call` with
/// no layer (where the tool is started outside any layer's containment),
/// and through the bare steps (`prepare`, then `PreparedCall::run`).
mod while_its_future_is_made {
    use super::PassThrough;

    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;
    use toolsmith::pipeline::Pipeline;
    use toolsmith::{CallError, ToolContext, ToolError, ToolOutput, ToolRegistry, tool};

    /// A value whose reading panics (a host type with a broken `Deserialize`).
    #[derive(Debug)]
    struct Touchy;

    impl<'de> serde::Deserialize<'de> for Touchy {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let text = String::deserialize(deserializer)?;
            if text == "boom" {
                panic!("reading the argument broke");
            }
            Ok(Touchy)
        }
    }

    impl schemars::JsonSchema for Touchy {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "Touchy".into()
        }
        fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
            String::json_schema(generator)
        }
    }

    /// Take a touchy value.
    #[tool]
    async fn touchy(value: Touchy) -> String {
        format!("{value:?}")
    }

    /// The output of a call of `touchy` that panics while its argument is
    /// read, or the panic that escaped the call.
    async fn touchy_call(pipeline: Pipeline) -> Result<ToolOutput, String> {
        let registry = ToolRegistry::new().with_pipeline(pipeline);
        registry.register(TouchyTool).unwrap();
        let registry = Arc::new(registry);
        let task = tokio::spawn(async move {
            registry
                .call("touchy", json!({"value": "boom"}), &ToolContext::new())
                .await
        });
        tokio::time::timeout(Duration::from_secs(20), task)
            .await
            .expect("bounded")
            .map_err(|error| error.to_string())
    }

    #[tokio::test]
    async fn a_panic_while_reading_arguments_is_contained_on_both_paths() {
        let layered = touchy_call(Pipeline::new().layer(PassThrough))
            .await
            .expect("the layered path contains the panic");
        assert!(layered.is_error, "{}", layered.content);
        let fast = touchy_call(Pipeline::new())
            .await
            .expect("the call without layers contains the panic");
        assert_eq!(fast.content, layered.content);
    }

    #[tokio::test]
    async fn a_panic_while_reading_arguments_is_contained_by_the_bare_steps() {
        let registry = ToolRegistry::new();
        registry.register(TouchyTool).unwrap();
        let prepared = registry
            .check("touchy", json!({"value": "boom"}))
            .expect("the schema takes any string");
        // `bind` keeps JSON for a hand-written tool; `#[tool]` reads at `start`.
        let prepared = prepared.bind();
        let result = match prepared {
            Ok(prepared) => {
                tokio::time::timeout(Duration::from_secs(20), prepared.run(&ToolContext::new()))
                    .await
                    .expect("bounded")
            }
            Err(error) => Err(error),
        };
        let error = result.expect_err("the panic is the call's failure");
        assert!(
            matches!(&error, CallError::Tool { error: ToolError::Panicked(said), .. } if said == "reading the argument broke"),
            "{error}"
        );
    }
}

/// A tool's code that panics outside a poll of its future: its future's
/// drop code, run on a timeout or a cancellation, and a panic payload's own
/// drop code. Both escaped `registry.call` and `try_call` without layers
/// (a layer's containment caught the first, and turned the timeout into a
/// panic); both are contained on every path, and a timeout stays a timeout.
mod while_its_future_is_dropped {
    use super::PassThrough;

    use std::sync::Arc;
    use std::time::Duration;

    use async_trait::async_trait;
    use serde_json::json;
    use toolsmith::pipeline::Pipeline;
    use toolsmith::{
        Arguments, CancellationToken, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry,
        ToolSpec,
    };

    /// Panics when dropped (a value whose drop code asserts, or owns a tokio
    /// runtime: dropping one on an async thread panics).
    struct PanicOnDrop(&'static str);

    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            if !std::thread::panicking() {
                panic!("{}", self.0);
            }
        }
    }

    /// Waits forever holding a value whose drop panics.
    struct Stuck(ToolSpec);

    #[async_trait]
    impl Tool for Stuck {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
            let _bomb = PanicOnDrop("the tool's future panicked while dropped");
            std::future::pending::<()>().await;
            unreachable!()
        }
    }

    /// Panics with a payload whose own drop panics.
    struct PayloadBomb(ToolSpec);

    #[async_trait]
    impl Tool for PayloadBomb {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
            std::panic::panic_any(PanicOnDrop("the panic's payload panicked while dropped"))
        }
    }

    fn spec(name: &'static str) -> ToolSpec {
        ToolSpec::new(name, "A tool under attack.", json!({"type": "object"}))
    }

    fn registry(pipeline: Pipeline) -> Arc<ToolRegistry> {
        let pipeline = pipeline.with_timeout(Duration::from_millis(50));
        let registry = ToolRegistry::new().with_pipeline(pipeline);
        registry.register(Stuck(spec("stuck"))).unwrap();
        registry
            .register(PayloadBomb(spec("payload_bomb")))
            .unwrap();
        Arc::new(registry)
    }

    /// What `registry.call` gave, or the panic that escaped it.
    async fn call(
        registry: Arc<ToolRegistry>,
        name: &'static str,
        ctx: ToolContext,
    ) -> Result<ToolOutput, String> {
        let task = tokio::spawn(async move { registry.call(name, json!({}), &ctx).await });
        tokio::time::timeout(Duration::from_secs(20), task)
            .await
            .expect("bounded")
            .map_err(|error| error.to_string())
    }

    fn cancelled() -> ToolContext {
        let token = CancellationToken::new();
        token.cancel();
        ToolContext::new().with_cancellation(token)
    }

    /// Whether `output` is the timeout's error.
    fn timed_out(output: &ToolOutput) -> bool {
        output.is_error && output.content.contains("did not finish within")
    }

    /// A tool timed out while holding a value whose drop panics: the call's
    /// answer is the timeout, with a layer or without.
    #[tokio::test]
    async fn a_panic_while_a_timed_out_future_is_dropped_is_contained() {
        let layered = call(
            registry(Pipeline::new().layer(PassThrough)),
            "stuck",
            ToolContext::new(),
        )
        .await
        .expect("the layered path contains it");
        assert!(timed_out(&layered), "{}", layered.content);
        let fast = call(registry(Pipeline::new()), "stuck", ToolContext::new()).await;
        let fast =
            fast.expect("registry.call without layers contains a panic of the tool's future");
        assert!(timed_out(&fast), "{}", fast.content);
    }

    /// The same through `try_call` without layers (`Pipeline::run`).
    #[tokio::test]
    async fn a_panic_while_a_timed_out_future_is_dropped_is_contained_in_try_call() {
        let registry = registry(Pipeline::new());
        let task = tokio::spawn(async move {
            registry
                .try_call("stuck", json!({}), &ToolContext::new())
                .await
        });
        let result = tokio::time::timeout(Duration::from_secs(20), task)
            .await
            .expect("bounded");
        let error = result
            .expect("try_call contains a panic of the tool's future")
            .unwrap_err();
        assert_eq!(error.kind(), toolsmith::ErrorKind::Timeout, "{error:?}");
    }

    /// The same for a call cancelled through its token.
    #[tokio::test]
    async fn a_panic_while_a_cancelled_future_is_dropped_is_contained() {
        let fast = call(registry(Pipeline::new()), "stuck", cancelled()).await;
        let fast = fast.expect("registry.call contains a panic of a cancelled tool's future");
        assert!(
            fast.is_error && fast.content.contains("cancelled"),
            "{}",
            fast.content
        );
    }

    /// A panic whose payload panics when dropped: the payload is dropped
    /// where that second panic is contained too.
    #[tokio::test]
    async fn a_panic_payload_that_panics_when_dropped_is_contained() {
        let fast = call(
            registry(Pipeline::new()),
            "payload_bomb",
            ToolContext::new(),
        )
        .await;
        let fast = fast.expect("registry.call contains a panic whose payload panics when dropped");
        assert!(
            fast.is_error && fast.content.contains("panic"),
            "{}",
            fast.content
        );
    }
}

/// A tool removed from the registry while one of its calls runs: the call
/// holds the last reference, so the tool itself is dropped when the call
/// ends, inside `registry.call` / `try_call` on the host's task. A tool
/// whose drop panics (one that owns a tokio runtime does, on an async
/// thread) does not unwind into the host, nor out of the batch `Runner`:
/// the registry drops a tool inside panic containment, as it does a
/// tool's future.
mod while_the_tool_is_dropped {
    use super::PassThrough;

    use std::sync::Arc;
    use std::time::Duration;

    use async_trait::async_trait;
    use serde_json::json;
    use tokio::sync::Notify;
    use toolsmith::pipeline::Pipeline;
    use toolsmith::{Arguments, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec};

    struct PanicOnDrop;
    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            if !std::thread::panicking() {
                panic!("the tool panicked while dropped");
            }
        }
    }

    struct Owner {
        spec: ToolSpec,
        started: Arc<Notify>,
        gate: Arc<Notify>,
        _held: PanicOnDrop,
    }

    #[async_trait]
    impl Tool for Owner {
        fn spec(&self) -> &ToolSpec {
            &self.spec
        }
        async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
            self.started.notify_one();
            self.gate.notified().await;
            Ok("done".into())
        }
    }

    #[derive(Clone, Copy, Debug)]
    enum Path {
        Call,
        CallLayered,
        TryCall,
        Runner,
    }

    async fn run(path: Path) -> Result<String, String> {
        let pipeline = match path {
            Path::CallLayered => Pipeline::new().layer(PassThrough),
            _ => Pipeline::new(),
        };
        let registry = Arc::new(ToolRegistry::new().with_pipeline(pipeline));
        let (started, gate) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        registry
            .register(Owner {
                spec: ToolSpec::new("owner", "Owns a value.", json!({"type": "object"})),
                started: started.clone(),
                gate: gate.clone(),
                _held: PanicOnDrop,
            })
            .unwrap();
        let task = tokio::spawn({
            let registry = registry.clone();
            async move {
                let ctx = ToolContext::new();
                match path {
                    Path::Runner => {
                        let runner = toolsmith::exec::Runner::new(registry.clone());
                        let calls = vec![toolsmith::exec::ToolCall::new("c1", "owner", json!({}))];
                        let state = runner.run(calls, &ctx).await;
                        state.calls[0]
                            .output
                            .as_ref()
                            .map(|o| o.content.clone())
                            .unwrap_or_default()
                    }
                    Path::TryCall => registry
                        .try_call("owner", json!({}), &ctx)
                        .await
                        .map(|o| o.content)
                        .unwrap_or_else(|e| e.to_string()),
                    _ => registry.call("owner", json!({}), &ctx).await.content,
                }
            }
        });
        tokio::time::timeout(Duration::from_secs(20), started.notified())
            .await
            .expect("the call started");
        // The host takes the tool out (an MCP server's list changed, say) and
        // lets go of it; the call in flight now holds the last reference.
        drop(registry.unregister("owner").expect("registered"));
        gate.notify_one();
        tokio::time::timeout(Duration::from_secs(20), task)
            .await
            .expect("bounded")
            .map_err(|e| e.to_string())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_tool_dropped_as_its_call_ends_does_not_unwind_into_call() {
        let out = run(Path::Call).await;
        assert_eq!(out.as_deref(), Ok("done"), "registry.call");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_tool_dropped_as_its_call_ends_does_not_unwind_into_layered_call() {
        let out = run(Path::CallLayered).await;
        assert_eq!(out.as_deref(), Ok("done"), "registry.call with a layer");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_tool_dropped_as_its_call_ends_does_not_unwind_into_try_call() {
        let out = run(Path::TryCall).await;
        assert_eq!(out.as_deref(), Ok("done"), "registry.try_call");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_tool_dropped_as_its_call_ends_does_not_unwind_into_the_runner() {
        let out = run(Path::Runner).await;
        assert_eq!(out.as_deref(), Ok("done"), "Runner::run");
    }
}

/// A tool's `spec()` is tool code too. One that panics once the tool is
/// registered (a wrapper whose inner tool went away, say) does not unwind
/// out of `registry.call`, `try_call` or `prepare().run()` when the call
/// fails: the failure is named by the name the registry filed, not by
/// asking the tool again.
mod in_its_spec {
    use super::PassThrough;

    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use async_trait::async_trait;
    use serde_json::json;
    use toolsmith::pipeline::Pipeline;
    use toolsmith::{Arguments, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec};

    struct Fragile {
        spec: ToolSpec,
        armed: Arc<AtomicBool>,
    }

    #[async_trait]
    impl Tool for Fragile {
        fn spec(&self) -> &ToolSpec {
            if self.armed.load(Ordering::SeqCst) {
                panic!("the tool's spec() panicked");
            }
            &self.spec
        }
        async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
            Err(ToolError::failed("it failed"))
        }
    }

    #[derive(Clone, Copy, Debug)]
    enum Path {
        Call,
        CallLayered,
        TryCall,
        PrepareRun,
    }

    async fn run(path: Path) -> Result<String, String> {
        let pipeline = match path {
            Path::CallLayered => Pipeline::new().layer(PassThrough),
            _ => Pipeline::new(),
        };
        let registry = Arc::new(ToolRegistry::new().with_pipeline(pipeline));
        let armed = Arc::new(AtomicBool::new(false));
        registry
            .register(Fragile {
                spec: ToolSpec::new("fragile", "Fails.", json!({"type": "object"})),
                armed: armed.clone(),
            })
            .unwrap();
        armed.store(true, Ordering::SeqCst);
        let task = tokio::spawn(async move {
            let ctx = ToolContext::new();
            match path {
                Path::Call | Path::CallLayered => {
                    registry.call("fragile", json!({}), &ctx).await.content
                }
                Path::TryCall => {
                    format!("{:?}", registry.try_call("fragile", json!({}), &ctx).await)
                }
                Path::PrepareRun => match registry.prepare("fragile", json!({})) {
                    Ok(prepared) => format!("{:?}", prepared.run(&ctx).await.map(|o| o.content)),
                    Err(e) => format!("prepare: {e}"),
                },
            }
        });
        tokio::time::timeout(Duration::from_secs(20), task)
            .await
            .expect("bounded")
            .map_err(|e| e.to_string())
    }

    #[tokio::test]
    async fn a_failed_call_is_named_without_the_tools_spec_through_call() {
        let out = run(Path::Call).await;
        assert!(out.is_ok(), "{out:?}");
    }

    #[tokio::test]
    async fn a_failed_call_is_named_without_the_tools_spec_through_a_layer() {
        let out = run(Path::CallLayered).await;
        assert!(out.is_ok(), "{out:?}");
    }

    #[tokio::test]
    async fn a_failed_call_is_named_without_the_tools_spec_through_try_call() {
        let out = run(Path::TryCall).await;
        assert!(out.is_ok(), "{out:?}");
    }

    #[tokio::test]
    async fn a_failed_call_is_named_without_the_tools_spec_through_prepare() {
        let out = run(Path::PrepareRun).await;
        assert!(out.is_ok(), "{out:?}");
    }
}
