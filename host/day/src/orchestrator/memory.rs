//! What a run remembers between ticks, and the rules of novelty and of the interruption
//! budget it answers from.
//!
//! It owns [`Memory`] (what was shown, asked, answered, told and when, the interruptions of
//! the past window, what was held back for the digest and what it waits for, whether the
//! morning briefing is due), what in a proposal or in a result is news the person has not been
//! told ([`Fresh`]; a state told on an earlier day, or past its window, is news again), and
//! whether a surface may interrupt once more in its window, and what a day forgets before it
//! hands its memory on ([`Memory::forget`]: what is past [`MEMORY_HORIZON_DAYS`], so that the
//! memory a day carries does not grow with the days lived). It must not choose between
//! proposals (arbitration does) nor record anything.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use aura_contract::catalogue::{NewsSignal, ResultNews};
use aura_contract::envelope::Surface;
use aura_contract::limits::{
    BUDGET_EXEMPT_IMPORTANCE_MIN, CARRIED_MEMORY_KEYS_MAX, EARBUD_TTS_INTERRUPTIONS_PER_WINDOW_MAX,
    INTERRUPTION_WINDOW_MINUTES, MEMORY_HORIZON_DAYS, PHONE_CARD_INTERRUPTIONS_PER_WINDOW_MAX,
    WATCH_INTERRUPTIONS_PER_WINDOW_MAX,
};
use aura_host::Proposal;

use super::questions::Question;

/// Keys and when they were last remembered (shown, held, answered).
pub(super) type Seen = BTreeMap<String, OffsetDateTime>;

/// What a run remembers between ticks (a checkpoint keeps it: [`RunState`]).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Memory {
    /// call_ids and content keys of what was shown or asked, and when.
    #[serde(with = "seen")]
    pub(super) shown: Seen,
    /// Questions waiting for an answer, in the order asked (kept as [`SavedQuestion`]s).
    #[serde(skip)]
    pub(super) pending: Vec<Question>,
    /// call_ids of questions held for quiet hours (traced once), and when.
    #[serde(with = "seen")]
    pub(super) held: Seen,
    /// call_ids of answered (or expired) questions, never asked again, and when.
    #[serde(with = "seen")]
    pub(super) answered: Seen,
    /// News the user has been told, by subject: the highest level told, and when.
    pub(super) told: BTreeMap<String, Told>,
    /// When each interrupting surface interrupted, oldest first (the budget's window).
    pub(super) interruptions: Vec<Interruption>,
    /// Results kept from the user (quiet hours, the budget), oldest first, for the digest.
    pub(super) held_back: Vec<HeldBack>,
    /// The subjects in `held_back`: they wait for the digest and are not news again before.
    pub(super) kept: BTreeSet<String>,
    /// When the last digest was shown.
    #[serde(with = "time::serde::rfc3339::option")]
    pub(super) last_digest: Option<OffsetDateTime>,
    /// The morning briefing is due (quiet hours ended, or a new day began) and not told yet.
    #[serde(default)]
    pub(super) briefing_due: bool,
}

/// An interruption, for the budget.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Interruption {
    pub(super) surface: Surface,
    #[serde(with = "time::serde::rfc3339")]
    pub(super) at: OffsetDateTime,
}

/// What the user was told about a subject.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Told {
    /// The highest level told.
    pub(super) level: u8,
    /// When it was last told.
    #[serde(with = "time::serde::rfc3339")]
    pub(super) at: OffsetDateTime,
}

/// A result the user was not shown, and the news it carried.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HeldBack {
    /// Its news subjects and their levels.
    pub(super) subjects: Vec<(String, u8)>,
    /// The line a digest shows for it (its tool's headline).
    pub(super) summary: String,
    /// When it was held back.
    #[serde(with = "time::serde::rfc3339")]
    pub(super) at: OffsetDateTime,
    /// How much it matters, 0-100: a digest leads with the most important.
    #[serde(default)]
    pub(super) importance: u8,
    /// What it waits for.
    #[serde(default)]
    pub(super) waits: Wait,
    /// The surface it would have been shown on (speech: the watch, its fallback).
    #[serde(default = "phone_card")]
    pub(super) wanted: Surface,
    /// When it stops being news (a state past its retell window, a clash whose events have
    /// ended): a digest after it leaves it out.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub(super) until: Option<OffsetDateTime>,
}

