//! `triage_inbox`: ranks messages by urgency and says which should interrupt the user now.
//!
//! It owns the scoring rules below. It must not send, move or mark anything, and it reads only
//! the args (no clock: `now` is an argument).
//!
//! Scoring, in thousandths ("milli"; the result shows them as numbers with 3 decimals):
//! - Text scanned: the subject and the first [`SCAN_BODY_CHARS_MAX`] characters of the body,
//!   split into sentences by [`crate::text::Sentences`] (quoted history and signatures are
//!   not the sender's new text and are skipped). The subject of a reply or a forward (it starts
//!   with one of [`REPLY_PREFIXES`]: "Re:", "AW:", "Fwd:", ...) is the first message's, not
//!   this one's, and is not scanned: "Re: URGENT: …" with "Thanks, got it" is not urgent.
//! - `vip_sender` +[`VIP_MILLI`]: the sender's address (the part in `<…>` if any), compared
//!   case-insensitively, is one of `vip_senders` (normalized the same way); a blank address
//!   is nobody's.
//! - `urgent_words` +[`URGENT_MILLI`]: any of [`URGENT_WORDS`] or [`URGENT_PHRASES`], unless
//!   right after a negation ([`NEGATIONS`]: "not urgent").
//! - `deadline` +[`DEADLINE_NEAR_MILLI`] / [`DEADLINE_SOON_MILLI`] / [`DEADLINE_LATER_MILLI`]:
//!   the earliest due time of the date phrases found by [`crate::dates`] (read relative to the
//!   message's `received_at` in the user's offset) is at most 24 h after `now` (or already
//!   past) / at most 72 h after `now` / later; a bare deadline word ([`DEADLINE_WORDS`]) with no
//!   date phrase counts as later.
//! - `direct_question` +[`QUESTION_MILLI`]: a sentence ending in '?' that says "you", or any
//!   sentence with a request to the reader ([`ASK_READER_PHRASES`], [`REPLY_REQUEST_PHRASES`]).
//! - `thread_heat` +[`HEAT_PER_MESSAGE_MILLI`] for each other message of the same thread
//!   received at or after `now` − 24 h, at most [`HEAT_MESSAGES_MAX`] of them.
//! - The weights add up to at most 1000 (1.0). `age` then scales the sum: with h whole hours
//!   from `received_at` to `now` (0 when received after `now`), the factor is
//!   max([`AGE_FLOOR_PERMILLE`], 1000 − [`AGE_DECAY_PERMILLE_PER_HOUR`]·h) per mille, and
//!   urgency = round-half-up(sum · factor / 1000). The `age` signal's contribution is
//!   urgency − sum (zero or negative) and is listed when it is not zero, so a message's
//!   contributions always add up to its urgency.
//! - `arrived_in_quiet_hours`: `received_at` in local time falls in the quiet hours.
//!   `quiet_now`: `now` does.
//! - `interrupt`: urgency ≥ [`INTERRUPT_THRESHOLD_MILLI`], and when `now` is in quiet hours
//!   only if the sender is a VIP and the message has urgent words.
//! - Order: urgency descending, then `received_at` descending (compared as instants), then id
//!   (byte order). Ids must be unique.

use std::collections::{HashMap, HashSet};

use aura_sdk::args::{check_chars, check_len};
use aura_sdk::time::{SECS_PER_DAY, SECS_PER_HOUR, check_offset, parse_time};
use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};

use crate::common::{
    MAX_ADDRESS_CHARS, Message, Quiet, QuietHours, milli_to_number, normalize_address,
};
use crate::dates;
use crate::text::{
    ASK_READER_PHRASES, Sentences, Token, any_phrase_at, cut_clean, first_chars, lowered, tokenize,
    words_at,
};

