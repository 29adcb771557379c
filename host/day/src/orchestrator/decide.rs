//! One tick's decisions as they are made: each carried out, recorded as a reasoning trace
//! (checked against trace.v1, durable), then reported.
//!
//! It owns what a decision does (a chosen call run as the checked call it already is, a
//! question asked, an answer carried out or declined, a digest of what was held back), what the
//! person has then been told, and the trace of it. It must not choose (arbitration did) nor
//! read the machine's clock.

use serde_json::Value;
use time::OffsetDateTime;

use aura_contract::catalogue::Telling;
use aura_contract::envelope::Surface;
use aura_contract::limits::{INTERRUPT_IMPORTANCE_MIN, QUESTION_EXPIRY_MINUTES};
use aura_contract::trace::{
    Decision, Moved, Outcome, RationaleFacts, Status, Trace, TracedAnswer, TracedCall, rationale,
    unplaced_answer_rationale,
};
use aura_contract::visible::visible;
use aura_host::{CallRequest, Host, Proposal};

use super::arbitrate::{Choice, content_key};
use super::memory::{Fresh, HeldBack, Interruption, Memory, Wait, untold_items};
use super::questions::{Question, questions_answered, traced};
use super::summary::RunSummary;
use super::{RunError, RunEvent};
use crate::scenario::{Answer, Reply, Scenario, World};

/// One tick's decisions as they are made.
pub(super) struct TickRun<'a> {
    pub(super) host: &'a Host,
    pub(super) scenario: &'a Scenario,
    pub(super) run: &'a str,
    pub(super) seed: u64,
    pub(super) index: usize,
    pub(super) now: OffsetDateTime,
    pub(super) at: &'a str,
    pub(super) decisions: usize,
    /// The interrupting surfaces something was shown on (or kept for) this tick: one
    /// interruption per surface per tick, whatever kind of decision it is.
    pub(super) taken: Vec<Surface>,
}

