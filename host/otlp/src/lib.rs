//! The OTLP export of the crossing's spans (`--otlp URL`, or the standard
//! OTEL_EXPORTER_OTLP_ENDPOINT): the tracing spans of target `aura` go to an OTLP/HTTP collector
//! (protobuf bodies) from the SDK's own thread, each crossing span joined to its call's W3C
//! trace through the host's [`SpanExport`] seam, so one request is one trace across processes.
//!
//! It owns starting, feeding and stopping the export ([`OtlpExport`]). It must not decide what
//! is traced (the host's spans are) and export never blocks or fails a call: spans past the
//! bounded queue are dropped and counted by the SDK. The phone builds leave this crate out.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState, TracerProvider,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use tracing_opentelemetry::OpenTelemetrySpanExt;

use aura_contract::limits::{OTLP_EXPORT_TIMEOUT_MS, OTLP_SPANS_QUEUED_MAX};
use aura_host::telemetry::{SpanExport, TraceContext};

/// Set once an export is running: until then joining spans to traces costs nothing.
static EXPORTING: AtomicBool = AtomicBool::new(false);

/// The environment variables that turn the export on without `--otlp` (the SDK reads
/// them for the endpoint too).
pub const ENDPOINT_VARIABLES: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
];

/// The OTLP exporter could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum OtlpError {
    /// The endpoint or the environment's configuration is not usable.
    #[error("cannot export traces over OTLP")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
    /// Flushing or shutting the export down failed (spans may be lost).
    #[error("the OTLP export did not shut down cleanly")]
    Shutdown(#[from] opentelemetry_sdk::error::OTelSdkError),
}

/// A running export: spans of target `aura` batched to an OTLP/HTTP collector (protobuf
/// bodies) from the SDK's own thread. [`OtlpExport::shutdown`] sends what is queued.
pub struct OtlpExport {
    provider: SdkTracerProvider,
}

/// The traces URL for an OTLP base URL as `--otlp` and OTEL_EXPORTER_OTLP_ENDPOINT take
/// it (`http://host:4318` → `http://host:4318/v1/traces`); a URL already ending in
/// `/v1/traces` is kept.
pub fn traces_url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/v1/traces") {
        base.to_owned()
    } else {
        format!("{base}/v1/traces")
    }
}

impl OtlpExport {
    /// Starts exporting to `endpoint` (a base URL, see [`traces_url`]) or, without one, to
    /// what the standard OTEL_EXPORTER_OTLP_* variables say; `None` when neither is set
    /// or OTEL_SDK_DISABLED is `true`. `front` names the process's role (its
    /// subcommand) in the resource, beside service.name `aura` and the pid.
    /// Call it outside any async runtime: the blocking HTTP client starts its own.
    pub fn start(endpoint: Option<&str>, front: &str) -> Result<Option<Self>, OtlpError> {
        let from_env = ENDPOINT_VARIABLES
            .iter()
            .any(|name| std::env::var(name).is_ok_and(|value| !value.trim().is_empty()));
        let disabled = std::env::var("OTEL_SDK_DISABLED")
            .is_ok_and(|value| value.trim().eq_ignore_ascii_case("true"));
        if disabled || (endpoint.is_none() && !from_env) {
            return Ok(None);
        }
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_timeout(Duration::from_millis(OTLP_EXPORT_TIMEOUT_MS));
        if let Some(endpoint) = endpoint {
            exporter = exporter.with_endpoint(traces_url(endpoint));
        }
        let exporter = exporter.build()?;
        // The SDK's batch settings, read from OTEL_BSP_* as the spec says, with the queue
        // bounded here.
        let batch = BatchConfigBuilder::default()
            .with_max_queue_size(OTLP_SPANS_QUEUED_MAX)
            .build();
        let processor = BatchSpanProcessor::builder(exporter)
            .with_batch_config(batch)
            .build();
        let resource = Resource::builder()
            .with_service_name("aura")
            .with_attributes([
                KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
                KeyValue::new("process.pid", i64::from(std::process::id())),
                KeyValue::new("aura.front", front.to_owned()),
            ])
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource)
            .build();
        EXPORTING.store(true, Ordering::Release);
        // Registered once per process: a second export started after a first was shut down
        // finds it there already.
        aura_host::telemetry::set_export(&Joiner);
        Ok(Some(Self { provider }))
    }

    /// The tracing layer that hands the host's spans (target `aura`, level info and up;
    /// their events become span events) to this export.
    pub fn layer<S>(&self) -> impl tracing_subscriber::Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
    {
        use tracing_subscriber::Layer;
        let targets =
            tracing_subscriber::filter::Targets::new().with_target("aura", tracing::Level::INFO);
        tracing_opentelemetry::layer()
            .with_tracer(self.provider.tracer("aura"))
            .with_location(false)
            .with_threads(false)
            .with_filter(targets)
    }

    /// Sends the spans still queued and stops the export.
    pub fn shutdown(self) -> Result<(), OtlpError> {
        EXPORTING.store(false, Ordering::Release);
        self.provider.shutdown()?;
        Ok(())
    }
}

/// The host's seam, answered from the running export.
struct Joiner;

impl SpanExport for Joiner {
    fn adopt(&self, span: &tracing::Span, trace: &TraceContext) {
        adopt(span, trace);
    }

    fn context_of(&self, span: &tracing::Span) -> Option<TraceContext> {
        context_of(span)
    }
}

fn adopt(span: &tracing::Span, trace: &TraceContext) {
    if !EXPORTING.load(Ordering::Acquire) {
        return;
    }
    let within = context_of(&tracing::Span::current());
    if within.is_some_and(|within| within.trace_id == trace.trace_id) {
        return;
    }
    let flags = match trace.sampled {
        true => TraceFlags::SAMPLED,
        false => TraceFlags::default(),
    };
    let parent = SpanContext::new(
        TraceId::from_bytes(trace.trace_id),
        SpanId::from_bytes(trace.span_id),
        flags,
        true,
        TraceState::default(),
    );
    // Refused only when the span was already started or is not exported: then it keeps
    // the trace it has, which is the best left to do.
    let _ = span.set_parent(Context::new().with_remote_span_context(parent));
}

fn context_of(span: &tracing::Span) -> Option<TraceContext> {
    if !EXPORTING.load(Ordering::Acquire) || span.is_none() {
        return None;
    }
    let context = span.context();
    let span_context = context.span().span_context().clone();
    span_context.is_valid().then(|| TraceContext {
        trace_id: span_context.trace_id().to_bytes(),
        span_id: span_context.span_id().to_bytes(),
        sampled: span_context.is_sampled(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_otlp_base_url_gets_the_traces_path_once() {
        assert_eq!(
            traces_url("http://127.0.0.1:4318"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://collector:4318/"),
            "http://collector:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://collector:4318/v1/traces"),
            "http://collector:4318/v1/traces"
        );
    }
}
