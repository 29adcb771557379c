//! aura-sdk: the guest side of the `aura:agent` contract.
//!
//! An agent crate is its tool functions and little else. Each tool is a plain function from a
//! typed args struct (serde `Deserialize`) to a typed result (serde `Serialize`) or a
//! [`ToolError`]; the [`agent!`] macro wires them to the WIT exports: it dispatches `invoke` by
//! tool name, answers `manifest`, forwards `tick`, and writes every reply as canonical JSON
//! (RFC 8785).
//!
//! Beside that wiring it carries what every agent needs alike, so that no agent keeps its own
//! copy: argument checks ([`args`]), times and offsets ([`time`]), calendar dates
//! ([`date`]), working hours ([`hours`]), exact rounding ([`round`]), and the toolcall.v1 and
//! proposals.v1 envelopes an agent writes ([`envelope`]).
//!
//! This crate owns the guest-side encoding of replies (`reply.v1`) and the WIT bindings. It must
//! not re-validate what the host already validated (args schemas are checked before the agent
//! runs), it must not hold state between calls (the host gives every call a fresh instance) and
//! it must not hold any agent's domain rules.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Value, json};

pub use serde_json;

/// The contract's numbers and words, read out of the schema files (see `aura_protocol`).
pub use aura_protocol::contract;

pub mod arena;
pub mod args;
pub mod date;
pub mod envelope;
pub mod hours;
pub mod round;
pub mod time;

/// Every agent's allocator in wasm (see [`arena`]); native builds keep the system's.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: arena::CallArena = arena::CallArena::new();

/// The bindings generated from `wit/agent.wit`. Agents use the helpers of this crate instead.
/// Absent with the `embedded` feature (see Cargo.toml).
#[cfg(not(feature = "embedded"))]
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "agent",
        pub_export_macro: true,
        export_macro_name: "__export_agent_world",
        default_bindings_module: "aura_sdk::bindings",
    });
}

/// What a tool returns.
pub type ToolResult<T> = Result<T, ToolError>;

/// Why a tool could not produce a result. Serialized into the reply's `error` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolError {
    /// The class of failure; the host maps it to a result error kind.
    pub kind: ToolErrorKind,
    /// A human-readable explanation, for logs and the quarantine record.
    pub message: String,
}

/// The classes of tool failure an agent may report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolErrorKind {
    /// The args passed the schema but make no sense together (an event that ends before it
    /// starts, duplicate ids). The caller must change its input.
    InvalidArgs,
    /// The tool could not complete for a reason of its own.
    Failed,
    /// The call named a tool this agent does not implement (the host's catalogue should have
    /// refused it first).
    UnknownTool,
}

/// Longest message an agent reports (reply.v1's bound on `error.message`, read out of the
/// schema by the build); longer ones are cut so a reply stays within it.
pub const ERROR_MESSAGE_CHARS_MAX: usize = aura_protocol::contract::REPLY_MESSAGE_CHARS_MAX;

impl ToolError {
    /// Args that passed the schema but are inconsistent.
    pub fn invalid_args(message: impl Into<String>) -> Self {
        Self::new(ToolErrorKind::InvalidArgs, message)
    }

    /// The tool failed for a reason of its own.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(ToolErrorKind::Failed, message)
    }

    fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        let mut message = message.into();
        if let Some((cut, _)) = message.char_indices().nth(ERROR_MESSAGE_CHARS_MAX) {
            message.truncate(cut);
        }
        Self { kind, message }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

impl std::error::Error for ToolError {}

/// Every result.v1 `error.kind` (see [`aura_protocol::ERROR_KINDS`]).
pub use aura_protocol::ERROR_KINDS;
/// A deterministic `toolcall.v1` call id derived from a seed (see [`aura_protocol::call_id_from`]):
/// agents have no trustworthy randomness, and replays must be deterministic.
pub use aura_protocol::call_id_from;

