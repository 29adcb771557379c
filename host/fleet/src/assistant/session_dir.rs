//! A held person's session dir (the working copy of their life, made again from the fleet's
//! home at each hold) and the compaction of their journal and inbox as their days go by.
//!
//! It owns when the person's head moves (to the first decision of their newest day, once every
//! decision before it was delivered: a session resumes from its life's open day, so it never
//! makes the decisions of an earlier day again), moved one at a time and never blocking a
//! signal, and the purge of what the head covers (the journal's decisions before it, the
//! inbox's signals the life holds). It must not decide what the life holds (the session and
//! its home do) nor take signals (the hold does).

use aura_contract::caused::Caused;
use std::path::{Path, PathBuf};

use aura_contract::person::Person;

use super::{Holder, Writer};
use crate::store::Saved;

/// Moves the person's head to the point `writer` found (if every decision before it was
/// delivered) and purges the journal and inbox below it, in the background, unless the move
/// before is still being made.
pub(super) fn compact(holder: &Holder, writer: &mut Writer) {
    let Some(covered) = writer.compact_to else {
        return;
    };
    let busy = writer
        .compacting
        .as_ref()
        .is_some_and(|task| !task.is_finished());
    if busy || writer.outbox.next < covered.decisions {
        return;
    }
    writer.compact_to = None;
    // Decisions before the head are never made again: the hold's memory lets them go.
    if covered.decisions > writer.base {
        let gone = ((covered.decisions - writer.base) as usize).min(writer.journaled.len());
        writer.journaled.drain(..gone);
        writer.base += gone as u64;
    }
    let (fleet, person, me) = (
        holder.fleet.clone(),
        holder.person.clone(),
        holder.me.clone(),
    );
    writer.compacting = Some(tokio::spawn(async move {
        let saved = match fleet.move_head(&person, covered).await {
            Ok(saved) => saved,
            Err(error) => {
                tracing::warn!(person = %person, error = %Caused(&error), "the head was not moved");
                return;
            }
        };
        tracing::info!(target: "aura_fleet::audit", event = "head", person = %person,
            host = %me, epoch = covered.epoch, seq = covered.fence, inbox = covered.inbox_next,
            moved = matches!(saved, Saved::Head(_)));
        if let Saved::Head(covered) = saved {
            match fleet.purge_covered(&person, covered).await {
                Ok(purged) => tracing::info!(target: "aura_fleet::audit", event = "purged",
                    person = %person, host = %me, seq = covered.fence, records = purged.records,
                    signals = purged.signals),
                Err(error) => {
                    tracing::warn!(person = %person, error = %Caused(&error), "journal not purged")
                }
            }
        }
    }));
}

/// `person`'s scratch data dir under `root` for the hold of epoch `epoch` (the working copy of
/// their life, made again at each hold), and the dirs of this host's earlier holds of them
/// deleted: a session stopped at the end of its hold may still finish a write into its own
/// dir, never into the next hold's.
pub(super) fn scratch(root: &Path, person: &Person, epoch: u64) -> std::io::Result<PathBuf> {
    let parent = root.join(person.tenant()).join(person.user());
    std::fs::create_dir_all(&parent)?;
    let name = format!("hold-{epoch}");
    for entry in std::fs::read_dir(&parent)? {
        let entry = entry?;
        let earlier = entry.file_name().to_string_lossy().starts_with("hold-")
            && entry.file_name() != name.as_str();
        if earlier && entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        }
    }
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Deletes `person`'s scratch data dir of the hold of epoch `epoch` under `root` (best
/// effort: one left behind is deleted at this host's next hold of them).
pub(super) fn forget(root: &Path, person: &Person, epoch: u64) {
    let dir = root
        .join(person.tenant())
        .join(person.user())
        .join(format!("hold-{epoch}"));
    if let Err(error) = std::fs::remove_dir_all(&dir)
        && error.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(person = %person, error = %Caused(&error), "a hold's working copy was not deleted");
    }
}
