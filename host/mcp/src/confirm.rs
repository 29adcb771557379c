//! Asking the person before a tool that needs their yes runs.
//!
//! It owns both ways of asking an MCP client: form elicitation through the peer
//! (`elicitation/create`, 2025-11-25) and an `input_required` result the client answers by
//! calling again (2026-07-28), with handles that are single use, bound to the very call asked
//! about, bounded in number and expiring. Only a yes runs the call; no, cancel, no answer in
//! time or a client that cannot be asked run nothing. It must not run the call (the server
//! does, through the host's seam).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::{
    BooleanSchema, CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, InputRequest, InputRequests, InputRequiredResult,
    PrimitiveSchemaDefinition,
};
use rmcp::service::{ElicitationMode, RequestContext};
use serde_json::Value;
use sha2::{Digest, Sha256};

use aura_contract::canonical::to_canonical_string;
use aura_contract::crossing::CheckedCall;
use aura_contract::limits::{CONFIRMATION_TIMEOUT_MS, PENDING_CONFIRMATIONS_MAX};
use aura_contract::recovery::{Action, Recovery, ToolFailure};

use crate::McpServer;
use crate::answers::is_stateless_era;

/// The one field of the confirmation form: `true` runs the call.
const APPROVE_FIELD: &str = "approve";

/// The key of the confirmation among an `input_required` result's requests.
const CONFIRM_INPUT_KEY: &str = "confirm";

/// Confirmations asked through an `input_required` result (2026-07-28) and not yet answered:
/// an opaque handle (the result's `requestState`) → what was asked. Single use, bounded, and
/// expiring: a handle answers only the very call it was minted for, once.
#[derive(Default)]
pub(crate) struct Confirmations {
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
        let handle = aura_contract::digest::hex(&nonce);
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

impl McpServer {
    /// 2026-07-28: the question goes back as an `input_required` result; the client retries
    /// the same call with the user's answer and the handle.
    pub(crate) fn ask_in_band(
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

pub(crate) enum Asking {
    Ask(InputRequiredResult),
    Answered(Confirmed),
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
pub(crate) async fn ask_through_peer(
    ctx: &RequestContext<RoleServer>,
    question: &str,
) -> Confirmed {
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

#[cfg(test)]
mod tests {
    use super::*;

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