/// Serializes `value` as canonical JSON (RFC 8785), written straight from it
/// ([`aura_jcs::write_serialized`]: no `Value` tree in between).
///
/// Serialization of the SDK's own types cannot fail; a failure here means a tool returned a
/// value JSON cannot hold (a map with non-string keys), which is reported as a tool failure.
pub fn to_canonical(value: &impl Serialize) -> Result<String, ToolError> {
    let mut out = Vec::with_capacity(REPLY_BYTES_INITIAL);
    write_canonical(value, &mut out)?;
    // aura_jcs writes ASCII punctuation and serde_json's UTF-8 strings only.
    String::from_utf8(out).map_err(|_| ToolError::failed("result is not UTF-8"))
}

/// Appends the canonical text of `value` to `out` (see [`to_canonical`]).
fn write_canonical(value: &impl Serialize, out: &mut Vec<u8>) -> Result<(), ToolError> {
    aura_jcs::write_serialized(value, out)
        .map_err(|e| ToolError::failed(format!("result is not serializable as JSON: {e}")))
}

/// A tool's result as its canonical text, ready for the reply ([`run_tool`] writes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultText(Vec<u8>);

/// Runs one typed tool on the call's args, as they appear in the call's text: deserialize
/// straight from that text (no intermediate `Value` tree), call, and write the result's
/// canonical text straight from the typed result.
///
/// A result struct whose fields are declared in RFC 8785 order (by name, as ASCII sorts) is
/// written in place; any other is written, then put in order (calendar's `detect_conflicts`:
/// 5 % of its guest's fuel).
pub fn run_tool<A, R>(args: &str, tool: impl FnOnce(A) -> ToolResult<R>) -> ToolResult<ResultText>
where
    A: DeserializeOwned,
    R: Serialize,
{
    let args: A = serde_json::from_str(args)
        .map_err(|e| ToolError::invalid_args(format!("args do not match the tool: {e}")))?;
    let result = tool(args)?;
    let mut out = Vec::with_capacity(REPLY_BYTES_INITIAL);
    write_canonical(&result, &mut out)?;
    Ok(ResultText(out))
}

