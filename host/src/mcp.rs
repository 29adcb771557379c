//! The MCP front: the locked catalogue served as Model Context Protocol tools, over stdio
//! (`aura mcp`) and streamable HTTP (`aura serve`), on the official Rust SDK (rmcp).
//!
//! It owns what MCP adds around a call: the tool list (one tool per catalogue entry, named
//! `<agent>.<tool>`, its schemas as they are on disk), building the toolcall.v1 envelope from a
//! `tools/call` (fresh call_id, ts from the host clock, deadline from `_meta` or the tool's
//! default), asking the user through the client before a confirm_required tool runs (form
//! elicitation on 2025-11-25, an `input_required` result on 2026-07-28), and turning a
//! result.v1 or a refusal into a `CallToolResult` (a refusal's `structuredContent` is
//! recovery.v1). Every call goes through the seam every front uses ([`Host::check`] and
//! [`Host::dispatch`]): it must not check, run, quarantine or trace a call itself, and it must
//! not learn a tool that is not in the catalogue.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::response::IntoResponse;
use rmcp::model::{
    BooleanSchema, CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult,
    ContentBlock, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, Implementation, InputRequest, InputRequests, InputRequiredResult,
    ListToolsResult, PaginatedRequestParams, PrimitiveSchemaDefinition, ProtocolVersion,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{ElicitationMode, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use tracing::Instrument;

use crate::canonical::to_canonical_string;
use crate::catalogue::{self, AgentSpec, Telling, ToolSpec};
use crate::crossing::CheckedCall;
use crate::envelope::{ResultEnvelope, ToolCall};
use crate::error::Phase;
use crate::host::Host;
use crate::limits::{
    CONFIRMATION_TIMEOUT_MS, MCP_MESSAGE_BYTES_MAX, PENDING_CONFIRMATIONS_MAX, TOOLS_LIST_TTL_MS,
};
use crate::recovery::{Action, Recovery, ToolFailure};
use crate::telemetry::TraceContext;

/// The `_meta` key of a `tools/call` that sets the call's deadline in ms (toolcall.v1
/// `deadline_ms`, 50..=10000). MCP defines no deadline; a custom key takes a reverse-DNS
/// prefix.
pub const DEADLINE_META_KEY: &str = "dev.aura/deadlineMs";

/// The one field of the confirmation form: `true` runs the call.
const APPROVE_FIELD: &str = "approve";

/// The key of the confirmation among an `input_required` result's requests.
const CONFIRM_INPUT_KEY: &str = "confirm";

/// Why the MCP server could not serve.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The transport failed before or while serving (stdio closed at start, a bad handshake).
    #[error("MCP session failed: {0}")]
    Session(String),
    /// The HTTP listener failed.
    #[error("MCP HTTP server failed: {0}")]
    Http(#[from] std::io::Error),
}

/// One catalogue entry as an MCP tool.
struct Entry {
    agent: &'static AgentSpec,
    spec: &'static ToolSpec,
    tool: Tool,
}

/// The tool list, built once from the catalogue (it is locked in code, so it never changes
/// while the process runs).
struct Tools {
    /// In catalogue order: deterministic, as the spec asks.
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
}

impl Tools {
    fn from_catalogue() -> Self {
        let mut entries = Vec::new();
        for agent in catalogue::CATALOGUE {
            for spec in agent.tools {
                entries.push(Entry {
                    agent,
                    spec,
                    tool: tool_of(agent, spec),
                });
            }
        }
        let by_name = entries
            .iter()
            .enumerate()
            .map(|(i, entry)| (entry.tool.name.to_string(), i))
            .collect();
        Self { entries, by_name }
    }

    fn get(&self, name: &str) -> Option<&Entry> {
        self.by_name.get(name).map(|&i| &self.entries[i])
    }
}

/// A schema file as a JSON object (the catalogue's files are objects: a test checks).
fn schema_object(text: &str) -> Arc<Map<String, Value>> {
    match serde_json::from_str(text) {
        Ok(Value::Object(object)) => Arc::new(object),
        _ => Arc::new(Map::new()),
    }
}

/// The MCP tool of one catalogue entry: its name, the args schema's title and description,
/// both schemas verbatim, and the annotations that are true of it.
fn tool_of(agent: &AgentSpec, spec: &ToolSpec) -> Tool {
    let input = schema_object(spec.args_schema.text);
    let output = schema_object(spec.result_schema.text);
    let description = describe(agent, spec, &input, &output);
    let title = format!("{}: {}", agent.name, spec.name.replace('_', " "));
    // Every tool computes its result from its args alone, in a sandbox with no network and no
    // files: nothing outside is touched (open world: false) and the same args give the same
    // result (idempotent). One that needs the user's yes changes the user's world when
    // confirmed (a calendar entry, a sent reply): not read-only, and no more is claimed.
    let annotations = if spec.confirm_required {
        ToolAnnotations::new().read_only(false).open_world(false)
    } else {
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false)
    };
    Tool::new_with_raw(
        format!("{}.{}", agent.name, spec.name),
        Some(description.into()),
        input,
    )
    .with_title(title)
    .with_raw_output_schema(output)
    .with_annotations(annotations)
}

/// A tool's description from its two schemas': what it does and takes (the args schema's
/// description after its "Arguments of <agent>.<tool>:" lead), then what it returns (the
/// result schema's after "Result of <agent>.<tool>").
fn describe(
    agent: &AgentSpec,
    spec: &ToolSpec,
    input: &Map<String, Value>,
    output: &Map<String, Value>,
) -> String {
    let text = |schema: &Map<String, Value>, lead: &str| {
        let full = schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let rest = full
            .strip_prefix(&format!("{lead} {}.{}", agent.name, spec.name))
            .map_or(full, |rest| {
                rest.trim_start_matches([':', '.']).trim_start()
            });
        let mut chars = rest.chars();
        chars
            .next()
            .map(|first| first.to_uppercase().chain(chars).collect::<String>())
            .unwrap_or_default()
    };
    format!(
        "{}\n\nReturns: {}",
        text(input, "Arguments of"),
        text(output, "Result of")
    )
}

/// Confirmations asked through an `input_required` result (2026-07-28) and not yet answered:
/// an opaque handle (the result's `requestState`) → what was asked. Single use, bounded, and
/// expiring: a handle answers only the very call it was minted for, once.
#[derive(Default)]
struct Confirmations {
    pending: Mutex<HashMap<String, Asked>>,
}

struct Asked {
    /// sha256 of the tool name, canonical args and deadline asked about.
    call_digest: [u8; 32],
    at: Instant,
}

impl Confirmations {
    /// A handle for a question about the call with `call_digest`, or `None` when
    /// [`PENDING_CONFIRMATIONS_MAX`] questions are open.
    fn ask(&self, call_digest: [u8; 32]) -> Option<String> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let timeout = Duration::from_millis(CONFIRMATION_TIMEOUT_MS);
        pending.retain(|_, asked| asked.at.elapsed() < timeout);
        if pending.len() >= PENDING_CONFIRMATIONS_MAX {
            return None;
        }
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).ok()?;
        let handle = crate::plugins::hex(&nonce);
        pending.insert(
            handle.clone(),
            Asked {
                call_digest,
                at: Instant::now(),
            },
        );
        Some(handle)
    }

    /// Whether `handle` was minted for this very call and is still open; it is spent either
    /// way.
    fn take(&self, handle: &str, call_digest: &[u8; 32]) -> bool {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.remove(handle).is_some_and(|asked| {
            &asked.call_digest == call_digest
                && asked.at.elapsed() < Duration::from_millis(CONFIRMATION_TIMEOUT_MS)
        })
    }
}

