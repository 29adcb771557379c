//! aura's `calendar.find_free_slots` as a string-in/string-out component for Wassette, the peer
//! in the side-by-side MCP benchmark (BENCHMARKS.md, `bench/wassette/run`).
//!
//! It owns nothing but the export: the tool is `calendar_agent::free_slots::find_free_slots`,
//! run through `aura_sdk::run_tool` and written as canonical JSON, exactly as the shipped agent
//! does. It must not add checks the agent does not make: the host is what is being compared.

wit_bindgen::generate!({ path: "wit", world: "calendar" });

struct Peer;

impl Guest for Peer {
    fn find_free_slots(args: String) -> Result<String, String> {
        let outcome = aura_sdk::run_tool(&args, calendar_agent::free_slots::find_free_slots)
            .and_then(|result| aura_sdk::to_canonical(&result));
        outcome.map_err(|error| {
            aura_sdk::to_canonical(&error).unwrap_or_else(|_| error.message.clone())
        })
    }
}

export!(Peer);