/// Most messages in one call.
pub const MAX_MESSAGES: usize = 200;
/// Most VIP senders.
pub const MAX_VIPS: usize = 200;
/// Characters of a body that are scanned: the cues that make a message urgent sit in its
/// subject and opening paragraphs. The bound keeps the work per message fixed. Measured in the
/// component: ~90 k fuel per message to read and answer, ~40 k per signal reported (the
/// canonical encoding of the answer dominates), ~320 fuel per scanned character; 200 messages
/// with 600 scanned characters and four signals each take ~90 M fuel, within the default
/// 1000 ms deadline (100 M fuel).
pub const SCAN_BODY_CHARS_MAX: usize = 600;
/// A VIP sender: the strongest single cue, 0.3.
pub const VIP_MILLI: i64 = 300;
/// Explicit urgency words, 0.3: with a VIP sender they reach the interrupt threshold.
pub const URGENT_MILLI: i64 = 300;
/// A due time within 24 h of now (or past), 0.15.
pub const DEADLINE_NEAR_MILLI: i64 = 150;
/// A due time within 72 h of now, 0.1.
pub const DEADLINE_SOON_MILLI: i64 = 100;
/// A later due time or a bare deadline word, 0.05.
pub const DEADLINE_LATER_MILLI: i64 = 50;
/// The reader is asked something, 0.15.
pub const QUESTION_MILLI: i64 = 150;
/// Each other recent message in the thread, 0.05: a busy conversation is live.
pub const HEAT_PER_MESSAGE_MILLI: i64 = 50;
/// Other messages counted for heat (so heat adds at most 0.1 and all weights at most 1.0).
pub const HEAT_MESSAGES_MAX: i64 = 2;
/// Window for thread heat: the last day.
pub const HEAT_WINDOW_SECS: i64 = SECS_PER_DAY;
/// "Near" deadline: within a day of now.
pub const DEADLINE_NEAR_SECS: i64 = SECS_PER_DAY;
/// "Soon" deadline: within three days of now.
pub const DEADLINE_SOON_SECS: i64 = 3 * SECS_PER_DAY;
/// Age decay per whole hour, per mille: a day-old message keeps 64 %.
pub const AGE_DECAY_PERMILLE_PER_HOUR: i64 = 15;
/// Age factor floor, per mille (reached after 60 h): old messages keep a tenth of their cues,
/// so an ancient VIP message still ranks above an ancient newsletter.
pub const AGE_FLOOR_PERMILLE: i64 = 100;
/// Urgency at which a message may interrupt: 0.6, i.e. VIP + urgent, or three lesser cues.
pub const INTERRUPT_THRESHOLD_MILLI: i64 = 600;
/// Longest signal detail, in characters.
pub const DETAIL_CHARS_MAX: usize = 200;
/// Longest quoted question in a `direct_question` detail, in characters.
pub const QUESTION_DETAIL_CHARS_MAX: usize = 100;

/// Words that make a message urgent (compared lower-cased, whole words): English, and the
/// German, French, Spanish and Italian words a European inbox carries ("dringend", "urgence").
pub const URGENT_WORDS: &[&str] = &[
    "urgent",
    "urgently",
    "asap",
    "immediately",
    "emergency",
    "critical",
    "time-sensitive",
    "dringend",
    "eilig",
    "sofort",
    "umgehend",
    "urgence",
    "immédiatement",
    "urgente",
    "inmediatamente",
    "subito",
];
/// Prefixes (lower-cased, before the first ':') of a reply's or a forward's subject, in the
/// languages of [`URGENT_WORDS`].
pub const REPLY_PREFIXES: &[&str] = &["re", "aw", "fw", "fwd", "wg", "tr", "rv", "r", "i"];
/// Phrases that make a message urgent.
pub const URGENT_PHRASES: &[&[&str]] = &[&["as", "soon", "as", "possible"], &["time", "sensitive"]];
/// Words that negate the urgency word right after them.
pub const NEGATIONS: &[&str] = &["not", "no", "non", "isn't", "nothing"];
/// Words that name a deadline without a date.
pub const DEADLINE_WORDS: &[&str] = &["deadline", "due", "overdue"];
/// Requests for an answer beyond asking (the phrases that ask the reader are
/// [`ASK_READER_PHRASES`]): "please confirm", "please reply", ...
pub const REPLY_REQUEST_PHRASES: &[&[&str]] = &[
    &["please", "confirm"],
    &["please", "advise"],
    &["please", "reply"],
    &["please", "respond"],
];
/// The phrases of a direct question: those that ask the reader, and requests for an answer.
const REQUEST_PHRASE_LISTS: &[&[&[&str]]] = &[ASK_READER_PHRASES, REPLY_REQUEST_PHRASES];
/// Words that address the reader in a question.
pub const YOU_WORDS: &[&str] = &["you", "your", "yours", "you're", "u"];

/// Args of `triage_inbox`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TriageInboxArgs {
    /// The messages to rank (at most 200, unique ids).
    pub messages: Vec<Message>,
    /// Senders whose messages matter most. Default none.
    #[serde(default)]
    pub vip_senders: Vec<String>,
    /// Optional quiet hours in local time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_hours: Option<QuietHours>,
    /// The user's offset east of UTC in minutes (-840..840). Default 0.
    #[serde(default)]
    pub utc_offset_minutes: i32,
    /// The time to rank at (RFC 3339).
    pub now: String,
}

/// The kinds of signal behind a score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SignalKind {
    VipSender,
    UrgentWords,
    Deadline,
    DirectQuestion,
    ThreadHeat,
    Age,
}

/// One signal and what it added to (or, for age, took from) the urgency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Signal {
    pub kind: SignalKind,
    /// −1..1, 3 decimals.
    pub contribution: f64,
    /// What was found, for the user.
    pub detail: String,
}

