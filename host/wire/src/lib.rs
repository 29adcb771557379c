//! The wire: tool calls and ticks across hosts over NATS, and the event stream on JetStream.
//!
//! It owns the protocol between hosts: the subjects (`aura.tool.<agent>.<tool>`,
//! `aura.tick.<agent>`, served by every worker in the queue group [`QUEUE_GROUP`] of the NATS
//! service [`SERVICE_NAME`], so requests spread over workers and `$SRV.PING/INFO/STATS` find
//! them), the headers a request carries (its fuel, deadline, call chain, id and W3C
//! `traceparent`), connecting ([`connect`], with the credentials and TLS of [`access`], the
//! server's refusals kept to be named), the worker ([`worker`]), the client side that
//! plugs into a host as its [`aura_host::remote::Remote`] ([`cluster`]) and the event stream
//! ([`stream`]). A request body is toolcall.v1 text (or a tick context); an answer is result.v1
//! text. It must not check a call itself: a worker hands what it is sent to the host's seam,
//! and a client hands what it gets back to the host's checks ([`aura_host::remote`]).

#![warn(missing_docs)]
#![recursion_limit = "256"]

/// The NATS client the wire is built on, for a test or a tool that speaks to it directly.
pub use async_nats;

pub mod access;
pub mod cluster;
pub mod front;
pub mod provenance;
pub mod stream;
pub mod worker;

use aura_contract::caused::Caused;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::HeaderMap;

pub use access::{AccessError, NatsAccess, NatsOptions};

use aura_contract::limits::{
    WIRE_BACKOFF_MS_BASE, WIRE_BACKOFF_MS_MAX, WIRE_CONNECT_TIMEOUT_MS, WIRE_REFUSAL_SETTLE_MS,
    WIRE_REFUSALS_KEPT_MAX,
};
use aura_contract::traceparent::TraceContext;
use aura_host::remote::{Frame, SentFrame};

/// The NATS service every worker registers (`$SRV.INFO.aura` lists them).
pub const SERVICE_NAME: &str = "aura";

/// The queue group of every endpoint: one worker takes each request.
pub const QUEUE_GROUP: &str = "aura";

/// Header: the fuel the call may burn (decimal).
pub const FUEL_HEADER: &str = "Aura-Fuel";
/// Header: the call's deadline (decimal ms).
pub const DEADLINE_HEADER: &str = "Aura-Deadline-Ms";
/// Header: the agents above the call, root first, comma-separated (absent for a root call).
pub const CHAIN_HEADER: &str = "Aura-Chain";
/// Header: the W3C trace context.
pub const TRACEPARENT_HEADER: &str = "traceparent";
/// Header: a confirming front's proof of the user's yes to a confirm_required call
/// (`aura_host::confirmation`).
pub const CONFIRMATION_HEADER: &str = "Aura-Confirmation";

/// The subject of `agent`'s `tool`.
pub fn tool_subject(agent: &str, tool: &str) -> String {
    format!("aura.tool.{agent}.{tool}")
}

/// The subject of `agent`'s tick.
pub fn tick_subject(agent: &str) -> String {
    format!("aura.tick.{agent}")
}

