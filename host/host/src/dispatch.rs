//! How a call runs: the one seam every front uses.
//!
//! A front builds a [`CallRequest`]: whatever it has (bytes off the wire, toolcall.v1 text, an
//! envelope the front built, or a call this host already checked, [`CallInput`]) and what
//! differs by who sent it (the request's trace, the user's yes, a peer's frame).
//! [`Host::dispatch`](crate::Host::dispatch) takes that and nothing else, and answers with a result.v1 or a
//! [`Refused`]: the in-flight bound, the crossing in, the frame the call runs in, the sandbox
//! (or the remote that serves its agent), the crossing out, inside one `crossing` span, with
//! every refusal quarantined before it is returned. A checked call is never checked twice. A
//! call a peer host sends over the wire takes the very same path
//! ([`CallRequest::from_peer`]): only its frame comes from what the peer sent, checked, instead
//! of from the call's own deadline. It must not implement a check (the crossing does) nor know
//! which front is calling.

use std::sync::Arc;

use tracing::Instrument;

use aura_contract::canonical::JsonError;
use aura_contract::catalogue;
use aura_contract::crossing::{CheckedCall, Reply};
use aura_contract::envelope::{self, ResultEnvelope, ToolCall};
use aura_contract::error::{CrossingError, Phase};
use aura_contract::limits::{CALLS_IN_FLIGHT_MAX, RESULT_MESSAGE_CHARS_MAX};
use aura_contract::quarantine::CallIds;
use aura_contract::visible::visible;
use aura_sandbox::{Budget, Frame};

use crate::confirmation;
use crate::events::EventKind;
use crate::remote::frame_from;
use crate::request::{CallInput, CallRequest, Origin};
use crate::shared::{Refused, Shared, ids_of};
use crate::simulation::{CallFault, CallPoint};
use crate::telemetry::{self, TraceContext};

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

impl Shared {
    /// [`Host::dispatch`](crate::Host::dispatch): the in-flight bound, the crossing (unless the call is already
    /// checked), the frame its request says, then the run and the crossing out, in the
    /// request's trace.
    pub(crate) async fn dispatch(
        self: &Arc<Self>,
        request: CallRequest<'_>,
    ) -> Result<ResultEnvelope, Refused> {
        let CallRequest { input, origin } = request;
        telemetry::in_trace(origin.trace(), async {
            // Held until the answer is back; none left means the bound is reached: refused at
            // once, never queued without bound.
            let Ok(_in_flight) = self.in_flight.try_acquire() else {
                return Err(self.refuse_busy(input));
            };
            let checked;
            let call = match input {
                CallInput::Checked(call) => call,
                unchecked => {
                    checked = self.check_input(unchecked)?;
                    &checked
                }
            };
            let frame = self.frame_for(call, origin)?;
            self.run_checked(call, frame).await
        })
        .await
    }

