//! A held person's inbox as the hold takes it: each message handed to the session with its
//! inbox sequence as the read position of source [`INBOX_SOURCE`], so the life holds the
//! signal and where the inbox stands in one write (a takeover reads the inbox on from there);
//! the end of inputs journaled under the fence (the next holder ends them too, and passes over
//! that message).
//!
//! It owns which refusals are the signal's (the position moves past it: the same on every
//! host, the signal quarantined once) and which the session's (nothing moves: the hold ends
//! and the next holder takes the signal). It must not check a signal (the session does) nor
//! decide who holds the person (the lease does).

use std::time::Duration;

use serde_json::json;

use aura_contract::limits::FLEET_SIGNAL_TAKE_MS;
use aura_day::live::{BatchForm, Live, Refused};
use aura_day::store::ReadPosition;

use super::{Ended, Holder};
use crate::protocol::Record;
use crate::store::Sent;

/// What journals a person's end of inputs (a replayed day may then run to its end).
pub(super) const INPUTS_END: &str = "inputs_end";
/// The source a person's inbox is among their life's read positions: its position is the
/// inbox sequence of the last message the life holds (taken, or passed over).
pub const INBOX_SOURCE: &str = "inbox";
/// Refusals that say the session could not take a signal (stopped, its disk failed), not that
/// the signal was wrong: the position does not move past it.
const SESSION_REFUSALS: [&str; 2] = ["closed", "not_durable"];

/// Hands inbox message `seq` to the session, with the position it moves the inbox to.
pub(super) async fn take(holder: &Holder, live: &Live, seq: u64, sent: Sent) -> Result<(), Ended> {
    let deadline = tokio::time::Instant::now() + Duration::from_millis(FLEET_SIGNAL_TAKE_MS);
    let read = ReadPosition {
        source: INBOX_SOURCE.to_owned(),
        position: seq.to_string(),
    };
    let bytes = match sent {
        // Journaled, not a position: a session whose inputs ended may finish its days and
        // take nothing more, so each holder after ends the inputs from the journal and passes
        // over this message again.
        Sent::InputsEnd if holder.writer.lock().await.inputs_ended => return Ok(()),
        Sent::InputsEnd => {
            let record = Record::Signal {
                id: seq.to_string(),
                signal: json!({ INPUTS_END: true }),
            };
            holder.append(&record, "inputs_end").await?;
            holder.writer.lock().await.inputs_ended = true;
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
            refused(holder, seq, "wrong_person");
            return passed_over(holder, live, read, deadline).await;
        }
    };
    loop {
        match answered(holder, deadline, live.push_from(&bytes, read.clone())).await? {
            Ok(_) => {
                tracing::info!(target: "aura_fleet::audit", event = "taken",
                    person = %holder.person, host = %holder.me, inbox = seq);
                return Ok(());
            }
            Err(refusal) if refusal.kind == "busy" => wait(&refusal).await,
            // Refused for what it is (quarantined by the session): the same on every host.
            // The session moved the position with the refusal if it saw the signal; if it
            // refused it before (not UTF-8, too large), the position moves alone.
            Err(refusal) => {
                session_state(holder, &refusal)?;
                refused(holder, seq, &refusal.kind);
                return passed_over(holder, live, read, deadline).await;
            }
        }
    }
}

/// Moves the inbox's position past a message the session did not take (an end of inputs,
/// a refused one): durable in the life when it returns.
async fn passed_over(
    holder: &Holder,
    live: &Live,
    read: ReadPosition,
    deadline: tokio::time::Instant,
) -> Result<(), Ended> {
    loop {
        let moved = live.push_read(b"", BatchForm::Ndjson, Some(read.clone()));
        match answered(holder, deadline, moved).await? {
            Ok(_) => return Ok(()),
            Err(refusal) if refusal.kind == "busy" => wait(&refusal).await,
            Err(refusal) => {
                session_state(holder, &refusal)?;
                let why = format!(
                    "the session did not move the inbox's position: {}",
                    refusal.message
                );
                holder.end(Ended::Failed(why.clone()));
                return Err(Ended::Failed(why));
            }
        }
    }
}

/// The session's answer by `deadline`, or the hold ends: the session may yet take it, so
/// nothing it decides after is journaled here.
async fn answered<T>(
    holder: &Holder,
    deadline: tokio::time::Instant,
    answer: impl std::future::Future<Output = T>,
) -> Result<T, Ended> {
    match tokio::time::timeout_at(deadline, answer).await {
        Ok(answer) => Ok(answer),
        Err(_) => {
            let why = format!("the session did not take a signal within {FLEET_SIGNAL_TAKE_MS} ms");
            holder.end(Ended::Failed(why.clone()));
            Err(Ended::Failed(why))
        }
    }
}

/// Ends the hold when `refusal` is the session's state, not the signal's: nothing moves, and
/// the next holder takes the signal.
fn session_state(holder: &Holder, refusal: &Refused) -> Result<(), Ended> {
    if !SESSION_REFUSALS.contains(&refusal.kind.as_str()) {
        return Ok(());
    }
    let why = format!("the session refused a signal: {}", refusal.message);
    holder.end(Ended::Failed(why.clone()));
    Err(Ended::Failed(why))
}

async fn wait(refusal: &Refused) {
    let wait_ms = refusal.recovery.retry_after_ms.unwrap_or(10);
    tokio::time::sleep(Duration::from_millis(wait_ms)).await;
}

/// Says in the audit log that inbox message `seq` was refused for `kind`.
fn refused(holder: &Holder, seq: u64, kind: &str) {
    tracing::info!(target: "aura_fleet::audit", event = "refused", person = %holder.person,
        host = %holder.me, inbox = seq, kind);
}