/// Why the wire could not be used.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The nats-server could not be reached, or refused this process's credentials.
    #[error("cannot connect to the nats-server at {url}: {reason}")]
    Connect {
        /// Where (no secrets).
        url: String,
        /// Why.
        reason: String,
    },
    /// What the command was given cannot reach a server (a bad URL, two kinds of
    /// credentials, an unreadable file).
    #[error(transparent)]
    Access(#[from] AccessError),
    /// The server refused what this process needs to do: its user lacks the permission.
    #[error(
        "the nats-server at {server} refused {doing}: {refusal} (see deploy/nats/ for each role's permissions)"
    )]
    Refused {
        /// Where (no secrets).
        server: String,
        /// What it refused: whose requests.
        doing: &'static str,
        /// What the server said.
        refusal: String,
    },
    /// Registering the worker's service or an endpoint failed.
    #[error("cannot serve on NATS: {0}")]
    Service(String),
    /// No worker answered discovery.
    #[error("no aura worker answered on the nats-server (is `aura worker --nats URL` running?)")]
    NoWorkers,
    /// Two workers serve the same agent built from different sources: a run could not be
    /// the same on both.
    #[error("workers disagree on agent `{agent}`: one serves {one}, another {other}")]
    WorkersDisagree {
        /// The agent.
        agent: String,
        /// One worker's source digest.
        one: String,
        /// Another's.
        other: String,
    },
    /// Workers answered discovery, and none is one this client trusts.
    #[error(
        "{untrusted} worker(s) answered, none signed by a key this client trusts (--trust-workers)"
    )]
    NoTrustedWorkers {
        /// How many answered.
        untrusted: usize,
    },
    /// A worker's discovery answer could not be read.
    #[error("a worker's discovery answer is not readable: {0}")]
    Discovery(String),
    /// The workers' agents draw from another seed than the run asks for.
    #[error(
        "the workers' agents draw from seed {}, not {wanted}: start them with `aura worker --seed {wanted}`",
        workers.map_or("?".into(), |s| s.to_string())
    )]
    SeedMismatch {
        /// The workers' seed, if they said.
        workers: Option<u64>,
        /// The run's.
        wanted: u64,
    },
    /// The JetStream event stream could not be set up or read.
    #[error("the event stream: {0}")]
    Stream(String),
}

/// A connection to the nats-server, and what the server refused on it (a publish or a
/// subscription its permissions do not allow, which NATS says only asynchronously).
#[derive(Debug, Clone)]
pub struct Connection {
    /// The client.
    pub client: async_nats::Client,
    /// Where it is connected (no secrets).
    pub shown: String,
    /// Who this process is on the wire, and whom it believes.
    pub provenance: provenance::Provenance,
    refusals: Arc<Mutex<VecDeque<String>>>,
}

impl Connection {
    /// The first thing the server refused on this connection so far, if any; what was sent
    /// before is flushed first, so a refusal of it has arrived.
    pub async fn refused(&self) -> Option<String> {
        let _ = self.client.flush().await;
        // A flush's PONG comes after the server's -ERR for what came before it, but the
        // client hands that error to the callback that records it through a task of its own.
        tokio::time::sleep(Duration::from_millis(WIRE_REFUSAL_SETTLE_MS)).await;
        self.refusals
            .lock()
            .ok()
            .and_then(|refusals| refusals.front().cloned())
    }

    /// [`WireError::Refused`] if the server refused anything on this connection so far.
    pub async fn check(&self, doing: &'static str) -> Result<(), WireError> {
        match self.refused().await {
            Some(refusal) => Err(WireError::Refused {
                server: self.shown.clone(),
                doing,
                refusal,
            }),
            None => Ok(()),
        }
    }
}

/// Connects to the nats-server `access` names with its credentials and TLS: reconnecting for
/// ever after a loss, with backoff capped at [`WIRE_BACKOFF_MS_MAX`], so a server restart is
/// survived. What the server refuses is logged and kept (the first
/// [`WIRE_REFUSALS_KEPT_MAX`]) for [`Connection::refused`].
pub async fn connect(access: &NatsAccess) -> Result<Connection, WireError> {
    let refusals = Arc::new(Mutex::new(VecDeque::new()));
    let kept = refusals.clone();
    let client = access
        .connect_options()
        .name(format!("aura {}", env!("CARGO_PKG_VERSION")))
        .connection_timeout(Duration::from_millis(WIRE_CONNECT_TIMEOUT_MS))
        .reconnect_delay_callback(|attempts| backoff(u32::try_from(attempts).unwrap_or(u32::MAX)))
        .event_callback(move |event| {
            let kept = kept.clone();
            async move { note_event(&kept, event) }
        })
        .connect(access.servers())
        .await
        .map_err(|error| WireError::Connect {
            url: access.shown(),
            reason: error.to_string(),
        })?;
    Ok(Connection {
        client,
        shown: access.shown(),
        provenance: access.provenance().clone(),
        refusals,
    })
}

/// Logs a connection's event; keeps a server's refusal.
fn note_event(refusals: &Mutex<VecDeque<String>>, event: async_nats::Event) {
    match event {
        async_nats::Event::ServerError(error) => {
            tracing::error!(error = %Caused(&error), "the nats-server refused");
            if let Ok(mut refusals) = refusals.lock()
                && refusals.len() < WIRE_REFUSALS_KEPT_MAX
            {
                refusals.push_back(error.to_string());
            }
        }
        async_nats::Event::Connected => tracing::info!("connected to the nats-server"),
        other => tracing::warn!(event = %other, "the nats connection"),
    }
}

