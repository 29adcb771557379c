//! Arbitrary bytes as an agent's output through the outbound crossing: as the reply to a fixed,
//! valid calendar call (reply.v1, then the tool's result schema) and as a tick's output
//! (proposals.v1, then each proposed call). Never a panic.
#![no_main]

use std::sync::LazyLock;

use aura_contract::crossing::{CheckedCall, Crossing};
use libfuzzer_sys::fuzz_target;

static CROSSING: LazyLock<Crossing> = LazyLock::new(|| Crossing::new().expect("schemas compile"));

static CALL: LazyLock<CheckedCall> = LazyLock::new(|| {
    CROSSING
        .check_call(
            r#"{"agent":"calendar","args":{"events":[]},"call_id":"t_fuzz000000","confirm_required":false,"tool":"detect_conflicts","ts":"2026-11-23T08:00:00Z"}"#,
        )
        .expect("a valid call")
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(error) = CROSSING.check_reply(&CALL, text) {
        assert!(!error.kind().is_empty());
    }
    if let Ok(proposals) = CROSSING.check_tick(text) {
        for proposal in proposals {
            let _ = CROSSING.check_proposed_call(proposal.call);
        }
    }
});
