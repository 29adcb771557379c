"""The contract's numbers and words as the schema files state them, for Python agents.

Generated from the Rust crate `aura-protocol`'s `contract` (read out of schemas/ by its
build): do not edit. `cargo test -p aura-protocol` checks it; with
AURA_WRITE_CONTRACT=1 it writes it."""

DEADLINE_MS_MIN = 50
DEADLINE_MS_MAX = 10000
PROPOSALS_MAX = 16
SIGNALS_MAX = 16
SIGNAL_CHARS_MAX = 200
PRIORITY_MAX = 100
REPLY_MESSAGE_CHARS_MAX = 500
CALL_ID_SUFFIX_CHARS = 10
REPLY_ERROR_KINDS = ("invalid_args", "failed", "unknown_tool",)
ERROR_KINDS = ("too_large", "malformed_json", "duplicate_key", "number_out_of_range", "noncharacter", "too_deep", "canonicalize_failed", "schema_error", "unknown_agent", "unknown_tool", "agent_unavailable", "agent_trapped", "agent_exited", "stack_overflow", "deadline_exceeded", "wall_clock_exceeded", "import_limit", "host_work_limit", "memory_limit", "tool_invalid_args", "tool_failed", "agent_call_unsupported", "call_not_allowed", "cycle_detected", "depth_exceeded", "busy",)
TOOLS = {
    "calendar": ("detect_conflicts", "find_free_slots", "schedule_event",),
    "comms": ("draft_reply", "extract_action_items", "triage_inbox",),
    "finance": ("budget_status", "categorize_transactions", "detect_anomalies", "upcoming_bills",),
    "wellness": ("sleep_summary", "stress_score", "suggest_break",),
}