/// aura's MCP server: one per process, cheap to clone (the HTTP transport makes one per
/// request).
#[derive(Clone)]
pub struct McpServer {
    host: Arc<Host>,
    tools: Arc<Tools>,
    confirmations: Arc<Confirmations>,
}

impl McpServer {
    /// A server over `host`.
    pub fn new(host: Arc<Host>) -> Self {
        Self {
            host,
            tools: Arc::new(Tools::from_catalogue()),
            confirmations: Arc::default(),
        }
    }

    /// Serves one client over stdin and stdout until it closes them.
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        let transport = rmcp::transport::async_rw::AsyncRwTransport::<RoleServer, _, _>::new(
            tokio::io::stdin(),
            tokio::io::stdout(),
        )
        .with_max_line_length(MCP_MESSAGE_BYTES_MAX);
        let running = self
            .serve(transport)
            .await
            .map_err(|e| McpError::Session(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| McpError::Session(e.to_string()))?;
        Ok(())
    }

    /// Serves streamable HTTP at `/mcp` on `listener` until `shutdown` is cancelled. Only
    /// requests whose `Host` is a loopback name are served (DNS-rebinding protection).
    /// 2026-07-28 requests are served statelessly; older clients get a session, which is what
    /// lets the server ask them to confirm a call.
    pub async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        shutdown: tokio_util::sync::CancellationToken,
    ) -> Result<(), McpError> {
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        };
        let service = StreamableHttpService::new(
            move || Ok(self.clone()),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default()
                .with_json_response(true)
                .with_max_request_body_bytes(MCP_MESSAGE_BYTES_MAX)
                .with_cancellation_token(shutdown.child_token()),
        );
        let router = axum::Router::new()
            .nest_service("/mcp", service)
            .layer(axum::middleware::from_fn(jsonrpc_errors));
        // Each JSON-RPC response is one small write; with Nagle's algorithm on, it waits for the
        // client's delayed ACK (up to 40 ms on Linux) whenever the previous segment is unacked.
        let listener = axum::serve::ListenerExt::tap_io(listener, |stream| {
            if let Err(error) = stream.set_nodelay(true) {
                tracing::warn!(%error, "could not set TCP_NODELAY on an MCP connection");
            }
        });
        axum::serve(listener, router)
            .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
            .await?;
        Ok(())
    }

    /// The entry a `tools/call` names, or the spec's error for an unknown tool.
    fn entry(&self, name: &str) -> Result<&Entry, ErrorData> {
        self.tools
            .get(name)
            .ok_or_else(|| ErrorData::invalid_params(format!("Unknown tool: {name}"), None))
    }

    /// Asks the user (if the tool needs it) and runs a checked call.
    async fn confirm_and_run(
        &self,
        entry: &Entry,
        checked: CheckedCall,
        params: &CallToolRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        if checked.needs_confirmation() {
            let question = entry
                .spec
                // An MCP client's user clock is unknown: times as the call wrote them.
                .question_text(entry.agent.name, &checked.call().args, &Telling::default());
            let answer = if is_stateless_era(ctx) {
                match self.ask_in_band(&checked, params, ctx, &question) {
                    Asking::Ask(input_required) => return input_required.into(),
                    Asking::Answered(answer) => answer,
                }
            } else {
                ask_through_peer(ctx, &question).await
            };
            if let Err(failure) = answer {
                return failure_result(
                    &ToolFailure {
                        call_id: Some(checked.call().call_id.clone()),
                        ..*failure
                    },
                    ctx,
                )
                .into();
            }
        }
        match self
            .host
            .dispatch_traced(&checked, crate::telemetry::current())
            .await
        {
            Ok(result) => result_of(&result, ctx).into(),
            Err(refused) => failure_result(&refused.failure(), ctx).into(),
        }
    }

    /// 2026-07-28: the question goes back as an `input_required` result; the client retries
    /// the same call with the user's answer and the handle.
    fn ask_in_band(
        &self,
        checked: &CheckedCall,
        params: &CallToolRequestParams,
        ctx: &RequestContext<RoleServer>,
        question: &str,
    ) -> Asking {
        if !client_elicits_forms(ctx) {
            return Asking::Answered(Err(Box::new(unavailable(checked, question))));
        }
        let digest = call_digest(checked);
        let answered = params.request_state.as_deref().zip(
            params
                .input_responses
                .as_ref()
                .and_then(|responses| responses.get(CONFIRM_INPUT_KEY)),
        );
        if let Some((handle, response)) = answered
            && self.confirmations.take(handle, &digest)
        {
            return Asking::Answered(
                match serde_json::from_value::<ElicitResult>(response.clone()) {
                    Ok(result) => decision(&result, checked),
                    Err(error) => Err(Box::new(ToolFailure::new(
                        "declined",
                        format!(
                            "the confirmation's answer is not an elicitation result ({error}); nothing ran"
                        ),
                        Recovery::plain(Action::Finish),
                    ))),
                },
            );
        }
        // A first call, or an answer to a question that is unknown, spent, expired or about
        // other args: ask (again) about exactly this call.
        let Some(handle) = self.confirmations.ask(digest) else {
            return Asking::Answered(Err(Box::new(ToolFailure::new(
                "busy",
                format!(
                    "{PENDING_CONFIRMATIONS_MAX} confirmations are already waiting for an answer; nothing ran"
                ),
                Recovery {
                    retry_after_ms: Some(CONFIRMATION_TIMEOUT_MS),
                    ..Recovery::plain(Action::Retry)
                },
            ))));
        };
        let mut requests = InputRequests::new();
        requests.insert(
            CONFIRM_INPUT_KEY.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(form(question))),
        );
        Asking::Ask(InputRequiredResult::new(Some(requests), Some(handle)))
    }
}

