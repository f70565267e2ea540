//! One call of the same 3-argument tool through this SDK's `registry.call`,
//! through rmcp's `ToolRouter::call` and through rig's tool handler, against
//! the hand-written serde baseline, all in one run.
//!
//! Run with `scripts/bench_peers.sh`, which prints the ratios; what each path
//! includes is written in `BENCHMARKS.md`.

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::model::{CallToolRequestParams, JsonObject, NumberOrString};
use rmcp::service::{RequestContext, RoleServer, RunningService, serve_directly};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::hint::black_box;
use toolsmith::{ToolContext, ToolRegistry};

/// The tool written with this SDK, as in `toolkit/benches/common/forecast.rs`.
mod ours {
    use toolsmith::tool;

    /// Forecast the weather.
    #[tool(read_only)]
    pub async fn forecast(
        /// The city.
        city: String,
        /// How many days ahead.
        #[arg(minimum = 1, maximum = 14)]
        days: u32,
        /// Metric units.
        metric: bool,
    ) -> String {
        format!("{city}:{days}:{metric}")
    }
}

/// The same tool written with rmcp's macros. rmcp does not enforce the
/// schema's bounds, so the tool checks `days` itself.
mod with_rmcp {
    use rmcp::handler::server::wrapper::Parameters;
    use rmcp::{ErrorData, tool, tool_router};

    /// The tool's arguments.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub struct ForecastArgs {
        /// The city.
        pub city: String,
        /// How many days ahead.
        #[schemars(range(min = 1, max = 14))]
        pub days: u32,
        /// Metric units.
        pub metric: bool,
    }

    /// The server the tool belongs to.
    #[derive(Clone, Default)]
    pub struct Server;

    #[tool_router(server_handler, vis = "pub")]
    impl Server {
        /// Forecast the weather.
        #[tool(annotations(read_only_hint = true))]
        async fn forecast(
            &self,
            Parameters(args): Parameters<ForecastArgs>,
        ) -> Result<String, ErrorData> {
            if !(1..=14).contains(&args.days) {
                return Err(ErrorData::invalid_params(
                    "days must be between 1 and 14",
                    None,
                ));
            }
            Ok(format!("{}:{}:{}", args.city, args.days, args.metric))
        }
    }
}

/// The same tool written with rig's macro, which has no way to declare a
/// bound, so the tool checks `days` itself.
mod with_rig {
    use rig_core::rig_tool;
    use rig_core::tool::ToolExecutionError;

    /// Forecast the weather.
    #[rig_tool(params(
        city = "The city.",
        days = "How many days ahead.",
        metric = "Metric units."
    ))]
    pub async fn forecast(
        city: String,
        days: u32,
        metric: bool,
    ) -> Result<String, ToolExecutionError> {
        if !(1..=14).contains(&days) {
            return Err(ToolExecutionError::invalid_args(
                "days must be between 1 and 14",
            ));
        }
        Ok(format!("{city}:{days}:{metric}"))
    }
}

/// The baseline's arguments, as a hand-written tool declares them.
#[derive(Deserialize)]
struct ForecastArgs {
    city: String,
    days: u32,
    metric: bool,
}

/// The hand-written baseline: deserialize, check the bound, call.
async fn baseline(payload: Value) -> Result<String, String> {
    let args: ForecastArgs = serde_json::from_value(payload).map_err(|e| e.to_string())?;
    checked_call(args).await
}

/// The baseline on the raw JSON text, as rig receives it.
async fn baseline_from_text(text: &str) -> Result<String, String> {
    let args: ForecastArgs = serde_json::from_str(text).map_err(|e| e.to_string())?;
    checked_call(args).await
}

/// The baseline given `"days": "3"` and `"metric": "yes"`: what a hand-written
/// tool has to do to accept them, field by field.
async fn baseline_casting_by_hand(payload: Value) -> Result<String, String> {
    let Value::Object(mut fields) = payload else {
        return Err("arguments must be an object".to_owned());
    };
    let city = match fields.remove("city") {
        Some(Value::String(city)) => city,
        _ => return Err("city must be a string".to_owned()),
    };
    let days = match fields.remove("days") {
        Some(Value::Number(n)) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    }
    .ok_or("days must be a whole number")?;
    let metric = match fields.remove("metric") {
        Some(Value::Bool(b)) => Some(b),
        Some(Value::String(s)) => match s.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" | "on" => Some(true),
            "false" | "no" | "0" | "off" => Some(false),
            _ => None,
        },
        _ => None,
    }
    .ok_or("metric must be true or false")?;
    checked_call(ForecastArgs { city, days, metric }).await
}

