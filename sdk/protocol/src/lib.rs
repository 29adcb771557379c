//! aura-protocol: the vocabulary of the wire contract (`schemas/toolcall.v1.json`) that the host
//! and the guest SDK both speak, defined once.
//!
//! It owns the types whose every value a schema enumerates, the numbers and words the schema
//! files state that both sides enforce ([`contract`], read out of the schemas by the build),
//! and the one rule that derives a call_id from a seed (so the SDK's and the host's ids agree). It must not hold checks (they
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

/// The contract's numbers and words as the schema files state them, read by the build: the
/// bounds the host and the SDK both enforce, every error kind, and each agent's tools. One
/// source: a schema edited, this changes with it.
pub mod contract {
    include!(concat!(env!("OUT_DIR"), "/contract.rs"));

    /// Whether `tools` are exactly `agent`'s tools in the schemas (in any order, each once):
    /// what an agent's `agent!` invocation is checked against at compile time.
    pub const fn are_the_tools_of(agent: &str, tools: &[&str]) -> bool {
        let mut a = 0;
        while a < TOOLS.len() {
            let (name, listed) = TOOLS[a];
            if same(name, agent) {
                if listed.len() != tools.len() {
                    return false;
                }
                let mut t = 0;
                while t < tools.len() {
                    if !contains(listed, tools[t]) {
                        return false;
                    }
                    t += 1;
                }
                return true;
            }
            a += 1;
        }
        false
    }

    const fn contains(list: &[&str], word: &str) -> bool {
        let mut i = 0;
        while i < list.len() {
            if same(list[i], word) {
                return true;
            }
            i += 1;
        }
        false
    }

    const fn same(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }
}

pub use contract::ERROR_KINDS;

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
    fn the_contract_is_read_from_the_schemas() {
        // Values as the schema files state them (toolcall.v1, proposals.v1, reply.v1,
        // trace.v1), read here by hand.
        assert_eq!(
            (contract::DEADLINE_MS_MIN, contract::DEADLINE_MS_MAX),
            (50, 10_000)
        );
        assert_eq!((contract::PROPOSALS_MAX, contract::SIGNALS_MAX), (16, 16));
        assert_eq!(
            (contract::SIGNAL_CHARS_MAX, contract::PRIORITY_MAX),
            (200, 100)
        );
        assert_eq!(contract::REPLY_MESSAGE_CHARS_MAX, 500);
        assert_eq!(contract::RESULT_MESSAGE_CHARS_MAX, 1000);
        assert_eq!(contract::RATIONALE_CHARS_MAX, 500);
        assert_eq!(contract::SUMMARY_CHARS_MAX, 300);
        assert_eq!(
            contract::REPLY_ERROR_KINDS,
            ["invalid_args", "failed", "unknown_tool"]
        );
        assert_eq!((ERROR_KINDS[0], ERROR_KINDS[25]), ("too_large", "busy"));
        let agents: Vec<&str> = contract::TOOLS.iter().map(|(agent, _)| *agent).collect();
        assert_eq!(agents, ["calendar", "comms", "finance", "wellness"]);
        assert!(contract::are_the_tools_of(
            "wellness",
            &["suggest_break", "stress_score", "sleep_summary"]
        ));
        assert!(!contract::are_the_tools_of(
            "wellness",
            &["stress_score", "sleep_summary"]
        ));
        assert!(!contract::are_the_tools_of(
            "wellness",
            &["stress_score", "sleep_summary", "hydration"]
        ));
        assert!(!contract::are_the_tools_of("mallory", &[]));
    }

    /// The Python SDK's copy of the contract (`agents-py/sdk/aura_sdk/contract.py`), as it must
    /// read: rendered from [`contract`], so from the schemas.
    fn python_contract() -> String {
        let quoted = |words: &[&str]| {
            words
                .iter()
                .map(|w| format!("{w:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut text = String::from(
            "\"\"\"The contract's numbers and words as the schema files state them, for Python agents.\n\n\
             Generated from the Rust crate `aura-protocol`'s `contract` (read out of schemas/ by its\n\
             build): do not edit. `cargo test -p aura-protocol` checks it; with\n\
             AURA_WRITE_CONTRACT=1 it writes it.\"\"\"\n\n",
        );
        for (name, value) in [
            ("DEADLINE_MS_MIN", contract::DEADLINE_MS_MIN as usize),
            ("DEADLINE_MS_MAX", contract::DEADLINE_MS_MAX as usize),
            ("PROPOSALS_MAX", contract::PROPOSALS_MAX),
            ("SIGNALS_MAX", contract::SIGNALS_MAX),
            ("SIGNAL_CHARS_MAX", contract::SIGNAL_CHARS_MAX),
            ("PRIORITY_MAX", usize::from(contract::PRIORITY_MAX)),
            ("REPLY_MESSAGE_CHARS_MAX", contract::REPLY_MESSAGE_CHARS_MAX),
            ("CALL_ID_SUFFIX_CHARS", CALL_ID_SUFFIX_CHARS),
        ] {
            text.push_str(&format!("{name} = {value}\n"));
        }
        text.push_str(&format!(
            "REPLY_ERROR_KINDS = ({},)\nERROR_KINDS = ({},)\nTOOLS = {{\n",
            quoted(&contract::REPLY_ERROR_KINDS),
            quoted(&contract::ERROR_KINDS)
        ));
        for (agent, tools) in contract::TOOLS {
            text.push_str(&format!("    {agent:?}: ({},),\n", quoted(tools)));
        }
        text.push_str("}\n");
        text
    }

    #[test]
    fn the_python_sdks_contract_is_the_schemas() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../agents-py/sdk/aura_sdk/contract.py");
        let expected = python_contract();
        if std::env::var_os("AURA_WRITE_CONTRACT").is_some() {
            std::fs::write(&path, &expected).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == expected,
            "{} is not the schemas' contract; write it with AURA_WRITE_CONTRACT=1 cargo test -p \
             aura-protocol, then check the diff",
            path.display()
        );
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
