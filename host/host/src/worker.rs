//! A worker's side of a remote call: what a peer host sent, served through the host's one seam.
//!
//! It owns [`Host::serve_call`](crate::Host::serve_call) (the body goes through [`Host::dispatch`](crate::Host::dispatch)'s path as a peer's
//! call: the in-flight bound, the crossing, the frame the peer sent checked, the run, the
//! crossing out; always answered with a result.v1, canonical: the tool's result, its own error,
//! or why it was refused) and [`Host::serve_tick`](crate::Host::serve_tick) (the agent's proposals.v1 output as the
//! crossing checked it whole, in a result.v1 of tool [`TICK_TOOL`] under the tick's id; each
//! proposed call is checked by the host that acts on it). It trusts nothing it is sent. It
//! must not know the transport (`aura-wire` does).

use serde_json::Value;
use tracing::Instrument;

use aura_contract::canonical::JsonError;
use aura_contract::catalogue;
use aura_contract::envelope::{self, ResultEnvelope, ToolCall};
use aura_contract::error::{CrossingError, Phase};
use aura_contract::limits::{CALLS_IN_FLIGHT_MAX, TICK_DEADLINE_MS};
use aura_contract::quarantine::CallIds;
use aura_contract::visible::visible;

use crate::request::CallRequest;
use crate::shared::Shared;
use aura_sandbox::Frame;
use std::sync::Arc;

use crate::remote::{SentFrame, TICK_TOOL, frame_from, tick_id};
use crate::telemetry;
use crate::tick::{context_now, tick_ids};

impl Shared {
    /// A worker's answer to a call sent over the wire: `body` through the crossing (a
    /// refusal quarantined here, as every front's), the frame it was sent with checked, then
    /// the sandbox and the crossing out. Always a result.v1, canonical: the tool's result, its
    /// own error, or why it was refused.
    /// `addressed`: the (agent, tool) whose subject it came on; an envelope for another is
    /// refused (`call_not_allowed`).
    pub(crate) async fn serve_call(
        self: &Arc<Self>,
        body: &[u8],
        sent: &SentFrame,
        addressed: Option<(&str, &str)>,
    ) -> String {
        match self
            .dispatch(CallRequest::from_peer(body, sent, addressed))
            .await
        {
            Ok(result) => result.to_canonical(),
            Err(refused) => {
                // The ids as far as the body shows them (all of them, once it passed the
                // crossing), and the fuel the agent burned before it was refused.
                let mut answer =
                    envelope::refusal_of(&String::from_utf8_lossy(body), None, &refused.error);
                answer.fuel_used = refused.fuel_used;
                answer.to_canonical()
            }
        }
    }

    /// A worker's answer to a tick sent over the wire: the agent's proposals.v1 output as the
    /// crossing checked it whole, in a result.v1 of tool [`TICK_TOOL`] under the tick's id
    /// (each proposed call is checked by the host that acts on it); or why the tick failed,
    /// quarantined here.
    pub(crate) async fn serve_tick(
        self: &Arc<Self>,
        agent: &str,
        body: &[u8],
        sent: &SentFrame,
    ) -> String {
        // A tick served here is a crossing span of the request's trace, under the span that
        // sent it.
        let span = tracing::info_span!(
            "crossing",
            agent = %aura_contract::visible::visible(agent),
            tool = TICK_TOOL,
            agent.source = "host",
            agent.target = %aura_contract::visible::visible(agent),
            agent.action = TICK_TOOL,
            depth = 1,
        );
        if let Some(trace) = &sent.trace {
            telemetry::adopt(&span, trace);
        }
        telemetry::in_trace(
            sent.trace,
            self.serve_tick_in(agent, body, sent).instrument(span),
        )
        .await
    }

    async fn serve_tick_in(self: &Arc<Self>, agent: &str, body: &[u8], sent: &SentFrame) -> String {
        let shared = self;
        let context = String::from_utf8_lossy(body);
        let answer_call = ToolCall {
            call_id: tick_id(agent, &context),
            agent: agent.to_owned(),
            tool: TICK_TOOL.to_owned(),
            args: Value::Null,
            ts: String::new(),
            confirm_required: false,
            expected_surface: None,
            deadline_ms: None,
        };
        let refused_text = |error: &CrossingError| {
            let mut answer = ResultEnvelope::refused(&answer_call, error);
            answer.fuel_used = error.fuel_used();
            answer.to_canonical()
        };
        let Some(spec) = catalogue::agent(agent) else {
            let error = CrossingError::UnknownAgent {
                agent: visible(agent),
            };
            return refused_text(&shared.refuse(error, CallIds::default(), &context).error);
        };
        let Ok(_in_flight) = shared.in_flight.try_acquire() else {
            let error = CrossingError::Busy {
                in_flight_max: CALLS_IN_FLIGHT_MAX,
            };
            return refused_text(&shared.refuse(error, tick_ids(spec.name), "").error);
        };
        let outcome = match self.tick_sent(spec.name, body, sent) {
            Ok((context, frame)) => shared.tick_output(spec.name, context, frame).await,
            Err(error) => Err(shared.refuse(error, tick_ids(spec.name), "")),
        };
        match outcome {
            Ok((output, _, fuel_used)) => {
                // The output passed proposals.v1 as I-JSON: it parses.
                let result = serde_json::from_str(&output).unwrap_or_default();
                ResultEnvelope::ok(&answer_call, result, fuel_used).to_canonical()
            }
            Err(refused) => refused_text(&refused.error),
        }
    }

    /// The context a peer sent `agent` a tick on (it must be UTF-8), and the frame the tick
    /// runs in: the one the peer sent, checked ([`frame_from`]), its guests' clocks at the
    /// context's `now`.
    fn tick_sent<'b>(
        &self,
        agent: &'static str,
        body: &'b [u8],
        sent: &SentFrame,
    ) -> Result<(&'b str, Frame), CrossingError> {
        let context = std::str::from_utf8(body).map_err(|_| CrossingError::Json {
            phase: Phase::Tick,
            error: JsonError::Malformed {
                line: 0,
                column: 0,
                message: "the tick context is not UTF-8".into(),
            },
        })?;
        let now = context_now(context);
        let frame = frame_from(
            sent,
            agent,
            TICK_DEADLINE_MS,
            self.fuel_per_ms,
            now.as_deref().map_or(0, envelope::unix_ns),
        )?;
        Ok((context, frame))
    }
}
