//! A held person's session dir: emptied for each hold, restored from the person's stored
//! checkpoint when it fits their journal, and captured into a new checkpoint as the person's
//! signals are journaled.
//!
//! It owns the scratch dir's life and when a checkpoint is captured and stored (every
//! `FLEET_CHECKPOINT_EVERY_SIGNALS` signals, one store at a time, never blocking a signal),
//! and once it is the person's head, the purge of what it covers of their journal and inbox. It
//! must not decide what a checkpoint holds ([`crate::checkpoint`] does) nor take signals (the
//! hold does).

use std::path::{Path, PathBuf};

use aura_contract::person::Person;
use aura_host::journal::QUARANTINE_PATH;

use super::{Holder, Writer};
use crate::protocol::Covered;
use crate::store::{Claim, Saved};

/// Restores `holder`'s person's stored checkpoint into their scratch dir `dir` (under `root`)
/// if it fits the journal `claim` read: the first inbox sequence it does not hold, or `None`
/// (the journal is lived whole).
pub(super) async fn restore(
    holder: &Holder,
    claim: &Claim,
    root: &Path,
    dir: &Path,
) -> Option<u64> {
    let person = &holder.person;
    let checkpoint = match holder.fleet.checkpoint(person).await {
        Ok(Some(checkpoint)) => checkpoint,
        Ok(None) => return None,
        Err(error) => {
            tracing::warn!(person = %person, %error, "checkpoint not read; the journal is lived whole");
            return None;
        }
    };
    let replayed = &claim.replayed;
    let fits = checkpoint.fits(person, replayed.last, replayed.epoch, replayed.covered);
    // What this host quarantined for the person before is kept beside the checkpoint's own.
    let quarantine = dir.join(QUARANTINE_PATH);
    if std::fs::metadata(&quarantine).is_ok_and(|m| m.len() > 0) {
        let aside = dir.join(format!(
            "errors/quarantine_calls.{}.jsonl",
            claim.holding.epoch
        ));
        if let Err(error) = std::fs::rename(&quarantine, &aside) {
            tracing::warn!(person = %person, %error, "checkpoint not used: the quarantine log cannot be set aside");
            return None;
        }
    }
    if let Err(error) = fits.and_then(|()| checkpoint.restore(dir)) {
        tracing::warn!(target: "aura_fleet::audit", event = "checkpoint_refused",
            person = %person, host = %holder.me, why = %error);
        let _ = scratch(root, person);
        return None;
    }
    tracing::info!(target: "aura_fleet::audit", event = "restored", person = %person,
        host = %holder.me, seq = checkpoint.fence, inbox = checkpoint.inbox_next);
    Some(checkpoint.inbox_next)
}

/// Captures the person's session in `dir` (no signal is being taken: the writer is held) and
/// stores it in the background, unless the one before is still being stored.
pub(super) fn checkpoint(holder: &Holder, writer: &mut Writer, dir: &Path, inbox_next: u64) {
    if writer
        .storing
        .as_ref()
        .is_some_and(|task| !task.is_finished())
    {
        return;
    }
    let (epoch, fence) = match holder.holding.lock() {
        Ok(holding) => (holding.epoch, holding.fence),
        Err(_) => return,
    };
    let covered = Covered {
        fence,
        decisions: writer.base + writer.journaled.len() as u64,
        epoch,
        inbox_next,
    };
    let checkpoint = match crate::checkpoint::capture(dir, &holder.person, covered) {
        Ok(checkpoint) => checkpoint,
        Err(error) => {
            tracing::warn!(person = %holder.person, %error, "no checkpoint this time");
            return;
        }
    };
    writer.since_checkpoint = 0;
    // Decisions delivered and covered by the checkpoint before this one are not made again
    // (a session resumes at or past that one): the hold's memory holds a checkpoint's worth.
    let keep_from = writer.outbox.next.min(writer.captured_decisions);
    if keep_from > writer.base {
        writer.journaled.drain(..(keep_from - writer.base) as usize);
        writer.base = keep_from;
    }
    writer.captured_decisions = covered.decisions;
    let (fleet, person, me) = (
        holder.fleet.clone(),
        holder.person.clone(),
        holder.me.clone(),
    );
    writer.storing = Some(tokio::spawn(async move {
        let saved = match fleet.save_checkpoint(&checkpoint).await {
            Ok(saved) => saved,
            Err(error) => {
                tracing::warn!(person = %person, %error, "checkpoint not stored");
                return;
            }
        };
        tracing::info!(target: "aura_fleet::audit", event = "checkpointed",
            person = %person, host = %me, epoch, seq = fence, inbox = inbox_next,
            head = matches!(saved, Saved::Head(_)));
        if let Saved::Head(covered) = saved {
            match fleet.purge_covered(&person, covered).await {
                Ok(purged) => tracing::info!(target: "aura_fleet::audit", event = "purged",
                    person = %person, host = %me, seq = fence, records = purged.records,
                    signals = purged.signals),
                Err(error) => tracing::warn!(person = %person, %error, "journal not purged"),
            }
        }
    }));
}

/// `person`'s scratch data dir under `root`, emptied of an earlier hold's session (its
/// quarantine log stays: refusals are never dropped).
pub(super) fn scratch(root: &Path, person: &Person) -> std::io::Result<PathBuf> {
    let dir = root.join(person.tenant()).join(person.user());
    std::fs::create_dir_all(&dir)?;
    for entry in std::fs::read_dir(&dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == "errors" || name == "code-cache" {
            continue;
        }
        match entry.file_type()?.is_dir() {
            true => std::fs::remove_dir_all(entry.path())?,
            false => std::fs::remove_file(entry.path())?,
        }
    }
    Ok(dir)
}