fn phone_card() -> Surface {
    Surface::PhoneCard
}

/// What held-back news waits for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Wait {
    /// The next digest: it was too minor to interrupt, or its agent asked for no interruption.
    #[default]
    Digest,
    /// Only its surface: it would have interrupted but the surface could not (quiet hours, the
    /// budget, something else shown this tick). It leaves at the first tick the phone is free.
    Surface,
}

impl Memory {
    /// The subjects of `proposal`'s news that the user has not been told at their level, and
    /// the most important and most urgent of them. `None` when its tool names no news (the
    /// identity rule alone applies to it).
    pub(super) fn fresh_news(&self, proposal: &Proposal, now: OffsetDateTime) -> Option<Fresh> {
        let rules = proposal.call.spec().news;
        match rules.is_empty() {
            true => None,
            false => Some(self.fresh_in(rules, &proposal.signals, now)),
        }
    }

    /// The news `rules` find in `signals` that the user has not been told (at `now`).
    pub(super) fn fresh_in(
        &self,
        rules: &[NewsSignal],
        signals: &[String],
        now: OffsetDateTime,
    ) -> Fresh {
        let mut fresh = Fresh::default();
        for signal in signals {
            for rule in rules {
                let Some(subject) = rule.subject_of(signal) else {
                    continue;
                };
                let told = self.told.get(&subject).is_some_and(|told| {
                    // In the person's day: `now` is in their offset.
                    let recent = rule
                        .retell
                        .until(told.at.to_offset(now.offset()))
                        .is_none_or(|until| now < until);
                    told.level >= rule.level && recent
                });
                // An item kept for the digest waits for it; a state or a measure kept is news
                // again when it changes (a proposal with other signals), and its newer value
                // takes the older one's place in the digest.
                if told || (rule.keyed && self.kept.contains(&subject)) {
                    continue;
                }
                fresh.importance = fresh.importance.max(rule.importance);
                fresh.urgent |= rule.urgent;
                if !fresh.subjects.iter().any(|(s, _)| *s == subject) {
                    fresh.subjects.push((subject, rule.level));
                }
            }
        }
        fresh
    }

    /// Records that the user has been told `subjects` at their levels at `now`.
    pub(super) fn tell(&mut self, subjects: &[(String, u8)], now: OffsetDateTime) {
        for (subject, level) in subjects {
            let told = self.told.entry(subject.clone()).or_insert(Told {
                level: *level,
                at: now,
            });
            told.level = told.level.max(*level);
            told.at = now;
        }
    }

    /// Keeps `held` for the digest: its subjects wait for it, and an older item about exactly
    /// the same subjects gives way to it (the digest tells the latest state).
    pub(super) fn hold(&mut self, held: HeldBack) {
        let same = |other: &HeldBack| {
            other.subjects.len() == held.subjects.len()
                && other
                    .subjects
                    .iter()
                    .all(|(s, _)| held.subjects.iter().any(|(h, _)| h == s))
        };
        self.held_back.retain(|other| !same(other));
        self.kept
            .extend(held.subjects.iter().map(|(s, _)| s.clone()));
        self.held_back.push(held);
    }

    /// Whether anything held back waits only for `surface` (not for the digest's hour).
    pub(super) fn waits_for(&self, surface: Surface) -> bool {
        self.held_back
            .iter()
            .any(|h| h.waits == Wait::Surface && h.wanted == surface)
    }

    /// Whether any of `subjects`, held back at `since`, has not been told since at its level.
    pub(super) fn untold_since(&self, subjects: &[(String, u8)], since: OffsetDateTime) -> bool {
        subjects.iter().any(|(subject, level)| {
            self.told
                .get(subject)
                .is_none_or(|told| told.level < *level || told.at < since)
        })
    }

