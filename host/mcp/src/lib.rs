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

#![warn(missing_docs)]
// A call's future goes through the server, the seam, the trace scope, the crossing and the
// sandbox: the compiler needs more than its default depth of 128 to lay it out.
#![recursion_limit = "256"]

mod answers;
mod confirm;
mod tools;

use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tracing::Instrument;

use aura_contract::catalogue::Telling;
use aura_contract::crossing::CheckedCall;
use aura_contract::envelope::ToolCall;
use aura_contract::error::Phase;
use aura_contract::limits::{MCP_MESSAGE_BYTES_MAX, TOOLS_LIST_TTL_MS};
use aura_contract::recovery::{Action, Recovery, ToolFailure};
use aura_contract::traceparent::TraceContext;
use aura_host::{CallRequest, Host};

use answers::{failure_result, is_stateless_era, jsonrpc_errors, result_of};
use confirm::{Asking, Confirmations, ask_through_peer};
use tools::{Entry, Tools};

/// The `_meta` key of a `tools/call` that sets the call's deadline in ms (toolcall.v1
/// `deadline_ms`, 50..=10000). MCP defines no deadline; a custom key takes a reverse-DNS
/// prefix.
pub const DEADLINE_META_KEY: &str = "dev.aura/deadlineMs";

/// Why the MCP server could not serve.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The transport failed before or while serving (stdio closed at start, a bad handshake).
    #[error("MCP session failed: {0}")]
    Session(String),
    /// The HTTP listener failed.
    #[error("MCP HTTP server failed")]
    Http(#[from] aura_http::GuardError),
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

    /// Serves streamable HTTP at `/mcp` on `listener` behind `guard` (TLS if it has a
    /// certificate; a browser's request only from a loopback origin or one it allows, else 403)
    /// until `shutdown` is cancelled. Only requests whose `Host` is a loopback name (or, with
    /// tokens, the audience's host) are served (DNS-rebinding protection). With tokens, each
    /// request needs `aura.read`, and a call of a tool the user must confirm `aura.act`.
    /// 2026-07-28 requests are served statelessly; older clients get a session, which is what
    /// lets the server ask them to confirm a call.
    pub async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        guard: &aura_http::Guard,
        shutdown: tokio_util::sync::CancellationToken,
    ) -> Result<(), McpError> {
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        };
        let self_tools = self.tools.clone();
        let service = StreamableHttpService::new(
            move || Ok(self.clone()),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default()
                .with_allowed_hosts(guard.hosts())
                .with_json_response(true)
                .with_max_request_body_bytes(MCP_MESSAGE_BYTES_MAX)
                .with_cancellation_token(shutdown.child_token()),
        );
        let scopes = Arc::new(tools::ToolScopes(self_tools));
        let router = axum::Router::new()
            .nest_service("/mcp", service)
            .layer(axum::middleware::from_fn(jsonrpc_errors));
        let router = guard.protect(router, scopes);
        guard
            .serve(
                listener,
                router,
                async move { shutdown.cancelled_owned().await },
            )
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
                .question_text(&checked.call().args, &Telling::default());
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
        // Here the user said yes to a tool that needs it (the asking above returned early
        // otherwise): a worker that runs it is sent this host's proof of that yes.
        let trace = aura_host::telemetry::current();
        let request = CallRequest::new(&checked)
            .in_trace(trace)
            .confirmed(checked.needs_confirmation());
        let dispatched = self.host.dispatch(request).await;
        match dispatched {
            Ok(result) => result_of(&result, ctx).into(),
            Err(refused) => failure_result(&refused.failure(), ctx).into(),
        }
    }
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
            parent_span_id = sent.map(|trace| aura_contract::digest::hex(&trace.span_id)),
            otel.kind = "server",
        );
        if let Some(sent) = &sent {
            aura_host::telemetry::adopt(&span, sent);
        }
        // The request's trace: the caller's, the one this exported span started, or none
        // yet (the call then starts one derived from its call_id).
        let trace = sent.or_else(|| aura_host::telemetry::started(&span));
        aura_host::telemetry::in_trace(trace, async {
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
    let actual = aura_contract::schema::json_type(value);
    let mut recovery = Recovery::plain(Action::CorrectCall);
    recovery
        .issues
        .push(aura_contract::recovery::FieldIssue::type_mismatch(
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
