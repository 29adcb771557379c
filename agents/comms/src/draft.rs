//! `draft_reply`: a reply built from fixed templates for an intent (accept, decline, defer, ask
//! for details) in a tone (formal, friendly, brief).
//!
//! The draft is a user-facing artefact (ADR-0009): the user reads, edits and sends it; no other
//! agent consumes it. This module must not send anything and must not quote the original
//! message back (the draft stays short and leaks nothing the user did not choose to send).
//!
//! Rules (also stated in `schemas/comms/draft_reply.*.json`):
//! - `to`: the sender's address (the part in `<…>` if any), trimmed.
//! - `subject`: "Re: " + the subject with every leading reply prefix (`Re:`, `RE:`, `Aw:`,
//!   `Sv:`, `Antw:`, `Re[2]:`, any case) removed, so prefixes never pile up; forward prefixes
//!   are kept ("Re: Fwd: x"). A blank subject gives "Re: (no subject)".
//! - Names: `sender_name`, else the display name in `sender`; surrounding quotes dropped,
//!   "Lee, Ann" read as "Ann Lee"; the first name is its first word. A name containing '@' is
//!   no name.
//! - Topic (formal and friendly templates only): the subject without reply and forward
//!   prefixes, whitespace collapsed, cut cleanly to [`TOPIC_CHARS_MAX`]; when blank, the first
//!   sentence of the body that is not a greeting, cut the same way; else no topic.
//! - Body: greeting, the template text, the closing (formal "Kind regards,", friendly "Best,",
//!   brief none) and the signature, separated by blank lines; see [`template_text`]. Cut cleanly
//!   to [`BODY_CHARS_MAX`] characters (`truncated` says so).
//! - `defer_until` is written in its own offset as "Monday 30 November 2026 at 14:00 (UTC+01:00)";
//!   it is only allowed with intent `defer`.
//! - `template`: "<intent>.<tone>", with ".dated" for a defer with `defer_until`.

use aura_sdk::args::check_chars;
use aura_sdk::time::parse_date_time;
use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};

use crate::common::{
    MAX_ADDRESS_CHARS, MAX_BODY_CHARS, MAX_SUBJECT_CHARS, address_of, collapse_name,
    display_name_of,
};
use crate::text::{collapse_whitespace, cut_clean, lowered, sentences, tokenize};

/// Longest draft body, in characters: a reply to read on a phone.
pub const BODY_CHARS_MAX: usize = 1_000;
/// Longest topic quoted in a template, in characters.
pub const TOPIC_CHARS_MAX: usize = 80;
/// Longest `sender_name`, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// Longest signature, in characters: room for a corporate signature with a disclaimer (the
/// body is cut at [`BODY_CHARS_MAX`] anyway).
pub const MAX_SIGNATURE_CHARS: usize = 1_000;
/// Longest result subject: "Re: " + a subject.
pub const SUBJECT_CHARS_MAX: usize = 4 + MAX_SUBJECT_CHARS;

/// The message replied to.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Original {
    /// Sender address, optionally with a display name.
    pub sender: String,
    /// The sender's name, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_name: Option<String>,
    pub subject: String,
    pub body: String,
}

/// What the reply says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    Accept,
    Decline,
    Defer,
    AskDetails,
}

/// How the reply says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tone {
    Formal,
    Friendly,
    Brief,
}

impl Intent {
    fn as_str(self) -> &'static str {
        match self {
            Intent::Accept => "accept",
            Intent::Decline => "decline",
            Intent::Defer => "defer",
            Intent::AskDetails => "ask_details",
        }
    }
}

impl Tone {
    fn as_str(self) -> &'static str {
        match self {
            Tone::Formal => "formal",
            Tone::Friendly => "friendly",
            Tone::Brief => "brief",
        }
    }
}

