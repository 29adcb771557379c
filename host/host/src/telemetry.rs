//! Which request a call belongs to while it runs, and the seam an exporter of spans plugs into.
//!
//! A call's frame carries its W3C trace ([`TraceContext`]); while a call runs its trace is the
//! task's ([`in_trace`], [`current`]), so a refusal's quarantine event lands in the request's
//! trace. An exporter of spans (the OTLP front, `aura-otlp`) registers a [`SpanExport`] once
//! ([`set_export`]); then each crossing span is joined to its call's trace ([`adopt`]), a call
//! nobody sent a trace with takes the one its exported span started ([`started`]), and a
//! request sent to a worker names the span that sent it ([`outgoing`]), so one request is one
//! trace across processes. Without one these cost nothing. It must not decide what is traced
//! (the spans are the modules') nor export anything itself.

use std::sync::OnceLock;

pub use aura_contract::traceparent::TraceContext;

/// How an exporter of spans joins them to W3C traces (implemented by the OTLP front).
pub trait SpanExport: Send + Sync {
    /// Joins `span` (just made, not yet entered) to `trace`: unless the span it is made in is
    /// already in that trace, `trace` becomes its remote parent.
    fn adopt(&self, span: &tracing::Span, trace: &TraceContext);
    /// The trace `span` is in, when it is exported; `None` when it is not (or no export runs).
    fn context_of(&self, span: &tracing::Span) -> Option<TraceContext>;
}

/// The exporter this process registered, if any.
static EXPORT: OnceLock<&'static dyn SpanExport> = OnceLock::new();

/// Registers the process's exporter of spans; a second registration is refused (`false`).
pub fn set_export(export: &'static dyn SpanExport) -> bool {
    EXPORT.set(export).is_ok()
}

tokio::task_local! {
    /// The trace of the call this task is running (see [`in_trace`]).
    static CALL_TRACE: TraceContext;
}

/// Runs `work` as part of `trace` (if any): [`current`] inside it answers `trace`.
///
/// A plain function, not an `async fn`: an `async fn` keeps its argument `work` in its state
/// beside the future it awaits, so its state would be twice `work`'s, and a crossing nests two
/// of these around the sandbox's call.
pub fn in_trace<F: std::future::Future>(
    trace: Option<TraceContext>,
    work: F,
) -> impl std::future::Future<Output = F::Output> {
    use futures_util::future::Either;
    match trace {
        Some(trace) => Either::Left(CALL_TRACE.scope(trace, work)),
        None => Either::Right(work),
    }
}

/// The trace of the call this task is running, if it runs one.
pub fn current() -> Option<TraceContext> {
    CALL_TRACE.try_with(|trace| *trace).ok()
}

/// Joins `span` (just made, not yet entered) to `trace`: unless the span it is made in is
/// already in that trace (a nested call in this process), `trace` becomes its remote parent.
/// Without an export this does nothing.
pub fn adopt(span: &tracing::Span, trace: &TraceContext) {
    if let Some(export) = EXPORT.get() {
        export.adopt(span, trace);
    }
}

/// The trace `span` started, when it is exported (a span made under no trace starts a random
/// one, as an OpenTelemetry root does); `None` without an export.
pub fn started(span: &tracing::Span) -> Option<TraceContext> {
    EXPORT.get().and_then(|export| export.context_of(span))
}

/// The trace context to send with a request made now in `trace`: the span making it as the
/// parent when it is exported (so the receiver's spans hang under it), `trace` as it is
/// otherwise.
pub fn outgoing(trace: TraceContext) -> TraceContext {
    match started(&tracing::Span::current()) {
        Some(sending) if sending.trace_id == trace.trace_id => sending,
        _ => trace,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_task_runs_in_the_trace_it_was_given() {
        assert_eq!(current(), None);
        let trace = TraceContext::for_call("t_0123456789");
        let seen = in_trace(Some(trace), async { current() }).await;
        assert_eq!(seen, Some(trace));
        assert_eq!(in_trace(None, async { current() }).await, None);
    }

    #[tokio::test]
    async fn no_trace_inside_a_trace_leaves_the_outer_one() {
        let outer = TraceContext::for_call("t_outer");
        let inner = TraceContext::for_call("t_inner");
        let seen = in_trace(Some(outer), in_trace(None, async { current() })).await;
        assert_eq!(seen, Some(outer));
        let seen = in_trace(Some(outer), in_trace(Some(inner), async { current() })).await;
        assert_eq!(seen, Some(inner));
        // The outer trace again once the inner work is done.
        let seen = in_trace(Some(outer), async {
            in_trace(Some(inner), async {}).await;
            current()
        })
        .await;
        assert_eq!(seen, Some(outer));
    }
}
