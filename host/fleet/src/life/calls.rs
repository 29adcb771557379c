//! The calls of [`LifeStore`] on a fleet's store: each a few steps of [`super::FleetLife`]'s,
//! in the order the contract needs (a day marked `begun` before its files, `whole` after; the
//! state's compare-and-set the commit; a batch with its read positions one append). It must
//! not decide anything a life does.

use std::collections::BTreeMap;

use bytes::Bytes;
use serde_json::Value;

use aura_contract::canonical::parse_i_json;
use aura_contract::limits::{CHECKPOINT_BYTES_MAX, FLEET_RECORD_BYTES_MAX, SCENARIO_BYTES_MAX};
use aura_day::checkpoint::{CHECKPOINT_PATH, LIVE_SETUP_PATH};
use aura_day::live::life::{LIFE_PATH, RECORD_PATH};
use aura_day::store::{
    Appended, DayLog, LifeState, LifeStore, ReadPosition, Sorted, Step, StoreError, checked,
    day_order, deletable, positions_of, sort_out,
};
use aura_host::journal::StorageStep;

use super::{FleetLife, Mark, canonical, failed, fleet, io, log_name};
use crate::store::Bucket;

impl LifeStore for FleetLife {
    fn life(&self) -> Step<'_, Option<LifeState>> {
        Box::pin(async move { Ok(self.cache().state.clone()) })
    }

    fn commit<'a>(&'a self, state: &'a LifeState) -> Step<'a, ()> {
        Box::pin(async move {
            self.whole(&state.open)?;
            self.holding()?;
            let mut state = state.clone();
            state.positions = self.positions_now().await?;
            let text = canonical(&serde_json::to_value(&state).unwrap_or_default())?;
            let ordinal = self.ordinal(LIFE_PATH);
            for step in [StorageStep::Write, StorageStep::Sync] {
                if let Some(error) = failed(self.at(LIFE_PATH, step, ordinal)) {
                    return Err(io(LIFE_PATH, error));
                }
            }
            let revision = self.cache().state_revision;
            let revision = self.swap("state", Bytes::from(text), revision).await?;
            {
                let mut cache = self.cache();
                cache.positions = Some(state.positions.clone());
                cache.days.retain(|day, _| *day == state.open);
                cache.state = Some(state);
                cache.state_revision = Some(revision);
            }
            if let Some(error) = failed(self.at(LIFE_PATH, StorageStep::Synced, ordinal)) {
                return Err(io(LIFE_PATH, error));
            }
            let _ = self.at(LIFE_PATH, StorageStep::Done, ordinal);
            Ok(())
        })
    }

    fn set_aside(&self) -> Step<'_, ()> {
        Box::pin(async move {
            // Under the fence, and at the key's revision this opener wrote: an older opener
            // sets nothing aside once a newer one opened.
            self.touch().await?;
            let key = format!("{}.generation", self.life);
            let generation = self.generation() + 1;
            let next = Bytes::from(generation.to_string());
            let revision = self.generation.lock().unwrap_or_else(|p| p.into_inner()).1;
            let stored = self
                .store
                .update(Bucket::Lives, &key, next, revision)
                .await
                .map_err(fleet)?;
            // The old generation stays as it is; this opener holds the new, empty one.
            self.generation_at(generation, stored)?;
            *self.cache() = Default::default();
            Ok(())
        })
    }

    fn days(&self) -> Step<'_, Vec<String>> {
        Box::pin(async move {
            let mut days: Vec<String> = self
                .cache()
                .index
                .iter()
                .filter(|(_, mark)| **mark == Mark::Whole)
                .map(|(day, _)| day.clone())
                .collect();
            days.sort_by(|a, b| day_order(a).cmp(&day_order(b)));
            Ok(days)
        })
    }

    fn begin_day<'a>(&'a self, day: &'a str, setup: &'a Value, lines: &'a [Value]) -> Step<'a, ()> {
        Box::pin(async move {
            let day = checked(day)?;
            // A day of that name begun before (its mark came first, so a begin cut short is
            // in the index) is deleted whole first.
            self.delete_day(day).await?;
            self.index(|index| {
                index.insert(day.to_owned(), Mark::Begun);
            })
            .await?;
            self.put_file(day, LIVE_SETUP_PATH, canonical(setup)?.into_bytes())
                .await?;
            let texts = lines.iter().map(canonical).collect::<Result<Vec<_>, _>>()?;
            if !texts.is_empty() {
                self.publish_batch(day, &texts).await?;
            }
            self.index(|index| {
                index.insert(day.to_owned(), Mark::Whole);
            })
            .await?;
            self.cache()
                .days
                .insert(day.to_owned(), aura_day::store::ids_of(&texts));
            Ok(())
        })
    }

    fn setup<'a>(&'a self, day: &'a str) -> Step<'a, Value> {
        Box::pin(async move {
            self.whole(day)?;
            let bytes = self
                .get_file(day, LIVE_SETUP_PATH, SCENARIO_BYTES_MAX)
                .await?
                .ok_or_else(|| StoreError::NoDay(day.to_owned()))?;
            let text = String::from_utf8(bytes).map_err(|e| StoreError::Damaged(e.to_string()))?;
            parse_i_json(&text, SCENARIO_BYTES_MAX)
                .map_err(|e| StoreError::Damaged(format!("{LIVE_SETUP_PATH}: {e}")))
        })
    }

    fn delete_day<'a>(&'a self, day: &'a str) -> Step<'a, ()> {
        Box::pin(async move {
            let open = self.cache().state.as_ref().map(|s| s.open.clone());
            let day = deletable(day, open.as_deref())?;
            if !self.cache().index.contains_key(day) {
                return Ok(());
            }
            self.remove_day(day).await
        })
    }

    fn append<'a>(
        &'a self,
        day: &'a str,
        lines: &'a [Value],
        positions: &'a [ReadPosition],
    ) -> Step<'a, Vec<Appended>> {
        Box::pin(async move {
            self.whole(day)?;
            let kept = match positions.is_empty() {
                true => BTreeMap::new(),
                false => self.positions_now().await?,
            };
            self.known(day).await?;
            let sorted = {
                let cache = self.cache();
                let open = cache.state.as_ref().map(|s| s.open.as_str());
                let known = cache
                    .days
                    .get(day)
                    .ok_or_else(|| StoreError::NoDay(day.to_owned()))?;
                sort_out((day, open), known, &kept, lines, positions)?
            };
            let Sorted {
                answers,
                written,
                new_ids,
            } = sorted;
            if written.is_empty() {
                return Ok(answers);
            }
            let texts = written
                .iter()
                .map(canonical)
                .collect::<Result<Vec<_>, _>>()?;
            self.publish_batch(day, &texts).await?;
            let mut cache = self.cache();
            if let Some(ids) = cache.days.get_mut(day) {
                ids.extend(new_ids);
            }
            if let Some(kept) = cache.positions.as_mut() {
                for moved in positions {
                    kept.insert(moved.source.clone(), moved.position.clone());
                }
            }
            Ok(answers)
        })
    }

    fn lines<'a>(&'a self, day: &'a str) -> Step<'a, Vec<String>> {
        Box::pin(async move {
            self.whole(day)?;
            let mut lines = self.journal(day).await?;
            lines.retain(|line| positions_of(line).is_none());
            Ok(lines)
        })
    }

    fn positions(&self) -> Step<'_, BTreeMap<String, String>> {
        Box::pin(async move { self.positions_now().await })
    }

    fn put_record<'a>(&'a self, day: &'a str, record: &'a Value) -> Step<'a, ()> {
        Box::pin(async move {
            self.whole(day)?;
            self.put_file(day, RECORD_PATH, canonical(record)?.into_bytes())
                .await
        })
    }

    fn record<'a>(&'a self, day: &'a str) -> Step<'a, Option<Value>> {
        Box::pin(async move {
            self.whole(day)?;
            self.record_of(day).await
        })
    }

    fn append_log<'a>(&'a self, day: &'a str, log: DayLog, record: &'a Value) -> Step<'a, ()> {
        Box::pin(async move {
            self.whole(day)?;
            self.writable()?;
            let text = canonical(record)?;
            if text.len() > FLEET_RECORD_BYTES_MAX {
                return Err(StoreError::Refused(format!(
                    "a log's record is at most {FLEET_RECORD_BYTES_MAX} bytes"
                )));
            }
            let subject = self.subject(day, log_name(log));
            // Under the fence, as the journal is: an opener whose hold lapsed while it was
            // paused adds nothing after another opened the life.
            let mut fence = self.fence.lock().await;
            self.publish_fenced(&mut fence, subject, Vec::new(), Bytes::from(text))
                .await?;
            Ok(())
        })
    }

    fn log<'a>(&'a self, day: &'a str, log: DayLog) -> Step<'a, Vec<String>> {
        Box::pin(async move {
            self.whole(day)?;
            let messages = self.messages(day, log_name(log)).await?;
            messages
                .iter()
                .map(|m| {
                    String::from_utf8(m.payload.to_vec())
                        .map_err(|e| StoreError::Damaged(e.to_string()))
                })
                .collect()
        })
    }

    fn put_checkpoint<'a>(&'a self, day: &'a str, bytes: &'a [u8]) -> Step<'a, ()> {
        Box::pin(async move {
            self.whole(day)?;
            self.put_file(day, CHECKPOINT_PATH, bytes.to_vec()).await
        })
    }

    fn checkpoint<'a>(&'a self, day: &'a str) -> Step<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            self.whole(day)?;
            self.get_file(day, CHECKPOINT_PATH, CHECKPOINT_BYTES_MAX as usize)
                .await
        })
    }
}