/// Encodes a reply (`reply.v1`): `{"ok":true,"result":..}` or `{"ok":false,"error":..}`,
/// written around the result's canonical text (members already in RFC 8785 order: `error` <
/// `ok` < `result`) rather than by building and copying a wrapper object.
pub fn reply_json(outcome: ToolResult<ResultText>) -> String {
    let mut out = Vec::with_capacity(REPLY_BYTES_INITIAL);
    match outcome {
        Ok(ResultText(result)) => {
            out.extend_from_slice(br#"{"ok":true,"result":"#);
            out.extend_from_slice(&result);
            out.push(b'}');
        }
        Err(error) => {
            out.extend_from_slice(br#"{"error":"#);
            if write_canonical(&error, &mut out).is_err() {
                return REPLY_NOT_ENCODED.into();
            }
            out.extend_from_slice(br#","ok":false}"#);
        }
    }
    // Only ASCII punctuation and aura_jcs's UTF-8 output were written.
    String::from_utf8(out).unwrap_or_else(|_| REPLY_NOT_ENCODED.into())
}

/// The reply when a reply cannot be encoded (a ToolError of two strings always can).
const REPLY_NOT_ENCODED: &str =
    r#"{"error":{"kind":"failed","message":"reply could not be encoded"},"ok":false}"#;

/// First capacity of a reply's buffer: most replies fit, larger ones grow it.
const REPLY_BYTES_INITIAL: usize = 1024;

/// Handles the `invoke` export: takes the toolcall.v1 envelope, dispatches by tool name with
/// the args' text (`{}` when the call has none; see [`envelope::read_call`]).
pub fn invoke_json(
    call: &str,
    dispatch: impl FnOnce(&str, &str) -> ToolResult<ResultText>,
) -> String {
    let outcome = envelope::read_call(call)
        .map_err(|e| ToolError::invalid_args(format!("call is not a toolcall envelope: {e}")))
        .and_then(|call| dispatch(&call.tool, call.args));
    reply_json(outcome)
}

/// The error for a tool name this agent does not implement.
pub fn unknown_tool(tool: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::UnknownTool,
        format!("this agent has no tool `{tool}`"),
    )
}

/// Handles the `manifest` export.
pub fn manifest_json(name: &str, version: &str, tools: &[&str]) -> String {
    let manifest = json!({ "name": name, "version": version, "tools": tools });
    to_canonical(&manifest).expect("a manifest of strings is always serializable")
}

/// Handles the `tick` export: the agent's answer, or `{"proposals":[]}` and an emitted error
/// event when the tick failed (a failed tick proposes nothing; it never traps the instance).
///
/// The tick sees only the context's members named in `reads`: the others are skipped as text,
/// never built into a `Value`. Every agent gets the whole ~60 KB context and each reads a part
/// of it (the inbox is comms', the transactions finance's), so this spares each tick parsing
/// and freeing what it never looks at.
pub fn tick_json(
    context: &str,
    reads: &[&str],
    tick: impl FnOnce(Value) -> ToolResult<Value>,
) -> String {
    let outcome = read_tick_context(context, reads)
        .and_then(tick)
        .map(|answer| aura_jcs::to_canonical_string(&answer));
    match outcome {
        Ok(text) => text,
        Err(error) => {
            emit(&json!({ "kind": "tick.failed", "error": error }));
            r#"{"proposals":[]}"#.into()
        }
    }
}

/// The tick context as an object of the members in `reads`, each parsed from its own text. A
/// context that is not a JSON object is parsed whole, so the tick reports what is wrong with it.
fn read_tick_context(context: &str, reads: &[&str]) -> ToolResult<Value> {
    let not_json =
        |e: serde_json::Error| ToolError::invalid_args(format!("tick context is not JSON: {e}"));
    let Ok(members) =
        serde_json::from_str::<std::collections::BTreeMap<String, &RawValue>>(context)
    else {
        return serde_json::from_str(context).map_err(not_json);
    };
    let mut object = serde_json::Map::new();
    for (key, raw) in members {
        if reads.contains(&key.as_str()) {
            object.insert(key, serde_json::from_str(raw.get()).map_err(not_json)?);
        }
    }
    Ok(Value::Object(object))
}

/// Calls another agent's tool through the host (the host import `call`).
///
/// `call` is the toolcall.v1 envelope (see [`envelope::ToolCall`]); the answer is the host's
/// result.v1 envelope. Refusals (unknown tool, cycle, depth, deadline) come back as
/// `{"ok":false,..}` results, never traps.
#[cfg(all(target_arch = "wasm32", not(feature = "embedded")))]
pub fn call(call: &envelope::ToolCall) -> Result<Value, ToolError> {
    let call = to_canonical(call)?;
    let answer = bindings::aura::agent::host::call(&call);
    serde_json::from_str(&answer)
        .map_err(|e| ToolError::failed(format!("host answered with invalid JSON: {e}")))
}

/// Native builds (unit tests, benchmarks) and embedded logic have no host to call.
#[cfg(not(all(target_arch = "wasm32", not(feature = "embedded"))))]
pub fn call(_call: &envelope::ToolCall) -> Result<Value, ToolError> {
    Err(ToolError::failed(
        "agent-to-agent calls need the aura host (not available natively)",
    ))
}

/// Emits a structured event into the host's trace (the host import `emit`). `event` should be
/// an object with a string `kind`. A no-op in native builds.
pub fn emit(event: &Value) {
    #[cfg(all(target_arch = "wasm32", not(feature = "embedded")))]
    if let Ok(text) = to_canonical(event) {
        bindings::aura::agent::host::emit(&text);
    }
    #[cfg(not(all(target_arch = "wasm32", not(feature = "embedded"))))]
    let _ = event;
}

/// Declares an agent: its name, its tools and its tick, and exports it as the component.
///
/// ```ignore
/// aura_sdk::agent! {
///     Calendar {
///         name: "calendar",
///         tools: {
///             "find_free_slots" => free_slots::find_free_slots,
///         },
///         tick: tick::tick,
///         tick_reads: ["now", "utc_offset_minutes", "profile", "events"],
///     }
/// }
/// ```
/// Each tool path is a `fn(Args) -> ToolResult<Result>`; the tick a
/// `fn(serde_json::Value) -> ToolResult<serde_json::Value>`, which sees only the context members
/// listed in `tick_reads` (see [`tick_json`]). The macro defines `pub struct
/// Calendar` with `manifest`, `invoke` and `tick` associated functions that take and return
/// canonical JSON (callable natively, for tests), and, on wasm32 only, the component exports.
#[macro_export]
macro_rules! agent {
    (
        $agent:ident {
            name: $name:literal,
            tools: { $($tool:literal => $handler:path),+ $(,)? },
            tick: $tick:path,
            tick_reads: [$($read:literal),+ $(,)?] $(,)?
        }
    ) => {
        /// This crate's agent, as the host sees it.
        pub struct $agent;

        // Its tools are exactly its tools in the schemas (`schemas/<agent>/`).
        const _: () = assert!(
            $crate::contract::are_the_tools_of($name, &[$($tool),+]),
            concat!("the tools of `", $name, "` are not those its schemas/ dir names")
        );

        impl $agent {
            /// The agent's name in the catalogue.
            pub const NAME: &'static str = $name;
            /// The tools this agent implements, in catalogue order.
            pub const TOOLS: &'static [&'static str] = &[$($tool),+];

            /// The `manifest` export.
            pub fn manifest() -> String {
                $crate::manifest_json($name, env!("CARGO_PKG_VERSION"), Self::TOOLS)
            }

            /// The `invoke` export.
            pub fn invoke(call: &str) -> String {
                $crate::invoke_json(call, |tool, args| match tool {
                    $($tool => $crate::run_tool(args, $handler),)+
                    other => Err($crate::unknown_tool(other)),
                })
            }

            /// The members of the tick context this agent's tick reads.
            pub const TICK_READS: &'static [&'static str] = &[$($read),+];

            /// The `tick` export.
            pub fn tick(context: &str) -> String {
                $crate::tick_json(context, Self::TICK_READS, $tick)
            }
        }

        $crate::__component_exports! {
            impl $crate::bindings::Guest for $agent {
                fn manifest() -> String {
                    $agent::manifest()
                }
                fn invoke(call: String) -> String {
                    $agent::invoke(&call)
                }
                fn tick(context: String) -> String {
                    $agent::tick(&context)
                }
            }

            $crate::bindings::__export_agent_world!($agent with_types_in $crate::bindings);
        }
    };
}

