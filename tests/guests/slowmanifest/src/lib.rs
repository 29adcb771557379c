#![cfg(target_arch = "wasm32")]
//! Test guest posing as calendar whose `manifest` export sleeps 20 s (in a WASI poll, where
//! fuel does not run) before answering: every host start waits on it.

struct SlowManifest;

impl aura_zoo::aura_sdk::bindings::Guest for SlowManifest {
    fn manifest() -> String {
        std::thread::sleep(std::time::Duration::from_secs(20));
        aura_zoo::manifest_as("calendar")
    }

    fn invoke(_call: String) -> String {
        r#"{"error":{"kind":"failed","message":"never loaded"},"ok":false}"#.into()
    }

    fn tick(_context: String) -> String {
        r#"{"proposals":[]}"#.into()
    }
}

aura_zoo::aura_sdk::bindings::__export_agent_world!(
    SlowManifest with_types_in aura_zoo::aura_sdk::bindings
);
