//! What a day hands the next: the world as the agents see it and the orchestrator's memory, as
//! the next day's scenario.v1 `initial`, and reading that memory back when a carried day
//! begins.
//!
//! It owns [`Carry`] and [`Carried`] and the bounds of what is carried (the world's, in
//! [`crate::scenario::World::carried`]). It must not decide when a day closes (the live
//! session does) nor write anything.

use serde_json::Value;
use time::format_description::well_known::Rfc3339;

use aura_host::Host;

use super::Day;
use super::memory::Memory;
use super::state::{SavedQuestion, restore_questions, saved_questions};
use crate::scenario::start_of_day;

/// What a day hands the next.
#[derive(Debug, Clone)]
pub struct Carry {
    /// The next day's scenario.v1 `initial`: the world as the agents see it and the
    /// orchestrator's memory.
    pub initial: Value,
    /// Events and invitations not over that did not fit the next day's bounds
    /// ([`aura_contract::limits::CARRIED_EVENTS_MAX`]): the caller records them.
    pub left_out: Vec<Value>,
}

/// What a day carries into the next besides its world (scenario.v1 `initial.memory`): the
/// orchestrator's memory with its pending questions, whether the last tick was in quiet hours
/// and when it ran (so the next day's first tick knows whether a night ended or a day began).
pub(super) struct Carried {
    pub(super) memory: Memory,
    pub(super) was_quiet: bool,
    pub(super) last_tick: Option<time::OffsetDateTime>,
}

/// The fields of `initial.memory` that are not [`Memory`]'s own.
const CARRIED_FIELDS: [&str; 3] = ["pending", "was_quiet", "last_tick"];

impl Carried {
    /// `initial.memory` as a next day's scenario writes it.
    pub(super) fn save(
        memory: &Memory,
        was_quiet: bool,
        last_tick: Option<time::OffsetDateTime>,
    ) -> Value {
        // Strings, integers, times as RFC 3339: always serializes.
        let mut value = serde_json::to_value(memory).unwrap_or_default();
        let last_tick = last_tick.and_then(|at| at.format(&Rfc3339).ok());
        if let Some(object) = value.as_object_mut() {
            object.insert(
                "pending".to_owned(),
                serde_json::to_value(saved_questions(memory)).unwrap_or_default(),
            );
            object.insert("was_quiet".to_owned(), Value::Bool(was_quiet));
            object.insert("last_tick".to_owned(), last_tick.into());
        }
        value
    }

    /// Reads `initial.memory` back (the scenario's schema checked its shape); each pending
    /// question's call passes the crossing again.
    pub(super) fn restore(value: &Value, host: &Host) -> Result<Self, String> {
        let mut own = value.clone();
        let object = own
            .as_object_mut()
            .ok_or_else(|| "the memory is not an object".to_owned())?;
        let mut taken = CARRIED_FIELDS.map(|field| object.remove(field).unwrap_or(Value::Null));
        let [pending, was_quiet, last_tick] = &mut taken;
        let mut memory: Memory =
            serde_json::from_value(own).map_err(|e| format!("the memory: {e}"))?;
        let pending: Vec<SavedQuestion> = serde_json::from_value(pending.take())
            .map_err(|e| format!("the pending questions: {e}"))?;
        restore_questions(pending, host, &mut memory)?;
        let last_tick = match last_tick.as_str() {
            Some(at) => Some(
                time::OffsetDateTime::parse(at, &Rfc3339)
                    .map_err(|e| format!("the last tick `{at}`: {e}"))?,
            ),
            None => None,
        };
        Ok(Self {
            memory,
            was_quiet: was_quiet.as_bool().unwrap_or(false),
            last_tick,
        })
    }
}

impl Day<'_> {
    /// What this day hands the next, as it stands after its last tick: the world as the
    /// agents see it (events and invitations not over by the start of the person's day the
    /// last tick was in) and the orchestrator's memory, less what it forgets at the day's end
    /// (`Memory::forget`).
    pub(crate) fn carry(&self) -> Carry {
        let last = self.last_tick.or(self.carried_last_tick);
        let since = start_of_day(&self.scenario, last.unwrap_or(self.scenario.start));
        let (mut initial, left_out) = self.world.carried(since);
        let mut memory = self.memory.clone();
        if let Some(last) = last {
            memory.forget(last);
        }
        initial["memory"] = Carried::save(&memory, self.was_quiet, last);
        Carry { initial, left_out }
    }
}
