//! A client's side of a remote call: the answer a worker sends back is input like any other.
//!
//! It owns running a checked call or a tick on the remote that serves its agent, and checking
//! what comes back: a result.v1, read as I-JSON within the crossing's bound and checked against
//! result.v1, its ids against the call's, its fuel against the budget sent, and its result
//! against the tool's result schema (a tick's against proposals.v1, then each proposed call on
//! its own, as in-process, by the tick module). What fails those checks is quarantined here; a
//! refusal the worker made is its own, quarantined on its host, and comes back as
//! [`RemoteRefusal`]. It must not know the transport.

use std::sync::Arc;

use serde_json::Value;

use aura_contract::canonical::{parse_i_json, to_canonical_string};
use aura_contract::catalogue::RESULT_SCHEMA;
use aura_contract::crossing::CheckedCall;
use aura_contract::envelope::ResultEnvelope;
use aura_contract::error::{CrossingError, Phase, RemoteRefusal};
use aura_contract::limits::CROSSING_BYTES_MAX;
use aura_contract::quarantine::CallIds;
use aura_contract::recovery::Recovery;
use aura_contract::visible::visible;
use aura_sandbox::Frame;

use crate::remote::{RefusedAnswers, Remote, RemoteRequest, RemoteWork, TICK_TOOL, tick_id};
use crate::shared::{Refused, Shared, ids_of};
use crate::telemetry::{self, TraceContext};

/// Quarantines each answer the transport refused on the way (one no trusted worker signed),
/// under the call's ids; the call goes on.
struct Quarantines<'a> {
    shared: &'a Shared,
    ids: CallIds<'a>,
}

impl RefusedAnswers for Quarantines<'_> {
    fn refused(&self, error: CrossingError, answer: &str) {
        let _ = self.shared.refuse(error, self.ids, answer);
    }
}

/// A result.v1 from a worker, checked.
#[derive(Debug)]
enum Answer {
    /// The result (not yet checked against the tool's result schema), and the fuel burned.
    Ok(Value, u64),
    /// The agent reported that the tool could not run.
    ToolError {
        kind: String,
        message: String,
        fuel_used: u64,
    },
    /// The worker refused the call, or the agent failed there.
    Refused(RemoteRefusal),
}

/// An answer that is not the result.v1 of the request it answers.
fn bad_answer(agent: &str, reason: String) -> CrossingError {
    CrossingError::WireReply {
        agent: agent.to_owned(),
        reason,
    }
}

/// Reads a worker's answer to (`call_id`, `agent`, `tool`): I-JSON within the crossing's bound,
/// result.v1, the same ids, no more fuel than was sent.
fn read_answer(
    host: &Shared,
    ids: (&str, &str, &str),
    text: &str,
    fuel_sent: u64,
) -> Result<Answer, CrossingError> {
    let (call_id, agent, tool) = ids;
    let value = parse_i_json(text, CROSSING_BYTES_MAX).map_err(|error| CrossingError::Json {
        phase: Phase::Reply,
        error,
    })?;
    host.crossing
        .schemas()
        .validate(RESULT_SCHEMA.path, &value, "")
        .map_err(|violation| CrossingError::Schema {
            phase: Phase::Reply,
            violation,
        })?;
    // result.v1 guarantees every field read below.
    let answer: ResultEnvelope = serde_json::from_value(value)
        .map_err(|error| bad_answer(agent, format!("not a result.v1: {error}")))?;
    if (
        answer.call_id.as_str(),
        answer.agent.as_str(),
        answer.tool.as_str(),
    ) != (call_id, agent, tool)
    {
        return Err(bad_answer(
            agent,
            format!(
                "it answers {}.{} ({}), not {agent}.{tool} ({call_id})",
                visible(&answer.agent),
                visible(&answer.tool),
                visible(&answer.call_id)
            ),
        ));
    }
    if answer.fuel_used > fuel_sent {
        return Err(bad_answer(
            agent,
            format!(
                "it claims {} fuel, more than the {fuel_sent} sent",
                answer.fuel_used
            ),
        ));
    }
    answer_of(agent, answer)
}

/// What a result.v1 already checked against its call says: its result, the tool's own error,
/// or the worker's refusal.
fn answer_of(agent: &str, answer: ResultEnvelope) -> Result<Answer, CrossingError> {
    let fuel_used = answer.fuel_used;
    match (answer.result, answer.error) {
        (Some(result), _) => Ok(Answer::Ok(result, fuel_used)),
        (None, Some(error))
            if matches!(error.kind.as_str(), "tool_invalid_args" | "tool_failed") =>
        {
            Ok(Answer::ToolError {
                kind: error.kind,
                message: error.message,
                fuel_used,
            })
        }
        (None, Some(error)) => {
            // result.v1's enums admit only these names.
            let kind = aura_protocol::ERROR_KINDS
                .iter()
                .find(|known| **known == error.kind)
                .copied()
                .unwrap_or("agent_unavailable");
            let phase = error
                .phase
                .as_deref()
                .and_then(Phase::named)
                .unwrap_or(Phase::Agent);
            Ok(Answer::Refused(RemoteRefusal {
                agent: agent.to_owned(),
                kind,
                phase,
                message: error.message,
                instance_path: error.instance_path,
                schema_path: error.schema_path,
                fuel_used,
            }))
        }
        (None, None) => Err(bad_answer(agent, "neither a result nor an error".into())),
    }
}