async fn checked_call(args: ForecastArgs) -> Result<String, String> {
    if !(1..=14).contains(&args.days) {
        return Err("days must be between 1 and 14".to_owned());
    }
    Ok(ours::forecast(args.city, args.days, args.metric).await)
}

/// rmcp's router with what `ToolRouter::call` needs: the server and a peer.
/// A `Peer` can only come from a running service, so one is started once on an
/// in-process duplex pipe; the calls themselves never touch the pipe.
struct RmcpSide {
    server: with_rmcp::Server,
    router: rmcp::handler::server::router::tool::ToolRouter<with_rmcp::Server>,
    running: RunningService<RoleServer, with_rmcp::Server>,
    _client_end: tokio::io::DuplexStream,
}

impl RmcpSide {
    fn start(runtime: &tokio::runtime::Runtime) -> Self {
        runtime.block_on(async {
            let (server_end, client_end) = tokio::io::duplex(4096);
            let running = serve_directly(with_rmcp::Server, server_end, None);
            Self {
                server: with_rmcp::Server,
                router: with_rmcp::Server::tool_router(),
                running,
                _client_end: client_end,
            }
        })
    }

    /// One `tools/call` as rmcp's `call_tool` handler runs it, minus the
    /// transport: a request context, the call context, the router.
    async fn call(
        &self,
        arguments: JsonObject,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let params = CallToolRequestParams::new("forecast").with_arguments(arguments);
        let request = RequestContext::new(NumberOrString::Number(1), self.running.peer().clone());
        let context =
            rmcp::handler::server::tool::ToolCallContext::new(&self.server, params, request);
        self.router.call(context).await
    }
}

/// rig's tools as its runtime keeps them: handlers keyed by `tool:<name>`.
struct RigSide {
    handlers: HashMap<rig_core::effect::HandlerKey, rig_core::serve::ErasedHandler>,
}

impl RigSide {
    fn new() -> Self {
        let handler = rig_core::serve::ErasedHandler::new(
            rig_core::serve::adapters::ToolAdapter::new(with_rig::Forecast),
        );
        let mut handlers = HashMap::new();
        handlers.insert(handler.descriptor().key, handler);
        Self { handlers }
    }

    /// One tool call as rig's runtime serves it inline: find the handler by
    /// key, dispatch the effect, take the outcome.
    async fn call(&self, name: &str, args: String) -> rig_core::tool::ToolResult {
        let handler = self
            .handlers
            .get(&rig_core::effect::tool_key(name))
            .expect("the tool is registered");
        let kind = rig_core::effect::EffectKind::ToolCall {
            name: name.to_owned(),
            args,
        };
        match rig_core::serve::serve_inline(handler, kind).await {
            Ok(rig_core::effect::Outcome::ToolResult { result }) => result,
            other => panic!("rig answered a tool call with {other:?}"),
        }
    }
}

/// Whether rmcp refused a call: a protocol error, or a result marked as an
/// error (how rmcp answers arguments that do not deserialize).
fn rmcp_refused(answer: &Result<rmcp::model::CallToolResponse, rmcp::ErrorData>) -> bool {
    match answer {
        Err(_) => true,
        Ok(rmcp::model::CallToolResponse::Complete(result)) => result.is_error == Some(true),
        Ok(_) => false,
    }
}

fn object(value: &Value) -> JsonObject {
    value.as_object().expect("an object").clone()
}