/// The user's yes, or why the call does not run (boxed: it is the rare path).
type Confirmed = Result<(), Box<ToolFailure>>;

enum Asking {
    Ask(InputRequiredResult),
    Answered(Confirmed),
}

/// Whether the request speaks 2026-07-28 or later (stateless: no server-to-client requests).
fn is_stateless_era(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
}

/// Whether the client declared form elicitation (an empty `elicitation: {}` means form).
fn client_elicits_forms(ctx: &RequestContext<RoleServer>) -> bool {
    if is_stateless_era(ctx) {
        ctx.client_capabilities()
            .and_then(|caps| caps.elicitation)
            .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
    } else {
        ctx.peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
    }
}

/// The confirmation form: the call in plain words, one yes/no field.
fn form(question: &str) -> ElicitRequestParams {
    let approve = BooleanSchema::new()
        .title("Run it?")
        .description("Yes runs the call once; no runs nothing.")
        .with_default(false);
    let schema = ElicitationSchema::new(
        [(
            APPROVE_FIELD.to_owned(),
            PrimitiveSchemaDefinition::Boolean(approve),
        )]
        .into(),
    )
    .with_required(vec![APPROVE_FIELD.to_owned()]);
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!("aura asks before this runs. {question}"),
        requested_schema: schema,
    }
}

