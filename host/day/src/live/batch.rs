//! A push being taken into the open day: its signals checked and taken slice by slice (an
//! urgent push may go first between two slices), the records of what it refused shipped to the
//! life's home, what it took appended with its source's read position in one durable step, and
//! then every answer to its sender at once.
//!
//! It owns [`Batch`] and the session's step that takes one. It must not check a signal (the
//! session's `take` does) nor decide when a push is taken (the session's loop does).

use aura_contract::caused::Caused;
use serde_json::Value;
use tokio::sync::oneshot;

use aura_contract::limits::LIVE_BATCH_SLICE_SIGNALS;
use aura_contract::recovery::Action;
use aura_host::Host;

use super::LiveError;
use super::handle::{Ack, Lanes, Refused, closed, refuse};
use super::input;
use super::session::{Session, Today};
use crate::orchestrator::Day;
use crate::store::{Appended, LifeStore, ReadPosition, StoreError, check_positions};

/// A push being taken: its signals not taken yet, the answers so far (those of signals
/// taken in an earlier day are durable), where they all go once it is whole.
pub(super) struct Batch {
    texts: std::vec::IntoIter<String>,
    answers: Vec<Result<Ack, Refused>>,
    reply: oneshot::Sender<Vec<Result<Ack, Refused>>>,
    /// The source's read position, journaled with the batch's last slice.
    read: Option<ReadPosition>,
}

impl Batch {
    pub(super) fn new(
        texts: Vec<String>,
        reply: oneshot::Sender<Vec<Result<Ack, Refused>>>,
        read: Option<ReadPosition>,
    ) -> Self {
        Self {
            answers: Vec::with_capacity(texts.len()),
            texts: texts.into_iter(),
            reply,
            read,
        }
    }

    /// The session stops: what is not taken yet is refused (quarantined on `host`, the open
    /// day's), and the sender hears every answer.
    pub(super) fn stopped(mut self, host: &Host) {
        for text in self.texts.by_ref() {
            self.answers.push(Err(refuse(host, &closed(), &text)));
        }
        let _ = self.reply.send(self.answers);
    }
}

/// What a slice of a push took: the journal lines of the signals it took, and the places
/// among the push's answers of those it took and those it refused, each with its text.
#[derive(Default)]
struct Slice {
    records: Vec<Value>,
    taken: Vec<(usize, String)>,
    refused: Vec<(usize, String)>,
}

impl Session {
    /// Takes the push being taken into the open day, until it is whole, (`until_filled`)
    /// fills the day, or an urgent push waits (looked at every
    /// [`LIVE_BATCH_SLICE_SIGNALS`] signals): what it took is journaled with one fsync, and
    /// once whole its sender hears every answer. A journal that failed stops the session:
    /// what this part took is refused as not durable, and the rest as the session stopping.
    pub(super) async fn take_batch(
        &mut self,
        today: &mut Today,
        day: &mut Day<'_>,
        until_filled: bool,
        lanes: &Lanes,
    ) -> Result<(), LiveError> {
        let Some(batch) = self.pushes.pop_front() else {
            return Ok(());
        };
        let Some(mut batch) = within_bounds(today, batch).await? else {
            return Ok(());
        };
        let slice = self.take_slice(today, day, &mut batch, until_filled, lanes);
        // The source's position goes with the batch's last slice: once it is durable, every
        // signal the source read up to it is the life's.
        let positions: Vec<ReadPosition> = match batch.texts.len() {
            0 => batch.read.take().into_iter().collect(),
            _ => Vec::new(),
        };
        if let Err((error, unheard)) = durable(today, slice, &positions).await {
            let refusal = input::refusal(
                "not_durable",
                format!("the input could not be made durable: {}", Caused(&error)),
                Action::Retry,
            );
            for (index, text) in unheard {
                batch.answers[index] = Err(refuse(&today.host, &refusal, &text));
            }
            batch.stopped(&today.host);
            return Err(error.into());
        }
        match batch.texts.len() {
            0 => {
                let _ = batch.reply.send(batch.answers);
            }
            _ => self.pushes.push_front(batch),
        }
        Ok(())
    }

    /// Takes `batch`'s next slice into the open day (its answers added to the batch's).
    fn take_slice(
        &mut self,
        today: &mut Today,
        day: &mut Day<'_>,
        batch: &mut Batch,
        until_filled: bool,
        lanes: &Lanes,
    ) -> Slice {
        let mut slice = Slice::default();
        let mut read = 0;
        while !(until_filled && today.filled(day)) {
            if read > 0 && read % LIVE_BATCH_SLICE_SIGNALS == 0 && lanes.urgent_waiting() {
                break;
            }
            let Some(text) = batch.texts.next() else {
                break;
            };
            read += 1;
            match self.take(today, day, &text) {
                Ok((ack, record)) => {
                    if let Some(record) = record {
                        slice.records.push(record);
                        slice.taken.push((batch.answers.len(), text));
                    }
                    batch.answers.push(Ok(ack));
                }
                Err(refusal) => {
                    slice.refused.push((batch.answers.len(), text));
                    batch.answers.push(Err(refusal));
                }
            }
        }
        slice
    }
}

/// `batch`, unless its read position is one the life cannot keep (one source too many): then
/// it is refused whole, before any of it is taken, and answered.
async fn within_bounds(today: &Today, mut batch: Batch) -> Result<Option<Batch>, LiveError> {
    let Some(read) = batch.read.as_ref().filter(|_| batch.answers.is_empty()) else {
        return Ok(Some(batch));
    };
    let Err(refused) = check_positions(&today.store.positions().await?, std::slice::from_ref(read))
    else {
        return Ok(Some(batch));
    };
    let refusal = input::refusal("too_large", refused.to_string(), Action::CorrectCall);
    for text in batch.texts.by_ref() {
        batch
            .answers
            .push(Err(refuse(&today.host, &refusal, &text)));
    }
    let _ = batch.reply.send(batch.answers);
    Ok(None)
}

/// Makes `slice` durable with `positions`: what it refused is in the life's home (its
/// quarantine) before its signals are, so a sender hears nothing the home does not hold. On
/// failure, the error and the answers to take back (those taken, and those refused when their
/// records could not be shipped: told to send again).
async fn durable(
    today: &Today,
    slice: Slice,
    positions: &[ReadPosition],
) -> Result<(), (StoreError, Vec<(usize, String)>)> {
    let Slice {
        records,
        taken,
        refused,
    } = slice;
    if let Err(error) = today.store.ship_logs(&today.name).await {
        return Err((error, taken.into_iter().chain(refused).collect()));
    }
    if records.is_empty() && positions.is_empty() {
        return Ok(());
    }
    let appended = today.store.append(&today.name, &records, positions).await;
    match appended {
        Ok(appended) => {
            if let Some(again) = appended.iter().find(|a| **a != Appended::Stored) {
                // The session's ids and the store's are read from the same journal: this is
                // a fault of aura's, said loudly; the line of that id is kept, once.
                tracing::error!(?again, "the store held a signal the session took as new");
            }
            Ok(())
        }
        Err(error) => Err((error, taken)),
    }
}