fn dispatch(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    let registry = ToolRegistry::new();
    registry.register(ours::ForecastTool).expect("registers");
    let ctx = ToolContext::new();
    let rmcp = RmcpSide::start(&runtime);
    let rig = RigSide::new();

    let well_typed = json!({"city": "Oslo", "days": 3, "metric": true});
    let needs_casts = json!({"city": "Oslo", "days": "3", "metric": "yes"});
    let well_typed_object = object(&well_typed);
    let needs_casts_object = object(&needs_casts);
    let well_typed_text = well_typed.to_string();
    let needs_casts_text = needs_casts.to_string();

    // Each side must answer as expected before it is timed: the well-typed
    // call succeeds everywhere, the casting call succeeds only where casting
    // is done, and fails on both peers.
    runtime.block_on(async {
        let expected = "Oslo:3:true";
        assert_eq!(baseline(well_typed.clone()).await.as_deref(), Ok(expected));
        assert_eq!(
            baseline_from_text(&well_typed_text).await.as_deref(),
            Ok(expected)
        );
        assert_eq!(
            baseline_casting_by_hand(needs_casts.clone())
                .await
                .as_deref(),
            Ok(expected)
        );
        for payload in [&well_typed, &needs_casts] {
            let output = registry.call("forecast", payload.clone(), &ctx).await;
            assert!(!output.is_error, "{output}");
            assert_eq!(output.to_string(), expected);
        }
        let answer = rmcp.call(well_typed_object.clone()).await;
        assert!(!rmcp_refused(&answer), "{answer:?}");
        assert!(format!("{answer:?}").contains(expected), "{answer:?}");
        let refused = rmcp.call(needs_casts_object.clone()).await;
        assert!(
            rmcp_refused(&refused),
            "rmcp rejects \"3\" and \"yes\": {refused:?}"
        );
        assert!(
            format!("{refused:?}").contains("invalid type"),
            "{refused:?}"
        );
        assert!(
            rig.call("forecast", well_typed_text.clone())
                .await
                .is_success()
        );
        let refused = rig.call("forecast", needs_casts_text.clone()).await;
        assert!(
            refused.is_error_kind(rig_core::tool::ToolErrorKind::InvalidArgs),
            "rig rejects \"3\" and \"yes\": {refused:?}"
        );
    });

    let mut group = c.benchmark_group("peers_dispatch");
    // Well-typed arguments. Every side is handed its input the way its API
    // takes it, cloned each iteration because a call consumes it.
    group.bench_function("baseline", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(baseline(black_box(well_typed.clone())).await) })
    });
    group.bench_function("ours_well_typed", |b| {
        b.to_async(&runtime).iter(|| async {
            black_box(
                registry
                    .call("forecast", black_box(well_typed.clone()), &ctx)
                    .await,
            )
        })
    });
    group.bench_function("rmcp_well_typed", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(rmcp.call(black_box(well_typed_object.clone())).await) })
    });
    // rig takes the model's raw JSON text, so it is compared with a baseline
    // and a registry call that parse the same text first.
    group.bench_function("baseline_from_text", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(baseline_from_text(black_box(&well_typed_text)).await) })
    });
    group.bench_function("ours_well_typed_from_text", |b| {
        b.to_async(&runtime).iter(|| async {
            let payload: Value =
                serde_json::from_str(black_box(&well_typed_text)).expect("valid JSON");
            black_box(registry.call("forecast", payload, &ctx).await)
        })
    });
    group.bench_function("rig_well_typed", |b| {
        b.to_async(&runtime).iter(|| async {
            black_box(
                rig.call("forecast", black_box(well_typed_text.clone()))
                    .await,
            )
        })
    });
    // Arguments that need casting: ours casts; the baseline casts by hand;
    // the peers fail, and the time they take to fail is what is measured.
    group.bench_function("baseline_casting_by_hand", |b| {
        b.to_async(&runtime).iter(|| async {
            black_box(baseline_casting_by_hand(black_box(needs_casts.clone())).await)
        })
    });
    group.bench_function("ours_needs_casts", |b| {
        b.to_async(&runtime).iter(|| async {
            black_box(
                registry
                    .call("forecast", black_box(needs_casts.clone()), &ctx)
                    .await,
            )
        })
    });
    group.bench_function("rmcp_needs_casts_fails", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(rmcp.call(black_box(needs_casts_object.clone())).await) })
    });
    group.bench_function("rig_needs_casts_fails", |b| {
        b.to_async(&runtime).iter(|| async {
            black_box(
                rig.call("forecast", black_box(needs_casts_text.clone()))
                    .await,
            )
        })
    });
    group.finish();
    drop(rmcp);
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