/// 2025-11-25 and older: ask through an `elicitation/create` request and wait for the answer
/// (at most [`CONFIRMATION_TIMEOUT_MS`]; nothing runs on a timeout).
async fn ask_through_peer(ctx: &RequestContext<RoleServer>, question: &str) -> Confirmed {
    let unavailable_here = || {
        ToolFailure::new(
            "confirmation_unavailable",
            format!(
                "this tool runs only after the user confirms it, and this client did not declare form elicitation, so aura cannot ask ({question}); nothing ran"
            ),
            Recovery::plain(Action::Finish),
        )
    };
    if !client_elicits_forms(ctx) {
        return Err(Box::new(unavailable_here()));
    }
    let asked = ctx.peer.create_elicitation_with_timeout(
        form(question),
        Some(Duration::from_millis(CONFIRMATION_TIMEOUT_MS)),
    );
    let answer = tokio::select! {
        answer = asked => answer,
        () = ctx.ct.cancelled() => {
            return Err(Box::new(ToolFailure::new(
                "cancelled",
                "the client cancelled the call before the user answered; nothing ran".to_owned(),
                Recovery::plain(Action::Finish),
            )));
        }
    };
    match answer {
        Ok(result) => decide(&result, question),
        Err(rmcp::service::ServiceError::Timeout { .. }) => Err(Box::new(ToolFailure::new(
            "confirmation_timeout",
            format!(
                "the user did not answer within {CONFIRMATION_TIMEOUT_MS} ms ({question}); nothing ran"
            ),
            Recovery::plain(Action::Finish),
        ))),
        Err(error) => Err(Box::new(ToolFailure::new(
            "confirmation_unavailable",
            format!("the client could not ask the user ({error}); nothing ran"),
            Recovery::plain(Action::Finish),
        ))),
    }
}

