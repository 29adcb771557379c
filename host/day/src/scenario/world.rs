//! The world a scenario's signals describe: what happened so far, applied in time order, the
//! bounded context each tick's agents receive, and what of it a day carries into the next.
//!
//! It owns [`World`]. It must not read a scenario file (the scenario module does) nor decide
//! anything (the orchestrator does, and tells the world what executed calls changed).

use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use aura_contract::catalogue::Effect;
use aura_contract::limits::{
    CARRIED_EVENTS_MAX, CARRIED_INVITATIONS_MAX, CONTEXT_MESSAGES_MAX, CONTEXT_SLEEP_SESSIONS_MAX,
    CONTEXT_TRANSACTIONS_MAX,
};

use super::{Answer, INVITATION, Scenario};

/// The state the signals so far describe. Agents never see it whole: each tick gets a
/// bounded snapshot ([`World::context`]). A run's checkpoint keeps it whole, so its lists of
/// what only the latest matter of (messages, transactions, sleep sessions) hold at most twice
/// their context bound ([`keep_latest`]): a day's checkpoint, written after every tick, does
/// not grow with the day's signals nor with the history a day starts from.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct World {
    messages: Vec<Value>,
    events: Vec<Value>,
    transactions: Vec<Value>,
    readings: Map<String, Value>,
    sleep_sessions: Vec<Value>,
    invitations: Vec<Value>,
    next_signal: usize,
}

impl World {
    /// The world a scenario's `initial` describes, before its first tick.
    pub(super) fn initial(initial: &Value) -> Self {
        let list = |name: &str| initial[name].as_array().cloned().unwrap_or_default();
        Self {
            messages: latest(&list("messages"), CONTEXT_MESSAGES_MAX).to_vec(),
            events: list("events"),
            transactions: latest(&list("transactions"), CONTEXT_TRANSACTIONS_MAX).to_vec(),
            readings: initial["readings"].as_object().cloned().unwrap_or_default(),
            sleep_sessions: latest(&list("sleep_sessions"), CONTEXT_SLEEP_SESSIONS_MAX).to_vec(),
            invitations: list("invitations"),
            next_signal: 0,
        }
    }

    /// Applies every signal up to and including `now`; returns the answers among them, in
    /// order, for the orchestrator.
    pub fn advance(&mut self, scenario: &Scenario, now: OffsetDateTime) -> Vec<Answer> {
        let mut answers = Vec::new();
        while let Some(signal) = scenario.signals.get(self.next_signal) {
            if signal.at > now {
                break;
            }
            self.next_signal += 1;
            let data = &signal.data;
            match signal.kind.as_str() {
                "message" => keep_latest(&mut self.messages, data, CONTEXT_MESSAGES_MAX),
                "event" => {
                    self.events.retain(|e| e["id"] != data["id"]);
                    self.events.push(data.clone());
                }
                "cancel_event" => self.events.retain(|e| e["id"] != data["id"]),
                "transaction" => {
                    keep_latest(&mut self.transactions, data, CONTEXT_TRANSACTIONS_MAX);
                }
                "reading" => {
                    for (field, value) in data.as_object().into_iter().flatten() {
                        self.readings.insert(field.clone(), value.clone());
                    }
                }
                "sleep_session" => {
                    keep_latest(&mut self.sleep_sessions, data, CONTEXT_SLEEP_SESSIONS_MAX);
                }
                "invitation" => {
                    self.invitations.retain(|i| i["id"] != data["id"]);
                    self.invitations.push(data.clone());
                }
                "answer" => answers.push(Answer::of(data)),
                // The person's clock, read from the signals by `Scenario::offset`; and the
                // schema admits no other kind.
                _ => {}
            }
        }
        answers
    }

    /// Signals applied so far.
    pub fn signals_applied(&self) -> usize {
        self.next_signal
    }

    /// The user's calendar events so far, in the order they were added.
    pub fn events(&self) -> &[Value] {
        &self.events
    }

    /// The user's latest messages, oldest first: at least the [`CONTEXT_MESSAGES_MAX`] latest
    /// (every message a tick's agents can have named), at most twice as many.
    pub fn messages(&self) -> &[Value] {
        &self.messages
    }

    /// The user's pending items of `kind`, as the scenario gave them (each with an `id`): what
    /// a question can be about.
    pub fn pending(&self, kind: &str) -> &[Value] {
        match kind {
            INVITATION => &self.invitations,
            _ => &[],
        }
    }

    /// The user answered the question about `item` (`<kind>:<id>`): an invitation is no longer
    /// pending, whatever the answer.
    pub fn answered(&mut self, item: &str) {
        if let Some(id) = item
            .strip_prefix(INVITATION)
            .and_then(|rest| rest.strip_prefix(':'))
        {
            self.invitations.retain(|i| i["id"] != id);
        }
    }

