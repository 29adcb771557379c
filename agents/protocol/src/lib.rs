//! aura-protocol: the vocabulary of the wire contract (`schemas/toolcall.v1.json`) that the host
//! and the guest SDK both speak, defined once.
//!
//! It owns the types whose every value a schema enumerates. It must not hold behaviour (checks
//! are the host's crossing; building envelopes is the SDK's) and it must build for every target
//! the host and the agents build for (no std-only dependencies beyond serde).

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

#[cfg(test)]
mod tests {
    use super::*;

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
