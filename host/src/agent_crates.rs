// Shared with host/build.rs through `include!`: keep this file free of `use` and of anything but
// the one constant.

/// The agents the build compiles into `plugins/`: each is the crate `agents/<name>` (package
/// `<name>-agent`). A test checks that this names exactly the catalogue's agents, so adding an
/// agent is one catalogue entry plus its name here.
pub const AGENT_CRATES: &[&str] = &["calendar", "wellness", "finance", "comms"];
