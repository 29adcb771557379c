//! How a call runs: the one seam every front uses.
//!
//! [`Host::dispatch`] takes whatever a front has (bytes off the wire, toolcall.v1 text, an
//! envelope the front built, or a call this host already checked, [`CallInput`]) and answers
//! with a result.v1 or a [`Refused`]: the crossing in, the sandbox, the crossing out, inside one
//! `crossing` span, with every refusal quarantined before it is returned. A checked call is
//! never checked twice. It also owns measuring a call in the sandbox alone (for calibration and
//! benchmarks) and running the device calibration. It must not implement a check (the crossing
//! does) nor know which front is calling.

use std::sync::Arc;
use std::time::Duration;

use tracing::Instrument;

use crate::calibrate::{self, Calibration, CalibrationError};
use crate::crossing::{CheckedCall, Reply};
use crate::envelope::{self, ResultEnvelope, ToolCall};
use crate::error::{CrossingError, Phase};
use crate::events::{AgentMessage, EventKind};
use crate::host::{Host, Shared};
use crate::journal::{CallIds, JournalError, QuarantineRecord};
use crate::limits::CALLS_IN_FLIGHT_MAX;
use crate::recovery::{Recovery, ToolFailure};
use crate::sandbox::{Budget, Frame};
use crate::simulation::{CallFault, CallPoint};
use crate::telemetry::TraceContext;
use crate::visible::visible;

/// What a front hands the host to run.
#[derive(Debug, Clone, Copy)]
pub enum CallInput<'a> {
    /// Bytes from outside the process (a file, stdin, a message off the wire): bytes that are
    /// not UTF-8 are not JSON and are refused as malformed; the rest is checked as text is.
    Bytes(&'a [u8]),
    /// toolcall.v1 text from outside, checked in full.
    Text(&'a str),
    /// An envelope a front built itself (`aura call`, an MCP `tools/call`): building one
    /// checks nothing, so it is checked in full, like text.
    Envelope(&'a ToolCall),
    /// A call this host's crossing already checked (a tick's proposal the orchestrator
    /// chose): run as it is.
    Checked(&'a CheckedCall),
}

impl<'a> From<&'a [u8]> for CallInput<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        Self::Bytes(bytes)
    }
}

impl<'a> From<&'a Vec<u8>> for CallInput<'a> {
    fn from(bytes: &'a Vec<u8>) -> Self {
        Self::Bytes(bytes)
    }
}

impl<'a> From<&'a str> for CallInput<'a> {
    fn from(text: &'a str) -> Self {
        Self::Text(text)
    }
}

impl<'a> From<&'a String> for CallInput<'a> {
    fn from(text: &'a String) -> Self {
        Self::Text(text)
    }
}

impl<'a> From<&'a ToolCall> for CallInput<'a> {
    fn from(call: &'a ToolCall) -> Self {
        Self::Envelope(call)
    }
}

impl<'a> From<&'a CheckedCall> for CallInput<'a> {
    fn from(call: &'a CheckedCall) -> Self {
        Self::Checked(call)
    }
}

/// A call the crossing refused: the error, and whether its quarantine record is durable.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct Refused {
    /// Why.
    pub error: CrossingError,
    /// The envelope's call_id, if it could be read.
    pub call_id: Option<String>,
    /// Set if the quarantine record could not be written: the refusal must then be reported
    /// loudly, since the record is lost.
    pub journal_error: Option<JournalError>,
    /// Fuel the agent burned before the refusal (its answer may have been refused after it
    /// ran); an agent-to-agent caller is charged this.
    pub fuel_used: u64,
    /// What the caller should do next, with the field issues (also in the quarantine record).
    pub recovery: Recovery,
}

impl Refused {
    /// The refusal as its caller reads it (recovery.v1): what every front answers.
    pub fn failure(&self) -> ToolFailure {
        ToolFailure::refused(&self.error, self.call_id.as_deref(), self.recovery.clone())
    }
}

