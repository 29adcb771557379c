//! How a tick is checked: an agent's proposals, each a call that must pass the crossing.
//!
//! It owns running agents' `tick` on a context snapshot (one agent, or several concurrently
//! on one canonical text), checking the output as a whole (proposals.v1), then each proposed
//! call on its own (envelope, catalogue, args), quarantining what fails without spoiling the
//! rest. A tick is a crossing span of its own. It must not decide what becomes of a proposal (the
//! orchestrator does) nor run the proposed calls (the call seam does, when one is chosen).

use std::sync::Arc;

use tracing::Instrument;

use sha2::Digest;

use aura_contract::canonical::{JsonError, parse_i_json, to_canonical_string};
use aura_contract::catalogue;
use aura_contract::crossing::{CheckedCall, RawProposal, check_own_tool};
use aura_contract::digest::hex;
use aura_contract::envelope;
use aura_contract::error::{CrossingError, Phase};
use aura_contract::limits::{CROSSING_BYTES_MAX, TICK_DEADLINE_MS};
use aura_contract::quarantine::CallIds;
use aura_contract::visible::visible;
use aura_sandbox::{Budget, Frame, Invocation};

use crate::events::EventKind;
use crate::shared::{Refused, Shared};
use crate::telemetry::{self, TraceContext};

/// One proposal of a tick whose call passed every inbound check.
#[derive(Debug, Clone)]
pub struct Proposal {
    /// The agent whose tick proposed it (only ever one of its own tools).
    pub proposed_by: &'static str,
    /// The proposed call, checked.
    pub call: CheckedCall,
    /// What drove it.
    pub signals: Vec<String>,
    /// 0..=100.
    pub priority: u8,
}

/// What one agent's tick produced.
#[derive(Debug)]
pub struct TickOutcome {
    /// The proposals whose calls passed the crossing, in the agent's order.
    pub proposals: Vec<Proposal>,
    /// The proposals refused (each quarantined), in the agent's order.
    pub refused: Vec<Refused>,
    /// Fuel the tick burned.
    pub fuel_used: u64,
}

impl Shared {
    /// [`Host::tick`](crate::Host::tick): `agent`'s tick on `context`, canonicalized here.
    pub(crate) async fn tick_on(
        self: &Arc<Self>,
        agent: &str,
        context: &serde_json::Value,
    ) -> Result<TickOutcome, Refused> {
        match to_canonical_string(context) {
            Ok(text) => self.tick(agent, &text, tick_now(context)).await,
            Err(error) => Err(self.refuse_tick_context(agent, error)),
        }
    }

    /// [`Host::tick_all`](crate::Host::tick_all): the agents' ticks on one context, canonicalized once.
    // A refusal is the error path, one per failed tick; boxing it buys nothing.
    #[allow(clippy::result_large_err)]
    pub(crate) async fn tick_all_on(
        self: &Arc<Self>,
        agents: &[&str],
        context: &serde_json::Value,
    ) -> Vec<Result<TickOutcome, Refused>> {
        match to_canonical_string(context) {
            Ok(text) => {
                let now = tick_now(context);
                self.context_updated(agents, &text, now);
                let ticks = agents.iter().map(|agent| self.tick(agent, &text, now));
                futures_util::future::join_all(ticks).await
            }
            Err(error) => agents
                .iter()
                .map(|agent| Err(self.refuse_tick_context(agent, error.clone())))
                .collect(),
        }
    }
}

/// The `now` member of a tick context's text (a worker's, sent one over the wire).
pub(crate) fn context_now(context: &str) -> Option<String> {
    let value = parse_i_json(context, CROSSING_BYTES_MAX).ok()?;
    tick_now(&value).map(str::to_owned)
}

/// The `now` member of a tick context, the instant its guests' clocks start at.
fn tick_now(context: &serde_json::Value) -> Option<&str> {
    context.get("now").and_then(|now| now.as_str())
}

/// What a quarantine record knows of a tick: its agent.
pub(crate) fn tick_ids(agent: &str) -> CallIds<'_> {
    CallIds {
        agent: Some(agent),
        ..CallIds::default()
    }
}

impl Shared {
    /// Publishes `context.updated` for a tick context handed to `agents`: its instant, size
    /// and digest (not the context itself: it can be a mebibyte), in a trace of its own that
    /// the digest names, so the same tick published twice is one event.
    fn context_updated(&self, agents: &[&str], text: &str, now: Option<&str>) {
        if self.events.is_none() {
            return;
        }
        let digest = hex(&sha2::Sha256::digest(text.as_bytes()));
        let subject = format!("ctx_{}", &digest[..32]);
        let trace = TraceContext::for_call(&subject);
        self.event(
            EventKind::ContextUpdated,
            &trace,
            &subject,
            ("host", "host", "tick"),
            || {
                serde_json::json!({"now": now, "context_bytes": text.len(),
                    "context_sha256": digest, "agents": agents})
            },
        );
    }