    /// [`Host::check`](crate::Host::check): the crossing's inbound checks of what a front has.
    // A refusal is the error path, taken at most once per call; boxing it buys nothing.
    #[allow(clippy::result_large_err)]
    pub(crate) fn check_input(&self, input: CallInput<'_>) -> Result<CheckedCall, Refused> {
        match input {
            CallInput::Checked(call) => Ok(call.clone()),
            CallInput::Text(text) => self.check(text),
            CallInput::Envelope(call) => {
                // A ToolCall holds strings, a bool, integers and a JSON value: it serializes.
                self.check(&serde_json::to_string(call).unwrap_or_default())
            }
            CallInput::Bytes(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => self.check(text),
                Err(utf8) => Err(self.refuse_not_utf8(bytes, utf8)),
            },
        }
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

    /// The frame a checked call from `origin` runs in: a front's root call gets its own
    /// deadline's budget; a peer's call must have come on its own tool's subject, and gets the
    /// frame the peer sent, checked ([`frame_from`]). A refusal is quarantined.
    #[allow(clippy::result_large_err)]
    fn frame_for(&self, checked: &CheckedCall, origin: Origin<'_>) -> Result<Frame, Refused> {
        let call = checked.call();
        let (sent, addressed) = match origin {
            Origin::Front { trace, confirmed } => {
                let budget = Budget::for_deadline(checked.deadline_ms(), self.fuel_per_ms);
                let mut frame = Frame::root(budget, envelope::unix_ns(&call.ts));
                frame.trace = trace;
                frame.guest_seed = self.guest_seed;
                if confirmed && checked.needs_confirmation() {
                    frame.confirmation = self
                        .confirmations
                        .prove(checked.canonical(), confirmation::now_unix_ms())
                        .map(Into::into);
                }
                return Ok(frame);
            }
            Origin::Peer { sent, addressed } => (sent, addressed),
        };
        if checked.needs_confirmation() && self.confirmations.required() {
            let proof = sent.confirmation.as_deref();
            let taken =
                self.confirmations
                    .check(checked.canonical(), proof, confirmation::now_unix_ms());
            if let Err(reason) = taken {
                let error = CrossingError::Unconfirmed {
                    agent: call.agent.clone(),
                    tool: call.tool.clone(),
                    reason,
                };
                return Err(self.refuse(error, ids_of(checked, &[]), checked.canonical()));
            }
        }
        if addressed.is_some_and(|to| to != (call.agent.as_str(), call.tool.as_str())) {
            let error = CrossingError::CallNotAllowed {
                caller: "host".to_owned(),
                agent: call.agent.clone(),
                tool: call.tool.clone(),
                reason: "it came on another tool's subject",
            };
            return Err(self.refuse(error, ids_of(checked, &[]), checked.canonical()));
        }
        frame_from(
            sent,
            checked.agent(),
            checked.deadline_ms(),
            self.fuel_per_ms,
            envelope::unix_ns(&call.ts),
        )
        .map_err(|error| {
            let callers: Vec<&'static str> = sent
                .chain
                .iter()
                .filter_map(|name| catalogue::agent(name).map(|spec| spec.name))
                .collect();
            self.refuse(error, ids_of(checked, &callers), checked.canonical())
        })
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
            tenant_id = tracing::field::Empty,
            user_id = tracing::field::Empty,
        );
        self.name_person(&span);
        // A call nobody sent a trace with starts its own (its callees keep it): the one its
        // exported span started, or else one derived from its call_id.
        let trace = match frame.trace {
            Some(trace) => {
                telemetry::adopt(&span, &trace);
                trace
            }
            None => {
                telemetry::started(&span).unwrap_or_else(|| TraceContext::for_call(&call.call_id))
            }
        };
        frame.trace = Some(trace);
        let outcome = telemetry::in_trace(
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

    /// The call's run as the simulation and the event stream see it: `agent.started`, a fault
    /// the simulation injects, the run, then `agent.completed` and `tool.executed` or
    /// `agent.error`.
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
        let injected = self.injected_fault(point, &mut frame);
        let outcome = match injected {
            Some(error) => Err(self.refuse(error, ids_of(checked, &callers), checked.canonical())),
            None => self.run_invoked(checked, frame, &callers).await,
        };
        let (kind, _) = kind_and_fuel(&outcome);
        if let Some(simulation) = &self.simulation {
            simulation.call_ends(point, kind);
        }
        let published_there = match &outcome {
            Ok(_) => worker_publishes,
            Err(refused) => matches!(refused.error, CrossingError::Remote(_)),
        };
        if !published_there {
            self.ended_events(call, &outcome, &trace, about);
        }
        outcome
    }

    /// The fault the simulation injects into the call at `point`, if it drives this host: a
    /// budget cut short or an interrupt at start go into `frame`; a refusal comes back.
    fn injected_fault(&self, point: CallPoint<'_>, frame: &mut Frame) -> Option<CrossingError> {
        let call_agent = point.agent;
        match self.simulation.as_ref()?.call_starts(point)? {
            CallFault::OutOfFuel { fuel } => {
                frame.budget.fuel = frame.budget.fuel.min(fuel);
                None
            }
            CallFault::Trap => {
                frame.interrupt_at_start = true;
                None
            }
            CallFault::Refused => Some(CrossingError::CallNotAllowed {
                caller: point
                    .chain_above
                    .last()
                    .copied()
                    .unwrap_or("host")
                    .to_owned(),
                agent: call_agent.to_owned(),
                tool: point.tool.to_owned(),
                reason: "the simulation refused it",
            }),
            CallFault::NotFound => Some(CrossingError::AgentUnavailable {
                agent: call_agent.to_owned(),
            }),
            CallFault::Busy => Some(CrossingError::Busy {
                in_flight_max: CALLS_IN_FLIGHT_MAX,
            }),
        }
    }

    /// Publishes how a call ended: `agent.completed` and `tool.executed`, or `agent.error`.
    fn ended_events(
        &self,
        call: &ToolCall,
        outcome: &Result<ResultEnvelope, Refused>,
        trace: &TraceContext,
        about: (&str, &str, &str),
    ) {
        if self.events.is_none() {
            return;
        }
        let (kind, fuel_used) = kind_and_fuel(outcome);
        let payload = || {
            serde_json::json!({"call_id": call.call_id, "outcome": kind,
            "fuel_used": fuel_used})
        };
        match outcome {
            Ok(_) => {
                self.event(
                    EventKind::AgentCompleted,
                    trace,
                    &call.call_id,
                    about,
                    payload,
                );
                self.event(
                    EventKind::ToolExecuted,
                    trace,
                    &call.call_id,
                    about,
                    payload,
                );
            }
            Err(refused) => self.event(EventKind::AgentError, trace, &call.call_id, about, || {
                serde_json::json!({"call_id": call.call_id, "kind": kind,
                "phase": refused.error.phase().as_str(), "fuel_used": fuel_used,
                "message": envelope::cut_chars(refused.error.to_string(),
                    RESULT_MESSAGE_CHARS_MAX)})
            }),
        }
    }

    /// Runs the call in the sandbox (or on the remote that serves its agent) and checks its
    /// reply.
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
            error: JsonError::Malformed {
                line: 0,
                column: 0,
                message: format!("input is not UTF-8: {utf8}"),
            },
        };
        self.refuse(error, CallIds::default(), &String::from_utf8_lossy(bytes))
    }
}

#[cfg(test)]
mod tests;
