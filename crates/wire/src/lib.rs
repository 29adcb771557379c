//! The wire: tool calls and ticks across hosts over NATS, and the event stream on JetStream.
//!
//! It owns the protocol between hosts: the subjects (`aura.tool.<agent>.<tool>`,
//! `aura.tick.<agent>`, served by every worker in the queue group [`QUEUE_GROUP`] of the NATS
//! service [`SERVICE_NAME`], so requests spread over workers and `$SRV.PING/INFO/STATS` find
//! them), the headers a request carries (its fuel, deadline, call chain, id and W3C
//! `traceparent`), connecting ([`connect`]), the worker ([`worker`]), the client side that
//! plugs into a host as its [`aura_host::remote::Remote`] ([`cluster`]) and the event stream
//! ([`stream`]). A request body is toolcall.v1 text (or a tick context); an answer is result.v1
//! text. It must not check a call itself: a worker hands what it is sent to the host's seam,
//! and a client hands what it gets back to the host's checks ([`aura_host::remote`]).

#![warn(missing_docs)]
#![recursion_limit = "256"]

/// The NATS client the wire is built on, for a test or a tool that speaks to it directly.
pub use async_nats;

pub mod cluster;
pub mod front;
pub mod stream;
pub mod worker;

use std::time::Duration;

use async_nats::HeaderMap;

use aura_contract::limits::{WIRE_BACKOFF_MS_BASE, WIRE_BACKOFF_MS_MAX, WIRE_CONNECT_TIMEOUT_MS};
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
    /// The nats-server could not be reached.
    #[error("cannot connect to the nats-server at {url}: {reason}")]
    Connect {
        /// Where.
        url: String,
        /// Why.
        reason: String,
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

/// Connects to the nats-server at `url`: reconnecting for ever after a loss, with backoff
/// capped at [`WIRE_BACKOFF_MS_MAX`], so a server restart is survived.
pub async fn connect(url: &str) -> Result<async_nats::Client, WireError> {
    async_nats::ConnectOptions::new()
        .name(format!("aura {}", env!("CARGO_PKG_VERSION")))
        .connection_timeout(Duration::from_millis(WIRE_CONNECT_TIMEOUT_MS))
        .reconnect_delay_callback(|attempts| backoff(u32::try_from(attempts).unwrap_or(u32::MAX)))
        .connect(url)
        .await
        .map_err(|error| WireError::Connect {
            url: url.to_owned(),
            reason: error.to_string(),
        })
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