    /// Quarantines a tick context that cannot be canonicalized, as `agent`'s tick, in a
    /// crossing span of its own like every tick.
    fn refuse_tick_context(&self, agent: &str, error: JsonError) -> Refused {
        let error = CrossingError::Json {
            phase: Phase::Tick,
            error,
        };
        let _span = tracing::info_span!(
            "crossing",
            agent = %agent,
            tool = "tick",
            depth = 1,
            fuel_used = 0,
            outcome = error.kind()
        )
        .entered();
        self.refuse(error, tick_ids(agent), "")
    }

    /// A tick on a context already in canonical form (`now` is its `now` member).
    async fn tick(
        self: &Arc<Self>,
        agent: &str,
        context: &str,
        now: Option<&str>,
    ) -> Result<TickOutcome, Refused> {
        // A tick is a crossing like any call: one span, ending with its fuel and outcome. Its
        // lifecycle events are at debug level: four agents tick every few minutes, and the
        // decisions that follow have their own info-level events.
        let span = tracing::info_span!(
            "crossing",
            agent = %agent,
            tool = "tick",
            agent.source = "host",
            agent.target = %agent,
            agent.action = "tick",
            depth = 1,
            fuel_used = tracing::field::Empty,
            outcome = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            tenant_id = tracing::field::Empty,
            user_id = tracing::field::Empty,
        );
        self.name_person(&span);
        // A tick is a request of its own: the trace its exported span started. Without an
        // export, a tick sent to a worker gets the one its id names (see `tick_remote`); one
        // run here needs none (its calls start their own), and hashing the context for it
        // would cost every tick.
        let trace = telemetry::started(&span);
        let outcome = telemetry::in_trace(
            trace,
            self.tick_in_sandbox(agent, context, now, trace)
                .instrument(span.clone()),
        )
        .await;
        match &outcome {
            Ok(ticked) => {
                span.record("fuel_used", ticked.fuel_used);
                span.record("outcome", "ok");
            }
            Err(refused) => {
                span.record("fuel_used", refused.fuel_used);
                span.record("outcome", refused.error.kind());
                span.record("otel.status_code", "ERROR");
            }
        }
        outcome
    }

    async fn tick_in_sandbox(
        self: &Arc<Self>,
        agent: &str,
        context: &str,
        now: Option<&str>,
        trace: Option<TraceContext>,
    ) -> Result<TickOutcome, Refused> {
        let budget = Budget::for_deadline(TICK_DEADLINE_MS, self.fuel_per_ms);
        let mut frame = Frame::root(budget, now.map_or(0, envelope::unix_ns));
        frame.trace = trace;
        frame.guest_seed = self.guest_seed;
        let (_, raw, fuel_used) = self.tick_output(agent, context, frame).await?;
        let (proposals, refused) = self.check_proposals(agent, raw);
        Ok(TickOutcome {
            proposals,
            refused,
            fuel_used,
        })
    }

    /// Runs `agent`'s tick (here, or on the remote when this host does not serve the agent)
    /// and checks its output as a whole (proposals.v1): the output, its proposals (each call
    /// still to be checked on its own) and the fuel burned. A failure is quarantined.
    pub(crate) async fn tick_output(
        self: &Arc<Self>,
        agent: &str,
        context: &str,
        frame: Frame,
    ) -> Result<(String, Vec<RawProposal>, u64), Refused> {
        tracing::debug!("agent.started");
        let remote =
            catalogue::agent(agent).and_then(|spec| Some((spec.name, self.remote_for(spec.name)?)));
        let invocation = match remote {
            Some((agent, remote)) => {
                let (output, fuel_used) = self.tick_remote(remote, agent, context, &frame).await?;
                Invocation { output, fuel_used }
            }
            None => {
                let invoked = match self.agent(agent).await {
                    Ok(prepared) => {
                        self.sandbox
                            .tick(&prepared, context, frame, self.clone())
                            .await
                    }
                    Err(unavailable) => Err(unavailable),
                };
                invoked.map_err(|error| {
                    tracing::warn!(
                        kind = error.kind(),
                        fuel_used = error.fuel_used(),
                        error = %visible(&error.to_string()),
                        "agent.error"
                    );
                    self.refuse(error, tick_ids(agent), context)
                })?
            }
        };
        tracing::debug!(fuel_used = invocation.fuel_used, "agent.completed");
        let raw = self
            .crossing
            .check_tick(&invocation.output)
            .map_err(|error| self.refuse(error, tick_ids(agent), &invocation.output))?;
        Ok((invocation.output, raw, invocation.fuel_used))
    }

