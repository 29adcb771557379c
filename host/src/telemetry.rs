//! Which request a call belongs to, across hosts: W3C trace context (`traceparent`), and the
//! export of the crossing's spans over OTLP.
//!
//! It owns [`TraceContext`]: reading and writing a `traceparent` header, and the trace a root
//! call starts when its caller sent none (derived from its call_id, so the same call is the
//! same trace on every host and every replay). A call's frame carries its trace; a nested
//! call, a call sent to a worker and the events a call publishes keep it, and while a call
//! runs its trace is the task's ([`in_trace`], [`current`]), so a refusal's quarantine event
//! lands in the request's trace.
//!
//! With the `otlp` feature it also owns the export ([`otlp::OtlpExport`], off unless
//! `--otlp URL` or OTEL_EXPORTER_OTLP_ENDPOINT is set): the tracing spans of target `aura` go
//! to an OTLP/HTTP collector, each crossing span joined to its call's trace ([`adopt`]), and a
//! request sent to a worker names the span that sent it ([`outgoing`]), so one request is one
//! trace across processes. It must not decide what is traced (the spans are the modules'),
//! and export never blocks or fails a call: spans past the bounded queue are dropped.

use sha2::Digest;

/// A W3C trace context: the trace a call belongs to, and the span that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceContext {
    /// The trace: 16 bytes, not all zero.
    pub trace_id: [u8; 16],
    /// The parent span: 8 bytes, not all zero.
    pub span_id: [u8; 8],
    /// Whether the trace is sampled (flags bit 0).
    pub sampled: bool,
}

impl TraceContext {
    /// The trace a root call with `call_id` starts when none was sent with it.
    pub fn for_call(call_id: &str) -> Self {
        let digest = sha2::Sha256::digest(format!("aura.trace\n{call_id}").as_bytes());
        let mut trace_id = [0u8; 16];
        let mut span_id = [0u8; 8];
        trace_id.copy_from_slice(&digest[..16]);
        span_id.copy_from_slice(&digest[16..24]);
        // A digest of all zeros in either part is as likely as guessing the key; keep the
        // header valid anyway.
        trace_id[15] |= u8::from(trace_id == [0; 16]);
        span_id[7] |= u8::from(span_id == [0; 8]);
        Self {
            trace_id,
            span_id,
            sampled: true,
        }
    }

    /// Reads a `traceparent` header (version 00, or a later version read as 00 by its first
    /// four fields, as the W3C spec asks); `None` if it is not one.
    pub fn parse(header: &str) -> Option<Self> {
        let header = header.trim();
        let mut parts = header.split('-');
        let version = parts.next()?;
        let trace = parts.next()?;
        let span = parts.next()?;
        let flags = parts.next()?;
        let rest = parts.next();
        if version.len() != 2 || version == "ff" || !is_lower_hex(version) {
            return None;
        }
        if version == "00" && (rest.is_some() || header.len() != 55) {
            return None;
        }
        let trace_id: [u8; 16] = hex_bytes(trace)?;
        let span_id: [u8; 8] = hex_bytes(span)?;
        let [flags]: [u8; 1] = hex_bytes(flags)?;
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(Self {
            trace_id,
            span_id,
            sampled: flags & 1 == 1,
        })
    }

    /// The `traceparent` header (version 00).
    pub fn header(&self) -> String {
        format!(
            "00-{}-{}-{:02x}",
            crate::plugins::hex(&self.trace_id),
            crate::plugins::hex(&self.span_id),
            u8::from(self.sampled)
        )
    }

    /// The trace id as 32 lowercase hex digits.
    pub fn trace_id_hex(&self) -> String {
        crate::plugins::hex(&self.trace_id)
    }
}

tokio::task_local! {
    /// The trace of the call this task is running (see [`in_trace`]).
    static CALL_TRACE: TraceContext;
}

/// Runs `work` as part of `trace` (if any): [`current`] inside it answers `trace`.
pub(crate) async fn in_trace<F: std::future::Future>(
    trace: Option<TraceContext>,
    work: F,
) -> F::Output {
    match trace {
        Some(trace) => CALL_TRACE.scope(trace, work).await,
        None => work.await,
    }
}

/// The trace of the call this task is running, if it runs one.
pub(crate) fn current() -> Option<TraceContext> {
    CALL_TRACE.try_with(|trace| *trace).ok()
}

