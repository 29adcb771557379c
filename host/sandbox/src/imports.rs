//! The guest's imports from the host (`aura:agent/host`: `call` and `emit`), as the sandbox
//! sees them.
//!
//! It owns the interface between a running guest and whoever answers its imports
//! ([`HostImports`], which the host's agent-to-agent module implements), the bounds on how
//! often one call may use each import, and who is calling ([`Caller`]: the agent, its call and
//! the chain above it). It must not check or dispatch the calls itself: it counts, forwards,
//! and charges the callee's fuel back to the caller (through the store's call hook).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::bindings;
use aura_contract::error::CrossingError;
use aura_contract::limits::{EMITS_PER_CALL_MAX, HOST_CALLS_PER_CALL_MAX};

/// Who is calling a host import: the agent, the call it is running and the chain above it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The agent whose instance made the import call.
    pub agent: &'static str,
    /// The call it is running (`None` while loading or ticking).
    pub call_id: Option<String>,
    /// The agents of the calls in progress, root first, this agent last: an agent-to-agent
    /// call from here is refused if its target is in it or it is already
    /// [`AGENT_CALL_DEPTH_MAX`](aura_contract::limits::AGENT_CALL_DEPTH_MAX) long.
    pub chain: Vec<&'static str>,
    /// The caller's deadline; a callee's is never later.
    pub deadline_ms: u64,
    /// The request the caller's call belongs to: its callees' too.
    pub trace: Option<aura_contract::traceparent::TraceContext>,
    /// The seed the caller's guest drew from, when not the sandbox's: its callees' too.
    pub guest_seed: Option<u64>,
}

/// A guest's `host.call`, with what the caller has left to spend on it.
#[derive(Debug)]
pub struct HostCall<'a> {
    /// Who calls.
    pub caller: &'a Caller,
    /// The guest's envelope, unchecked.
    pub envelope: String,
    /// Which of the caller's host calls this is (1 for the first): with the caller's call_id,
    /// what the nested call's own call_id is derived from.
    pub index: u32,
    /// Fuel the caller had left when it called: a callee may burn no more.
    pub fuel_left: u64,
}

/// The answer to a `host.call`: a result.v1, and the fuel the callee burned, which the sandbox
/// takes from the caller's budget when the import returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostCallAnswer {
    /// result.v1 text, refusals included.
    pub result: String,
    /// Fuel burned on the caller's behalf (the callee's whole call tree).
    pub fuel_used: u64,
}

/// A boxed future, for the async import handler behind a trait object.
pub type ImportFuture<'a> = Pin<Box<dyn Future<Output = HostCallAnswer> + Send + 'a>>;

/// The host side of the `aura:agent/host` imports. The host implements it (it checks,
/// quarantines and dispatches); the sandbox only bounds how often a guest may call, tells it
/// the caller's fuel, charges the callee's fuel back, and forwards.
pub trait HostImports: Send + Sync {
    /// `host.call`: answers with a result.v1, refusals included; never traps.
    fn call<'a>(&'a self, call: HostCall<'a>) -> ImportFuture<'a>;
    /// `host.emit`: records the event; never fails the call.
    fn emit(&self, caller: &Caller, event: String);
}

/// What one call's imports keep: who calls, who answers, how often each import was used, and
/// the fuel the store's call hook hands over (the caller's at an import, the callees' to charge
/// back when it returns). A call's store holds one (`store::CallState`).
pub struct ImportState {
    /// Who calls.
    pub caller: Caller,
    /// Who answers.
    pub imports: Arc<dyn HostImports>,
    host_calls: u32,
    emits: u32,
    /// The import bound the guest went past, if it did: the trap that ended the call is
    /// reported as [`CrossingError::ImportLimit`].
    pub limit_hit: Option<(&'static str, u32)>,
    /// The guest's fuel when it last entered the host (set by the call hook).
    pub fuel_at_import: u64,
    /// Fuel callees burned during the current import, taken from the guest's fuel when the
    /// import returns (by the call hook).
    pub fuel_charge: u64,
}

impl ImportState {
    /// A call's imports, none used yet.
    pub fn new(caller: Caller, imports: Arc<dyn HostImports>) -> Self {
        Self {
            caller,
            imports,
            host_calls: 0,
            emits: 0,
            limit_hit: None,
            fuel_at_import: 0,
            fuel_charge: 0,
        }
    }