    /// Checks each call `agent` proposed on its own (the crossing, then that it is one of the
    /// agent's own tools); the refused ones are quarantined.
    fn check_proposals(&self, agent: &str, raw: Vec<RawProposal>) -> (Vec<Proposal>, Vec<Refused>) {
        let mut proposals = Vec::with_capacity(raw.len());
        let mut refused = Vec::new();
        for proposal in raw {
            let offending = proposal.call.to_string();
            let checked = self
                .crossing
                .check_proposed_call(proposal.call)
                .and_then(|call| check_own_tool(agent, &call).map(|()| call));
            match checked {
                Ok(call) => proposals.push(Proposal {
                    proposed_by: call.agent(),
                    call,
                    signals: proposal.signals,
                    priority: proposal.priority,
                }),
                Err(error) => refused.push(self.refuse_unread(error, &offending)),
            }
        }
        (proposals, refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(call_id: &str, agent: &str, tool: &str, args: serde_json::Value) -> serde_json::Value {
        json!({"call_id": call_id, "agent": agent, "tool": tool, "args": args,
               "ts": "2026-11-23T08:00:00Z", "confirm_required": false})
    }

    #[test]
    fn a_bad_or_foreign_proposal_is_quarantined_and_spoils_none_of_the_others() {
        let (shared, data) = crate::shared::tests::shared("tick-proposals");
        let good = |id: &str| RawProposal {
            call: call(id, "calendar", "detect_conflicts", json!({"events": []})),
            signals: vec!["overlap:a/b".into()],
            priority: 90,
        };
        let unknown_tool = RawProposal {
            call: call("t_bad0000001", "calendar", "transfer_money", json!({})),
            signals: vec![],
            priority: 100,
        };
        let bad_args = RawProposal {
            call: call(
                "t_bad0000002",
                "calendar",
                "detect_conflicts",
                json!({"events": 7}),
            ),
            signals: vec![],
            priority: 100,
        };
        let someone_elses = RawProposal {
            call: call(
                "t_bad0000003",
                "comms",
                "draft_reply",
                json!({"message": {"sender":
                "a@b.c", "subject": "s", "body": "b"}, "intent": "accept", "tone": "brief"}),
            ),
            signals: vec![],
            priority: 100,
        };
        let (proposals, refused) = shared.check_proposals(
            "calendar",
            vec![
                good("t_good000001"),
                unknown_tool,
                bad_args,
                someone_elses,
                good("t_good000002"),
            ],
        );
        let ids: Vec<&str> = proposals
            .iter()
            .map(|p| p.call.call().call_id.as_str())
            .collect();
        assert_eq!(ids, ["t_good000001", "t_good000002"]);
        assert_eq!(proposals[0].signals, ["overlap:a/b"]);
        assert_eq!(proposals[0].priority, 90);
        let kinds: Vec<(&str, Option<&str>)> = refused
            .iter()
            .map(|r| (r.error.kind(), r.call_id.as_deref()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("unknown_tool", Some("t_bad0000001")),
                ("schema_error", Some("t_bad0000002")),
                ("call_not_allowed", Some("t_bad0000003"))
            ]
        );
        assert_eq!(crate::shared::tests::quarantine_count(&data), 3);
    }

    #[tokio::test]
    async fn a_tick_of_an_agent_that_is_not_loaded_is_refused_and_quarantined() {
        let (shared, data) = crate::shared::tests::shared("tick-unavailable");
        let refused = shared
            .tick("calendar", r#"{"now":"2026-11-23T08:00:00Z"}"#, None)
            .await
            .unwrap_err();
        assert_eq!(refused.error.kind(), "agent_unavailable");
        assert_eq!(crate::shared::tests::quarantine_count(&data), 1);
    }

    #[test]
    fn the_tick_instant_is_the_contexts_now() {
        assert_eq!(
            tick_now(&json!({"now": "2026-11-23T08:00:00Z"})),
            Some("2026-11-23T08:00:00Z")
        );
        assert_eq!(tick_now(&json!({"now": 5})), None);
        assert_eq!(tick_now(&json!([])), None);
    }
}