impl TickRun<'_> {
    /// Resolves the user's answer: it is about an item, and runs the one pending question the
    /// host bound to that item (confirm runs the call, decline drops it). An answer that
    /// matches no question, or several, runs nothing and is traced as such.
    pub(super) async fn answer(
        &mut self,
        answer: &Answer,
        world: &mut World,
        memory: &mut Memory,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        let questions = questions_answered(&memory.pending, answer);
        let reached = match questions[..] {
            [found] => memory.pending.get(found),
            _ => None,
        };
        let traced = traced(answer, reached);
        if let (
            Answer::Question {
                reply: Reply::Later,
                ..
            },
            [found],
        ) = (answer, &questions[..])
        {
            // Not now: the question stays pending, its time to expire counted from now.
            memory.pending[*found].asked_at = self.now;
            summary.answers_later += 1;
            return Ok(());
        }
        let [found] = questions[..] else {
            match questions.len() {
                0 => summary.answers_unmatched += 1,
                _ => summary.answers_ambiguous += 1,
            }
            tracing::warn!(
                item = %visible(&traced.item),
                questions = questions.len(),
                "answer matches no single pending question"
            );
            return self.record_unplaced(traced, questions.len(), summary, report);
        };
        let question = memory.pending.remove(found);
        memory
            .answered
            .insert(question.proposal.call.call().call_id.clone(), self.now);
        if let Some(item) = &question.about {
            world.answered(item);
        }
        let choice = Choice {
            proposal: question.proposal,
            decision: match traced.confirm {
                true => Decision::Confirmed,
                false => Decision::Declined,
            },
            requested: question.surface,
            surface: question.surface,
            beaten: Vec::new(),
            about: question.about,
            answer: Some(traced),
            fresh: None,
            moved: None,
        };
        self.decide(choice, world, memory, summary, report).await
    }

    /// Expires the pending questions no answer came to in time ([`QUESTION_EXPIRY_MINUTES`],
    /// or what they ask about has started): each is traced, never run, and waits for the
    /// digest.
    pub(super) async fn expire(
        &mut self,
        world: &mut World,
        memory: &mut Memory,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        let now = self.now;
        let expired = |q: &Question| {
            let waited = now - q.asked_at >= time::Duration::minutes(QUESTION_EXPIRY_MINUTES);
            let moot = q.proposal.call.spec().about.is_some_and(|about| {
                (about.moot_at)(&q.proposal.call.call().args).is_some_and(|at| at <= now)
            });
            waited || moot
        };
        let (gone, pending): (Vec<Question>, Vec<Question>) = std::mem::take(&mut memory.pending)
            .into_iter()
            .partition(expired);
        memory.pending = pending;
        for question in gone {
            memory
                .answered
                .insert(question.proposal.call.call().call_id.clone(), now);
            let choice = Choice {
                proposal: question.proposal,
                decision: Decision::Expired,
                requested: question.surface,
                surface: Surface::Silent,
                beaten: Vec::new(),
                about: question.about,
                answer: None,
                fresh: None,
                moved: None,
            };
            self.decide(choice, world, memory, summary, report).await?;
        }
        Ok(())
    }

    /// Records an answer that matched `questions` pending questions (none, or several).
    fn record_unplaced(
        &mut self,
        answer: TracedAnswer,
        questions: usize,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        let decision = match questions {
            0 => Decision::AnswerUnmatched,
            _ => Decision::AnswerAmbiguous,
        };
        let outcome = Outcome::answer_unresolved(questions);
        // Said on the phone, unless something else was shown there this tick.
        let surface = match self.taken.contains(&Surface::PhoneCard) {
            true => Surface::Silent,
            false => Surface::PhoneCard,
        };
        if surface != Surface::Silent {
            self.taken.push(surface);
        }
        let trace = Trace {
            signals: vec![answer.item.clone()],
            rationale: unplaced_answer_rationale(&answer, questions),
            answer: Some(answer),
            surface,
            ..self.trace(decision, outcome)
        };
        self.record(trace, summary, report)
    }

    /// The next trace of this tick, with `decision` and `outcome`, about no call: the caller
    /// fills in the rest.
    pub(super) fn trace(&mut self, decision: Decision, outcome: Outcome) -> Trace {
        Trace {
            trace_id: self.next_trace_id(),
            run: self.run.to_owned(),
            scenario: self.scenario.name.clone(),
            seed: self.seed,
            tick: self.index,
            at: self.at.to_owned(),
            decision,
            call: None,
            proposed_by: None,
            about: None,
            answer: None,
            signals: Vec::new(),
            priority: 0,
            requested_surface: Surface::PhoneCard,
            surface: Surface::PhoneCard,
            rationale: String::new(),
            outcome,
            fuel_used: 0,
            not_chosen: Vec::new(),
        }
    }

    /// `tr_<tick>_<n>`, the next decision of this tick.
    fn next_trace_id(&mut self) -> String {
        let id = format!("tr_{:05}_{:03}", self.index, self.decisions);
        self.decisions += 1;
        id
    }

    /// Records a trace (checked against trace.v1, durable), then reports it.
    pub(super) fn record(
        &mut self,
        trace: Trace,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        self.host.record_trace(&trace)?;
        summary.decisions += 1;
        report(RunEvent::Decision(&trace));
        Ok(())
    }

    /// Carries out one decision, records its trace, then reports it.
    pub(super) async fn decide(
        &mut self,
        mut choice: Choice,
        world: &mut World,
        memory: &mut Memory,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        let spec = choice.proposal.call.spec();
        // Texts for the user: in their offset, about their calendar as it is now.
        let news: Vec<String> = choice
            .fresh
            .as_ref()
            .map(|fresh| fresh.subjects.iter().map(|(s, _)| s.clone()).collect())
            .unwrap_or_default();
        let telling = Telling {
            clock: Some((self.scenario.offset(self.now), self.now)),
            events: world.events(),
            messages: world.messages(),
            news: &news,
        };
        let mut failure = None;
        let (outcome, fuel_used) = match choice.decision {
            Decision::Executed | Decision::Confirmed => {
                let call = choice.proposal.call.call();
                memory.shown.insert(call.call_id.clone(), self.now);
                memory.shown.insert(content_key(&choice.proposal), self.now);
                // The answer to the person's yes waits for the next tick when something else
                // was shown on its surface in this one.
                if self.taken.contains(&choice.surface) {
                    choice.surface = Surface::Silent;
                    choice.moved = Some(Moved::Busy);
                }
                let confirmed = choice.decision == Decision::Confirmed;
                let (outcome, fuel_used, result, failed) =
                    self.execute(&choice.proposal, confirmed, &telling).await;
                failure = failed;
                let outcome = self.tell(
                    &mut choice,
                    outcome,
                    result.as_ref(),
                    memory,
                    summary,
                    &telling,
                );
                summary.call_fuel += fuel_used;
                if choice.decision == Decision::Confirmed {
                    summary.confirmed += 1;
                    let effect = spec.on_confirm.zip(result).and_then(|(f, r)| f(&r));
                    if let Some(effect) = effect {
                        world.apply(effect);
                    }
                }
                (outcome, fuel_used)
            }
            Decision::Asked => {
                memory.pending.push(Question {
                    proposal: choice.proposal.clone(),
                    surface: choice.surface,
                    about: choice.about.clone(),
                    asked_at: self.now,
                });
                summary.asked += 1;
                let call = choice.proposal.call.call();
                let question = spec.question_text(&call.args, &telling);
                (Outcome::pending(question), 0)
            }
            Decision::Declined => {
                summary.declined += 1;
                (Outcome::declined(), 0)
            }
            Decision::Held => {
                summary.held += 1;
                (Outcome::held(), 0)
            }
            Decision::Expired => {
                summary.expired += 1;
                let call = choice.proposal.call.call();
                let asked = spec.question_text(&call.args, &telling);
                // What was asked, without the answers it offered.
                let question = asked.trim_end_matches(" (yes / no)").to_owned();
                // The next digest tells it: what was asked, and that nothing was done.
                let subject = (format!("question:{}", call.call_id), 0);
                memory.hold(HeldBack {
                    subjects: vec![subject],
                    summary: format!("No answer to: {question}"),
                    at: self.now,
                    importance: choice.proposal.priority,
                    waits: Wait::Digest,
                    wanted: Surface::PhoneCard,
                    until: None,
                });
                (Outcome::expired(&question), 0)
            }
            // Answers that reach no single question never come here (`record_unplaced`), nor
            // digests (`digest`).
            Decision::AnswerUnmatched | Decision::AnswerAmbiguous => {
                (Outcome::answer_unresolved(0), 0)
            }
            Decision::Digest => (Outcome::digest("", &[]), 0),
        };
        if choice.surface != Surface::Silent {
            self.taken.push(choice.surface);
        }
        let trace = self.decision_trace(choice, outcome, fuel_used, failure.as_deref());
        self.record(trace, summary, report)
    }

    /// The trace of a decision carried out: the call, what drove it, where it was shown and
    /// why, what it beat, and its rationale.
    fn decision_trace(
        &mut self,
        choice: Choice,
        outcome: Outcome,
        fuel_used: u64,
        failure: Option<&str>,
    ) -> Trace {
        let Choice {
            proposal,
            decision,
            requested,
            surface,
            beaten,
            about,
            answer,
            fresh,
            moved,
        } = choice;
        let call = proposal.call.call();
        let news: Vec<String> = fresh
            .as_ref()
            .map(|f| f.subjects.iter().map(|(s, _)| s.clone()).collect())
            .unwrap_or_default();
        let rationale = rationale(&RationaleFacts {
            lead: proposal.call.spec().rationale_lead,
            agent: &call.agent,
            tool: &call.tool,
            signals: &proposal.signals,
            priority: proposal.priority,
            decision,
            requested,
            surface,
            beaten: beaten.len(),
            moved,
            news: &news,
            failure,
        });
        Trace {
            call: Some(TracedCall {
                call_id: call.call_id.clone(),
                agent: call.agent.clone(),
                tool: call.tool.clone(),
                confirm_required: proposal.call.needs_confirmation(),
            }),
            proposed_by: Some(proposal.proposed_by.to_owned()),
            about,
            answer,
            signals: proposal.signals.clone(),
            priority: proposal.priority,
            requested_surface: requested,
            surface,
            rationale,
            fuel_used,
            not_chosen: beaten,
            ..self.trace(decision, outcome)
        }
    }

    /// What a call that ran tells the person, and what they have now been told: for a tool
    /// whose news is in its answer, only the items they had not been told (nothing new:
    /// recorded, not shown); then the words for the surface it went to (its card, or its
    /// headline on the watch and in the earbuds). Told means delivered: news shown on an
    /// interrupting surface is told; news recorded SILENT (quiet hours, the budget, a busy
    /// tick, too minor, or its agent's wish) is kept for the digest, and so is the outcome of
    /// a yes that could not be shown this tick.
    fn tell(
        &self,
        shown: &mut Choice,
        outcome: Outcome,
        result: Option<&Value>,
        memory: &mut Memory,
        summary: &mut RunSummary,
        telling: &Telling<'_>,
    ) -> Outcome {
        let spec = shown.proposal.call.spec();
        let mut card = result.cloned();
        if let (Some(news), Some(result)) = (spec.news_in_result, result) {
            let (told, untold) = untold_items(memory, news, result, self.now);
            if untold.subjects.is_empty() {
                if shown.surface != Surface::Silent {
                    shown.surface = Surface::Silent;
                    shown.moved = Some(Moved::NothingNew);
                }
            } else {
                if untold.importance < INTERRUPT_IMPORTANCE_MIN && shown.surface != Surface::Silent
                {
                    shown.surface = Surface::Silent;
                    shown.moved = Some(Moved::Minor);
                }
                // The card tells only what is new, leading with it.
                card = Some(told);
            }
            let fresh = shown.fresh.get_or_insert_with(Fresh::default);
            fresh.importance = fresh.importance.max(untold.importance);
            for subject in untold.subjects {
                if !fresh.subjects.contains(&subject) {
                    fresh.subjects.push(subject);
                }
            }
        }
        let (Status::Ok, Some(card)) = (outcome.status, card) else {
            summary.calls_failed += 1;
            return outcome;
        };
        let outcome = Outcome::shown(spec, &card, telling, shown.surface);
        summary.shown.add(shown.surface);
        let delivered = shown.surface != Surface::Silent;
        if delivered {
            memory.interruptions.push(Interruption {
                surface: shown.surface,
                at: self.now,
            });
        }
        // The line a digest would show for it.
        let line = || Outcome::shown(spec, &card, telling, Surface::Watch).summary;
        let waits = match shown.moved {
            Some(Moved::QuietHours | Moved::Budget | Moved::Busy) => Wait::Surface,
            _ => Wait::Digest,
        };
        // Speech is never replayed: what the earbuds could not say waits for the watch.
        let wanted = match shown.requested {
            Surface::EarbudTts => Surface::Watch,
            other => other,
        };
        match shown.fresh.as_ref() {
            Some(fresh) if delivered => memory.tell(&fresh.subjects, self.now),
            Some(fresh) if !fresh.subjects.is_empty() => {
                let ends = spec.ends.and_then(|ends| ends(&card, telling));
                let until = [news_until(spec, &fresh.subjects, self.now), ends]
                    .into_iter()
                    .flatten()
                    .min();
                memory.hold(HeldBack {
                    subjects: fresh.subjects.clone(),
                    summary: line(),
                    at: self.now,
                    importance: fresh.importance,
                    waits,
                    wanted,
                    until,
                });
            }
            Some(_) => {}
            // The outcome of the person's yes, kept from them this tick: the next digest.
            None if shown.decision == Decision::Confirmed && !delivered => {
                let call_id = &shown.proposal.call.call().call_id;
                memory.hold(HeldBack {
                    subjects: vec![(format!("outcome:{call_id}"), 0)],
                    summary: line(),
                    at: self.now,
                    importance: shown.proposal.priority,
                    waits,
                    wanted,
                    until: None,
                });
            }
            None => {}
        }
        outcome
    }

    /// Runs a chosen call: it passed the crossing when it was proposed, so it runs as it is
    /// (its answer is checked now); `confirmed` when the person said yes to it (a worker that
    /// runs it gets the host's proof of that yes). The outcome (as a card; `tell` puts it in
    /// its surface's words), the fuel burned, the result if any, and what went wrong if it
    /// failed.
    async fn execute(
        &self,
        proposal: &Proposal,
        confirmed: bool,
        telling: &Telling<'_>,
    ) -> (Outcome, u64, Option<Value>, Option<String>) {
        let request = CallRequest::new(&proposal.call).confirmed(confirmed);
        let dispatched = self.host.dispatch(request).await;
        match dispatched {
            Ok(result) => match (result.result, result.error) {
                (Some(value), _) => (
                    Outcome::ok(proposal.call.spec(), &value, telling),
                    result.fuel_used,
                    Some(value),
                    None,
                ),
                (None, error) => {
                    let (kind, message) =
                        error.map_or((String::new(), String::new()), |e| (e.kind, e.message));
                    let failure = format!("{kind}: {message}");
                    (
                        Outcome::tool_error(kind),
                        result.fuel_used,
                        None,
                        Some(failure),
                    )
                }
            },
            Err(refused) => {
                let failure = refused.error.to_string();
                (
                    Outcome::refused(&refused.error),
                    refused.fuel_used,
                    None,
                    Some(failure),
                )
            }
        }
    }
}

/// When news kept for a digest stops being news by its tool's rules: the earliest retell
/// window among the rules that found its subjects (a stress level an hour on, last night's
/// sleep at midnight); `None` for items, which stay news until told.
fn news_until(
    spec: &aura_contract::catalogue::ToolSpec,
    subjects: &[(String, u8)],
    now: OffsetDateTime,
) -> Option<OffsetDateTime> {
    spec.news
        .iter()
        .filter(|rule| {
            subjects.iter().any(|(subject, _)| {
                subject == rule.subject || subject.starts_with(&format!("{}:", rule.subject))
            })
        })
        .filter_map(|rule| rule.retell.until(now))
        .min()
}