    /// Whether `surface` may interrupt once more at `now`: fewer interruptions than its budget
    /// in the past window.
    pub(super) fn within_budget(&self, surface: Surface, now: OffsetDateTime) -> bool {
        if surface == Surface::Silent {
            return true;
        }
        let max = budget(surface);
        let since = now - time::Duration::minutes(INTERRUPTION_WINDOW_MINUTES);
        let used = self
            .interruptions
            .iter()
            .filter(|i| i.surface == surface && i.at > since)
            .count();
        used < max
    }

    /// Forgets what a day after `last_tick` no longer needs, before the memory is handed on:
    /// the interruptions out of the budget's window (the next tick is later still: it would
    /// not count them), and what was shown, held, answered or told more than
    /// [`MEMORY_HORIZON_DAYS`] before; then, of each, the newest
    /// [`CARRIED_MEMORY_KEYS_MAX`]. A subject told longer ago than the horizon is news again
    /// if it comes back, as a state past its retell window is.
    pub(super) fn forget(&mut self, last_tick: OffsetDateTime) {
        let since = last_tick - time::Duration::days(MEMORY_HORIZON_DAYS);
        for seen in [&mut self.shown, &mut self.held, &mut self.answered] {
            seen.retain(|_, at| *at >= since);
            keep_newest(seen, |at| *at);
        }
        self.told.retain(|_, told| told.at >= since);
        keep_newest(&mut self.told, |told| told.at);
        // The budget counts a surface's interruptions in its window against its bound: the
        // newest bound-many of each in the window answer it as all of them do.
        let window = last_tick - time::Duration::minutes(INTERRUPTION_WINDOW_MINUTES);
        let mut newer: std::collections::HashMap<Surface, usize> = Default::default();
        let mut kept: Vec<Interruption> = Vec::new();
        for interruption in self.interruptions.iter().rev() {
            let count = newer.entry(interruption.surface).or_default();
            *count += 1;
            if interruption.at > window && *count <= budget(interruption.surface) {
                kept.push(*interruption);
            }
        }
        kept.reverse();
        self.interruptions = kept;
    }
}

/// How many times `surface` may interrupt in a window (SILENT: never counted).
fn budget(surface: Surface) -> usize {
    match surface {
        Surface::Watch => WATCH_INTERRUPTIONS_PER_WINDOW_MAX,
        Surface::PhoneCard => PHONE_CARD_INTERRUPTIONS_PER_WINDOW_MAX,
        Surface::EarbudTts => EARBUD_TTS_INTERRUPTIONS_PER_WINDOW_MAX,
        Surface::Silent => 0,
    }
}

/// Keeps the newest [`CARRIED_MEMORY_KEYS_MAX`] of `map` (by `at`; of the same time, the
/// keys last in order).
fn keep_newest<V>(map: &mut BTreeMap<String, V>, at: impl Fn(&V) -> OffsetDateTime) {
    let over = map.len().saturating_sub(CARRIED_MEMORY_KEYS_MAX);
    if over == 0 {
        return;
    }
    let mut by_age: Vec<(OffsetDateTime, String)> = map
        .iter()
        .map(|(key, value)| (at(value), key.clone()))
        .collect();
    by_age.sort_unstable();
    for (_, key) in by_age.into_iter().take(over) {
        map.remove(&key);
    }
}

/// [`Seen`] as JSON.
mod seen;

/// `result` with only the items of `news.items` the user has not been told, and those items'
/// news.
pub(super) fn untold_items(
    memory: &Memory,
    news: ResultNews,
    result: &Value,
    now: OffsetDateTime,
) -> (Value, Fresh) {
    let mut fresh = Fresh::default();
    let mut kept = result.clone();
    if let Some(items) = kept.get_mut(news.items).and_then(Value::as_array_mut) {
        let mut untold: Vec<(u8, Value)> = Vec::new();
        for item in std::mem::take(items) {
            // An item's subject is told at level 0: told once is told.
            let subject = (news.subject)(&item);
            let importance = (news.importance)(&item, now);
            // Kept for the digest, it waits, unless it can no longer wait (due soon now).
            let waits = memory.kept.contains(&subject) && importance < BUDGET_EXEMPT_IMPORTANCE_MIN;
            let subject = (subject, 0);
            if memory.told.contains_key(&subject.0) || waits || fresh.subjects.contains(&subject) {
                continue;
            }
            fresh.importance = fresh.importance.max(importance);
            fresh.subjects.push(subject);
            untold.push((importance, item));
        }
        // The card leads with the item that made it important (a stable sort: in the tool's
        // order among equals).
        untold.sort_by_key(|(importance, _)| std::cmp::Reverse(*importance));
        *items = untold.into_iter().map(|(_, item)| item).collect();
    }
    (kept, fresh)
}