/// The user's answer: accepted with `approve: true`, or a failure that says what they did.
fn decide(result: &ElicitResult, question: &str) -> Confirmed {
    let approved = result
        .content
        .as_ref()
        .and_then(|content| content.get(APPROVE_FIELD))
        .and_then(Value::as_bool);
    let (kind, what) = match (&result.action, approved) {
        (ElicitationAction::Accept, Some(true)) => return Ok(()),
        (ElicitationAction::Accept, _) => ("declined", "answered no"),
        (ElicitationAction::Decline, _) => ("declined", "declined"),
        (ElicitationAction::Cancel, _) => ("cancelled", "dismissed the question"),
        _ => ("declined", "did not accept"),
    };
    Err(Box::new(ToolFailure::new(
        kind,
        format!("the user {what} ({question}); nothing ran"),
        Recovery::plain(Action::Finish),
    )))
}

fn decision(result: &ElicitResult, checked: &CheckedCall) -> Confirmed {
    decide(
        result,
        &format!("{}.{}", checked.agent(), checked.spec().name),
    )
}

fn unavailable(checked: &CheckedCall, question: &str) -> ToolFailure {
    ToolFailure::new(
        "confirmation_unavailable",
        format!(
            "{}.{} runs only after the user confirms it, and this client did not declare form elicitation, so aura cannot ask ({question}); nothing ran",
            checked.agent(),
            checked.spec().name
        ),
        Recovery::plain(Action::Finish),
    )
}

/// What a confirmation answers: this tool, these canonical args, this deadline.
fn call_digest(checked: &CheckedCall) -> [u8; 32] {
    let call = checked.call();
    let mut hasher = Sha256::new();
    hasher.update(call.agent.as_bytes());
    hasher.update([0]);
    hasher.update(call.tool.as_bytes());
    hasher.update([0]);
    hasher.update(
        to_canonical_string(&call.args)
            .unwrap_or_default()
            .as_bytes(),
    );
    hasher.update([0]);
    hasher.update(checked.deadline_ms().to_be_bytes());
    hasher.finalize().into()
}

/// A result.v1 as a tool result: the result object and its canonical JSON, or the tool's own
/// error as recovery.v1 with `isError`.
fn result_of(result: &ResultEnvelope, ctx: &RequestContext<RoleServer>) -> CallToolResult {
    match (&result.result, &result.error) {
        (Some(value), _) if result.ok => {
            let text = to_canonical_string(value).unwrap_or_default();
            let mut answer = CallToolResult::success(vec![ContentBlock::text(text)]);
            answer.structured_content = Some(value.clone());
            answer
        }
        (_, error) => {
            let (kind, message) = error.as_ref().map_or(("tool_failed", String::new()), |e| {
                (e.kind.as_str(), e.message.clone())
            });
            failure_result(
                &ToolFailure {
                    phase: Some(Phase::Agent),
                    call_id: Some(result.call_id.clone()),
                    ..ToolFailure::new(
                        kind,
                        message,
                        Recovery::for_tool_error(kind, &result.agent, &result.tool),
                    )
                },
                ctx,
            )
        }
    }
}