/// A call's outcome as its span, the simulation and its events name it: the error kind (or
/// "ok") and the fuel it burned.
fn kind_and_fuel(outcome: &Result<ResultEnvelope, Refused>) -> (&str, u64) {
    match outcome {
        Ok(result) => (
            result.error.as_ref().map_or("ok", |e| e.kind.as_str()),
            result.fuel_used,
        ),
        Err(refused) => (refused.error.kind(), refused.fuel_used),
    }
}

impl Host {
    /// Runs one call through the crossing, the sandbox and the crossing again.
    ///
    /// `Ok` is a result.v1: the tool's result, or an error the agent itself reported. `Err` is
    /// a refusal by the crossing; it has been quarantined before this returns.
    pub async fn dispatch<'a>(
        &self,
        input: impl Into<CallInput<'a>>,
    ) -> Result<ResultEnvelope, Refused> {
        self.dispatch_traced(input, None).await
    }

    /// [`Host::dispatch`] as part of the request `trace` its front was sent (an MCP
    /// client's `_meta.traceparent`): the call's spans, events and any request it makes to a
    /// worker are in that trace.
    pub async fn dispatch_traced<'a>(
        &self,
        input: impl Into<CallInput<'a>>,
        trace: Option<TraceContext>,
    ) -> Result<ResultEnvelope, Refused> {
        crate::telemetry::in_trace(trace, self.dispatch_in(input.into(), trace)).await
    }

    async fn dispatch_in(
        &self,
        input: CallInput<'_>,
        trace: Option<TraceContext>,
    ) -> Result<ResultEnvelope, Refused> {
        let shared = &self.shared;
        // Held until the answer is back; none left means the bound is reached: refused at
        // once, never queued without bound.
        let Ok(_in_flight) = shared.in_flight.try_acquire() else {
            return Err(shared.refuse_busy(input));
        };
        let checked;
        let call = match input {
            CallInput::Checked(call) => call,
            unchecked => {
                checked = self.check(unchecked)?;
                &checked
            }
        };
        let budget = Budget::for_deadline(call.deadline_ms(), shared.fuel_per_ms);
        let mut frame = Frame::root(budget, envelope::unix_ns(&call.call().ts));
        frame.trace = trace;
        shared.run_checked(call, frame).await
    }

    /// The crossing's inbound checks alone (envelope, catalogue, args), for a front that must
    /// do something between checking a call and running it: ask the user to confirm it (an MCP
    /// client's elicitation) with the question its checked args make. The checked call then
    /// goes to [`Host::dispatch`] as it is. A refusal is quarantined, as in `dispatch`.
    // A refusal is the error path, taken at most once per call; boxing it buys nothing.
    #[allow(clippy::result_large_err)]
    pub fn check<'a>(&self, input: impl Into<CallInput<'a>>) -> Result<CheckedCall, Refused> {
        let shared = &self.shared;
        match input.into() {
            CallInput::Checked(call) => Ok(call.clone()),
            CallInput::Text(text) => shared.check(text),
            CallInput::Envelope(call) => {
                // A ToolCall holds strings, a bool, integers and a JSON value: it serializes.
                shared.check(&serde_json::to_string(call).unwrap_or_default())
            }
            CallInput::Bytes(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => shared.check(text),
                Err(utf8) => Err(shared.refuse_not_utf8(bytes, utf8)),
            },
        }
    }

    /// Runs a checked call `runs` times in the sandbox alone, with its full budget, timing
    /// each run around the sandbox: (fuel burned, wall time) per run. For calibration and
    /// benchmarks: the crossing's checks and the reply's are left out on purpose.
    pub async fn measure(
        &self,
        call: &CheckedCall,
        runs: usize,
    ) -> Result<Vec<(u64, Duration)>, Refused> {
        let shared = &self.shared;
        let budget = Budget::for_deadline(call.deadline_ms(), shared.fuel_per_ms);
        let agent = shared
            .agent(&call.call().agent)
            .await
            .map_err(|error| shared.refuse(error, ids_of(call, &[]), call.canonical()))?;
        let mut measured = Vec::with_capacity(runs);
        for _ in 0..runs {
            let started = std::time::Instant::now();
            let frame = Frame::root(budget, envelope::unix_ns(&call.call().ts));
            let invocation = shared
                .sandbox
                .invoke(
                    &agent,
                    &call.call().call_id,
                    call.canonical(),
                    frame,
                    shared.clone(),
                )
                .await
                .map_err(|error| shared.refuse(error, ids_of(call, &[]), call.canonical()))?;
            measured.push((invocation.fuel_used, started.elapsed()));
        }
        Ok(measured)
    }

    /// Measures this device's fuel per millisecond with the reference workload
    /// ([`calibrate`]: one unmeasured run, then [`calibrate::CALIBRATION_RUNS`] measured
    /// ones) and stores it in the data dir, where later hosts read it. Open the host with
    /// [`HostConfig::for_calibration`](crate::HostConfig::for_calibration).
    pub async fn calibrate(
        &self,
        data_dir: &std::path::Path,
    ) -> Result<Calibration, CalibrationError> {
        let text = serde_json::to_string(&calibrate::workload_call()).unwrap_or_default();
        let workload = self
            .shared
            .check(&text)
            .map_err(|refused| CalibrationError::Workload(refused.to_string()))?;
        let failed = |refused: Refused| CalibrationError::Workload(refused.to_string());
        // One unmeasured run warms caches and the instance pool.
        self.measure(&workload, 1).await.map_err(failed)?;
        let runs = self
            .measure(&workload, calibrate::CALIBRATION_RUNS)
            .await
            .map_err(failed)?;
        let calibration = calibrate::from_runs(&runs)?;
        calibrate::store(data_dir, &calibration)?;
        Ok(calibration)
    }
}

