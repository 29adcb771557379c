//! Reasoning traces: the record of one orchestrator decision (`schemas/trace.v1.json`), and the
//! natural language the host writes around it.
//!
//! It owns the trace record, its outcome (a status and what the surface shows) and the fixed
//! rationale template (ADR-0009): the tool's lead (from its catalogue entry), the proposal's
//! signals, then the arbitration. What a tool's result says is the tool's own template, in its
//! catalogue entry; this module only bounds it. It must not decide anything (the orchestrator
//! does) nor write files (the journal does).

use serde::Serialize;
use serde_json::Value;

use crate::catalogue::{Telling, ToolSpec};
use crate::error::CrossingError;

use crate::envelope::Surface;
use crate::limits::{RATIONALE_CHARS_MAX, SUMMARY_CHARS_MAX};
use crate::visible::visible;

/// What became of a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run and shown on its surface.
    Executed,
    /// A confirm_required call put to the user as a question, not run.
    Asked,
    /// The user confirmed an earlier question; the call ran.
    Confirmed,
    /// The user declined an earlier question; the call was dropped.
    Declined,
    /// A question kept back during quiet hours.
    Held,
    /// An answer of the user's that matched no pending question: nothing ran.
    AnswerUnmatched,
    /// An answer that matched more than one pending question: nothing ran.
    AnswerAmbiguous,
    /// What was kept from the user (quiet hours, the interruption budget) and not told
    /// since, gathered on one card.
    Digest,
    /// A question no answer came to in time: not run, and told in the next digest.
    Expired,
}

/// An answer of the user's, as the scenario gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TracedAnswer {
    /// The agent of the question it answers.
    pub agent: String,
    /// Its tool.
    pub tool: String,
    /// The item it is about (`invitation:<id>`).
    pub item: String,
    /// Yes or no.
    pub confirm: bool,
}

/// The call a trace is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TracedCall {
    /// The proposal's call_id.
    pub call_id: String,
    /// Its agent.
    pub agent: String,
    /// Its tool.
    pub tool: String,
    /// Whether it needs the user's confirmation.
    pub confirm_required: bool,
}

/// How a decision turned out (trace.v1 `outcome.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The call ran and returned its result.
    Ok,
    /// The call ran and the tool reported an error.
    ToolError,
    /// The host refused the call (it was quarantined).
    Refused,
    /// A question waiting for the user's answer.
    Pending,
    /// The user said no.
    Declined,
    /// A question kept back during quiet hours.
    Held,
    /// An answer that matched no question.
    Unmatched,
    /// An answer that matched several questions.
    Ambiguous,
    /// A digest of what was held back.
    Digest,
    /// A question no answer came to in time.
    Expired,
}

impl Status {
    /// Its name in trace.v1.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError => "tool_error",
            Self::Refused => "refused",
            Self::Pending => "pending",
            Self::Declined => "declined",
            Self::Held => "held",
            Self::Unmatched => "unmatched",
            Self::Ambiguous => "ambiguous",
            Self::Digest => "digest",
            Self::Expired => "expired",
        }
    }

    /// Whether a call ran and failed (the tool's error, or the host's refusal).
    pub fn is_failure(self) -> bool {
        matches!(self, Self::ToolError | Self::Refused)
    }
}

/// How the decision turned out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// What became of it.
    pub status: Status,
    /// result.v1 error kind, for tool_error and refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// What the surface shows, at most [`SUMMARY_CHARS_MAX`] characters, agent text in it
    /// made [`visible`].
    pub summary: String,
}

impl Outcome {
    /// A call that returned `result`: told by its tool's template, as `telling` says.
    pub fn ok(spec: &ToolSpec, result: &Value, telling: &Telling<'_>) -> Self {
        Self::new(Status::Ok, None, (spec.summarize)(result, telling))
    }

    /// A call whose tool reported an error of result.v1 kind `kind`.
    pub fn tool_error(agent: &str, tool: &str, kind: String, message: &str) -> Self {
        let summary = format!("{agent}.{tool} failed: {message}");
        Self::new(Status::ToolError, Some(kind), summary)
    }

    /// A call the host refused.
    pub fn refused(error: &CrossingError) -> Self {
        let summary = format!("Refused by the host: {error}");
        Self::new(Status::Refused, Some(error.kind().to_owned()), summary)
    }

    /// A question put to the user.
    pub fn pending(question: String) -> Self {
        Self::new(Status::Pending, None, question)
    }

