//! aura's integration tests: one binary, one module per concept. Every test loads real
//! components (the agents from plugins/, the hostile guests from target/) into the real host.

mod support;
mod tools;

mod a2a;
#[cfg(all(feature = "mcp", feature = "http"))]
mod bearer;

mod calendar;
mod cli;
mod comms;
mod conformance;
mod contract;
mod crossing;
mod days;
mod docs;
mod dst;
#[cfg(feature = "nats")]
mod dst_fleet;
mod dst_life;
mod errors;
mod finance;
#[cfg(feature = "nats")]
mod fleet;
#[cfg(feature = "nats")]
mod fleet_day;
#[cfg(feature = "jit")]
mod hidden_state;
mod layout;
mod live;
#[cfg(feature = "nats")]
mod locked;
#[cfg(feature = "mcp")]
mod mcp;
mod narration;
mod narrator;
mod never_refuses;
mod orchestrator;
mod plugins;
mod precompiled;
mod privilege;
mod python;
mod reading;
mod recipes;
mod report;
mod resume;
mod signing;
mod soak;
mod startup;
#[cfg(feature = "nats")]
mod store_homes;
#[cfg(all(feature = "mcp", feature = "nats", feature = "otlp"))]
mod telemetry;
mod telling;
#[cfg(feature = "jit")]
mod wasi_stubs;
mod wellness;
#[cfg(feature = "nats")]
mod wire;
mod zoo;
