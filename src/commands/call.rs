//! `aura call`: build a toolcall.v1 envelope for one tool and dispatch it; and what `call` and
//! `dispatch` share: one call through the host's seam, its answer or refusal printed.

use std::process::ExitCode;

use anyhow::{Context, bail};

use aura_contract::visible::visible;
use aura_host::{CallInput, CallRequest, Loading, Refused, ToolCall};

use super::{EXIT_REFUSED, EXIT_TOOL_ERROR, Globals, open_host, runtime, warn_load_failures};

/// Call one tool: builds a toolcall.v1 envelope (fresh call_id, ts now) and dispatches it.
#[derive(clap::Args, Debug)]
pub struct CallCommand {
    /// Agent name, e.g. calendar.
    agent: String,
    /// Tool name, e.g. find_free_slots.
    tool: String,
    /// The tool's args as a JSON object.
    args: String,
    /// Deadline for the call (50..=10000 ms); default: the tool's catalogue default.
    #[arg(long)]
    deadline_ms: Option<u64>,
}

impl CallCommand {
    /// Builds the envelope and dispatches it.
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        let args: serde_json::Value =
            serde_json::from_str(&self.args).context("args are not JSON")?;
        let call = ToolCall::new(&self.agent, &self.tool, args, self.deadline_ms);
        dispatch_one(globals, CallInput::Envelope(&call))
    }
}

/// Dispatches one call: its answer (result.v1) on stdout and status 0 or 4, or its refusal
/// (recovery.v1) on stdout, one line on stderr, and status 3.
pub fn dispatch_one(globals: Globals, input: CallInput<'_>) -> anyhow::Result<ExitCode> {
    // One call loads the agents it can reach (its own and those it may call, before it
    // starts), not all of them. Unknown agents are refused by the crossing.
    let mut config = globals.host_config();
    config.loading = Loading::OnFirstUse;
    let runtime = runtime()?;
    let code = runtime.block_on(async {
        let (host, events) = open_host(config, globals.nats.as_ref(), None).await?;
        // The user typed this call (`call`, or `dispatch` of an envelope they wrote): for a tool
        // that needs their yes, the command is it.
        let dispatched = host.dispatch(CallRequest::new(input).confirmed(true)).await;
        warn_load_failures(&host);
        let code = match dispatched {
            Ok(result) => {
                println!("{}", result.to_canonical());
                Ok(if result.ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(EXIT_TOOL_ERROR)
                })
            }
            Err(refused) => report_refusal(&refused),
        };
        if let Some(events) = events {
            // The events go out before the process ends.
            drop(host);
            events.await;
            return code;
        }
        // One call and the process ends: the answer is printed and every journal record is
        // already synced, so leave the engine's memory pool and the loaded code to the OS
        // rather than unmapping them one by one (a few ms of a cold start on a phone).
        std::mem::forget(host);
        code
    });
    std::mem::forget(runtime);
    code
}

/// Prints a refusal: recovery.v1 on stdout for programs, one line on stderr for people.
fn report_refusal(refused: &Refused) -> anyhow::Result<ExitCode> {
    let call_id = refused.call_id.as_deref().unwrap_or("-");
    // For programs: recovery.v1 (kind, message, what to do next, the field issues).
    println!("{}", refused.failure().to_canonical());
    eprintln!(
        "aura: refused {} ({}): {}",
        visible(call_id),
        refused.error.kind(),
        visible(&refused.error.to_string())
    );
    if let Some(journal_error) = &refused.journal_error {
        bail!("the refusal could not be quarantined: {journal_error}");
    }
    Ok(ExitCode::from(EXIT_REFUSED))
}