    /// A question the user declined.
    pub fn declined() -> Self {
        Self::new(
            Status::Declined,
            None,
            "You said no; nothing was done".into(),
        )
    }

    /// A question no answer came to in time (`question`: what it asked).
    pub fn expired(question: &str) -> Self {
        Self::new(
            Status::Expired,
            None,
            format!("No answer in time to: {question} Nothing was done."),
        )
    }

    /// A question kept for the morning.
    pub fn held() -> Self {
        Self::new(Status::Held, None, "Question kept for the morning".into())
    }

    /// A digest of what was held back: each item's summary, oldest first.
    pub fn digest(items: &[String]) -> Self {
        let summary = format!("Held back ({}): {}", items.len(), items.join("; "));
        Self::new(Status::Digest, None, summary)
    }

    /// An answer about `item` that matched `questions` pending questions (none, or several):
    /// nothing ran.
    pub fn answer_unresolved(item: &str, questions: usize) -> Self {
        match questions {
            0 => Self::new(
                Status::Unmatched,
                None,
                format!("Your answer about {item} matched no question; nothing was done"),
            ),
            n => Self::new(
                Status::Ambiguous,
                None,
                format!("Your answer about {item} matched {n} questions; nothing was done"),
            ),
        }
    }

    fn new(status: Status, kind: Option<String>, summary: String) -> Self {
        Self {
            status,
            kind,
            summary: cut_chars(visible(&summary), SUMMARY_CHARS_MAX),
        }
    }
}

/// Why a proposal lost (trace.v1 `not_chosen[].reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LostReason {
    /// One interruption per surface per tick: another proposal had a higher priority.
    SurfaceBusy,
}

/// A proposal that lost its surface to the traced one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotChosen {
    /// Its call_id.
    pub call_id: String,
    /// Its agent.
    pub agent: String,
    /// Its tool.
    pub tool: String,
    /// Its priority.
    pub priority: u8,
    /// Why it lost.
    pub reason: LostReason,
}

/// One line of traces.jsonl.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Trace {
    /// `tr_<tick>_<n>`.
    pub trace_id: String,
    /// The run it belongs to: `run_<16 hex>` of the run's identity (scenario, seed, aura's
    /// version, the agents' sources; the day crate's `RunIdentity`).
    pub run: String,
    /// The scenario's name.
    pub scenario: String,
    /// The run's seed.
    pub seed: u64,
    /// Tick number, from 0.
    pub tick: usize,
    /// The tick's virtual time.
    pub at: String,
    /// What was decided.
    pub decision: Decision,
    /// The call (absent for an answer that matched no single question).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<TracedCall>,
    /// The agent whose tick proposed the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposed_by: Option<String>,
    /// For a question: the user's item it is about (`invitation:<id>`), as the host bound it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub about: Option<String>,
    /// The user's answer this decision carries out (confirmed, declined) or could not place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<TracedAnswer>,
    /// What drove the proposal.
    pub signals: Vec<String>,
    /// Its priority.
    pub priority: u8,
    /// The surface the agent asked for.
    pub requested_surface: Surface,
    /// The surface it went to.
    pub surface: Surface,
    /// Why, from the tool's template.
    pub rationale: String,
    /// How it turned out.
    pub outcome: Outcome,
    /// Fuel the call burned (its agent-to-agent calls included).
    pub fuel_used: u64,
    /// Proposals that lost the surface to it.
    pub not_chosen: Vec<NotChosen>,
}

/// What a rationale needs to know about the decision.
#[derive(Debug, Clone, Copy)]
pub struct RationaleFacts<'a> {
    /// Why an agent proposes the tool at all: its catalogue entry's lead.
    pub lead: &'a str,
    /// The call's agent.
    pub agent: &'a str,
    /// The call's tool.
    pub tool: &'a str,
    /// The proposal's signals.
    pub signals: &'a [String],
    /// Its priority.
    pub priority: u8,
    /// What was decided.
    pub decision: Decision,
    /// The surface the agent asked for.
    pub requested: Surface,
    /// The surface it went to.
    pub surface: Surface,
    /// Proposals it beat on that surface.
    pub beaten: usize,
    /// Why it went to another surface than the one asked for, when it did.
    pub moved: Option<Moved>,
    /// What it tells the user that the user had not been told (news subjects).
    pub news: &'a [String],
}