    /// Records that a guest went past an import bound and returns the trap that ends the call.
    fn import_limit(&mut self, import: &'static str, limit: u32) -> wasmtime::Error {
        let reason = format!("{import} called more than {limit} times in one call");
        self.limit_hit = Some((import, limit));
        wasmtime::Error::msg(reason)
    }
}

impl bindings::aura::agent::host::Host for ImportState {
    async fn call(&mut self, call: String) -> wasmtime::Result<String> {
        self.host_calls += 1;
        if self.host_calls > HOST_CALLS_PER_CALL_MAX {
            return Err(self.import_limit("host.call", HOST_CALLS_PER_CALL_MAX));
        }
        let imports = self.imports.clone();
        let caller = self.caller.clone();
        let answer = imports
            .call(HostCall {
                caller: &caller,
                envelope: call,
                index: self.host_calls,
                fuel_left: self.fuel_at_import,
            })
            .await;
        // Charged when the import returns to the guest (see the store's call hook).
        self.fuel_charge = self.fuel_charge.saturating_add(answer.fuel_used);
        Ok(answer.result)
    }

    async fn emit(&mut self, event: String) -> wasmtime::Result<()> {
        self.emits += 1;
        if self.emits > EMITS_PER_CALL_MAX {
            return Err(self.import_limit("host.emit", EMITS_PER_CALL_MAX));
        }
        self.imports.emit(&self.caller, event);
        Ok(())
    }
}

/// Imports for calls that may make none (loading an agent: `manifest`): `host.call` is
/// refused with a result.v1 and `emit` is dropped; nothing is recorded.
#[derive(Debug, Clone)]
pub struct NoImports {
    /// Why calls are refused, as the guest is told.
    pub reason: &'static str,
}

impl HostImports for NoImports {
    fn call<'a>(&'a self, call: HostCall<'a>) -> ImportFuture<'a> {
        let error = CrossingError::AgentCallUnsupported {
            caller: call.caller.agent.to_owned(),
            reason: self.reason.into(),
        };
        let result = aura_contract::envelope::refusal_for_host_call(&call.envelope, None, &error);
        Box::pin(std::future::ready(HostCallAnswer {
            result,
            fuel_used: 0,
        }))
    }

    fn emit(&self, caller: &Caller, _event: String) {
        tracing::debug!(agent = caller.agent, reason = self.reason, "event ignored");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn no_imports_refuse_every_call_with_a_result() {
        let caller = Caller {
            agent: "calendar",
            call_id: None,
            chain: vec!["calendar"],
            deadline_ms: 1000,
            trace: None,
            guest_seed: None,
        };
        let imports = NoImports {
            reason: "the agent is being loaded",
        };
        let answer = imports
            .call(HostCall {
                caller: &caller,
                envelope: r#"{"call_id":"t_0123456789","agent":"wellness","tool":"x"}"#.into(),
                index: 1,
                fuel_left: 5,
            })
            .await;
        assert_eq!(answer.fuel_used, 0);
        assert_eq!(
            answer.result,
            "{\"agent\":\"wellness\",\"call_id\":\"t_0123456789\",\"error\":{\"kind\":\
             \"agent_call_unsupported\",\"message\":\"agent `calendar` may not call other \
             agents here: the agent is being loaded\",\"phase\":\"envelope\"},\"fuel_used\":0,\
             \"ok\":false,\"tool\":\"x\"}"
        );
    }
}