/// The wait before attempt `attempt + 1` (the first retry waits [`WIRE_BACKOFF_MS_BASE`]).
pub fn backoff(attempt: u32) -> Duration {
    let doubled = WIRE_BACKOFF_MS_BASE.saturating_mul(1u64 << attempt.saturating_sub(1).min(16));
    Duration::from_millis(doubled.min(WIRE_BACKOFF_MS_MAX))
}

/// The headers of a request made from `frame`.
pub fn frame_headers(frame: &Frame) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(FUEL_HEADER, frame.budget.fuel.to_string().as_str());
    headers.insert(
        DEADLINE_HEADER,
        frame.budget.deadline_ms.to_string().as_str(),
    );
    if !frame.chain_above.is_empty() {
        headers.insert(CHAIN_HEADER, frame.chain_above.join(",").as_str());
    }
    if let Some(trace) = &frame.trace {
        let sending = aura_host::telemetry::outgoing(*trace);
        headers.insert(TRACEPARENT_HEADER, sending.header().as_str());
    }
    if let Some(proof) = &frame.confirmation {
        headers.insert(CONFIRMATION_HEADER, &**proof);
    }
    headers
}

/// What a request's headers say of its frame. A fuel or deadline that is not a number, or a
/// traceparent that is not one, is as if absent (the worker's own bounds then apply, and
/// they are the upper bound anyway); the chain is kept as sent, to be checked.
pub fn sent_frame(headers: Option<&HeaderMap>) -> SentFrame {
    let Some(headers) = headers else {
        return SentFrame::default();
    };
    let text = |name: &str| headers.get(name).map(|value| value.as_str().to_owned());
    let number = |name: &str| text(name).and_then(|t| t.trim().parse::<u64>().ok());
    SentFrame {
        fuel: number(FUEL_HEADER),
        deadline_ms: number(DEADLINE_HEADER),
        chain: text(CHAIN_HEADER)
            .map(|chain| {
                chain
                    .split(',')
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        trace: text(TRACEPARENT_HEADER).and_then(|t| TraceContext::parse(&t)),
        confirmation: text(CONFIRMATION_HEADER),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aura_host::remote::Budget;

    #[test]
    fn a_frame_goes_through_the_headers_and_back() {
        let frame = Frame {
            budget: Budget {
                fuel: 12_345,
                deadline_ms: 700,
            },
            chain_above: vec!["calendar", "wellness"],
            clock_start_unix_ns: 0,
            interrupt_at_start: false,
            trace: Some(TraceContext::for_call("t_0123456789")),
            confirmation: Some("v1 signer 7 signature".into()),
            guest_seed: None,
        };
        let sent = sent_frame(Some(&frame_headers(&frame)));
        assert_eq!(sent, SentFrame::of(&frame));
        assert_eq!(sent.chain, ["calendar", "wellness"]);
    }

    #[test]
    fn headers_that_are_not_numbers_or_traces_count_as_absent() {
        let mut headers = HeaderMap::new();
        headers.insert(FUEL_HEADER, "lots");
        headers.insert(DEADLINE_HEADER, "-5");
        headers.insert(TRACEPARENT_HEADER, "00-zz");
        headers.insert(CHAIN_HEADER, "calendar,,mallory");
        let sent = sent_frame(Some(&headers));
        assert_eq!(sent.fuel, None);
        assert_eq!(sent.deadline_ms, None);
        assert_eq!(sent.trace, None);
        // Kept as sent: the worker refuses the unknown agent.
        assert_eq!(sent.chain, ["calendar", "mallory"]);
        assert_eq!(sent_frame(None), SentFrame::default());
    }

    #[test]
    fn backoff_doubles_from_the_base_to_the_cap() {
        // 100, 200, 400, 800, 1600, then 1600.
        let waits: Vec<u64> = (1..=7).map(|a| backoff(a).as_millis() as u64).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1600, 1600, 1600]);
    }
}