/// The news in a proposal that the user has not been told.
#[derive(Debug, Clone, Default)]
pub(super) struct Fresh {
    /// Subjects and the level each is news at, in the order the signals name them.
    pub(super) subjects: Vec<(String, u8)>,
    /// The highest importance among them (0-100).
    pub(super) importance: u8,
    /// Whether any of them is urgent.
    pub(super) urgent: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-23 at `hh:mm` UTC.
    fn at(hh: u8, mm: u8) -> OffsetDateTime {
        time::macros::datetime!(2026-11-23 00:00 UTC)
            + time::Duration::hours(i64::from(hh))
            + time::Duration::minutes(i64::from(mm))
    }

    fn signals(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_budget_is_news_when_it_first_shows_and_again_only_when_it_rises() {
        let rules = aura_contract::catalogue::tool("finance", "budget_status")
            .unwrap()
            .news;
        let mut memory = Memory::default();
        // at_risk: level 1, importance 35 (catalogue/finance.rs); `top:` is no rule's kind.
        let fresh = memory.fresh_in(rules, &signals(&["at_risk:dining/EUR", "top:x"]), at(9, 0));
        assert_eq!(fresh.subjects, [("budget:dining/EUR".to_owned(), 1)]);
        assert_eq!((fresh.importance, fresh.urgent), (35, false));
        memory.tell(&fresh.subjects, at(9, 0));
        // Told at 1: the same state is no news, a count that moved neither.
        let again = memory.fresh_in(rules, &signals(&["at_risk:dining/EUR"]), at(12, 0));
        assert!(again.subjects.is_empty());
        // Over: level 2 > 1, news at importance 60.
        let over = memory.fresh_in(rules, &signals(&["over:dining/EUR"]), at(13, 30));
        assert_eq!(over.subjects, [("budget:dining/EUR".to_owned(), 2)]);
        assert_eq!(over.importance, 60);
        memory.tell(&over.subjects, at(13, 30));
        // Back at risk after over: lower than told, no news; another budget is.
        let both = signals(&["at_risk:dining/EUR", "at_risk:shopping/EUR"]);
        let fresh = memory.fresh_in(rules, &both, at(14, 0));
        assert_eq!(fresh.subjects, [("budget:shopping/EUR".to_owned(), 1)]);
        // Kept for the digest, it waits for the digest.
        memory.kept.insert("budget:shopping/EUR".to_owned());
        assert!(
            memory
                .fresh_in(rules, &both, at(14, 15))
                .subjects
                .is_empty()
        );
    }

    #[test]
    fn a_state_is_told_again_only_an_hour_later() {
        let rules = aura_contract::catalogue::tool("wellness", "stress_score")
            .unwrap()
            .news;
        let mut memory = Memory::default();
        let high = signals(&["stress:82", "level:high"]);
        let fresh = memory.fresh_in(rules, &high, at(14, 0));
        assert_eq!(fresh.subjects, [("stress".to_owned(), 2)]);
        memory.tell(&fresh.subjects, at(14, 0));
        // retell_after(60): 59 minutes later no news, 60 minutes later news again.
        assert!(
            memory
                .fresh_in(rules, &high, at(14, 59))
                .subjects
                .is_empty()
        );
        assert_eq!(memory.fresh_in(rules, &high, at(15, 0)).subjects.len(), 1);
        // A low level is no rule's value: never news.
        let low = signals(&["stress:10", "level:low"]);
        assert!(memory.fresh_in(rules, &low, at(9, 0)).subjects.is_empty());
    }

    #[test]
    fn last_nights_sleep_is_news_again_on_the_persons_next_day() {
        let rules = aura_contract::catalogue::tool("wellness", "sleep_summary")
            .unwrap()
            .news;
        let slept = signals(&["last_night_min:352"]);
        let mut memory = Memory::default();
        let told = time::macros::datetime!(2026-11-23 06:45 +01:00);
        let fresh = memory.fresh_in(rules, &slept, told);
        assert_eq!(fresh.subjects, [("sleep".to_owned(), 0)]);
        memory.tell(&fresh.subjects, told);
        // Told at 06:45: still told at 23:59 the same day, news again at midnight in Berlin,
        // 17 h 15 min later (not 24 hours).
        let late = time::macros::datetime!(2026-11-23 23:59 +01:00);
        assert!(memory.fresh_in(rules, &slept, late).subjects.is_empty());
        let midnight = time::macros::datetime!(2026-11-24 00:00 +01:00);
        assert_eq!(memory.fresh_in(rules, &slept, midnight).subjects.len(), 1);
        // Kept for the digest and not told, a new value is news at once (a night synced after
        // an earlier summary): the digest tells the latest.
        let mut waiting = Memory::default();
        waiting.kept.insert("sleep".to_owned());
        assert_eq!(waiting.fresh_in(rules, &slept, told).subjects.len(), 1);
        // The day is the person's: 23:30 UTC on the 23rd is already the 24th in Berlin.
        let utc =
            time::macros::datetime!(2026-11-23 23:30 UTC).to_offset(time::macros::offset!(+1));
        assert_eq!(memory.fresh_in(rules, &slept, utc).subjects.len(), 1);
    }

    #[test]
    fn a_day_hands_on_a_month_of_memory_and_the_budget_s_window() {
        use time::macros::datetime;
        let last = datetime!(2026-12-01 23:45 +01:00);
        let mut memory = Memory::default();
        // The horizon, 31 days before the last tick: 2026-10-31 23:45 +01:00.
        let edge = datetime!(2026-10-31 23:45 +01:00);
        memory.shown.insert("kept-at-edge".into(), edge);
        memory
            .shown
            .insert("gone".into(), edge - time::Duration::minutes(1));
        memory
            .held
            .insert("held-old".into(), datetime!(2026-10-01 22:00 +02:00));
        memory
            .answered
            .insert("answered".into(), datetime!(2026-11-20 9:00 +01:00));
        memory.tell(
            &[("transaction:old".into(), 0)],
            datetime!(2026-10-30 12:00 +01:00),
        );
        memory.tell(
            &[("transaction:new".into(), 0)],
            datetime!(2026-11-30 12:00 +01:00),
        );
        let interruption = |surface, at| Interruption { surface, at };
        memory.interruptions = vec![
            // Out of the window (it begins after 22:45).
            interruption(Surface::Watch, datetime!(2026-12-01 22:45 +01:00)),
            interruption(Surface::PhoneCard, datetime!(2026-12-01 23:00 +01:00)),
            interruption(Surface::PhoneCard, datetime!(2026-12-01 23:10 +01:00)),
            interruption(Surface::EarbudTts, datetime!(2026-12-01 23:15 +01:00)),
            interruption(Surface::PhoneCard, datetime!(2026-12-01 23:20 +01:00)),
        ];
        let before = memory.clone();
        memory.forget(last);
        assert_eq!(memory.shown.keys().collect::<Vec<_>>(), ["kept-at-edge"]);
        assert!(memory.held.is_empty());
        assert_eq!(memory.answered.len(), 1);
        assert_eq!(memory.told.keys().collect::<Vec<_>>(), ["transaction:new"]);
        // PHONE_CARD's budget is 2: its newest two in the window; EARBUD_TTS's one.
        let at: Vec<_> = memory
            .interruptions
            .iter()
            .map(|i| (i.surface, i.at))
            .collect();
        assert_eq!(
            at,
            [
                (Surface::PhoneCard, datetime!(2026-12-01 23:10 +01:00)),
                (Surface::EarbudTts, datetime!(2026-12-01 23:15 +01:00)),
                (Surface::PhoneCard, datetime!(2026-12-01 23:20 +01:00)),
            ]
        );
        // Every later tick's budget answers as it did with all of them.
        for minutes in [0, 15, 25, 30, 35, 60, 90] {
            let now = last + time::Duration::minutes(minutes);
            for surface in [Surface::Watch, Surface::PhoneCard, Surface::EarbudTts] {
                assert_eq!(
                    memory.within_budget(surface, now),
                    before.within_budget(surface, now),
                    "{surface:?} at {now}"
                );
            }
        }
        // Past the count bound, the newest stay.
        let mut flood = Memory::default();
        for i in 0..CARRIED_MEMORY_KEYS_MAX + 3 {
            let at = last - time::Duration::seconds(i as i64);
            flood.shown.insert(format!("k{i:05}"), at);
        }
        flood.forget(last);
        assert_eq!(flood.shown.len(), CARRIED_MEMORY_KEYS_MAX);
        for oldest in ["k20000", "k20001", "k20002"] {
            assert!(!flood.shown.contains_key(oldest));
        }
        assert!(flood.shown.contains_key("k19999"));
    }

    #[test]
    fn the_budget_counts_the_past_hour_per_surface() {
        let mut memory = Memory {
            interruptions: vec![
                Interruption {
                    surface: Surface::PhoneCard,
                    at: at(10, 0),
                },
                Interruption {
                    surface: Surface::Watch,
                    at: at(10, 10),
                },
                Interruption {
                    surface: Surface::PhoneCard,
                    at: at(10, 30),
                },
            ],
            ..Memory::default()
        };
        // PHONE_CARD allows 2 in any 60 minutes: both count at 10:59; at 11:00 the one of
        // 10:00 is out of the window (exactly 60 minutes old).
        assert!(!memory.within_budget(Surface::PhoneCard, at(10, 59)));
        assert!(memory.within_budget(Surface::PhoneCard, at(11, 0)));
        // WATCH allows 3; one was used. SILENT has no budget.
        assert!(memory.within_budget(Surface::Watch, at(10, 59)));
        assert!(memory.within_budget(Surface::Silent, at(10, 59)));
        // EARBUD_TTS allows 1, none used.
        memory.interruptions.push(Interruption {
            surface: Surface::EarbudTts,
            at: at(10, 45),
        });
        assert!(!memory.within_budget(Surface::EarbudTts, at(11, 44)));
        assert!(memory.within_budget(Surface::EarbudTts, at(11, 45)));
    }

    #[test]
    fn a_card_keeps_only_the_untold_items_and_leads_with_the_most_important() {
        let news = aura_contract::catalogue::tool("finance", "detect_anomalies")
            .unwrap()
            .news_in_result
            .unwrap();
        let flagged = |id: &str, reason: &str| serde_json::json!({"id": id, "reasons": [reason]});
        let result = serde_json::json!({"flagged": [flagged("tx-dup", "duplicate"),
            flagged("tx-big", "unusually_large")], "evaluated": 9});
        let mut memory = Memory::default();
        // Both untold: unusually_large (90) before duplicate (65).
        let (card, fresh) = untold_items(&memory, news, &result, at(20, 45));
        assert_eq!(card["flagged"][0]["id"], "tx-big");
        assert_eq!(card["flagged"][1]["id"], "tx-dup");
        assert_eq!(fresh.importance, 90);
        // The duplicate was told at 17:45: only the large charge is on the card.
        memory.tell(&[("transaction:tx-dup".to_owned(), 0)], at(17, 45));
        let (card, fresh) = untold_items(&memory, news, &result, at(20, 45));
        assert_eq!(
            card["flagged"],
            serde_json::json!([flagged("tx-big", "unusually_large")])
        );
        assert_eq!(fresh.subjects, [("transaction:tx-big".to_owned(), 0)]);
        assert_eq!(card["evaluated"], 9, "the rest of the result is kept");
    }
}
