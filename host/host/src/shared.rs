//! What every call of a host shares, and how a refusal is recorded.
//!
//! It owns [`Shared`] (the crossing, the sandbox, the agents, the journal, the fuel rate, the
//! in-flight bound and the seams: simulation, remote, events; the imports of the calls in
//! flight hold it too, since an agent's `host.call` comes back into the same crossing), a
//! refusal as every front receives it ([`Refused`]), quarantining one (the record written
//! before the refusal is returned, then the simulation told and the event published) and
//! handing an event to the sink. It must not check a call (the crossing does) nor run one
//! (the call seam does).

use std::sync::{Arc, Weak};

use aura_contract::crossing::{CheckedCall, Crossing};
use aura_contract::envelope;
use aura_contract::error::CrossingError;
use aura_contract::quarantine::{CallIds, QuarantineRecord};
use aura_contract::recovery::{Recovery, ToolFailure};
use aura_contract::visible::visible;
use aura_sandbox::{PreparedAgent, Sandbox};

use crate::admission::Roster;
use crate::confirmation::Confirmations;
use crate::events::{AgentMessage, EventKind, EventSink};
use crate::journal::{Appended, Journal, JournalError};
use crate::remote::Remote;
use crate::simulation::Simulation;
use crate::telemetry::{self, TraceContext};

/// What a call needs, shared with the imports of the calls in flight.
#[derive(Debug)]
pub(crate) struct Shared {
    /// This host, for the calls it makes on an agent's behalf.
    pub(crate) this: Weak<Shared>,
    /// The crossing, the engine and the agents are shared by every person's host made from
    /// one ([`crate::Host::for_person`]); the journal is each one's own.
    pub(crate) crossing: Arc<Crossing>,
    pub(crate) sandbox: Arc<Sandbox>,
    pub(crate) agents: Arc<Roster>,
    pub(crate) journal: Arc<Journal>,
    pub(crate) fuel_per_ms: u64,
    /// Calls taken through the seam and not yet answered
    /// ([`CALLS_IN_FLIGHT_MAX`](aura_contract::limits::CALLS_IN_FLIGHT_MAX)).
    pub(crate) in_flight: tokio::sync::Semaphore,
    /// The deterministic simulation driving this host, if one is.
    pub(crate) simulation: Option<Arc<dyn Simulation>>,
    /// Where agents this host does not serve run ([`crate::HostConfig::remote`]).
    pub(crate) remote: Option<Arc<dyn Remote>>,
    /// Where events go ([`crate::HostConfig::events`]).
    pub(crate) events: Option<Arc<dyn EventSink>>,
    /// Proving users' yeses to workers, and checking fronts' proofs.
    pub(crate) confirmations: Arc<Confirmations>,
    /// The seed of this host's guests when not the sandbox's: a fleet's person's own.
    pub(crate) guest_seed: Option<u64>,
    /// Whose assistant this host runs, on a fleet's host: on every event and span.
    pub(crate) person: Option<aura_contract::person::Person>,
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
    /// The agent a call to `agent` runs, admitted (with every agent it can reach) if it was
    /// not yet; unavailable if this host does not serve it.
    pub(crate) async fn agent(&self, agent: &str) -> Result<Arc<PreparedAgent>, CrossingError> {
        self.agents
            .reach(&self.crossing, &self.sandbox, agent)
            .await
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

    /// Names the person this host runs for (on a fleet's host) on a crossing's span.
    pub(crate) fn name_person(&self, span: &tracing::Span) {
        if let Some(person) = &self.person {
            span.record("tenant_id", person.tenant());
            span.record("user_id", person.user());
        }
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
            let mut message = AgentMessage::new(kind, trace, subject, about, payload());
            message.person = self.person.clone().map(Into::into);
            sink.publish(message);
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
        let written = matches!(appended, Ok(Appended::Written));
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
            let trace = telemetry::current().unwrap_or_else(|| TraceContext::for_call(subject));
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
pub(crate) mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    use aura_contract::limits::{CALLS_IN_FLIGHT_MAX, FUEL_PER_MS_DEFAULT};
    use aura_plugins::PluginsDir;
    use aura_plugins::signing::TrustedKeys;
    use aura_sandbox::CodeTarget;

    /// What a host shares, with no agent loaded: an engine, the crossing and a fresh data dir.
    pub(crate) fn shared(name: &str) -> (Arc<Shared>, PathBuf) {
        let data = std::env::temp_dir()
            .join("aura-unit")
            .join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&data);
        let plugins = data.join("plugins");
        aura_plugins::write_components(&plugins, &[]).unwrap();
        let shared = Arc::new_cyclic(|this| Shared {
            this: this.clone(),
            crossing: Arc::new(Crossing::new().unwrap()),
            sandbox: Arc::new(Sandbox::new(0, &CodeTarget::Native).unwrap()),
            agents: Arc::new(Roster::new(
                Some(PluginsDir::open(&plugins, &TrustedKeys::none()).unwrap()),
                &[],
                None,
                Vec::new(),
            )),
            journal: Arc::new(Journal::open(&data).unwrap()),
            fuel_per_ms: FUEL_PER_MS_DEFAULT,
            in_flight: tokio::sync::Semaphore::new(CALLS_IN_FLIGHT_MAX),
            simulation: None,
            remote: None,
            events: None,
            confirmations: Arc::default(),
            guest_seed: None,
            person: None,
        });
        (shared, data)
    }

    /// Lines in the data dir's quarantine log.
    pub(crate) fn quarantine_count(data: &Path) -> usize {
        std::fs::read_to_string(data.join(crate::journal::QUARANTINE_PATH))
            .unwrap_or_default()
            .lines()
            .count()
    }
}