/// A failure as a tool result: `isError`, recovery.v1 as text (canonical JSON: what an LLM
/// client shows its model) and, on 2026-07-28, as `structuredContent`. 2025-11-25 says
/// structured results MUST conform to the tool's `outputSchema`, and its TypeScript SDK (1.32)
/// checks them even on an error, so an older client gets the text alone.
fn failure_result(failure: &ToolFailure, ctx: &RequestContext<RoleServer>) -> CallToolResult {
    let mut answer = CallToolResult::error(vec![ContentBlock::text(failure.to_canonical())]);
    if is_stateless_era(ctx) {
        answer.structured_content = Some(failure.to_value());
    }
    answer
}

/// HTTP: a POST body that is not a JSON-RPC message gets a JSON-RPC error (-32700 for bytes
/// that are not JSON, -32600 for JSON that is no message) rather than the SDK's plain-text
/// 400, so every client can read why; one larger than [`MCP_MESSAGE_BYTES_MAX`] is refused
/// unread.
async fn jsonrpc_errors(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{Method, StatusCode};
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MCP_MESSAGE_BYTES_MAX).await else {
        return jsonrpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorData::invalid_request(
                format!(
                    "the request is larger than {MCP_MESSAGE_BYTES_MAX} bytes (or was cut off)"
                ),
                None,
            ),
        );
    };
    if serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(&bytes).is_err() {
        let error = match serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
            Err(error) => ErrorData::parse_error(format!("Parse error: {error}"), None),
            Ok(_) => ErrorData::invalid_request(
                "Invalid Request: not a JSON-RPC 2.0 request, notification or response of MCP",
                None,
            ),
        };
        return jsonrpc_error(StatusCode::BAD_REQUEST, error);
    }
    next.run(axum::extract::Request::from_parts(parts, bytes.into()))
        .await
}

fn jsonrpc_error(status: axum::http::StatusCode, error: ErrorData) -> axum::response::Response {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": error});
    (
        status,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("aura", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "aura's sandboxed assistant agents (calendar, wellness, finance, comms) as tools. \
                 Every call is checked against its JSON Schemas both ways; a refused call answers \
                 isError with recovery.v1: what to fix (field, constraint, bounds) and whether to \
                 correct the call, replan or finish. Tools that change the user's world ask the \
                 user first. _meta.\"dev.aura/deadlineMs\" sets a call's deadline (50..10000).",
            )
    }

    async fn list_tools(
        &self,
        _params: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.tools.entries.iter().map(|e| e.tool.clone()).collect();
        let mut list = ListToolsResult::with_all_items(tools);
        if is_stateless_era(&ctx) {
            // The list is locked in the binary: the same for every client (public) for as
            // long as this process runs.
            list = list
                .with_ttl_ms(TOOLS_LIST_TTL_MS)
                .with_cache_scope(CacheScope::Public);
        }
        Ok(list)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.get(name).map(|entry| entry.tool.clone())
    }

    async fn call_tool(
        &self,
        params: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let entry = self.entry(&params.name)?;
        let args = Value::Object(params.arguments.clone().unwrap_or_default());
        let deadline_ms = match ctx.meta.get(DEADLINE_META_KEY) {
            None => None,
            Some(value) => match value.as_u64() {
                Some(ms) => Some(ms),
                None => {
                    return Ok(failure_result(&deadline_not_integer(value), &ctx).into());
                }
            },
        };
        let call = ToolCall::new(entry.agent.name, entry.spec.name, args, deadline_ms);
        // The caller's trace (W3C trace context in `_meta.traceparent`); anything that is not
        // one is ignored and the trace starts here, as the W3C spec says.
        let sent = ctx.meta.get_traceparent().and_then(TraceContext::parse);
        let span = tracing::info_span!(
            "mcp.tools_call",
            tool = %params.name,
            call_id = %call.call_id,
            trace_id = sent.map(|trace| trace.trace_id_hex()),
            parent_span_id = sent.map(|trace| crate::plugins::hex(&trace.span_id)),
            otel.kind = "server",
        );
        if let Some(sent) = &sent {
            crate::telemetry::adopt(&span, sent);
        }
        // The request's trace: the caller's, the one this exported span started, or none
        // yet (the call then starts one derived from its call_id).
        let trace = sent.or_else(|| crate::telemetry::started(&span));
        crate::telemetry::in_trace(trace, async {
            let checked = match self.host.check(&call) {
                Ok(checked) => checked,
                Err(refused) => return Ok(failure_result(&refused.failure(), &ctx).into()),
            };
            Ok(self.confirm_and_run(entry, checked, &params, &ctx).await)
        })
        .instrument(span)
        .await
    }
}