/// The component exports of [`agent!`]: kept on wasm32, where the crate is the component.
/// The cfg is this crate's, not the agent's, which is why it is a macro of its own.
#[cfg(all(target_arch = "wasm32", not(feature = "embedded")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __component_exports {
    ($($item:item)*) => { $($item)* };
}

/// Dropped natively (tests, benchmarks) and with `embedded`, where there is no aura world.
#[cfg(not(all(target_arch = "wasm32", not(feature = "embedded"))))]
#[doc(hidden)]
#[macro_export]
macro_rules! __component_exports {
    ($($item:item)*) => {};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct AddArgs {
        a: i64,
        b: i64,
    }

    fn add(args: AddArgs) -> ToolResult<Value> {
        Ok(json!({ "sum": args.a + args.b }))
    }

    #[test]
    fn invoke_dispatches_and_replies_canonically() {
        let dispatch = |tool: &str, args: &str| match tool {
            "add" => run_tool(args, add),
            other => Err(unknown_tool(other)),
        };
        let call = r#"{"tool":"add","args":{"b":2,"a":40}}"#;
        assert_eq!(
            invoke_json(call, dispatch),
            r#"{"ok":true,"result":{"sum":42}}"#
        );
        let call = r#"{"tool":"mul","args":{}}"#;
        assert_eq!(
            invoke_json(call, dispatch),
            r#"{"error":{"kind":"unknown_tool","message":"this agent has no tool `mul`"},"ok":false}"#
        );
        let call = r#"{"tool":"add","args":{"a":1}}"#;
        let reply: Value = serde_json::from_str(&invoke_json(call, dispatch)).unwrap();
        assert_eq!(reply["ok"], false);
        assert_eq!(reply["error"]["kind"], "invalid_args");
    }

    #[test]
    fn replies_escape_messages_and_missing_args_are_empty() {
        let dispatch = |tool: &str, args: &str| match tool {
            "add" => run_tool(args, add),
            _ => Err(ToolError::failed("a \"quoted\"\nline \u{1}")),
        };
        // RFC 8785 §3.2.2.2: `"` and newline as two-character escapes, U+0001 as \u0001.
        assert_eq!(
            invoke_json(r#"{"tool":"boom","args":{}}"#, dispatch),
            r#"{"error":{"kind":"failed","message":"a \"quoted\"\nline \u0001"},"ok":false}"#
        );
        let reply: Value =
            serde_json::from_str(&invoke_json(r#"{"tool":"add"}"#, dispatch)).unwrap();
        assert_eq!(reply["error"]["kind"], "invalid_args");
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("missing field")
        );
        let reply: Value = serde_json::from_str(&invoke_json(r#"{"args":{}}"#, dispatch)).unwrap();
        assert_eq!(reply["error"]["kind"], "invalid_args");
    }

    #[test]
    fn error_messages_are_cut_at_the_bound() {
        let error = ToolError::failed("é".repeat(ERROR_MESSAGE_CHARS_MAX + 7));
        assert_eq!(error.message.chars().count(), ERROR_MESSAGE_CHARS_MAX);
    }

    #[test]
    fn failed_tick_proposes_nothing() {
        assert_eq!(
            tick_json("not json", &["now"], |_| unreachable!()),
            r#"{"proposals":[]}"#
        );
        assert_eq!(
            tick_json("{}", &["now"], |_| Err(ToolError::failed("boom"))),
            r#"{"proposals":[]}"#
        );
        assert_eq!(
            tick_json("{}", &["now"], |_| Ok(
                json!({"proposals": [], "z": 1, "a": 2})
            )),
            r#"{"a":2,"proposals":[],"z":1}"#
        );
    }

    #[test]
    fn a_tick_sees_only_the_members_it_reads() {
        let context = r#"{"events":[{"id":"e"}],"messages":[{"body":"x\u00e9"}],"now":"T","profile":{"a":1}}"#;
        let seen = std::cell::RefCell::new(Value::Null);
        let answer = tick_json(context, &["now", "events", "absent"], |context| {
            *seen.borrow_mut() = context;
            Ok(json!({"proposals": []}))
        });
        assert_eq!(answer, r#"{"proposals":[]}"#);
        assert_eq!(*seen.borrow(), json!({"now": "T", "events": [{"id": "e"}]}));
        // A context that is not an object reaches the tick whole, to be refused there.
        tick_json("[1,2]", &["now"], |context| {
            assert_eq!(context, json!([1, 2]));
            Ok(json!({"proposals": []}))
        });
        // A member that is not JSON fails the tick, as a context that is not JSON does.
        assert_eq!(
            tick_json(r#"{"now":tru}"#, &["now"], |_| unreachable!()),
            r#"{"proposals":[]}"#
        );
    }
}