/// One ranked message. Input fields are not echoed (the caller has them by id): every key of
/// the answer costs fuel to encode, and 200 messages must fit one call's deadline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankedMessage {
    pub id: String,
    /// 0..1, 3 decimals.
    pub urgency: f64,
    /// The signals, in the order vip_sender, urgent_words, deadline, direct_question,
    /// thread_heat, age; only those that changed the score.
    pub signals: Vec<Signal>,
    pub arrived_in_quiet_hours: bool,
    pub interrupt: bool,
}

/// Result of `triage_inbox`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TriageInboxResult {
    /// Every message, most urgent first.
    pub messages: Vec<RankedMessage>,
    /// Whether `now` is in the quiet hours.
    pub quiet_now: bool,
    /// How many messages have `interrupt`.
    pub interrupt_count: u32,
}

/// A scored message, before serialization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scored {
    /// Index into the args' messages.
    pub index: usize,
    pub received: i64,
    pub milli: i64,
    pub vip: bool,
    pub urgent: bool,
    pub arrived_quiet: bool,
    pub interrupt: bool,
    /// The earliest due time of the message's date phrases, and that phrase.
    pub earliest_due: Option<(i64, String)>,
    /// (kind, milli, detail).
    pub signals: Vec<(SignalKind, i64, String)>,
}

/// The whole triage, before serialization: scored messages in rank order and `quiet_now`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Triage {
    pub ranked: Vec<Scored>,
    pub quiet_now: bool,
}

/// Ranks the inbox. See the module documentation.
pub fn triage_inbox(args: TriageInboxArgs) -> ToolResult<TriageInboxResult> {
    let triage = triage(&args)?;
    let interrupt_count = triage.ranked.iter().filter(|s| s.interrupt).count() as u32;
    let messages = triage
        .ranked
        .into_iter()
        .map(|s| {
            let m = &args.messages[s.index];
            RankedMessage {
                id: m.id.clone(),
                urgency: milli_to_number(s.milli),
                signals: s
                    .signals
                    .into_iter()
                    .map(|(kind, milli, detail)| Signal {
                        kind,
                        contribution: milli_to_number(milli),
                        detail,
                    })
                    .collect(),
                arrived_in_quiet_hours: s.arrived_quiet,
                interrupt: s.interrupt,
            }
        })
        .collect();
    Ok(TriageInboxResult {
        messages,
        quiet_now: triage.quiet_now,
        interrupt_count,
    })
}

/// Checks the args and scores every message (also used by the tick).
pub fn triage(args: &TriageInboxArgs) -> ToolResult<Triage> {
    check_len(&args.messages, "messages", MAX_MESSAGES)?;
    check_len(&args.vip_senders, "vip_senders", MAX_VIPS)?;
    check_offset(args.utc_offset_minutes, "utc_offset_minutes")?;
    let now = parse_time(&args.now, "now")?;
    let quiet: Option<Quiet> = args
        .quiet_hours
        .as_ref()
        .map(|q| q.check("quiet_hours"))
        .transpose()?;
    let mut vips = HashSet::with_capacity(args.vip_senders.len());
    for (i, vip) in args.vip_senders.iter().enumerate() {
        check_chars(vip, format_args!("vip_senders[{i}]"), 1, MAX_ADDRESS_CHARS)?;
        vips.insert(normalize_address(vip));
    }
    let mut received = Vec::with_capacity(args.messages.len());
    let mut seen = HashMap::with_capacity(args.messages.len());
    for (i, message) in args.messages.iter().enumerate() {
        received.push(message.check("messages", i)?);
        if let Some(first) = seen.insert(message.id.as_str(), i) {
            return Err(ToolError::invalid_args(format!(
                "messages[{i}].id: duplicate id {:?} (also messages[{first}])",
                message.id
            )));
        }
    }
    // Recent messages per thread, for heat.
    let recent = |t: i64| t >= now - HEAT_WINDOW_SECS;
    let mut recent_in_thread: HashMap<&str, i64> = HashMap::new();
    for (message, &t) in args.messages.iter().zip(&received) {
        if recent(t) {
            *recent_in_thread.entry(&message.thread_id).or_default() += 1;
        }
    }
    let offset = args.utc_offset_minutes;
    let quiet_now = quiet.is_some_and(|q| q.contains(now, offset));
    let mut ranked: Vec<Scored> = args
        .messages
        .iter()
        .zip(&received)
        .enumerate()
        .map(|(index, (message, &t))| {
            let others = recent_in_thread
                .get(message.thread_id.as_str())
                .copied()
                .unwrap_or(0)
                - i64::from(recent(t));
            let mut scored = score(message, t, now, offset, &vips, others);
            scored.index = index;
            scored.arrived_quiet = quiet.is_some_and(|q| q.contains(t, offset));
            scored.interrupt = scored.milli >= INTERRUPT_THRESHOLD_MILLI
                && (!quiet_now || (scored.vip && scored.urgent));
            scored
        })
        .collect();
    ranked.sort_by(|a, b| {
        let (ia, ib) = (&args.messages[a.index].id, &args.messages[b.index].id);
        (b.milli, b.received, ia.as_bytes()).cmp(&(a.milli, a.received, ib.as_bytes()))
    });
    Ok(Triage { ranked, quiet_now })
}