/// Args of `draft_reply`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DraftReplyArgs {
    pub message: Original,
    pub intent: Intent,
    pub tone: Tone,
    /// When the user will come back (intent `defer` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defer_until: Option<String>,
    /// Appended after the closing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// Result of `draft_reply`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DraftReplyResult {
    /// The address to reply to.
    pub to: String,
    pub subject: String,
    /// At most [`BODY_CHARS_MAX`] characters.
    pub body: String,
    /// The template id used.
    pub template: String,
    /// Whether the body was cut at [`BODY_CHARS_MAX`].
    pub truncated: bool,
}

/// A person's name for greetings.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Name {
    full: String,
    first: String,
}

/// Builds the draft. See the module documentation.
pub fn draft_reply(args: DraftReplyArgs) -> ToolResult<DraftReplyResult> {
    let m = &args.message;
    check_chars(&m.sender, "message.sender", 1, MAX_ADDRESS_CHARS)?;
    if address_of(&m.sender).is_empty() {
        return Err(ToolError::invalid_args(
            "message.sender: blank; a reply needs an address",
        ));
    }
    if let Some(name) = &m.sender_name {
        check_chars(name, "message.sender_name", 1, MAX_NAME_CHARS)?;
    }
    check_chars(&m.subject, "message.subject", 0, MAX_SUBJECT_CHARS)?;
    check_chars(&m.body, "message.body", 0, MAX_BODY_CHARS)?;
    if let Some(signature) = &args.signature {
        check_chars(signature, "signature", 1, MAX_SIGNATURE_CHARS)?;
    }
    let when = match (&args.defer_until, args.intent) {
        (Some(until), Intent::Defer) => Some(format_until(until)?),
        (Some(_), intent) => {
            return Err(ToolError::invalid_args(format!(
                "defer_until: only allowed with intent \"defer\", not {:?}",
                intent.as_str()
            )));
        }
        (None, _) => None,
    };

    let name = m
        .sender_name
        .as_deref()
        .or_else(|| display_name_of(&m.sender))
        .and_then(parse_name);
    let topic = topic_of(&m.subject, &m.body);
    let greeting = match (args.tone, &name) {
        (Tone::Formal, Some(n)) => Some(format!("Dear {},", n.full)),
        (Tone::Formal, None) => Some("Hello,".to_owned()),
        (Tone::Friendly, Some(n)) => Some(format!("Hi {},", n.first)),
        (Tone::Friendly, None) => Some("Hi there,".to_owned()),
        (Tone::Brief, Some(n)) => Some(format!("{},", n.first)),
        (Tone::Brief, None) => None,
    };
    let text = template_text(args.intent, args.tone, topic.as_deref(), when.as_deref());
    let signature = args
        .signature
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let closing = match (args.tone, signature) {
        (Tone::Formal, Some(s)) => Some(format!("Kind regards,\n{s}")),
        (Tone::Formal, None) => Some("Kind regards,".to_owned()),
        (Tone::Friendly, Some(s)) => Some(format!("Best,\n{s}")),
        (Tone::Friendly, None) => Some("Best,".to_owned()),
        (Tone::Brief, s) => s.map(str::to_owned),
    };
    let full: Vec<String> = [greeting, Some(text), closing]
        .into_iter()
        .flatten()
        .collect();
    let (body, truncated) = cut_clean(&full.join("\n\n"), BODY_CHARS_MAX);
    let mut template = format!("{}.{}", args.intent.as_str(), args.tone.as_str());
    if when.is_some() {
        template.push_str(".dated");
    }
    Ok(DraftReplyResult {
        to: address_of(&m.sender).to_owned(),
        subject: reply_subject(&m.subject),
        body,
        template,
        truncated,
    })
}