/// Joins `span` (just made, not yet entered) to `trace`: unless the span it is made in is
/// already in that trace (a nested call in this process), `trace` becomes its remote parent.
/// Without an export this does nothing.
pub(crate) fn adopt(span: &tracing::Span, trace: &TraceContext) {
    #[cfg(feature = "otlp")]
    otlp::adopt(span, trace);
    #[cfg(not(feature = "otlp"))]
    let _ = (span, trace);
}

/// The trace `span` started, when it is exported (a span made under no trace starts a random
/// one, as an OpenTelemetry root does); `None` without an export.
pub(crate) fn started(span: &tracing::Span) -> Option<TraceContext> {
    #[cfg(feature = "otlp")]
    return otlp::context_of(span);
    #[cfg(not(feature = "otlp"))]
    {
        let _ = span;
        None
    }
}

/// The trace context to send with a request made now in `trace`: the span making it as the
/// parent when it is exported (so the receiver's spans hang under it), `trace` as it is
/// otherwise.
pub fn outgoing(trace: TraceContext) -> TraceContext {
    #[cfg(feature = "otlp")]
    if let Some(sending) = otlp::context_of(&tracing::Span::current())
        && sending.trace_id == trace.trace_id
    {
        return sending;
    }
    trace
}

fn is_lower_hex(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn hex_bytes<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N || !is_lower_hex(text) {
        return None;
    }
    let mut bytes = [0u8; N];
    for (i, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(bytes)
}

/// The OTLP export of the crossing's spans.
#[cfg(feature = "otlp")]
pub mod otlp {
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

    use super::TraceContext;
    use crate::limits::{OTLP_EXPORT_TIMEOUT_MS, OTLP_SPANS_QUEUED_MAX};

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
        #[error("cannot export traces over OTLP: {0}")]
        Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
        /// Flushing or shutting the export down failed (spans may be lost).
        #[error("the OTLP export did not shut down cleanly: {0}")]
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
            Ok(Some(Self { provider }))
        }

        /// The tracing layer that hands the host's spans (target `aura`, level info and up;
        /// their events become span events) to this export.
        pub fn layer<S>(&self) -> impl tracing_subscriber::Layer<S> + use<S>
        where
            S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
        {
            use tracing_subscriber::Layer;
            let targets = tracing_subscriber::filter::Targets::new()
                .with_target("aura", tracing::Level::INFO);
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

    pub(super) fn adopt(span: &tracing::Span, trace: &TraceContext) {
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

    pub(super) fn context_of(span: &tracing::Span) -> Option<TraceContext> {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_w3c_example_reads_and_writes_back() {
        // The example of W3C Trace Context §3.2.
        let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let context = TraceContext::parse(header).unwrap();
        assert_eq!(context.trace_id[0], 0x4b);
        assert_eq!(context.span_id[7], 0xb7);
        assert!(context.sampled);
        assert_eq!(context.header(), header);
        assert_eq!(context.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
    }

    #[test]
    fn what_is_not_a_traceparent_is_refused() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceContext::parse(bad), None, "{bad}");
        }
        // A later version keeps its first four fields and may add more.
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what-comes";
        let context = TraceContext::parse(later).unwrap();
        assert!(!context.sampled);
    }

    #[cfg(feature = "otlp")]
    #[test]
    fn an_otlp_base_url_gets_the_traces_path_once() {
        assert_eq!(
            otlp::traces_url("http://127.0.0.1:4318"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            otlp::traces_url("http://collector:4318/"),
            "http://collector:4318/v1/traces"
        );
        assert_eq!(
            otlp::traces_url("http://collector:4318/v1/traces"),
            "http://collector:4318/v1/traces"
        );
    }

    #[tokio::test]
    async fn a_task_runs_in_the_trace_it_was_given() {
        assert_eq!(current(), None);
        let trace = TraceContext::for_call("t_0123456789");
        let seen = in_trace(Some(trace), async { current() }).await;
        assert_eq!(seen, Some(trace));
        assert_eq!(in_trace(None, async { current() }).await, None);
    }

    #[test]
    fn a_call_without_a_trace_starts_its_own_the_same_everywhere() {
        let a = TraceContext::for_call("t_0123456789");
        assert_eq!(a, TraceContext::for_call("t_0123456789"));
        assert_ne!(a.trace_id, TraceContext::for_call("t_0123456780").trace_id);
        assert_eq!(TraceContext::parse(&a.header()), Some(a));
    }
}
