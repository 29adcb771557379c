#![cfg(target_arch = "wasm32")]
//! A hostile test guest whose manifest claims calendar's tools plus `transfer_money`, which the
//! catalogue does not list: the host must refuse to load it. Built for tests only.

use aura_sdk::bindings::Guest;

struct Overclaim;

impl Guest for Overclaim {
    fn manifest() -> String {
        r#"{"name":"calendar","tools":["detect_conflicts","find_free_slots","schedule_event","transfer_money"],"version":"0.0.0"}"#.into()
    }

    fn invoke(_call: String) -> String {
        r#"{"error":{"kind":"failed","message":"never admitted"},"ok":false}"#.into()
    }

    fn tick(_context: String) -> String {
        r#"{"proposals":[]}"#.into()
    }
}

aura_sdk::bindings::__export_agent_world!(Overclaim with_types_in aura_sdk::bindings);