impl Shared {
    /// The remote that runs `agent`'s calls and ticks: this host's, when it does not serve
    /// the agent itself.
    pub(crate) fn remote_for(&self, agent: &str) -> Option<&Arc<dyn Remote>> {
        match self.agents.has(agent) {
            true => None,
            false => self.remote.as_ref(),
        }
    }

    /// Runs a checked call on the remote and checks its answer (see the module doc).
    pub(crate) async fn run_remote(
        &self,
        remote: &Arc<dyn Remote>,
        checked: &CheckedCall,
        frame: &Frame,
        callers: &[&'static str],
    ) -> Result<ResultEnvelope, Refused> {
        let call = checked.call();
        let ids = ids_of(checked, callers);
        let request = RemoteRequest {
            agent: checked.agent(),
            work: RemoteWork::Call { tool: &call.tool },
            id: &call.call_id,
            body: checked.canonical(),
            frame,
            refused: &Quarantines { shared: self, ids },
        };
        let text = remote
            .send(request)
            .await
            .map_err(|error| self.refuse(error, ids, checked.canonical()))?;
        let answer = read_answer(
            self,
            (&call.call_id, &call.agent, &call.tool),
            &text,
            frame.budget.fuel,
        )
        .map_err(|error| self.refuse(error, ids, &text))?;
        match answer {
            Answer::Ok(result, fuel_used) => {
                self.crossing
                    .schemas()
                    .validate(checked.spec().result_schema.path, &result, "/result")
                    .map_err(|violation| {
                        let error = CrossingError::Schema {
                            phase: Phase::Result,
                            violation,
                        };
                        self.refuse(error, ids, &text)
                    })?;
                Ok(ResultEnvelope::ok(call, result, fuel_used))
            }
            Answer::ToolError {
                kind,
                message,
                fuel_used,
            } => Ok(ResultEnvelope::failed(
                call,
                &kind,
                message,
                Some(Phase::Agent),
                fuel_used,
            )),
            Answer::Refused(refusal) => {
                Err(remote_refused(refusal, Some(&call.call_id), &call.tool))
            }
        }
    }

    /// Runs `agent`'s tick on the remote: the agent's proposals.v1 output, as the worker
    /// checked it, and the fuel burned; checked again here by the caller.
    pub(crate) async fn tick_remote(
        &self,
        remote: &Arc<dyn Remote>,
        agent: &'static str,
        context: &str,
        frame: &Frame,
    ) -> Result<(String, u64), Refused> {
        let id = tick_id(agent, context);
        // A tick started with no trace is the one its id names: the same tick is the same
        // trace on every host (and its refusals here are in it).
        let mut sent = frame.clone();
        sent.trace = Some(frame.trace.unwrap_or_else(|| TraceContext::for_call(&id)));
        telemetry::in_trace(
            sent.trace,
            self.send_tick(remote, agent, context, &id, &sent),
        )
        .await
    }

    /// [`Shared::tick_remote`] once the tick has its id and the frame it is sent with.
    async fn send_tick(
        &self,
        remote: &Arc<dyn Remote>,
        agent: &'static str,
        context: &str,
        id: &str,
        frame: &Frame,
    ) -> Result<(String, u64), Refused> {
        let ids = CallIds {
            agent: Some(agent),
            ..CallIds::default()
        };
        let request = RemoteRequest {
            agent,
            work: RemoteWork::Tick,
            id,
            body: context,
            frame,
            refused: &Quarantines { shared: self, ids },
        };
        let text = remote
            .send(request)
            .await
            .map_err(|error| self.refuse(error, ids, ""))?;
        let answer = read_answer(self, (id, agent, TICK_TOOL), &text, frame.budget.fuel)
            .map_err(|error| self.refuse(error, ids, &text))?;
        match answer {
            Answer::Ok(result, fuel_used) => {
                let output = to_canonical_string(&result).map_err(|error| {
                    let error = CrossingError::Json {
                        phase: Phase::Tick,
                        error,
                    };
                    self.refuse(error, ids, &text)
                })?;
                Ok((output, fuel_used))
            }
            Answer::ToolError { .. } => Err(self.refuse(
                bad_answer(agent, "a tick has no tool error".into()),
                ids,
                &text,
            )),
            Answer::Refused(refusal) => Err(remote_refused(refusal, None, TICK_TOOL)),
        }
    }
}

/// A refusal the worker made (and quarantined on its host), as this host's callers see it.
fn remote_refused(refusal: RemoteRefusal, call_id: Option<&str>, tool: &str) -> Refused {
    let agent = refusal.agent.clone();
    let error = CrossingError::Remote(Box::new(refusal));
    Refused {
        fuel_used: error.fuel_used(),
        recovery: Recovery::for_refusal(&error, Some(&agent), Some(tool)),
        error,
        call_id: call_id.map(str::to_owned),
        journal_error: None,
    }
}
