//! aura-protocol: the vocabulary of the wire contract (`schemas/toolcall.v1.json`) that the host
//! and the guest SDK both speak, defined once.
//!
//! It owns the types whose every value a schema enumerates, and the one rule that derives a
//! call_id from a seed (so the SDK's and the host's ids agree). It must not hold checks (they
//! are the host's crossing) or build envelopes (the SDK's), and it must build for every target
//! the host and the agents build for (no dependency beyond serde).

use serde::{Deserialize, Serialize};

/// Where the user sees a call's outcome (toolcall.v1 `expected_surface`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Surface {
    /// A glance on the watch: a nudge that matters now.
    Watch,
    /// A card on the phone: something to read or answer.
    PhoneCard,
    /// Spoken in the earbuds: urgent and hands-free.
    EarbudTts,
    /// Recorded, not shown.
    Silent,
}

impl Surface {
    /// Every surface, in toolcall.v1's order.
    pub const ALL: [Surface; 4] = [
        Surface::Watch,
        Surface::PhoneCard,
        Surface::EarbudTts,
        Surface::Silent,
    ];

    /// The surface's name in toolcall.v1.
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Watch => "WATCH",
            Surface::PhoneCard => "PHONE_CARD",
            Surface::EarbudTts => "EARBUD_TTS",
            Surface::Silent => "SILENT",
        }
    }
}

impl std::fmt::Display for Surface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every `error.kind` of `schemas/result.v1.json`, in the schema's order (the host's test
/// `every_kind_and_phase_is_in_result_v1` keeps them equal): what a failed call can be named,
/// for guests that read a nested failure's kind or message.
pub const ERROR_KINDS: [&str; 26] = [
    "too_large",
    "malformed_json",
    "duplicate_key",
    "number_out_of_range",
    "noncharacter",
    "too_deep",
    "canonicalize_failed",
    "schema_error",
    "unknown_agent",
    "unknown_tool",
    "agent_unavailable",
    "agent_trapped",
    "agent_exited",
    "stack_overflow",
    "deadline_exceeded",
    "wall_clock_exceeded",
    "import_limit",
    "host_work_limit",
    "memory_limit",
    "tool_invalid_args",
    "tool_failed",
    "agent_call_unsupported",
    "call_not_allowed",
    "cycle_detected",
    "depth_exceeded",
    "busy",
];

/// Length of the part of a `toolcall.v1` call_id after `t_` (`^t_[a-z0-9]{10}$`).
pub const CALL_ID_SUFFIX_CHARS: usize = 10;

/// A deterministic `toolcall.v1` call id (`t_` + 10 chars of `[a-z0-9]`) derived from `seed`.
///
/// Agents have no trustworthy randomness (and replay must be deterministic), so ids of proposed
/// calls are a hash of what the call is about; the host names an agent's nested calls the same
/// way. FNV-1a 64-bit, written in base 36.
pub fn call_id_from(seed: &str) -> String {
    const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
    const ALPHABET: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut hash = FNV_OFFSET_BASIS;
    for byte in seed.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    let mut id = String::with_capacity(2 + CALL_ID_SUFFIX_CHARS);
    id.push_str("t_");
    for _ in 0..CALL_ID_SUFFIX_CHARS {
        id.push(ALPHABET[(hash % 36) as usize] as char);
        hash /= 36;
    }
    id
}

/// Whether `text` has the form of a `toolcall.v1` call_id: `t_` and
/// [`CALL_ID_SUFFIX_CHARS`] of `[a-z0-9]` (the schema's pattern, `^t_[a-z0-9]{10}$`).
pub fn is_call_id(text: &str) -> bool {
    text.strip_prefix("t_").is_some_and(|suffix| {
        suffix.len() == CALL_ID_SUFFIX_CHARS
            && suffix
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_id_matches_the_toolcall_pattern_and_is_deterministic() {
        for seed in ["", "a", "calendar/detect_conflicts/2026-11-22T09:00:00Z"] {
            let id = call_id_from(seed);
            assert!(is_call_id(&id), "{id}");
            assert_eq!(id, call_id_from(seed));
        }
        assert_ne!(call_id_from("a"), call_id_from("b"));
    }

    #[test]
    fn the_call_id_form_is_the_schemas_pattern() {
        assert!(is_call_id("t_0123456789"));
        assert!(is_call_id("t_abcdefghij"));
        for not in [
            "",
            "t_",
            "t_012345678",
            "t_01234567890",
            "T_0123456789",
            "t_012345678A",
            "x_0123456789",
            "t_01234-6789",
            "t_012345678é",
        ] {
            assert!(!is_call_id(not), "{not}");
        }
    }

    #[test]
    fn call_id_of_empty_seed_is_fnv_offset_basis_in_base36() {
        // FNV-1a of "" is the offset basis 0xcbf29ce484222325 = 14695981039346656037;
        // its base-36 digits, least significant first, worked out by repeated division.
        let mut n: u64 = 14_695_981_039_346_656_037;
        let mut expected = String::from("t_");
        for _ in 0..10 {
            expected.push(char::from_digit((n % 36) as u32, 36).unwrap());
            n /= 36;
        }
        assert_eq!(call_id_from(""), expected);
    }

    #[test]
    fn names_are_toolcall_v1s_and_serde_agrees() {
        let schema = include_str!("../../../schemas/toolcall.v1.json");
        for surface in Surface::ALL {
            // serde's form is the quoted name, and toolcall.v1's enum lists that name.
            let quoted = format!("\"{}\"", surface.as_str());
            assert_eq!(serde_json::to_string(&surface).unwrap(), quoted);
            assert_eq!(serde_json::from_str::<Surface>(&quoted).unwrap(), surface);
            assert!(schema.contains(&quoted), "{quoted} is not in toolcall.v1");
        }
        assert!(serde_json::from_str::<Surface>("\"TV\"").is_err());
    }
}
