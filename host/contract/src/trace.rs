//! Reasoning traces: the record of one orchestrator decision (`schemas/trace.v1.json`), and the
//! natural language the host writes around it.
//!
//! It owns the trace record, its outcome (a status and what the surface shows) and the fixed
//! rationale template (ADR-0009): the tool's lead (from its catalogue entry), the proposal's
//! signals, then the arbitration. What a tool's result says is the tool's own template, in its
//! catalogue entry; this module only bounds it. It must not decide anything (the orchestrator
//! does) nor write files (the journal does).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalogue::{Telling, ToolSpec, fit_line, fit_speech};
use crate::error::CrossingError;

use crate::envelope::Surface;
use crate::limits::{
    DIGEST_ITEMS_MAX, RATIONALE_CHARS_MAX, SPEECH_WORDS_MAX, SUMMARY_CHARS_MAX,
    WATCH_LINE_CHARS_MAX,
};
use crate::visible::visible;

pub mod narration;

/// What became of a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// A call that returned `result`, as a phone card tells it (its tool's template, as
    /// `telling` says).
    pub fn ok(spec: &ToolSpec, result: &Value, telling: &Telling<'_>) -> Self {
        Self::shown(spec, result, telling, Surface::PhoneCard)
    }

    /// A call that returned `result`, as `surface` tells it: the tool's headline on the watch
    /// (one line of at most [`WATCH_LINE_CHARS_MAX`] characters) and in the earbuds (one
    /// sentence of at most [`SPEECH_WORDS_MAX`] words), its card anywhere else.
    pub fn shown(spec: &ToolSpec, result: &Value, telling: &Telling<'_>, surface: Surface) -> Self {
        let words = match surface {
            Surface::Watch => fit_line(
                &visible(&(spec.headline)(result, telling)),
                WATCH_LINE_CHARS_MAX,
            ),
            Surface::EarbudTts => fit_speech(
                &visible(&(spec.headline)(result, telling)),
                SPEECH_WORDS_MAX,
            ),
            Surface::PhoneCard | Surface::Silent => (spec.summarize)(result, telling),
        };
        Self::new(Status::Ok, None, words)
    }

    /// A call whose tool reported an error of result.v1 kind `kind`: the person is told it
    /// could not be done; the kind stays in the trace (`kind`), the message in its rationale.
    pub fn tool_error(kind: String) -> Self {
        Self::new(Status::ToolError, Some(kind), COULD_NOT.into())
    }

    /// A call the host refused (quarantined): told like a tool's error; the kind stays in the
    /// trace, the reason in the quarantine record.
    pub fn refused(error: &CrossingError) -> Self {
        Self::new(
            Status::Refused,
            Some(error.kind().to_owned()),
            COULD_NOT.into(),
        )
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

    /// A digest of what was held back: its lead ("Good morning", "While you were busy"), then
    /// each item's line, most important first, at most [`DIGEST_ITEMS_MAX`] and the rest
    /// counted.
    pub fn digest(lead: &str, items: &[String]) -> Self {
        let mut lines: Vec<String> = items.iter().take(DIGEST_ITEMS_MAX).cloned().collect();
        if items.len() > DIGEST_ITEMS_MAX {
            lines.push(format!("and {} more", items.len() - DIGEST_ITEMS_MAX));
        }
        let summary = match lines.is_empty() {
            true => format!("{lead}: nothing new"),
            false => format!("{lead}: {}", lines.join("; ")),
        };
        Self::new(Status::Digest, None, summary)
    }

    /// What waited for the watch, told on it: the most important item's line and how many
    /// more, one line of at most [`WATCH_LINE_CHARS_MAX`] characters.
    pub fn line(items: &[String]) -> Self {
        let summary = match items {
            [] => String::new(),
            [only] => fit_line(&visible(only), WATCH_LINE_CHARS_MAX),
            [first, rest @ ..] => {
                let more = format!(" (and {} more)", rest.len());
                let room = WATCH_LINE_CHARS_MAX - more.chars().count();
                format!("{}{more}", fit_line(&visible(first), room))
            }
        };
        Self::new(Status::Digest, None, summary)
    }

    /// An answer that matched `questions` pending questions (none, or several): nothing ran.
    /// What it was about stays in the trace (`answer.item`).
    pub fn answer_unresolved(questions: usize) -> Self {
        match questions {
            0 => Self::new(
                Status::Unmatched,
                None,
                "Your answer matched no open question; nothing was done".into(),
            ),
            n => Self::new(
                Status::Ambiguous,
                None,
                format!(
                    "Your answer fits {n} open questions; nothing was done. Answer one of them"
                ),
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

/// What a person is told of a call that failed or was refused: what went wrong (an error kind,
/// a message, a call chain) is for the trace and the quarantine, not for them.
const COULD_NOT: &str = "That could not be done just now; nothing was changed";

/// Why a proposal lost (trace.v1 `not_chosen[].reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LostReason {
    /// One interruption per surface per tick: another proposal had a higher priority.
    SurfaceBusy,
}

/// A proposal that lost its surface to the traced one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// For a call that failed or was refused: what went wrong (the kind and the message), for
    /// the trace alone.
    pub failure: Option<&'a str>,
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
    /// Something else was shown on that surface this tick (one interruption per surface per
    /// tick); it waits for the first tick the surface is free.
    Busy,
}

impl Moved {
    fn as_str(self) -> &'static str {
        match self {
            Moved::QuietHours => "quiet hours",
            Moved::Budget => "this hour's interruptions of that surface are used up",
            Moved::NotUrgent => "not urgent enough to be spoken",
            Moved::NothingNew => "nothing you have not been told",
            Moved::Minor => "too minor to interrupt, kept for the digest",
            Moved::Busy => "something else was shown there this tick, kept for the next",
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
    if let Some(failure) = facts.failure {
        text.push_str(&format!("; it failed: {}", visible(failure)));
    }
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
pub mod tests;
