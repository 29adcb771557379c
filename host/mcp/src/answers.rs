//! What a client reads back: a result.v1 or a refusal as an MCP tool result, and a JSON-RPC
//! error for an HTTP body that is no MCP message.
//!
//! It owns the shape of answers per protocol era (2026-07-28 clients get recovery.v1 as
//! `structuredContent` too; older ones the text alone, since their SDKs check structured
//! results against the tool's `outputSchema`). It must not decide an outcome.

use axum::response::IntoResponse;
use rmcp::model::{CallToolResult, ContentBlock, ProtocolVersion};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use aura_contract::canonical::to_canonical_string;
use aura_contract::envelope::ResultEnvelope;
use aura_contract::error::Phase;
use aura_contract::limits::MCP_MESSAGE_BYTES_MAX;
use aura_contract::recovery::{Recovery, ToolFailure};

/// Whether the request speaks 2026-07-28 or later (stateless: no server-to-client requests).
pub(crate) fn is_stateless_era(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
}

/// A result.v1 as a tool result: the result object and its canonical JSON, or the tool's own
/// error as recovery.v1 with `isError`.
pub(crate) fn result_of(
    result: &ResultEnvelope,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
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
pub(crate) fn failure_result(
    failure: &ToolFailure,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
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
pub(crate) async fn jsonrpc_errors(
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