/// The template text for an intent and tone. `topic` is quoted by the formal and friendly
/// texts ("regarding \"…\"", "about \"…\""); `when` is a formatted `defer_until`.
pub fn template_text(
    intent: Intent,
    tone: Tone,
    topic: Option<&str>,
    when: Option<&str>,
) -> String {
    let re = match (tone, topic) {
        (Tone::Formal, Some(t)) => format!(" regarding \"{t}\""),
        (Tone::Friendly, Some(t)) => format!(" about \"{t}\""),
        _ => String::new(),
    };
    let by = match when {
        Some(w) => format!("by {w}"),
        None => "as soon as I can".to_owned(),
    };
    match (intent, tone) {
        (Intent::Accept, Tone::Formal) => format!(
            "Thank you for your message{re}. I am pleased to confirm that this works for me, \
             and I am happy to proceed as proposed.\n\nPlease let me know if you need anything \
             further from me."
        ),
        (Intent::Accept, Tone::Friendly) => format!(
            "Thanks for getting in touch{re}! That works for me, so let's go ahead.\n\nJust let \
             me know if there's anything else you need."
        ),
        (Intent::Accept, Tone::Brief) => "Sounds good, confirmed.".to_owned(),
        (Intent::Decline, Tone::Formal) => format!(
            "Thank you for your message{re}. Unfortunately, I am unable to take this on at the \
             moment, so I must respectfully decline.\n\nThank you for your understanding."
        ),
        (Intent::Decline, Tone::Friendly) => format!(
            "Thanks for thinking of me{re}! Unfortunately I can't make this one work right now, \
             so I'll have to pass this time.\n\nHope you understand."
        ),
        (Intent::Decline, Tone::Brief) => "Thanks, but I can't do this one.".to_owned(),
        (Intent::Defer, Tone::Formal) => format!(
            "Thank you for your message{re}. I am not able to give this my full attention right \
             now; I will come back to you {by}."
        ),
        (Intent::Defer, Tone::Friendly) => format!(
            "Thanks for your message{re}! I can't get to it just yet, but I'll get back to you \
             {by}."
        ),
        (Intent::Defer, Tone::Brief) => format!("Will get back to you {by}."),
        (Intent::AskDetails, Tone::Formal) => format!(
            "Thank you for your message{re}. Before I can give you a proper answer, could you \
             please share a few more details, such as the timeline, the scope and what you need \
             from me?"
        ),
        (Intent::AskDetails, Tone::Friendly) => format!(
            "Thanks for your message{re}! Could you tell me a bit more: the timing, the scope and \
             what you need from me?"
        ),
        (Intent::AskDetails, Tone::Brief) => {
            "Could you send more details? Timing and scope would help.".to_owned()
        }
    }
}

/// Reply prefixes removed from the front of a subject (compared lower-cased, before a ':').
const REPLY_PREFIXES: &[&str] = &["re", "aw", "sv", "antw"];
/// Forward prefixes, removed only for the topic.
const FORWARD_PREFIXES: &[&str] = &["fw", "fwd"];

/// The subject without leading prefixes from `prefixes` (also "Re[2]:" forms), trimmed.
fn strip_prefixes<'a>(subject: &'a str, prefixes: &[&[&str]]) -> &'a str {
    let mut rest = subject.trim();
    loop {
        let Some(colon) = rest.find(':') else {
            return rest;
        };
        let head = rest[..colon].trim_end().to_lowercase();
        // "re[2]" → "re".
        let word = match head.find('[') {
            Some(b)
                if head.ends_with(']')
                    && head[b + 1..head.len() - 1]
                        .bytes()
                        .all(|c| c.is_ascii_digit()) =>
            {
                &head[..b]
            }
            _ => head.as_str(),
        };
        if prefixes.iter().any(|list| list.contains(&word)) {
            rest = rest[colon + 1..].trim_start();
        } else {
            return rest;
        }
    }
}

/// "Re: " + the subject without reply prefixes; "Re: (no subject)" when blank.
pub fn reply_subject(subject: &str) -> String {
    let rest = strip_prefixes(subject, &[REPLY_PREFIXES]);
    if rest.is_empty() {
        "Re: (no subject)".to_owned()
    } else {
        format!("Re: {rest}")
    }
}

/// Words that open a greeting line rather than a topic.
const GREETINGS: &[&str] = &["hi", "hello", "hey", "dear", "good", "greetings", "hiya"];