/// `_meta."dev.aura/deadlineMs"` that is not a whole number of ms.
fn deadline_not_integer(value: &Value) -> ToolFailure {
    let actual = crate::schema::json_type(value);
    let mut recovery = Recovery::plain(Action::CorrectCall);
    recovery
        .issues
        .push(crate::recovery::FieldIssue::type_mismatch(
            "/_meta/dev.aura~1deadlineMs".to_owned(),
            "integer",
            actual,
        ));
    ToolFailure {
        phase: Some(Phase::Envelope),
        ..ToolFailure::new(
            "schema_error",
            format!("_meta.{DEADLINE_META_KEY} must be a whole number of ms (50..=10000)"),
            recovery,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalogue_tool_is_listed_with_its_schemas() {
        let tools = Tools::from_catalogue();
        let count: usize = catalogue::CATALOGUE.iter().map(|a| a.tools.len()).sum();
        assert_eq!(tools.entries.len(), count);
        for entry in &tools.entries {
            let tool = &entry.tool;
            assert_eq!(
                tool.name,
                format!("{}.{}", entry.agent.name, entry.spec.name)
            );
            let args: Value = serde_json::from_str(entry.spec.args_schema.text).unwrap();
            let result: Value = serde_json::from_str(entry.spec.result_schema.text).unwrap();
            assert_eq!(Value::Object((*tool.input_schema).clone()), args);
            assert_eq!(
                Value::Object((**tool.output_schema.as_ref().unwrap()).clone()),
                result
            );
            // MCP asks for an object root on both.
            assert_eq!(args["type"], "object");
            assert_eq!(result["type"], "object");
            let description = tool.description.as_deref().unwrap();
            assert!(
                description.starts_with(char::is_uppercase)
                    && !description.contains("Arguments of"),
                "{description}"
            );
            assert!(description.contains("\n\nReturns: "), "{description}");
            let annotations = tool.annotations.as_ref().unwrap();
            assert_eq!(
                annotations.read_only_hint,
                Some(!entry.spec.confirm_required)
            );
        }
    }

    #[test]
    fn a_confirmation_handle_answers_its_own_call_once() {
        let confirmations = Confirmations::default();
        let handle = confirmations.ask([1; 32]).unwrap();
        assert!(!confirmations.take(&handle, &[2; 32]), "other args");
        let handle = confirmations.ask([1; 32]).unwrap();
        assert!(confirmations.take(&handle, &[1; 32]));
        assert!(!confirmations.take(&handle, &[1; 32]), "spent");
        assert!(!confirmations.take("00", &[1; 32]), "never minted");
        for _ in 1..PENDING_CONFIRMATIONS_MAX {
            confirmations.ask([3; 32]).unwrap();
        }
        confirmations.ask([4; 32]).unwrap();
        assert_eq!(confirmations.ask([5; 32]), None, "bounded");
    }
}