    /// The world a next day starts from (scenario.v1 `initial`, without the orchestrator's
    /// memory): what the agents' contexts would hold of it, that is the latest messages,
    /// transactions and sleep sessions, the readings, and the events and invitations that are
    /// not over by `since` (the start of the person's day the last tick was in: what ended
    /// before it is no one's today or future). At most [`CARRIED_EVENTS_MAX`] events and
    /// [`CARRIED_INVITATIONS_MAX`] invitations, the ones ending soonest: what does not fit is
    /// returned apart, for the caller to record, never dropped unsaid.
    pub fn carried(&self, since: OffsetDateTime) -> (Value, Vec<Value>) {
        let (events, mut left_out) = soonest(current(&self.events, since), CARRIED_EVENTS_MAX);
        let (invitations, more) =
            soonest(current(&self.invitations, since), CARRIED_INVITATIONS_MAX);
        left_out.extend(more);
        let mut initial = json!({
            "events": events,
            "transactions": latest(&self.transactions, CONTEXT_TRANSACTIONS_MAX),
            "sleep_sessions": latest(&self.sleep_sessions, CONTEXT_SLEEP_SESSIONS_MAX),
            "messages": latest(&self.messages, CONTEXT_MESSAGES_MAX),
            "invitations": invitations,
        });
        if !self.readings.is_empty() {
            initial["readings"] = Value::Object(self.readings.clone());
        }
        (initial, left_out)
    }

    /// Applies what a call the user confirmed changed (from the tool's catalogue entry).
    pub fn apply(&mut self, effect: Effect) {
        match effect {
            Effect::AddEvent(event) => {
                self.events.retain(|e| e["id"] != event["id"]);
                self.events.push(event);
            }
        }
    }

    /// The context snapshot every agent's tick receives at `now`.
    pub fn context(&self, scenario: &Scenario, now: OffsetDateTime) -> Value {
        // Today's and coming: what ended before the person's day began is no one's now.
        let today = start_of_day(scenario, now);
        json!({
            "now": scenario.format(now),
            "utc_offset_minutes": scenario.offset_minutes(now),
            "profile": scenario.profile,
            "messages": latest(&self.messages, CONTEXT_MESSAGES_MAX),
            "events": current(&self.events, today),
            "transactions": latest(&self.transactions, CONTEXT_TRANSACTIONS_MAX),
            "readings": self.readings,
            "sleep_sessions": latest(&self.sleep_sessions, CONTEXT_SLEEP_SESSIONS_MAX),
            "invitations": current(&self.invitations, today),
        })
    }
}

/// Appends `item` to `items`, of which only the latest `max` are ever read: past twice that,
/// the older ones are dropped at once (amortized, each item is moved at most once), so the
/// latest `max` are always there and the list never holds more than `2 × max`.
fn keep_latest(items: &mut Vec<Value>, item: &Value, max: usize) {
    items.push(item.clone());
    if items.len() > 2 * max {
        items.drain(..items.len() - max);
    }
}

/// The latest `max` of `items`.
fn latest(items: &[Value], max: usize) -> &[Value] {
    &items[items.len().saturating_sub(max)..]
}

/// An event's or invitation's end (the schema checked it as a date-time).
fn end(item: &Value) -> Option<OffsetDateTime> {
    item["end"]
        .as_str()
        .and_then(|end| OffsetDateTime::parse(end, &Rfc3339).ok())
}

/// The events or invitations not over by `since`: their end is at or after it (an end that
/// does not parse counts as not over, which the schema makes never).
fn current(items: &[Value], since: OffsetDateTime) -> Vec<Value> {
    items
        .iter()
        .filter(|item| end(item).is_none_or(|end| end >= since))
        .cloned()
        .collect()
}

/// `items` within `max`: the ones ending soonest stay (ties: the order they came in), and the
/// rest is returned apart; both in the order they came in.
fn soonest(items: Vec<Value>, max: usize) -> (Vec<Value>, Vec<Value>) {
    if items.len() <= max {
        return (items, Vec::new());
    }
    let mut ranked: Vec<(Option<OffsetDateTime>, usize, Value)> = items
        .into_iter()
        .enumerate()
        .map(|(i, item)| (end(&item), i, item))
        .collect();
    ranked.sort_by_key(|(end, i, _)| (*end, *i));
    let over = ranked.split_off(max);
    let in_order = |mut items: Vec<(Option<OffsetDateTime>, usize, Value)>| -> Vec<Value> {
        items.sort_by_key(|(_, i, _)| *i);
        items.into_iter().map(|(_, _, item)| item).collect()
    };
    (in_order(ranked), in_order(over))
}

/// The start of the person's day `at` is in: their local midnight.
pub(crate) fn start_of_day(scenario: &Scenario, at: OffsetDateTime) -> OffsetDateTime {
    scenario.local(at).replace_time(time::Time::MIDNIGHT)
}