/// The topic quoted by the templates (module docs).
fn topic_of(subject: &str, body: &str) -> Option<String> {
    let from_subject =
        collapse_whitespace(strip_prefixes(subject, &[REPLY_PREFIXES, FORWARD_PREFIXES]));
    let topic = if from_subject.is_empty() {
        sentences(body).into_iter().find(|s| {
            let lower = lowered(s);
            let first = tokenize(s, &lower).into_iter().next();
            !s.ends_with(',') && !first.is_some_and(|t| GREETINGS.contains(&t.lower.as_ref()))
        })?
    } else {
        from_subject
    };
    let topic = topic.trim_end_matches(['.', '!', '?', ':', ';', ',']);
    (!topic.is_empty()).then(|| cut_clean(topic, TOPIC_CHARS_MAX).0)
}

/// A greeting name from a display name (module docs).
fn parse_name(raw: &str) -> Option<Name> {
    let name = collapse_name(raw);
    if name.is_empty() || name.contains('@') {
        return None;
    }
    let full = match name.split_once(',') {
        Some((last, first)) if !first.trim().is_empty() && !last.trim().is_empty() => {
            format!("{} {}", first.trim(), last.trim())
        }
        _ => name,
    };
    let first = full.split_whitespace().next()?.to_owned();
    Some(Name { full, first })
}