/// Whether the word before `i` negates it ("not urgent").
fn negated(tokens: &[Token<'_>], i: usize) -> bool {
    i > 0 && NEGATIONS.contains(&tokens[i - 1].lower.as_ref())
}

/// What the text of one message says.
#[derive(Debug, Default)]
struct Cues {
    urgent: Vec<String>,
    deadline_labels: Vec<String>,
    earliest_due: Option<(i64, String)>,
    deadline_word: bool,
    question: Option<String>,
}

/// Pushes `label` unless already there (case-insensitively).
fn push_unique(labels: &mut Vec<String>, label: &str) {
    if !labels.iter().any(|l| l.eq_ignore_ascii_case(label)) {
        labels.push(label.to_owned());
    }
}

fn scan(message: &Message, received: i64, offset: i32) -> Cues {
    let body = first_chars(&message.body, SCAN_BODY_CHARS_MAX);
    let mut cues = Cues::default();
    let subject = match is_reply_subject(&message.subject) {
        true => "",
        false => message.subject.as_str(),
    };
    let mut text = Sentences::of(subject);
    text.add(body);
    let lower = lowered(&text.text);
    let all_tokens = tokenize(&text.text, &lower);
    let ranges = text.token_ranges(&all_tokens);
    for (&(start, end), &(first, last)) in text.spans.iter().zip(&ranges) {
        let sentence = &text.text[start..end];
        let tokens = &all_tokens[first..last];
        let dues = dates::find_all_in(&text.text, tokens, received, offset);
        for due in &dues {
            let phrase = due.phrase(&text.text);
            push_unique(&mut cues.deadline_labels, phrase);
            if cues
                .earliest_due
                .as_ref()
                .is_none_or(|(at, _)| due.at < *at)
            {
                cues.earliest_due = Some((due.at, phrase.to_owned()));
            }
        }
        let inside_due = |t: &Token<'_>| dues.iter().any(|d| d.start <= t.start && t.end <= d.end);
        let mut says_you = false;
        let mut requests = false;
        for (i, token) in tokens.iter().enumerate() {
            let word = token.lower.as_ref();
            // One match per word (the lists above, spelled out so the compiler can dispatch on
            // length; a test checks they agree); multi-word lists only on their first words.
            match word {
                "as" | "time" => {
                    for phrase in URGENT_PHRASES {
                        if words_at(tokens, i, phrase) && !negated(tokens, i) {
                            push_unique(&mut cues.urgent, &phrase.join(" "));
                        }
                    }
                }
                "urgent" | "urgently" | "asap" | "immediately" | "emergency" | "critical"
                | "time-sensitive" | "dringend" | "eilig" | "sofort" | "umgehend" | "urgence"
                | "immédiatement" | "urgente" | "inmediatamente" | "subito"
                    if !negated(tokens, i) =>
                {
                    push_unique(&mut cues.urgent, word);
                }
                "deadline" | "due" | "overdue" if !inside_due(token) => {
                    cues.deadline_word = true;
                    push_unique(&mut cues.deadline_labels, word);
                }
                "you" | "your" | "yours" | "you're" | "u" => says_you = true,
                "can" | "could" | "would" | "will" | "do" | "let" | "please" => {
                    requests |= any_phrase_at(tokens, i, REQUEST_PHRASE_LISTS);
                }
                _ => {}
            }
        }
        if cues.question.is_none() && ((sentence.ends_with('?') && says_you) || requests) {
            cues.question = Some(cut_clean(sentence, QUESTION_DETAIL_CHARS_MAX).0);
        }
    }
    cues
}

/// Whether `subject` is a reply's or a forward's: it starts with one of [`REPLY_PREFIXES`]
/// and a ':' (any case, spaces and a "[2]" count allowed: "RE[2]:", "Aw :").
fn is_reply_subject(subject: &str) -> bool {
    let Some((prefix, _)) = subject.split_once(':') else {
        return false;
    };
    let prefix = prefix.trim().to_lowercase();
    let prefix = prefix.split('[').next().unwrap_or("").trim_end();
    REPLY_PREFIXES.contains(&prefix)
}

/// Scores one message (index and quiet/interrupt flags are filled in by the caller).
fn score(
    message: &Message,
    received: i64,
    now: i64,
    offset: i32,
    vips: &HashSet<String>,
    thread_others: i64,
) -> Scored {
    let cues = scan(message, received, offset);
    let mut signals: Vec<(SignalKind, i64, String)> = Vec::new();
    let sender = normalize_address(&message.sender);
    let vip = !sender.is_empty() && vips.contains(&sender);
    if vip {
        let address = cut_clean(&sender, DETAIL_CHARS_MAX).0;
        signals.push((SignalKind::VipSender, VIP_MILLI, address));
    }
    let urgent = !cues.urgent.is_empty();
    if urgent {
        signals.push((SignalKind::UrgentWords, URGENT_MILLI, detail(&cues.urgent)));
    }
    let deadline = match cues.earliest_due.as_ref().map(|(at, _)| *at) {
        Some(due) if due - now <= DEADLINE_NEAR_SECS => DEADLINE_NEAR_MILLI,
        Some(due) if due - now <= DEADLINE_SOON_SECS => DEADLINE_SOON_MILLI,
        Some(_) => DEADLINE_LATER_MILLI,
        None if cues.deadline_word => DEADLINE_LATER_MILLI,
        None => 0,
    };
    if deadline > 0 {
        signals.push((
            SignalKind::Deadline,
            deadline,
            detail(&cues.deadline_labels),
        ));
    }
    if let Some(question) = cues.question {
        signals.push((SignalKind::DirectQuestion, QUESTION_MILLI, question));
    }
    if thread_others > 0 {
        let plural = if thread_others == 1 { "" } else { "s" };
        signals.push((
            SignalKind::ThreadHeat,
            HEAT_PER_MESSAGE_MILLI * thread_others.min(HEAT_MESSAGES_MAX),
            format!("{thread_others} other message{plural} in the thread in 24 h"),
        ));
    }
    let sum: i64 = signals.iter().map(|(_, milli, _)| milli).sum();
    let hours = (now - received).max(0) / SECS_PER_HOUR;
    let factor = (1000 - AGE_DECAY_PERMILLE_PER_HOUR.saturating_mul(hours)).max(AGE_FLOOR_PERMILLE);
    let milli = (sum * factor + 500) / 1000;
    if milli != sum {
        signals.push((SignalKind::Age, milli - sum, format!("{hours} h old")));
    }
    Scored {
        index: 0,
        received,
        milli,
        vip,
        urgent,
        arrived_quiet: false,
        interrupt: false,
        earliest_due: cues.earliest_due,
        signals,
    }
}

/// Labels joined with ", ", cut cleanly to [`DETAIL_CHARS_MAX`].
fn detail(labels: &[String]) -> String {
    cut_clean(&labels.join(", "), DETAIL_CHARS_MAX).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use aura_sdk::ToolErrorKind;
    use serde_json::{Value, json};

    fn msg(id: &str, thread: &str, sender: &str, subject: &str, body: &str, at: &str) -> Value {
        json!({"id": id, "thread_id": thread, "sender": sender, "subject": subject,
               "body": body, "received_at": at})
    }

    fn run(args: Value) -> TriageInboxResult {
        let args: TriageInboxArgs = serde_json::from_value(args).unwrap();
        let result = triage_inbox(args).unwrap();
        let schema = SCHEMAS.load("triage_inbox.result.json");
        aura_testkit::assert_valid(&schema, &serde_json::to_value(&result).unwrap());
        for m in &result.messages {
            // The contributions add up to the urgency (in thousandths).
            let sum: f64 = m.signals.iter().map(|s| s.contribution).sum();
            assert_eq!(
                (sum * 1000.0).round(),
                (m.urgency * 1000.0).round(),
                "{}",
                m.id
            );
        }
        result
    }

    fn invalid(args: Value, needle: &str) {
        let args: TriageInboxArgs = serde_json::from_value(args).unwrap();
        let e = triage_inbox(args).unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        assert!(e.message.contains(needle), "{needle}: {}", e.message);
    }

    fn contributions(m: &RankedMessage) -> Vec<(SignalKind, f64)> {
        m.signals.iter().map(|s| (s.kind, s.contribution)).collect()
    }

    /// now Monday 2026-11-23 10:00Z = 11:00 at +01:00; quiet hours 22:00-07:00 local.
    fn inbox(now: &str) -> Value {
        json!({
            "messages": [
                msg("m2", "t1", "ann@corp.example", "Re: contract",
                    "I will send the draft on Friday.", "2026-11-22T22:30:00Z"),
                msg("m3", "t2", "news@letters.example", "Weekly digest",
                    "Top stories this week.", "2026-11-20T10:00:00Z"),
                msg("m1", "t1", "Dana Boss <dana@corp.example>", "URGENT: contract",
                    "Hi,\n\nCan you sign the contract by EOD?\n\nDana", "2026-11-23T09:30:00Z"),
                msg("m4", "t3", "carol@x.example", "Lunch",
                    "Are you free for lunch? It's not urgent.", "2026-11-23T08:00:00Z"),
            ],
            "vip_senders": ["DANA@corp.example"],
            "quiet_hours": {"start": "22:00", "end": "07:00"},
            "utc_offset_minutes": 60,
            "now": now,
        })
    }

    #[test]
    fn ranks_with_hand_worked_scores() {
        let result = run(inbox("2026-11-23T10:00:00Z"));
        let order: Vec<&str> = result.messages.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(order, ["m1", "m4", "m2", "m3"]);
        assert!(!result.quiet_now);

        // m1: VIP 300 + "URGENT" 300 + "by EOD" (17:00 local = 16:00Z, 6 h after now: near)
        // 150 + question 150 + heat (m2, 11.5 h old, is recent) 50 = 950; 30 min old → h = 0,
        // factor 1000 → 0.95. Not quiet now and ≥ 0.6 → interrupt.
        let m1 = &result.messages[0];
        assert_eq!(m1.urgency, 0.95);
        assert_eq!(
            contributions(m1),
            [
                (SignalKind::VipSender, 0.3),
                (SignalKind::UrgentWords, 0.3),
                (SignalKind::Deadline, 0.15),
                (SignalKind::DirectQuestion, 0.15),
                (SignalKind::ThreadHeat, 0.05),
            ]
        );
        assert_eq!(m1.signals[0].detail, "dana@corp.example");
        assert_eq!(m1.signals[1].detail, "urgent");
        assert_eq!(m1.signals[2].detail, "by EOD");
        assert_eq!(m1.signals[3].detail, "Can you sign the contract by EOD?");
        assert_eq!(
            m1.signals[4].detail,
            "1 other message in the thread in 24 h"
        );
        assert!(m1.interrupt);
        assert!(!m1.arrived_in_quiet_hours); // 10:30 local

        // m4: "not urgent" is negated; question "Are you free for lunch?" 150; 2 h old →
        // factor 1000 − 30 = 970 → (150·970 + 500) / 1000 = 146 → 0.146, age −0.004.
        let m4 = &result.messages[1];
        assert_eq!(m4.urgency, 0.146);
        assert_eq!(
            contributions(m4),
            [
                (SignalKind::DirectQuestion, 0.15),
                (SignalKind::Age, -0.004)
            ]
        );
        assert_eq!(m4.signals[1].detail, "2 h old");
        assert!(!m4.interrupt);

        // m2: "on Friday" read from Sunday 23:30 local → Friday 27th 17:00 local, more than
        // 72 h after now → later, 50; heat from m1 50; sum 100. 11 whole hours old →
        // factor 1000 − 165 = 835 → (100·835 + 500) / 1000 = 84 → 0.084, age −0.016.
        // 23:30 local is in the quiet hours.
        let m2 = &result.messages[2];
        assert_eq!(m2.urgency, 0.084);
        assert_eq!(
            contributions(m2),
            [
                (SignalKind::Deadline, 0.05),
                (SignalKind::ThreadHeat, 0.05),
                (SignalKind::Age, -0.016)
            ]
        );
        assert_eq!(m2.signals[0].detail, "on Friday");
        assert!(m2.arrived_in_quiet_hours);

        // m3: nothing; 0 stays 0, so no age signal.
        let m3 = &result.messages[3];
        assert_eq!(m3.urgency, 0.0);
        assert!(m3.signals.is_empty());
        assert_eq!(result.interrupt_count, 1);
    }

    #[test]
    fn in_quiet_hours_only_a_vip_with_urgent_words_interrupts() {
        // now 22:30Z = 23:30 local: quiet. m1 is 13 h old → factor 1000 − 195 = 805; its
        // deadline (16:00Z) is past → near 150; m2 (22:30Z yesterday) is exactly 24 h old and
        // still counts for heat. (950·805 + 500) / 1000 = 765 → 0.765, VIP + urgent →
        // interrupt.
        let mut args = inbox("2026-11-23T22:30:00Z");
        // m5: not a VIP but urgent + question + near deadline = 300 + 150 + 150 = 600, fresh:
        // enough outside quiet hours, not inside.
        args["messages"].as_array_mut().unwrap().push(msg(
            "m5",
            "t5",
            "eve@x.example",
            "asap",
            "Could you call me tonight?",
            "2026-11-23T22:20:00Z",
        ));
        let result = run(args.clone());
        assert!(result.quiet_now);
        let by_id = |r: &TriageInboxResult, id: &str| {
            r.messages.iter().find(|m| m.id == id).unwrap().clone()
        };
        let m1 = by_id(&result, "m1");
        assert_eq!(m1.urgency, 0.765);
        assert!(m1.interrupt);
        let m5 = by_id(&result, "m5");
        // "tonight" from 23:20 local: 21:00 has passed → 23:59 today, 29 min after now: near.
        assert_eq!(m5.urgency, 0.6);
        assert_eq!(m5.signals[1].detail, "tonight");
        assert!(!m5.interrupt);
        assert!(m5.arrived_in_quiet_hours);
        assert_eq!(result.interrupt_count, 1);

        // Without quiet hours m5 interrupts too.
        args.as_object_mut().unwrap().remove("quiet_hours");
        let result = run(args);
        assert!(!result.quiet_now);
        assert!(by_id(&result, "m5").interrupt);
        assert!(!by_id(&result, "m5").arrived_in_quiet_hours);
        assert_eq!(result.interrupt_count, 2);
    }

    #[test]
    fn ties_break_by_received_then_id_and_age_has_a_floor() {
        let now = "2026-11-23T10:00:00Z";
        let body = "Deadline moved.";
        let result = run(json!({
            "messages": [
                msg("b", "x", "a@x", "", body, "2026-11-23T09:10:00Z"),
                msg("a", "y", "a@x", "", body, "2026-11-23T09:10:00Z"),
                msg("c", "z", "a@x", "", body, "2026-11-23T09:30:00Z"),
                // 100 h old VIP: 300 · max(100, 1000 − 1500) / 1000 = 30.
                msg("old", "w", "vip@x", "", "", "2026-11-19T06:00:00Z"),
            ],
            "vip_senders": ["vip@x"],
            "now": now,
        }));
        // a, b, c: bare deadline word "deadline" → 50, 50 and 30 min old (h = 0, factor 1000)
        // → 0.05 each.
        // Equal urgency: c (received later) first, then a before b by id.
        let order: Vec<(&str, f64)> = result
            .messages
            .iter()
            .map(|m| (m.id.as_str(), m.urgency))
            .collect();
        assert_eq!(
            order,
            [("c", 0.05), ("a", 0.05), ("b", 0.05), ("old", 0.03)]
        );
        assert_eq!(result.messages[0].signals[0].detail, "deadline");
        assert_eq!(
            contributions(&result.messages[3]),
            [(SignalKind::VipSender, 0.3), (SignalKind::Age, -0.27)]
        );
        assert_eq!(result.messages[3].signals[1].detail, "100 h old");
    }

    #[test]
    fn cues_beyond_the_scan_bound_or_in_quotes_do_not_count() {
        let long = format!("{} urgent", "x".repeat(SCAN_BODY_CHARS_MAX));
        let quoted = "Thanks.\n\nOn Mon, Bob wrote:\n> URGENT can you reply asap?";
        let result = run(json!({
            "messages": [
                msg("long", "t", "a@x", "", &long, "2026-11-23T10:00:00Z"),
                msg("quoted", "u", "a@x", "", quoted, "2026-11-23T10:00:00Z"),
                msg("phrase", "v", "a@x", "", "Reply as soon as possible, time sensitive!",
                    "2026-11-23T10:00:00Z"),
            ],
            "now": "2026-11-23T10:00:00Z",
        }));
        let get = |id: &str| result.messages.iter().find(|m| m.id == id).unwrap();
        assert_eq!(get("long").urgency, 0.0);
        assert_eq!(get("quoted").urgency, 0.0);
        assert_eq!(get("phrase").urgency, 0.3);
        assert_eq!(
            get("phrase").signals[0].detail,
            "as soon as possible, time sensitive"
        );
    }

    #[test]
    fn a_replys_subject_is_the_first_messages_and_is_not_scanned() {
        let now = "2026-11-23T10:00:00Z";
        let kinds = |subject: &str, body: &str| -> Vec<SignalKind> {
            let message = msg("a", "t", "a@x", subject, body, now);
            let result = run(json!({"messages": [message], "now": now}));
            result.messages[0].signals.iter().map(|s| s.kind).collect()
        };
        // The first message's urgency stays with it: a thank-you under its subject is calm.
        for subject in [
            "Re: URGENT: batch failed",
            "AW: dringend",
            "RE[2]: asap",
            "Fwd: urgent",
            "WG : Sofort",
            "TR: urgence",
        ] {
            assert_eq!(kinds(subject, "Thanks, got it."), [], "{subject}");
        }
        // A subject of its own is scanned; so is the reply's own text.
        assert_eq!(
            kinds("URGENT: batch failed", "Thanks."),
            [SignalKind::UrgentWords]
        );
        assert_eq!(kinds("Reminder: urgent", "x"), [SignalKind::UrgentWords]);
        assert_eq!(
            kinds("Re: batch", "This is urgent."),
            [SignalKind::UrgentWords]
        );
        assert!(is_reply_subject("re:x") && is_reply_subject(" Aw [3] : x"));
        assert!(!is_reply_subject("Regarding: x") && !is_reply_subject("no colon"));
    }

    #[test]
    fn every_listed_word_and_phrase_is_a_cue() {
        let now = "2026-11-23T10:00:00Z";
        let kinds = |body: &str| -> Vec<SignalKind> {
            let result =
                run(json!({"messages": [msg("a", "t", "a@x", "", body, now)], "now": now}));
            result.messages[0].signals.iter().map(|s| s.kind).collect()
        };
        for word in URGENT_WORDS {
            assert_eq!(
                kinds(&format!("x {word} x")),
                [SignalKind::UrgentWords],
                "{word}"
            );
        }
        for phrase in URGENT_PHRASES {
            assert_eq!(
                kinds(&phrase.join(" ")),
                [SignalKind::UrgentWords],
                "{phrase:?}"
            );
        }
        for word in DEADLINE_WORDS {
            assert_eq!(
                kinds(&format!("x {word} x")),
                [SignalKind::Deadline],
                "{word}"
            );
        }
        for phrase in REQUEST_PHRASE_LISTS.iter().copied().flatten() {
            let text = format!("x {} x", phrase.join(" "));
            assert_eq!(kinds(&text), [SignalKind::DirectQuestion], "{phrase:?}");
        }
        for word in YOU_WORDS {
            assert_eq!(
                kinds(&format!("x {word} x?")),
                [SignalKind::DirectQuestion],
                "{word}"
            );
            assert_eq!(kinds(&format!("x {word} x.")), [], "{word}");
        }
    }

    #[test]
    fn details_stay_within_their_bound() {
        // A 320-character VIP address is cut to 200 characters (199 + '…': no spaces to cut
        // at), and the answer still satisfies the result schema (checked in `run`).
        let sender = format!("{}@x", "a".repeat(318));
        let now = "2026-11-23T10:00:00Z";
        let result = run(json!({
            "messages": [msg("a", "t", &sender, "", "", now)],
            "vip_senders": [sender.to_uppercase()],
            "now": now,
        }));
        let detail = &result.messages[0].signals[0].detail;
        assert_eq!(*detail, format!("{}…", "a".repeat(199)));
    }

    #[test]
    fn empty_inbox_and_defaults() {
        let result = run(json!({"messages": [], "now": "2026-11-23T03:00:00+01:00",
                                "quiet_hours": {"start": "22:00", "end": "07:00"},
                                "utc_offset_minutes": 60}));
        assert!(result.messages.is_empty());
        assert!(result.quiet_now);
        assert_eq!(result.interrupt_count, 0);
        let args: TriageInboxArgs =
            serde_json::from_value(json!({"messages": [], "now": "2026-11-23T03:00:00Z"})).unwrap();
        assert_eq!(args.vip_senders, Vec::<String>::new());
        assert_eq!(args.utc_offset_minutes, 0);
        assert_eq!(args.quiet_hours, None);
    }

    #[test]
    fn inconsistent_args_are_invalid() {
        let now = "2026-11-23T10:00:00Z";
        let m = |id: &str| msg(id, "t", "a@x", "", "", now);
        invalid(
            json!({"messages": [m("a"), m("b"), m("a")], "now": now}),
            "messages[2].id: duplicate id \"a\" (also messages[0])",
        );
        invalid(
            json!({"messages": [], "now": now,
                   "quiet_hours": {"start": "22:00", "end": "22:00"}}),
            "quiet_hours",
        );
        invalid(
            json!({"messages": [], "now": now, "utc_offset_minutes": 900}),
            "utc_offset_minutes",
        );
        invalid(json!({"messages": [], "now": "yesterday"}), "now");
        invalid(
            json!({"messages": [], "now": now, "vip_senders": vec!["a@x"; 201]}),
            "vip_senders",
        );
        invalid(
            json!({"messages": [msg("a", "", "a@x", "", "", now)], "now": now}),
            "messages[0].thread_id",
        );
    }

    #[test]
    fn schema_example_runs_and_schemas_follow_the_house_rules() {
        let schema = SCHEMAS.load("triage_inbox.args.json");
        SCHEMAS.assert_header(&schema, "triage_inbox.args.json");
        let result_schema = SCHEMAS.load("triage_inbox.result.json");
        SCHEMAS.assert_header(&result_schema, "triage_inbox.result.json");
        let example = &schema["examples"][0];
        aura_testkit::assert_valid(&schema, example);
        let result = run(example.clone());
        assert_eq!(result.messages[0].id, "m1");
        assert!(result.messages[0].interrupt);
        assert_eq!(schema["properties"]["vip_senders"]["default"], json!([]));
        assert_eq!(schema["properties"]["utc_offset_minutes"]["default"], 0);
        let unknown = json!({"messages": [], "now": "2026-11-23T10:00:00Z", "colour": 1});
        assert!(serde_json::from_value::<TriageInboxArgs>(unknown.clone()).is_err());
        assert!(!aura_testkit::is_valid(&schema, &unknown));
    }
}
