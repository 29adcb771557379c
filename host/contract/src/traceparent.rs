//! W3C trace context (`traceparent`): which request a call belongs to, across hosts.
//!
//! It owns [`TraceContext`]: reading and writing a `traceparent` header, and the trace a root
//! call starts when its caller sent none (derived from its call_id, so the same call is the
//! same trace on every host and every replay). A call's frame carries its trace; a nested
//! call, a call sent to a worker and the events a call publishes keep it. It must not decide
//! what is traced nor export anything (the host's telemetry and the OTLP front do).

use sha2::Digest;

/// A W3C trace context: the trace a call belongs to, and the span that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceContext {
    /// The trace: 16 bytes, not all zero.
    pub trace_id: [u8; 16],
    /// The parent span: 8 bytes, not all zero.
    pub span_id: [u8; 8],
    /// Whether the trace is sampled (flags bit 0).
    pub sampled: bool,
}

impl TraceContext {
    /// The trace a root call with `call_id` starts when none was sent with it.
    pub fn for_call(call_id: &str) -> Self {
        let digest = sha2::Sha256::digest(format!("aura.trace\n{call_id}").as_bytes());
        let mut trace_id = [0u8; 16];
        let mut span_id = [0u8; 8];
        trace_id.copy_from_slice(&digest[..16]);
        span_id.copy_from_slice(&digest[16..24]);
        // A digest of all zeros in either part is as likely as guessing the key; keep the
        // header valid anyway.
        trace_id[15] |= u8::from(trace_id == [0; 16]);
        span_id[7] |= u8::from(span_id == [0; 8]);
        Self {
            trace_id,
            span_id,
            sampled: true,
        }
    }

    /// Reads a `traceparent` header (version 00, or a later version read as 00 by its first
    /// four fields, as the W3C spec asks); `None` if it is not one.
    pub fn parse(header: &str) -> Option<Self> {
        let header = header.trim();
        let mut parts = header.split('-');
        let version = parts.next()?;
        let trace = parts.next()?;
        let span = parts.next()?;
        let flags = parts.next()?;
        let rest = parts.next();
        if version.len() != 2 || version == "ff" || !is_lower_hex(version) {
            return None;
        }
        if version == "00" && (rest.is_some() || header.len() != 55) {
            return None;
        }
        let trace_id: [u8; 16] = hex_bytes(trace)?;
        let span_id: [u8; 8] = hex_bytes(span)?;
        let [flags]: [u8; 1] = hex_bytes(flags)?;
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(Self {
            trace_id,
            span_id,
            sampled: flags & 1 == 1,
        })
    }

    /// The `traceparent` header (version 00).
    pub fn header(&self) -> String {
        format!(
            "00-{}-{}-{:02x}",
            crate::digest::hex(&self.trace_id),
            crate::digest::hex(&self.span_id),
            u8::from(self.sampled)
        )
    }

    /// The trace id as 32 lowercase hex digits.
    pub fn trace_id_hex(&self) -> String {
        crate::digest::hex(&self.trace_id)
    }
}

fn is_lower_hex(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn hex_bytes<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N || !is_lower_hex(text) {
        return None;
    }
    let mut bytes = [0u8; N];
    for (i, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_w3c_example_reads_and_writes_back() {
        // The example of W3C Trace Context §3.2.
        let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let context = TraceContext::parse(header).unwrap();
        assert_eq!(context.trace_id[0], 0x4b);
        assert_eq!(context.span_id[7], 0xb7);
        assert!(context.sampled);
        assert_eq!(context.header(), header);
        assert_eq!(context.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
    }

    #[test]
    fn what_is_not_a_traceparent_is_refused() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceContext::parse(bad), None, "{bad}");
        }
        // A later version keeps its first four fields and may add more.
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what-comes";
        let context = TraceContext::parse(later).unwrap();
        assert!(!context.sampled);
    }

    #[test]
    fn a_call_without_a_trace_starts_its_own_the_same_everywhere() {
        let a = TraceContext::for_call("t_0123456789");
        assert_eq!(a, TraceContext::for_call("t_0123456789"));
        assert_ne!(a.trace_id, TraceContext::for_call("t_0123456780").trace_id);
        assert_eq!(TraceContext::parse(&a.header()), Some(a));
    }
}