/// What a quarantine record says of a checked call made from `callers` (root first; empty
/// for a root call).
pub(crate) fn ids_of<'a>(checked: &'a CheckedCall, callers: &'a [&'static str]) -> CallIds<'a> {
    let call = checked.call();
    CallIds {
        call_id: Some(&call.call_id),
        agent: Some(&call.agent),
        tool: Some(&call.tool),
        callers,
    }
}

impl Shared {
    /// The crossing's inbound checks of `text`; a refusal is quarantined with whatever of
    /// its call_id, agent and tool can be read leniently.
    // A refusal is the error path, taken at most once per call; boxing it buys nothing.
    #[allow(clippy::result_large_err)]
    pub(crate) fn check(&self, text: &str) -> Result<CheckedCall, Refused> {
        self.crossing
            .check_call(text)
            .map_err(|error| self.refuse_unread(error, text))
    }

    /// Runs a call that passed the inbound checks and checks its answer, inside a `crossing`
    /// span that ends with the fuel used and the outcome.
    pub(crate) async fn run_checked(
        self: &Arc<Self>,
        checked: &CheckedCall,
        mut frame: Frame,
    ) -> Result<ResultEnvelope, Refused> {
        let call = checked.call();
        let source = frame.chain_above.last().copied().unwrap_or("host");
        // Seed 003's attribute names beside the host's own; OpenTelemetry reads otel.*.
        let span = tracing::info_span!(
            "crossing",
            call_id = %call.call_id,
            agent = %call.agent,
            tool = %call.tool,
            agent.source = source,
            agent.target = %call.agent,
            agent.action = %call.tool,
            depth = frame.chain_above.len() + 1,
            fuel = frame.budget.fuel,
            fuel_used = tracing::field::Empty,
            outcome = tracing::field::Empty,
            phase = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        // A call nobody sent a trace with starts its own (its callees keep it): the one its
        // exported span started, or else one derived from its call_id.
        let trace = match frame.trace {
            Some(trace) => {
                crate::telemetry::adopt(&span, &trace);
                trace
            }
            None => crate::telemetry::started(&span)
                .unwrap_or_else(|| TraceContext::for_call(&call.call_id)),
        };
        frame.trace = Some(trace);
        let outcome = crate::telemetry::in_trace(
            Some(trace),
            self.run_in_sandbox(checked, frame, trace)
                .instrument(span.clone()),
        )
        .await;
        let (kind, fuel_used) = kind_and_fuel(&outcome);
        span.record("fuel_used", fuel_used);
        span.record("outcome", kind);
        match &outcome {
            Ok(result) => {
                if let Some(error) = &result.error {
                    span.record("phase", error.phase.as_deref().unwrap_or("agent"));
                }
            }
            Err(refused) => {
                span.record("phase", refused.error.phase().as_str());
                span.record("otel.status_code", "ERROR");
            }
        }
        outcome
    }

    async fn run_in_sandbox(
        self: &Arc<Self>,
        checked: &CheckedCall,
        mut frame: Frame,
        trace: TraceContext,
    ) -> Result<ResultEnvelope, Refused> {
        let call = checked.call();
        tracing::info!(depth = frame.chain_above.len() + 1, "agent.started");
        let callers = frame.chain_above.clone();
        let point = CallPoint {
            call_id: &call.call_id,
            agent: &call.agent,
            tool: &call.tool,
            chain_above: &callers,
            fuel: frame.budget.fuel,
        };
        let source = callers.last().copied().unwrap_or("host");
        let about = (source, call.agent.as_str(), call.tool.as_str());
        // A call a worker runs has its events published by the worker; this host publishes
        // only what the worker cannot: that no worker answered, or that its answer failed the
        // checks here.
        let worker_publishes = self.remote_for(checked.agent()).is_some();
        if !worker_publishes {
            self.event(
                EventKind::AgentStarted,
                &trace,
                &call.call_id,
                about,
                || {
                    serde_json::json!({"call_id": call.call_id, "depth": callers.len() + 1,
                    "fuel_budget": frame.budget.fuel, "deadline_ms": frame.budget.deadline_ms})
                },
            );
        }
        let fault = self.simulation.as_ref().and_then(|s| s.call_starts(point));
        let injected = match fault {
            Some(CallFault::OutOfFuel { fuel }) => {
                frame.budget.fuel = frame.budget.fuel.min(fuel);
                None
            }
            Some(CallFault::Trap) => {
                frame.interrupt_at_start = true;
                None
            }
            Some(CallFault::Refused) => Some(CrossingError::CallNotAllowed {
                caller: callers.last().copied().unwrap_or("host").to_owned(),
                agent: call.agent.clone(),
                tool: call.tool.clone(),
                reason: "the simulation refused it",
            }),
            Some(CallFault::NotFound) => Some(CrossingError::AgentUnavailable {
                agent: call.agent.clone(),
            }),
            Some(CallFault::Busy) => Some(CrossingError::Busy {
                in_flight_max: CALLS_IN_FLIGHT_MAX,
            }),
            None => None,
        };
        let outcome = match injected {
            Some(error) => Err(self.refuse(error, ids_of(checked, &callers), checked.canonical())),
            None => self.run_invoked(checked, frame, &callers).await,
        };
        let (kind, fuel_used) = kind_and_fuel(&outcome);
        if let Some(simulation) = &self.simulation {
            simulation.call_ends(point, kind);
        }
        let published_there = match &outcome {
            Ok(_) => worker_publishes,
            Err(refused) => matches!(refused.error, CrossingError::Remote(_)),
        };
        if self.events.is_some() && !published_there {
            let payload = || {
                serde_json::json!({"call_id": call.call_id, "outcome": kind,
                "fuel_used": fuel_used})
            };
            match &outcome {
                Ok(_) => {
                    self.event(
                        EventKind::AgentCompleted,
                        &trace,
                        &call.call_id,
                        about,
                        payload,
                    );
                    self.event(
                        EventKind::ToolExecuted,
                        &trace,
                        &call.call_id,
                        about,
                        payload,
                    );
                }
                Err(refused) => {
                    self.event(EventKind::AgentError, &trace, &call.call_id, about, || {
                        serde_json::json!({"call_id": call.call_id, "kind": kind,
                        "phase": refused.error.phase().as_str(), "fuel_used": fuel_used,
                        "message": crate::envelope::cut_chars(refused.error.to_string(),
                            crate::limits::RESULT_MESSAGE_CHARS_MAX)})
                    })
                }
            }
        }
        outcome
    }

    /// Runs the call in the sandbox and checks its reply.
    async fn run_invoked(
        self: &Arc<Self>,
        checked: &CheckedCall,
        frame: Frame,
        callers: &[&'static str],
    ) -> Result<ResultEnvelope, Refused> {
        let call = checked.call();
        if let Some(remote) = self.remote_for(checked.agent()) {
            return self.run_remote(remote, checked, &frame, callers).await;
        }
        let invoked = match self.agent(&call.agent).await {
            Ok(agent) => {
                self.sandbox
                    .invoke(
                        &agent,
                        &call.call_id,
                        checked.canonical(),
                        frame,
                        self.clone(),
                    )
                    .await
            }
            Err(unavailable) => Err(unavailable),
        };
        let invocation = match invoked {
            Ok(invocation) => invocation,
            Err(error) => {
                tracing::warn!(
                    kind = error.kind(),
                    fuel_used = error.fuel_used(),
                    error = %visible(&error.to_string()),
                    "agent.error"
                );
                return Err(self.refuse(error, ids_of(checked, callers), checked.canonical()));
            }
        };
        tracing::info!(fuel_used = invocation.fuel_used, "agent.completed");
        match self.crossing.check_reply(checked, &invocation.output) {
            Ok(Reply::Ok(result)) => {
                tracing::info!(
                    fuel_used = invocation.fuel_used,
                    outcome = "ok",
                    "tool.executed"
                );
                Ok(ResultEnvelope::ok(call, result, invocation.fuel_used))
            }
            Ok(Reply::ToolError { kind, message }) => {
                tracing::info!(fuel_used = invocation.fuel_used, outcome = %kind, "tool.executed");
                Ok(ResultEnvelope::failed(
                    call,
                    kind.result_kind(),
                    message,
                    Some(Phase::Agent),
                    invocation.fuel_used,
                ))
            }
            Err(error) => {
                let mut refused = self.refuse(error, ids_of(checked, callers), &invocation.output);
                refused.fuel_used = invocation.fuel_used;
                Err(refused)
            }
        }
    }

    /// Quarantines a call refused because the host is at its in-flight bound.
    pub(crate) fn refuse_busy(&self, input: CallInput<'_>) -> Refused {
        let error = CrossingError::Busy {
            in_flight_max: CALLS_IN_FLIGHT_MAX,
        };
        match input {
            CallInput::Checked(call) => self.refuse(error, ids_of(call, &[]), call.canonical()),
            CallInput::Envelope(call) => {
                // The front built it: its ids are at hand, no need to read them back.
                let ids = CallIds {
                    call_id: Some(&call.call_id),
                    agent: Some(&call.agent),
                    tool: Some(&call.tool),
                    callers: &[],
                };
                self.refuse(error, ids, &serde_json::to_string(call).unwrap_or_default())
            }
            CallInput::Text(text) => self.refuse_unread(error, text),
            CallInput::Bytes(bytes) => self.refuse_unread(error, &String::from_utf8_lossy(bytes)),
        }
    }

    /// Quarantines bytes that are not UTF-8 (so not JSON), as a malformed envelope.
    fn refuse_not_utf8(&self, bytes: &[u8], utf8: std::str::Utf8Error) -> Refused {
        let error = CrossingError::Json {
            phase: Phase::Envelope,
            error: crate::canonical::JsonError::Malformed {
                line: 0,
                column: 0,
                message: format!("input is not UTF-8: {utf8}"),
            },
        };
        self.refuse(error, CallIds::default(), &String::from_utf8_lossy(bytes))
    }

    /// Quarantines a refusal of an envelope that did not pass its checks, with whatever of
    /// its call_id, agent and tool can be read leniently.
    pub(crate) fn refuse_unread(&self, error: CrossingError, text: &str) -> Refused {
        let (call_id, agent, tool) = envelope::read_ids(text);
        let ids = CallIds {
            call_id: call_id.as_deref(),
            agent: agent.as_deref(),
            tool: tool.as_deref(),
            callers: &[],
        };
        self.refuse(error, ids, text)
    }

    /// Hands an event to the host's sink, if it has one (the payload is built only then).
    pub(crate) fn event(
        &self,
        kind: EventKind,
        trace: &TraceContext,
        subject: &str,
        about: (&str, &str, &str),
        payload: impl FnOnce() -> serde_json::Value,
    ) {
        if let Some(sink) = &self.events {
            sink.publish(AgentMessage::new(kind, trace, subject, about, payload()));
        }
    }

    /// Quarantines a refusal and returns it.
    pub(crate) fn refuse(
        &self,
        error: CrossingError,
        ids: CallIds<'_>,
        offending: &str,
    ) -> Refused {
        tracing::warn!(
            call_id = ids.call_id,
            kind = error.kind(),
            phase = error.phase().as_str(),
            error = %visible(&error.to_string()),
            "call quarantined"
        );
        let recovery = Recovery::for_refusal(&error, ids.agent, ids.tool);
        let record = QuarantineRecord::new(&error, ids, offending, &recovery);
        let appended = self.journal.quarantine(&record);
        let written = matches!(appended, Ok(crate::journal::Appended::Written));
        let journal_error = appended.err();
        if let Some(journal_error) = &journal_error {
            tracing::error!(%journal_error, "quarantine record could not be written");
        }
        if let Some(simulation) = &self.simulation {
            simulation.refused(ids.call_id, error.kind(), written);
        }
        if written && self.events.is_some() {
            let subject = ids.call_id.unwrap_or("-");
            // In the request's trace when the refusal happened while serving one.
            let trace =
                crate::telemetry::current().unwrap_or_else(|| TraceContext::for_call(subject));
            let source = ids.callers.last().copied().unwrap_or("host");
            let about = (source, ids.agent.unwrap_or("host"), ids.tool.unwrap_or("-"));
            self.event(EventKind::Quarantine, &trace, subject, about, || {
                serde_json::to_value(&record).unwrap_or_default()
            });
        }
        Refused {
            fuel_used: error.fuel_used(),
            error,
            call_id: ids.call_id.map(str::to_owned),
            journal_error,
            recovery,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::host::Host;
    use crate::host::tests::{quarantine_count, shared};
    use crate::limits::CALLS_IN_FLIGHT_MAX;
    use crate::recovery::Action;

    #[tokio::test]
    async fn past_the_in_flight_bound_a_call_is_refused_busy_at_once_and_quarantined() {
        let (shared, data) = shared("busy");
        // Every place taken by calls still running.
        let held = shared
            .in_flight
            .try_acquire_many(CALLS_IN_FLIGHT_MAX as u32)
            .unwrap();
        let host = Host {
            shared: shared.clone(),
        };
        let call = crate::ToolCall::new(
            "wellness",
            "stress_score",
            serde_json::json!({"readings": {"hrv_ms": 42},
                "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450}}),
            None,
        );
        let refused = host.dispatch(&call).await.unwrap_err();
        assert_eq!(refused.error.kind(), "busy");
        assert_eq!(refused.call_id.as_deref(), Some(call.call_id.as_str()));
        assert_eq!(refused.recovery.action, Action::Retry);
        assert_eq!(
            refused.recovery.retry_after_ms,
            Some(crate::limits::BUSY_RETRY_AFTER_MS)
        );
        assert_eq!(quarantine_count(&data), 1);
        // A place freed: the next call gets past the gate (and, with no agent loaded, is
        // refused for that instead).
        drop(held);
        let refused = host.dispatch(&call).await.unwrap_err();
        assert_eq!(refused.error.kind(), "agent_unavailable");
        assert_eq!(quarantine_count(&data), 2);
    }
}