/// Why a call was shown on another surface than the one its agent asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved {
    /// Quiet hours: nothing interrupts but the watch.
    QuietHours,
    /// The surface's interruptions for the past hour are used up; the news waits for the
    /// digest.
    Budget,
    /// The earbuds speak only what is urgent and new.
    NotUrgent,
    /// Its answer told nothing the user had not been told (or nothing at all).
    NothingNew,
    /// Its news is too minor to interrupt; it waits for the digest.
    Minor,
}

impl Moved {
    fn as_str(self) -> &'static str {
        match self {
            Moved::QuietHours => "quiet hours",
            Moved::Budget => "this hour's interruptions of that surface are used up",
            Moved::NotUrgent => "not urgent enough to be spoken",
            Moved::NothingNew => "nothing you have not been told",
            Moved::Minor => "too minor to interrupt, kept for the digest",
        }
    }
}

/// The rationale of a digest of `items` held-back results about `subjects` news subjects.
pub fn digest_rationale(items: usize, subjects: usize, surface: Surface) -> String {
    format!(
        "Kept from you by quiet hours or the interruption budget and not told since: {items} \
         result(s) about {subjects} subject(s), gathered on one card; shown on {}.",
        surface.as_str()
    )
}

/// The rationale of an answer that reached `questions` pending questions (none, or several).
pub fn unplaced_answer_rationale(answer: &TracedAnswer, questions: usize) -> String {
    let said = match answer.confirm {
        true => "yes",
        false => "no",
    };
    let found = match questions {
        0 => "no question is pending about it".to_owned(),
        n => format!("{n} questions are pending about it, so it is not clear which one you meant"),
    };
    // An answer to a question no one asked names no tool.
    let tool = match answer.agent.is_empty() {
        true => String::new(),
        false => format!(" ({}.{})", answer.agent, answer.tool),
    };
    let text = format!(
        "You answered {said} about {}{tool}, but {found}; nothing was run.",
        answer.item
    );
    cut_chars(visible(&text), RATIONALE_CHARS_MAX)
}

/// The rationale: the tool's fixed lead, the signals, then the arbitration, at most
/// [`RATIONALE_CHARS_MAX`] characters.
pub fn rationale(facts: &RationaleFacts<'_>) -> String {
    let lead = facts.lead;
    let signals = match facts.signals.is_empty() {
        true => "no signals given".to_owned(),
        false => visible(&facts.signals.join(", ")),
    };
    let surface = facts.surface.as_str();
    let mut text = format!(
        "{lead} ({}.{}): {signals}. Priority {}",
        facts.agent, facts.tool, facts.priority
    );
    if facts.beaten > 0 {
        text.push_str(&format!(
            ", the highest of {} proposals for {surface}",
            facts.beaten + 1
        ));
    }
    if !facts.news.is_empty() {
        text.push_str(&format!("; new: {}", visible(&facts.news.join(", "))));
    }
    let tail = match facts.decision {
        Decision::Executed | Decision::Confirmed if facts.requested != facts.surface => format!(
            "; {}: {surface} instead of {}",
            facts.moved.unwrap_or(Moved::QuietHours).as_str(),
            facts.requested.as_str()
        ),
        Decision::Executed => format!("; shown on {surface}"),
        Decision::Confirmed => format!("; you confirmed it, shown on {surface}"),
        Decision::Asked => "; it needs your confirmation, asked on PHONE_CARD".to_owned(),
        Decision::Declined => "; you declined it, so it was not run".to_owned(),
        Decision::Held => "; quiet hours: the question waits for the morning".to_owned(),
        Decision::AnswerUnmatched | Decision::AnswerAmbiguous => {
            "; the answer reached no single question, so nothing was run".to_owned()
        }
        Decision::Digest => format!("; shown on {surface}"),
        Decision::Expired => {
            "; no answer came in time, so it was not run and waits for the digest".to_owned()
        }
    };
    text.push_str(&tail);
    text.push('.');
    cut_chars(text, RATIONALE_CHARS_MAX)
}

/// `text` cut to `max` characters (an ellipsis marks the cut).
fn cut_chars(mut text: String, max: usize) -> String {
    if let Some((cut, _)) = text.char_indices().nth(max.saturating_sub(1))
        && text.chars().count() > max
    {
        text.truncate(cut);
        text.push('…');
    }
    text
}

/// Test support for the crates above (feature `test-support`): a valid trace to change.
#[cfg(any(test, feature = "test-support"))]
pub mod tests {
    use super::*;