const WEEKDAY_NAMES: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// "2026-11-30T14:00:00+01:00" → "Monday 30 November 2026 at 14:00 (UTC+01:00)".
fn format_until(until: &str) -> ToolResult<String> {
    let t = parse_date_time(until, "defer_until")?;
    let weekday = WEEKDAY_NAMES[usize::from(t.weekday().number_days_from_monday())];
    let offset = t.offset();
    let zone = if offset.is_utc() {
        "UTC".to_owned()
    } else {
        let sign = if offset.is_negative() { '-' } else { '+' };
        format!(
            "UTC{sign}{:02}:{:02}",
            offset.whole_hours().unsigned_abs(),
            offset.minutes_past_hour().unsigned_abs()
        )
    };
    Ok(format!(
        "{weekday} {} {} {} at {:02}:{:02} ({zone})",
        t.day(),
        t.month(),
        t.year(),
        t.hour(),
        t.minute()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use aura_sdk::ToolErrorKind;
    use serde_json::{Value, json};

    fn run(args: Value) -> DraftReplyResult {
        let args: DraftReplyArgs = serde_json::from_value(args).unwrap();
        let result = draft_reply(args).unwrap();
        let schema = SCHEMAS.load("draft_reply.result.json");
        aura_testkit::assert_valid(&schema, &serde_json::to_value(&result).unwrap());
        result
    }

    #[test]
    fn friendly_defer_with_a_date() {
        // 2026-11-30 is a Monday (2026-11-23 is one).
        let result = run(json!({
            "message": {"sender": "Ann Lee <ann@example.com>", "subject": "Re: Budget review",
                        "body": "Hi, can we go through the budget this week?"},
            "intent": "defer", "tone": "friendly",
            "defer_until": "2026-11-30T14:00:00+01:00", "signature": "Sam"
        }));
        assert_eq!(
            result,
            DraftReplyResult {
                to: "ann@example.com".into(),
                subject: "Re: Budget review".into(),
                body: "Hi Ann,\n\nThanks for your message about \"Budget review\"! I can't get to \
                       it just yet, but I'll get back to you by Monday 30 November 2026 at 14:00 \
                       (UTC+01:00).\n\nBest,\nSam"
                    .into(),
                template: "defer.friendly.dated".into(),
                truncated: false,
            }
        );
    }

    #[test]
    fn formal_accept_reorders_the_name_and_strips_stacked_prefixes() {
        let result = run(json!({
            "message": {"sender": "ann@example.com", "sender_name": "Lee, Ann",
                        "subject": "RE: re[2]: Aw:  Offer", "body": ""},
            "intent": "accept", "tone": "formal"
        }));
        assert_eq!(result.subject, "Re: Offer");
        assert_eq!(
            result.body,
            "Dear Ann Lee,\n\nThank you for your message regarding \"Offer\". I am pleased to \
             confirm that this works for me, and I am happy to proceed as proposed.\n\nPlease let \
             me know if you need anything further from me.\n\nKind regards,"
        );
        assert_eq!(result.template, "accept.formal");
    }

    #[test]
    fn brief_texts_have_no_topic_and_no_greeting_without_a_name() {
        let result = run(json!({
            "message": {"sender": " bob@x.example ", "subject": "Fwd: Party", "body": "Come!"},
            "intent": "decline", "tone": "brief", "signature": "  S.  "
        }));
        assert_eq!(result.to, "bob@x.example");
        // Forward prefixes stay in the subject.
        assert_eq!(result.subject, "Re: Fwd: Party");
        assert_eq!(result.body, "Thanks, but I can't do this one.\n\nS.");
        assert_eq!(result.template, "decline.brief");

        let result = run(json!({
            "message": {"sender": "\"Dana\" <dana@x.example>", "subject": "x", "body": ""},
            "intent": "defer", "tone": "brief"
        }));
        assert_eq!(
            result.body,
            "Dana,\n\nWill get back to you as soon as I can."
        );
        assert_eq!(result.template, "defer.brief");
    }

    #[test]
    fn blank_subject_takes_the_topic_from_the_body() {
        let result = run(json!({
            "message": {"sender": "carol@x.example", "subject": "  ",
                        "body": "Hello Sam,\n\nWe need a quote for the new office fit-out. Thanks."},
            "intent": "ask_details", "tone": "formal"
        }));
        assert_eq!(result.subject, "Re: (no subject)");
        assert_eq!(
            result.body,
            "Hello,\n\nThank you for your message regarding \"We need a quote for the new office \
             fit-out\". Before I can give you a proper answer, could you please share a few more \
             details, such as the timeline, the scope and what you need from me?\n\nKind regards,"
        );
        // No subject and only a greeting: no topic at all.
        let result = run(json!({
            "message": {"sender": "carol@x.example", "subject": "", "body": "Hi,"},
            "intent": "ask_details", "tone": "friendly"
        }));
        assert_eq!(
            result.body,
            "Hi there,\n\nThanks for your message! Could you tell me a bit more: the timing, the \
             scope and what you need from me?\n\nBest,"
        );
    }

    #[test]
    fn long_topic_and_long_body_are_cut_cleanly() {
        // Topic: 20 × "word " = 100 chars → collapsed "word … word" (99); cut at 80: the first
        // 79 chars end inside the 16th word ("word" ×15 + spaces = 75, then "word"[..4] = 79 →
        // the 80th char is a space): kept whole, 79 chars + '…'.
        let subject = "word ".repeat(20);
        let result = run(json!({
            "message": {"sender": "a@x", "subject": subject, "body": ""},
            "intent": "accept", "tone": "friendly"
        }));
        let topic = format!("{}…", "word ".repeat(16).trim_end());
        assert!(
            result.body.contains(&format!("about \"{topic}\"!")),
            "{}",
            result.body
        );

        // Body: "Hello,\n\n" (8) + the accept.formal text without topic (172) + "\n\n" (2) +
        // "Kind regards,\n" (14) = 196 chars, then a 999-char signature "abcd abcd … abcd":
        // 1195 > 1000. The first 999 chars hold 803 of the signature; its char 803 is 'd'
        // (803 mod 5 = 3), so the cut goes back to the space at 799: 160 words (799 chars),
        // then '…': 196 + 799 + 1 = 996 chars.
        let signature = "abcd ".repeat(200).trim_end().to_owned();
        let result = run(json!({
            "message": {"sender": "a@x", "subject": "", "body": ""},
            "intent": "accept", "tone": "formal", "signature": signature
        }));
        let text = template_text(Intent::Accept, Tone::Formal, None, None);
        assert_eq!(text.chars().count(), 172);
        let expected = format!(
            "Hello,\n\n{text}\n\nKind regards,\n{}…",
            "abcd ".repeat(160).trim_end()
        );
        assert_eq!(result.body, expected);
        assert_eq!(result.body.chars().count(), 996);
        assert!(result.truncated);
    }

    #[test]
    fn dates_are_written_in_their_own_offset() {
        // 2026-12-01 is the Tuesday after Monday 30 November.
        assert_eq!(
            format_until("2026-12-01T09:05:00-05:30").unwrap(),
            "Tuesday 1 December 2026 at 09:05 (UTC-05:30)"
        );
        assert_eq!(
            format_until("2026-12-01T09:05:59.9Z").unwrap(),
            "Tuesday 1 December 2026 at 09:05 (UTC)"
        );
        assert!(format_until("next week").is_err());
    }

    #[test]
    fn every_intent_and_tone_has_a_template_in_the_schema() {
        let schema = SCHEMAS.load("draft_reply.result.json");
        let ids = schema["properties"]["template"]["enum"].as_array().unwrap();
        for intent in ["accept", "decline", "defer", "ask_details"] {
            for tone in ["formal", "friendly", "brief"] {
                let result = run(json!({
                    "message": {"sender": "a@x", "subject": "s", "body": ""},
                    "intent": intent, "tone": tone
                }));
                assert!(ids.contains(&json!(result.template)), "{}", result.template);
                assert!(!result.body.is_empty());
            }
        }
    }

    #[test]
    fn inconsistent_args_are_invalid() {
        for (args, needle) in [
            (
                json!({"message": {"sender": "a@x", "subject": "", "body": ""},
                       "intent": "accept", "tone": "brief",
                       "defer_until": "2026-12-01T09:00:00Z"}),
                "defer_until: only allowed with intent \"defer\"",
            ),
            (
                json!({"message": {"sender": "   ", "subject": "", "body": ""},
                       "intent": "accept", "tone": "brief"}),
                "message.sender",
            ),
            (
                json!({"message": {"sender": "a@x", "subject": "", "body": ""},
                       "intent": "defer", "tone": "brief", "defer_until": "soon"}),
                "defer_until",
            ),
        ] {
            let args: DraftReplyArgs = serde_json::from_value(args).unwrap();
            let e = draft_reply(args).unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
            assert!(e.message.contains(needle), "{needle}: {}", e.message);
        }
    }

    #[test]
    fn schema_example_runs_and_schemas_follow_the_house_rules() {
        let schema = SCHEMAS.load("draft_reply.args.json");
        SCHEMAS.assert_header(&schema, "draft_reply.args.json");
        let result_schema = SCHEMAS.load("draft_reply.result.json");
        SCHEMAS.assert_header(&result_schema, "draft_reply.result.json");
        let example = &schema["examples"][0];
        aura_testkit::assert_valid(&schema, example);
        let result = run(example.clone());
        assert_eq!(result.template, "defer.friendly.dated");
        let unknown = json!({"message": {"sender": "a@x", "subject": "", "body": ""},
                             "intent": "accept", "tone": "brief", "cc": "x"});
        assert!(serde_json::from_value::<DraftReplyArgs>(unknown.clone()).is_err());
        assert!(!aura_testkit::is_valid(&schema, &unknown));
        assert_eq!(
            result_schema["properties"]["body"]["maxLength"],
            BODY_CHARS_MAX
        );
        assert_eq!(
            schema["properties"]["signature"]["maxLength"],
            MAX_SIGNATURE_CHARS
        );
        assert_eq!(
            result_schema["properties"]["subject"]["maxLength"],
            SUBJECT_CHARS_MAX
        );
        // The longest subject gets exactly "Re: " in front.
        let long = "s".repeat(MAX_SUBJECT_CHARS);
        assert_eq!(reply_subject(&long).chars().count(), SUBJECT_CHARS_MAX);
    }
}
