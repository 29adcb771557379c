//! What a front hands the host's one seam: a [`CallRequest`], the call it carries
//! ([`CallInput`]: bytes, text, an envelope, a checked call) and what differs by who sent it
//! (the request's trace, the user's yes, a peer's frame). It must not check or run anything
//! ([`crate::Host::dispatch`] does).

use aura_contract::crossing::CheckedCall;
use aura_contract::envelope::ToolCall;

use crate::remote::SentFrame;
use crate::telemetry::TraceContext;

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

/// What a front has, as the [`CallInput`] it is.
macro_rules! input_from {
    ($($input:ty => $variant:ident),*) => {$(
        impl<'a> From<$input> for CallInput<'a> {
            fn from(input: $input) -> Self {
                Self::$variant(input)
            }
        }
    )*};
}

input_from!(
    &'a [u8] => Bytes,
    &'a Vec<u8> => Bytes,
    &'a str => Text,
    &'a String => Text,
    &'a ToolCall => Envelope,
    &'a CheckedCall => Checked
);

/// A call from any front: what it carries and who sent it, which says the frame it runs in.
/// The one thing a front builds for [`Host::dispatch`](crate::Host::dispatch).
#[derive(Debug, Clone, Copy)]
pub struct CallRequest<'a> {
    pub(crate) input: CallInput<'a>,
    pub(crate) origin: Origin<'a>,
}

impl<'a> CallRequest<'a> {
    /// A call from a front of this host, in no request's trace, the user not asked.
    pub fn new(input: impl Into<CallInput<'a>>) -> Self {
        Self {
            input: input.into(),
            origin: Origin::Front {
                trace: None,
                confirmed: false,
            },
        }
    }

    /// The call as part of the request `trace` its front was sent (an MCP client's
    /// `_meta.traceparent`): its spans, events and any request it makes to a worker are in
    /// that trace. A peer's call keeps the trace its frame carries.
    pub fn in_trace(mut self, trace: Option<TraceContext>) -> Self {
        if let Origin::Front {
            trace: in_trace, ..
        } = &mut self.origin
        {
            *in_trace = trace;
        }
        self
    }

    /// The call as one the user said `yes` to (a front asked them: an MCP client's
    /// elicitation, the orchestrator's question, or the user's own `aura call`). In this
    /// process that is all it needs; sent to a worker, a confirm_required call carries this
    /// host's proof of the yes ([`crate::confirmation`]), which a worker that trusts fronts
    /// requires.
    pub fn confirmed(mut self, yes: bool) -> Self {
        if let Origin::Front { confirmed, .. } = &mut self.origin {
            *confirmed = yes;
        }
        self
    }

    /// A call a peer host sent over the wire: its `body`, the frame it was `sent` with (which
    /// may only lower this host's budget, and whose chain is checked), and the (agent, tool)
    /// of the subject it came on, if the transport addresses one (an envelope for another is
    /// refused, `call_not_allowed`).
    pub fn from_peer(
        body: &'a [u8],
        sent: &'a SentFrame,
        addressed: Option<(&'a str, &'a str)>,
    ) -> Self {
        Self {
            input: CallInput::Bytes(body),
            origin: Origin::Peer { sent, addressed },
        }
    }
}

/// A front's call of what it has, as [`CallRequest::new`] makes it.
macro_rules! request_from {
    ($($input:ty),*) => {$(
        impl<'a> From<$input> for CallRequest<'a> {
            fn from(input: $input) -> Self {
                Self::new(input)
            }
        }
    )*};
}

request_from!(
    CallInput<'a>,
    &'a [u8],
    &'a Vec<u8>,
    &'a str,
    &'a String,
    &'a ToolCall,
    &'a CheckedCall
);

/// Who sent a call into the seam, which says the frame it runs in.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Origin<'a> {
    /// A front of this host: a root call with its own deadline's budget, in the request
    /// `trace` its caller sent (an MCP client's `_meta.traceparent`), if any; `confirmed`
    /// when the user said yes to it (a worker that runs it is sent this host's proof).
    Front {
        trace: Option<TraceContext>,
        confirmed: bool,
    },
    /// A peer host, over the wire: the frame it sent the call with (which may only lower this
    /// host's budget, and whose chain is checked), and the (agent, tool) of the subject it
    /// came on, if the transport addresses one.
    Peer {
        sent: &'a SentFrame,
        addressed: Option<(&'a str, &'a str)>,
    },
}

impl Origin<'_> {
    /// The request's trace.
    pub(crate) fn trace(&self) -> Option<TraceContext> {
        match self {
            Origin::Front { trace, .. } => *trace,
            Origin::Peer { sent, .. } => sent.trace,
        }
    }
}
