//! W3C trace context across MCP, as OpenTelemetry's MCP conventions carry
//! it: in the `_meta` of each request (`traceparent`, `tracestate`,
//! unprefixed). The client writes the context of the calling span into its
//! `tools/call` requests; the server makes the context it reads the parent
//! of the served call's `execute_tool` span. Without the `otel` feature
//! both are no-ops.
//!
//! The propagator is the one the application set with
//! `opentelemetry::global::set_text_map_propagator` (so W3C Baggage goes
//! along when it set one for that), else W3C Trace Context.

use std::future::Future;

use rmcp::model::{CallToolRequestParams, RequestMetaObject};

/// `params` with the trace context of the current span in its `_meta`.
pub(crate) fn inject(params: CallToolRequestParams) -> CallToolRequestParams {
    #[cfg(feature = "otel")]
    let params = otel::inject(params);
    params
}

/// Run `call` (the pipeline's call of a served request) with the trace
/// context in the request's `_meta`, if any, as its span's parent.
pub(crate) async fn continue_trace<F: Future>(meta: &RequestMetaObject, call: F) -> F::Output {
    #[cfg(feature = "otel")]
    return crate::pipeline::with_remote_parent(otel::extract(meta), call).await;
    #[cfg(not(feature = "otel"))]
    {
        let _ = meta;
        call.await
    }
}

#[cfg(feature = "otel")]
mod otel {
    use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
    use opentelemetry_sdk::propagation::TraceContextPropagator;
    use rmcp::model::{CallToolRequestParams, RequestMetaObject};
    use serde_json::Value;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    /// Call `f` with the application's propagator, or W3C Trace Context
    /// when it set none (the global one is then a no-op without fields).
    fn with_propagator<T>(f: impl FnOnce(&dyn TextMapPropagator) -> T) -> T {
        let mut f = Some(f);
        let configured = opentelemetry::global::get_text_map_propagator(|p| {
            (p.fields().next().is_some()).then(|| (f.take().expect("called once"))(p))
        });
        match configured {
            Some(out) => out,
            None => (f.take().expect("called once"))(&TraceContextPropagator::new()),
        }
    }

    struct Meta<'a>(&'a mut RequestMetaObject);

    impl Injector for Meta<'_> {
        fn set(&mut self, key: &str, value: String) {
            (self.0).0.0.insert(key.to_owned(), Value::String(value));
        }
    }

    struct ReadMeta<'a>(&'a RequestMetaObject);

    impl Extractor for ReadMeta<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            (self.0).0.0.get(key).and_then(Value::as_str)
        }
        fn keys(&self) -> Vec<&str> {
            (self.0).0.0.keys().map(String::as_str).collect()
        }
    }

    pub(super) fn inject(mut params: CallToolRequestParams) -> CallToolRequestParams {
        let span = tracing::Span::current();
        if span.is_disabled() {
            return params;
        }
        let context = span.context();
        let meta = params.meta.get_or_insert_with(RequestMetaObject::new);
        with_propagator(|p| p.inject_context(&context, &mut Meta(meta)));
        if meta.0.0.is_empty() {
            params.meta = None;
        }
        params
    }

    pub(super) fn extract(meta: &RequestMetaObject) -> opentelemetry::Context {
        with_propagator(|p| p.extract(&ReadMeta(meta)))
    }
}