    /// A trace as the orchestrator writes one, valid against trace.v1.
    pub fn sample() -> Trace {
        Trace {
            trace_id: "tr_00000_000".into(),
            run: "run_0123456789abcdef".into(),
            scenario: "short".into(),
            seed: 7,
            tick: 0,
            at: "2026-11-23T08:45:00+01:00".into(),
            decision: Decision::Executed,
            call: Some(TracedCall {
                call_id: "t_0123456789".into(),
                agent: "calendar".into(),
                tool: "detect_conflicts".into(),
                confirm_required: false,
            }),
            proposed_by: Some("calendar".into()),
            about: None,
            answer: None,
            signals: vec!["overlap:e1/e2".into()],
            priority: 90,
            requested_surface: Surface::Watch,
            surface: Surface::Watch,
            rationale: "Calendar conflicts need resolving.".into(),
            outcome: Outcome::held(),
            fuel_used: 0,
            not_chosen: vec![NotChosen {
                call_id: "t_abcdefghij".into(),
                agent: "wellness".into(),
                tool: "stress_score".into(),
                priority: 20,
                reason: LostReason::SurfaceBusy,
            }],
        }
    }

    #[test]
    fn rationales_fill_the_tool_template_and_stay_in_bounds() {
        let signals = vec!["double_booking:e1/e2".to_owned()];
        let facts = RationaleFacts {
            lead: "Calendar conflicts need resolving",
            agent: "calendar",
            tool: "detect_conflicts",
            signals: &signals,
            priority: 90,
            decision: Decision::Executed,
            requested: Surface::Watch,
            surface: Surface::Watch,
            beaten: 1,
            moved: None,
            news: &[],
        };
        assert_eq!(
            rationale(&facts),
            "Calendar conflicts need resolving (calendar.detect_conflicts): double_booking:e1/e2. \
             Priority 90, the highest of 2 proposals for WATCH; shown on WATCH."
        );
        let news = vec!["conflict:e1/e2".to_owned()];
        let budget = RationaleFacts {
            requested: Surface::PhoneCard,
            surface: Surface::Silent,
            beaten: 0,
            moved: Some(Moved::Budget),
            news: &news,
            ..facts
        };
        assert!(rationale(&budget).ends_with(
            "Priority 90; new: conflict:e1/e2; this hour's interruptions of that surface are used \
             up: SILENT instead of PHONE_CARD."
        ));
        let quiet = RationaleFacts {
            requested: Surface::PhoneCard,
            surface: Surface::Silent,
            beaten: 0,
            ..facts
        };
        assert!(
            rationale(&quiet).ends_with("Priority 90; quiet hours: SILENT instead of PHONE_CARD.")
        );
        let long: Vec<String> = (0..16).map(|i| format!("{i:0>199}")).collect();
        let long = RationaleFacts {
            signals: &long,
            ..facts
        };
        let text = rationale(&long);
        assert_eq!(text.chars().count(), RATIONALE_CHARS_MAX);
        assert!(text.ends_with('…'));
    }

    #[test]
    fn outcomes_serialize_as_trace_v1_names_them() {
        let spec = crate::catalogue::tool("wellness", "stress_score").unwrap();
        let ok = Outcome::ok(
            spec,
            &serde_json::json!({"score": 40, "level": "moderate"}),
            &Telling::default(),
        );
        assert_eq!(
            serde_json::to_value(&ok).unwrap(),
            serde_json::json!({"status": "ok", "summary": "Stress 40 (moderate)"})
        );
        let refused = Outcome::refused(&CrossingError::UnknownAgent {
            agent: "mallory".into(),
        });
        assert_eq!(
            serde_json::to_value(&refused).unwrap(),
            serde_json::json!({"status": "refused", "kind": "unknown_agent",
                "summary": "Refused by the host: envelope: unknown agent `mallory`"})
        );
        let failed = Outcome::tool_error("finance", "budget_status", "tool_failed".into(), "no");
        assert_eq!(failed.status, Status::ToolError);
        assert_eq!(failed.summary, "finance.budget_status failed: no");
        assert_eq!(
            serde_json::to_value(LostReason::SurfaceBusy).unwrap(),
            "surface_busy"
        );
    }

    #[test]
    fn a_long_summary_is_cut_and_marked() {
        let long = Outcome::pending("q".repeat(SUMMARY_CHARS_MAX + 5));
        assert_eq!(long.summary.chars().count(), SUMMARY_CHARS_MAX);
        assert!(long.summary.ends_with('…'));
        let exact = Outcome::pending("q".repeat(SUMMARY_CHARS_MAX));
        assert_eq!(exact.summary, "q".repeat(SUMMARY_CHARS_MAX));
    }
}
