//! Arbitrary bytes as a toolcall.v1 envelope through the inbound crossing: parse → I-JSON →
//! canonicalize → toolcall.v1 → catalogue → args schema. Never a panic; and whatever passes is
//! canonical (parsing its canonical text again gives the same text).
#![no_main]

use std::sync::LazyLock;

use aura_contract::canonical::parse_canonical;
use aura_contract::crossing::Crossing;
use aura_contract::limits::CROSSING_BYTES_MAX;
use libfuzzer_sys::fuzz_target;

static CROSSING: LazyLock<Crossing> = LazyLock::new(|| Crossing::new().expect("schemas compile"));

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(canonical) = parse_canonical(text, CROSSING_BYTES_MAX) {
        let again = parse_canonical(&canonical.text, CROSSING_BYTES_MAX).expect("canonical text parses");
        assert_eq!(again.text, canonical.text, "canonicalization is idempotent");
        assert_eq!(again.value, canonical.value);
    }
    match CROSSING.check_call(text) {
        Ok(checked) => {
            let again = parse_canonical(checked.canonical(), CROSSING_BYTES_MAX).expect("parses");
            assert_eq!(again.text, checked.canonical());
        }
        Err(error) => {
            // Every refusal has a kind, a phase and a message.
            assert!(!error.kind().is_empty());
            let _ = error.phase();
            assert!(!error.to_string().is_empty());
        }
    }
});
