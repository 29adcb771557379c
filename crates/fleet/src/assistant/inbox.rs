//! A held person's inbox as the hold takes it: each message handed to the session and, once
//! taken, journaled under the fence (a signal as the session recorded it, the end of inputs,
//! or a refusal for what the signal was).
//!
//! It owns what is journaled for each inbox message and which refusals are the signal's (the
//! same on every host, journaled so the next holder passes over them) and which the session's
//! (nothing journaled: the hold ends and the next holder takes the signal). It must not check
//! a signal (the session does) nor decide who holds the person (the lease does).

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use aura_contract::limits::{FLEET_CHECKPOINT_EVERY_SIGNALS, FLEET_SIGNAL_TAKE_MS};
use aura_day::live::Live;

use super::session_dir::checkpoint;
use super::{Ended, Holder};
use crate::protocol::Record;
use crate::store::Sent;

/// What journals a person's end of inputs (a replayed day may then run to its end).
pub(super) const INPUTS_END: &str = "inputs_end";
/// What journals an inbox message the session refused (quarantined where it was refused): the
/// next holder passes over it rather than refusing and quarantining it again.
pub(super) const REFUSED: &str = "refused";
/// Refusals that say the session could not take a signal (stopped, its disk failed), not that
/// the signal was wrong: never journaled as the signal's.
const SESSION_REFUSALS: [&str; 2] = ["closed", "not_durable"];

/// Hands inbox message `seq` to the session and journals it once taken.
pub(super) async fn take(
    holder: &Holder,
    live: &Live,
    dir: &Path,
    seq: u64,
    sent: Sent,
) -> Result<(), Ended> {
    let mut writer = holder.writer.lock().await;
    let id = seq.to_string();
    let bytes = match sent {
        Sent::InputsEnd => {
            let record = Record::Signal {
                id,
                signal: json!({ INPUTS_END: true }),
            };
            holder.append(&record, "inputs_end").await?;
            live.close().await;
            return Ok(());
        }
        Sent::Signal(bytes) => bytes,
        Sent::Misaddressed { named, bytes } => {
            let reason = format!(
                "a message on {}'s subject names {}: one person's signal is never taken for another",
                holder.person,
                aura_contract::visible::visible(&named)
            );
            live.refuse_request("wrong_person", reason, &String::from_utf8_lossy(&bytes));
            return refused(holder, id, "wrong_person").await;
        }
    };
    let deadline = tokio::time::Instant::now() + Duration::from_millis(FLEET_SIGNAL_TAKE_MS);
    loop {
        let pushed = tokio::time::timeout_at(deadline, live.push(&bytes)).await;
        let Ok(pushed) = pushed else {
            // The session may yet take it: stop before anything it decides is journaled.
            let why = format!("the session did not take a signal within {FLEET_SIGNAL_TAKE_MS} ms");
            holder.end(Ended::Failed(why.clone()));
            return Err(Ended::Failed(why));
        };
        match pushed {
            Ok(ack) if ack.again => return Ok(()),
            Ok(ack) => {
                // The line the session journaled, as it journaled it (whichever day it is in
                // by now: a rollover may have come since).
                let signal: Value = ack.record.ok_or_else(|| {
                    Ended::Failed(format!("signal {} came without its journal line", ack.seq))
                })?;
                holder
                    .append(&Record::Signal { id, signal }, "signal")
                    .await?;
                writer.since_checkpoint += 1;
                if writer.since_checkpoint >= FLEET_CHECKPOINT_EVERY_SIGNALS {
                    checkpoint(holder, &mut writer, dir, seq + 1);
                }
                return Ok(());
            }
            Err(refused) if refused.kind == "busy" => {
                let wait = refused.recovery.retry_after_ms.unwrap_or(10);
                tokio::time::sleep(Duration::from_millis(wait)).await;
            }
            // The session's state, not the signal's: nothing is journaled, the hold ends and
            // the next holder takes the signal.
            Err(failure) if SESSION_REFUSALS.contains(&failure.kind.as_str()) => {
                let why = format!("the session refused a signal: {}", failure.message);
                holder.end(Ended::Failed(why.clone()));
                return Err(Ended::Failed(why));
            }
            // Refused for what it is (quarantined by the session): the same on every host.
            Err(failure) => return refused(holder, id, &failure.kind).await,
        }
    }
}

/// Journals that inbox message `id` was refused for `kind`.
async fn refused(holder: &Holder, id: String, kind: &str) -> Result<(), Ended> {
    tracing::info!(target: "aura_fleet::audit", event = "refused", person = %holder.person,
        host = %holder.me, inbox = %id, kind);
    let record = Record::Signal {
        id,
        signal: json!({ REFUSED: kind }),
    };
    holder.append(&record, "refused").await
}
