//! `extract_action_items`: requests, commitments and deadlines in a thread, each with an owner
//! and, when a date phrase says so, a due time.
//!
//! It owns the sentence rules below; dates come from [`crate::dates`], sentences and words from
//! [`crate::text`]. It must not guess beyond these rules (no names it cannot see, no dates it
//! cannot parse) and it changes nothing.
//!
//! Rules (also stated in `schemas/comms/extract_action_items.*.json`):
//! - Each message's new text is split into sentences ([`crate::text::Sentences`]: quoted
//!   history and signatures are skipped). A sentence is an action item when one rule fires,
//!   tried in this order (`owner_rule`):
//!   1. `named`: it opens with a name (one or two capitalized words, not all capitals, not in
//!      [`NOT_NAMES`], at most [`NAME_CHARS_MAX`] characters) followed by a comma and a
//!      request ("Bob, can you …"), or followed by [`NAMED_COMMITMENTS`] ("Priya will …").
//!      Owner: the name as written. After a greeting ("Hi Bob, can you …") the name is the
//!      recipient's, and rule 2 applies.
//!   2. `request`: it holds one of [`ASK_READER_PHRASES`] or [`ACTION_REQUEST_PHRASES`]
//!      (except the boilerplate in [`NOT_REQUESTS`]), or its first word after optional
//!      [`SOFTENERS`] (and a greeting with a name and comma) is one of [`IMPERATIVE_VERBS`].
//!      Owner: "me" when the message is addressed to the user (sent by someone else, and `to`
//!      is absent or lists `me`); otherwise the only recipient in `to` other than `me`, if
//!      there is exactly one; else no owner.
//!   3. `commitment`: it holds one of [`COMMITMENT_PHRASES`] (not followed by "not"/"never";
//!      "let me" not followed by "know"; "will do" only opening the sentence). Owner: "me"
//!      when the sender is `me`, else the sender's address.
//!   4. `group`: one of [`GROUP_PHRASES`] ("we need to", "let's"), in a sentence that is not
//!      an exclamation: "Let's celebrate the quarter!" is a cheer, not a task. No owner.
//!   5. `marker`: it opens with "action item(s)", "todo" or "to-do". No owner.
//!   6. `deadline`: it names a deadline ("due", "deadline", "overdue") and has a date phrase.
//!      No owner.
//! - Addresses are compared case-insensitively on the part in `<…>`; owners that are
//!   addresses are given in that lower-cased form. Without `me`, every message counts as
//!   addressed to the user and none as sent by the user.
//! - `due`: the first date phrase of the sentence, resolved relative to the message's
//!   `sent_at` in the user's offset (see [`crate::dates`] for the rules: "by Friday" is Friday
//!   17:00 local, "EOD" 17:00 today, "next week" Monday 09:00, "in 2 hours" exactly two hours
//!   later), written in RFC 3339 at `utc_offset_minutes`; `due_phrase` is the phrase as written.
//! - `text`: the sentence, whitespace collapsed, cut cleanly to [`TEXT_CHARS_MAX`] characters.
//!   An item with the same text and owner as an earlier one is left out.
//! - Items are in thread order, then sentence order; at most [`ITEMS_MAX`] (`truncated`).

use std::collections::HashSet;
use std::fmt::Display;

use aura_sdk::args::{check_chars, check_len};
use aura_sdk::time::{check_offset, parse_time};
use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};

use crate::common::{MAX_ADDRESS_CHARS, MAX_BODY_CHARS, address_of, normalize_address};
use crate::dates;
use crate::text::{
    ASK_READER_PHRASES, Sentences, Token, any_phrase_at, cut_clean, lowered, tokenize, words_at,
};

/// Most messages in one thread.
pub const MAX_THREAD_MESSAGES: usize = 100;
/// Most recipients of one message.
pub const MAX_RECIPIENTS: usize = 50;
/// Longest item text, in characters: a long sentence, still readable on a card.
pub const TEXT_CHARS_MAX: usize = 300;
/// Longest due phrase reported, in characters (phrases are a few words; this is a backstop).
pub const DUE_PHRASE_CHARS_MAX: usize = 100;
/// Longest name taken as an owner, in characters: longer capitalized runs are not names.
pub const NAME_CHARS_MAX: usize = 60;
/// Most items in a result. 100 messages of 20,000 characters could hold tens of thousands of
/// sentences; 500 items (~250 KB at worst) is more than anyone reads and far below the host's
/// 1 MiB cap.
pub const ITEMS_MAX: usize = 500;

/// Requests for an action beyond asking (the phrases that ask the reader are
/// [`ASK_READER_PHRASES`]): obligations put on the reader ("you need to", "make sure") and the
/// polite markers that open an instruction ("please", "kindly").
pub const ACTION_REQUEST_PHRASES: &[&[&str]] = &[
    &["are", "you", "able", "to"],
    &["you", "need", "to"],
    &["you", "should"],
    &["you", "must"],
    &["you", "have", "to"],
    &["need", "you", "to"],
    &["make", "sure"],
    &["don't", "forget"],
    &["dont", "forget"],
    &["remember", "to"],
    &["please"],
    &["pls"],
    &["plz"],
    &["kindly"],
];
/// Boilerplate that looks like a request and is none.
pub const NOT_REQUESTS: &[&[&str]] = &[
    &["please", "find"],
    &["please", "see"],
    &["please", "note"],
    &["please", "feel"],
    &["please", "don't", "hesitate"],
    &["please", "do", "not", "hesitate"],
    &["please", "ignore"],
    &["please", "disregard"],
    &["let", "me", "know", "if", "you", "have"],
    &["let", "me", "know", "if", "you", "need"],
];
/// Words skipped before an imperative verb.
pub const SOFTENERS: &[&str] = &[
    "please", "pls", "kindly", "also", "and", "then", "so", "just",
];
/// Verbs that make a sentence opening with them a request (sorted: binary search).
pub const IMPERATIVE_VERBS: &[&str] = &[
    "add",
    "approve",
    "arrange",
    "ask",
    "book",
    "bring",
    "buy",
    "call",
    "cancel",
    "check",
    "circulate",
    "collect",
    "complete",
    "confirm",
    "contact",
    "deliver",
    "deploy",
    "double-check",
    "draft",
    "e-mail",
    "email",
    "file",
    "fill",
    "finalise",
    "finalize",
    "finish",
    "fix",
    "follow",
    "forward",
    "install",
    "invite",
    "merge",
    "order",
    "organise",
    "organize",
    "pay",
    "phone",
    "ping",
    "post",
    "prepare",
    "print",
    "proofread",
    "provide",
    "publish",
    "read",
    "register",
    "remember",
    "remind",
    "remove",
    "renew",
    "reply",
    "reschedule",
    "reserve",
    "respond",
    "return",
    "review",
    "schedule",
    "send",
    "set",
    "share",
    "ship",
    "sign",
    "submit",
    "tell",
    "test",
    "text",
    "update",
    "upload",
    "write",
];
/// Commitments by the sender.
pub const COMMITMENT_PHRASES: &[&[&str]] = &[
    &["i", "will"],
    &["i'll"],
    &["i", "am", "going", "to"],
    &["i'm", "going", "to"],
    &["im", "going", "to"],
    &["i", "shall"],
    &["i", "plan", "to"],
    &["let", "me"],
    &["will", "do"],
];
/// What makes "<Name> …" a commitment of that person.
pub const NAMED_COMMITMENTS: &[&[&str]] = &[
    &["will"],
    &["can"],
    &["should"],
    &["must"],
    &["is", "going", "to"],
    &["needs", "to"],
    &["has", "to"],
];
/// Shared obligations without an owner.
pub const GROUP_PHRASES: &[&[&str]] = &[
    &["we", "need", "to"],
    &["we", "should"],
    &["we", "must"],
    &["we", "have", "to"],
    &["we'll", "need", "to"],
    &["we", "will", "need", "to"],
    &["let's"],
    &["let", "us"],
    &["someone", "needs", "to"],
    &["someone", "should"],
    &["somebody", "needs", "to"],
];
/// Openings that mark an action item.
pub const MARKERS: &[&[&str]] = &[
    &["action", "item"],
    &["action", "items"],
    &["todo"],
    &["to-do"],
];
/// Words that name a deadline.
pub const DEADLINE_WORDS: &[&str] = &["due", "deadline", "overdue"];
/// Greeting words: "Hi Bob, can you …" addresses the recipient, not a third person.
pub const GREETINGS: &[&str] = &["hi", "hello", "hey", "dear", "hiya", "morning", "evening"];
/// Capitalized words that open sentences but are not names (compared lower-cased; sorted:
/// binary search).
pub const NOT_NAMES: &[&str] = &[
    "a",
    "actually",
    "after",
    "again",
    "all",
    "also",
    "an",
    "and",
    "anybody",
    "anyone",
    "are",
    "as",
    "awesome",
    "before",
    "both",
    "btw",
    "but",
    "can",
    "cool",
    "could",
    "dear",
    "did",
    "do",
    "does",
    "each",
    "either",
    "everybody",
    "everyone",
    "everyone's",
    "everything",
    "finally",
    "fine",
    "first",
    "folks",
    "friday",
    "friends",
    "fyi",
    "good",
    "great",
    "guys",
    "he",
    "hello",
    "her",
    "here",
    "hey",
    "hi",
    "his",
    "honestly",
    "hopefully",
    "however",
    "i",
    "ideally",
    "if",
    "is",
    "it",
    "its",
    "just",
    "last",
    "let",
    "let's",
    "maybe",
    "meanwhile",
    "monday",
    "my",
    "neither",
    "next",
    "no",
    "nobody",
    "note",
    "nothing",
    "ok",
    "okay",
    "once",
    "or",
    "otherwise",
    "our",
    "per",
    "perfect",
    "perhaps",
    "please",
    "pls",
    "quick",
    "regarding",
    "reminder",
    "saturday",
    "second",
    "she",
    "should",
    "so",
    "somebody",
    "someone",
    "something",
    "sunday",
    "sure",
    "team",
    "thank",
    "thanks",
    "that",
    "the",
    "their",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "thursday",
    "thx",
    "today",
    "tomorrow",
    "tonight",
    "tuesday",
    "unfortunately",
    "update",
    "was",
    "we",
    "wednesday",
    "were",
    "what",
    "when",
    "which",
    "who",
    "whoever",
    "will",
    "would",
    "yes",
    "you",
    "your",
];

/// One message of the thread.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadMessage {
    /// Sender address, optionally with a display name.
    pub sender: String,
    /// Plain-text body.
    pub body: String,
    /// RFC 3339 time the message was sent; date phrases are read relative to it.
    pub sent_at: String,
    /// Recipients, if known (at most 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<Vec<String>>,
}

/// Args of `extract_action_items`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractActionItemsArgs {
    /// The thread, in any order (items refer to messages by index).
    pub thread: Vec<ThreadMessage>,
    /// The user's address, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub me: Option<String>,
    /// The user's offset east of UTC in minutes (-840..840). Default 0.
    #[serde(default)]
    pub utc_offset_minutes: i32,
}

/// Which rule made a sentence an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OwnerRule {
    Named,
    Request,
    Commitment,
    Group,
    Marker,
    Deadline,
}

/// One action item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ActionItem {
    pub text: String,
    /// "me", an address, or a name; absent when the rule names nobody.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    pub owner_rule: OwnerRule,
    /// RFC 3339 at the user's offset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub due: Option<String>,
    /// The date phrase as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub due_phrase: Option<String>,
    /// Index of the message in `thread`.
    pub message_index: u32,
}

/// Result of `extract_action_items`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExtractActionItemsResult {
    pub items: Vec<ActionItem>,
    /// Whether items were left out at [`ITEMS_MAX`].
    pub truncated: bool,
}

/// An item before serialization, with its due instant (for the tick).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub item: ActionItem,
    pub due_at: Option<i64>,
}

/// Extracts the action items. See the module documentation.
pub fn extract_action_items(args: ExtractActionItemsArgs) -> ToolResult<ExtractActionItemsResult> {
    let (found, truncated) = extract(&args)?;
    Ok(ExtractActionItemsResult {
        items: found.into_iter().map(|f| f.item).collect(),
        truncated,
    })
}

/// Checks the args and finds the items (also used by the tick).
pub fn extract(args: &ExtractActionItemsArgs) -> ToolResult<(Vec<Found>, bool)> {
    check_len(&args.thread, "thread", MAX_THREAD_MESSAGES)?;
    check_offset(args.utc_offset_minutes, "utc_offset_minutes")?;
    let me = match &args.me {
        Some(me) => Some(checked_address(me, "me")?),
        None => None,
    };
    let mut items = Vec::new();
    let mut seen: HashSet<(String, Option<String>)> = HashSet::new();
    let mut truncated = false;
    for (index, message) in args.thread.iter().enumerate() {
        let field = format!("thread[{index}]");
        let sender = checked_address(&message.sender, format_args!("{field}.sender"))?;
        check_chars(
            &message.body,
            format_args!("{field}.body"),
            0,
            MAX_BODY_CHARS,
        )?;
        let sent = parse_time(&message.sent_at, format_args!("{field}.sent_at"))?;
        let mut to = Vec::new();
        if let Some(list) = &message.to {
            check_len(list, format_args!("{field}.to"), MAX_RECIPIENTS)?;
            for (k, recipient) in list.iter().enumerate() {
                to.push(checked_address(recipient, format_args!("{field}.to[{k}]"))?);
            }
        }
        if truncated {
            continue; // keep checking the args, stop collecting
        }
        let sender_is_me = me.as_deref() == Some(sender.as_str());
        let addressed_to_me =
            !sender_is_me && (to.is_empty() || me.as_ref().is_none_or(|me| to.contains(me)));
        let others: Vec<&String> = to.iter().filter(|r| Some(*r) != me.as_ref()).collect();
        let sole_recipient = match others.as_slice() {
            [only] => Some((*only).clone()),
            _ => None,
        };
        let body = Sentences::of(&message.body);
        let lower = lowered(&body.text);
        let all_tokens = tokenize(&body.text, &lower);
        let ranges = body.token_ranges(&all_tokens);
        for (&(start, end), &(first, last)) in body.spans.iter().zip(&ranges) {
            let sentence = &body.text[start..end];
            let tokens = &all_tokens[first..last];
            // Token offsets are into the whole buffer, so the rules get the buffer.
            let Some((rule, name)) = classify(&body.text, tokens) else {
                continue;
            };
            let due = dates::find_all_in(&body.text, tokens, sent, args.utc_offset_minutes)
                .into_iter()
                .next();
            if rule == OwnerRule::Deadline && due.is_none() {
                continue;
            }
            let owner = match rule {
                OwnerRule::Named => name,
                OwnerRule::Request if addressed_to_me => Some("me".to_owned()),
                OwnerRule::Request => sole_recipient.clone(),
                OwnerRule::Commitment if sender_is_me => Some("me".to_owned()),
                OwnerRule::Commitment => Some(sender.clone()),
                OwnerRule::Group | OwnerRule::Marker | OwnerRule::Deadline => None,
            };
            let text = cut_clean(sentence, TEXT_CHARS_MAX).0;
            if !seen.insert((text.clone(), owner.clone())) {
                continue;
            }
            if items.len() == ITEMS_MAX {
                truncated = true;
                break;
            }
            items.push(Found {
                due_at: due.as_ref().map(|d| d.at),
                item: ActionItem {
                    text,
                    owner,
                    owner_rule: rule,
                    due_phrase: due
                        .as_ref()
                        .map(|d| cut_clean(d.phrase(&body.text), DUE_PHRASE_CHARS_MAX).0),
                    due: due.map(|d| d.rfc3339()),
                    message_index: index as u32,
                },
            });
        }
    }
    Ok((items, truncated))
}

/// Checks an address field (1..320 characters, an address part that is not blank) and
/// returns it normalized.
fn checked_address(raw: &str, field: impl Display) -> ToolResult<String> {
    check_chars(raw, &field, 1, MAX_ADDRESS_CHARS)?;
    if address_of(raw).is_empty() {
        return Err(ToolError::invalid_args(format!("{field}: blank address")));
    }
    Ok(normalize_address(raw))
}

/// The phrases of rule 2: those that ask the reader, and requests for an action.
const REQUEST_PHRASE_LISTS: &[&[&[&str]]] = &[ASK_READER_PHRASES, ACTION_REQUEST_PHRASES];

/// Whether a request phrase starts at `i` (and no boilerplate of [`NOT_REQUESTS`] does).
fn request_at(tokens: &[Token<'_>], i: usize) -> bool {
    any_phrase_at(tokens, i, REQUEST_PHRASE_LISTS) && !any_phrase_at(tokens, i, &[NOT_REQUESTS])
}

fn has_request(tokens: &[Token<'_>]) -> bool {
    for i in 0..tokens.len() {
        // Only the first words of the request phrases (a test checks the list) start a phrase.
        let opens = matches!(
            tokens[i].lower.as_ref(),
            "can"
                | "could"
                | "would"
                | "will"
                | "do"
                | "are"
                | "you"
                | "need"
                | "make"
                | "don't"
                | "dont"
                | "remember"
                | "let"
                | "please"
                | "pls"
                | "plz"
                | "kindly"
        );
        if opens && request_at(tokens, i) {
            return true;
        }
    }
    let first = tokens
        .iter()
        .position(|t| !SOFTENERS.contains(&t.lower.as_ref()));
    first.is_some_and(|i| {
        IMPERATIVE_VERBS
            .binary_search(&tokens[i].lower.as_ref())
            .is_ok()
    })
}

/// Whether a commitment phrase (not negated, "let me" not before "know", "will do" only
/// opening the sentence) starts at `i`.
fn commitment_at(tokens: &[Token<'_>], i: usize) -> bool {
    COMMITMENT_PHRASES.iter().any(|phrase| {
        if !words_at(tokens, i, phrase) {
            return false;
        }
        let next = tokens.get(i + phrase.len()).map(|t| t.lower.as_ref());
        let excluded = matches!(next, Some("not" | "never"))
            || (*phrase == ["let", "me"] && next == Some("know"))
            || (*phrase == ["will", "do"] && i != 0);
        !excluded
    })
}

/// Whether the token is a name word: capitalized, not all capitals, letters (and ' or -), not
/// one of [`NOT_NAMES`].
fn is_name_word(text: &str, token: &Token<'_>) -> bool {
    let word = &text[token.start..token.end];
    let mut chars = word.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    if !first.is_uppercase() {
        return false;
    }
    let mut any_lower = false;
    let mut only_letters = true;
    let mut rest_len = 0;
    for c in chars {
        rest_len += 1;
        any_lower |= c.is_lowercase();
        only_letters &= c.is_alphabetic() || c == '\'' || c == '-';
    }
    (rest_len == 0 || any_lower)
        && only_letters
        && NOT_NAMES.binary_search(&token.lower.as_ref()).is_err()
}

/// The rule a sentence (its `tokens`) matches, and for `named` the name. `text` is the buffer
/// the tokens' byte offsets refer to.
fn classify(text: &str, tokens: &[Token<'_>]) -> Option<(OwnerRule, Option<String>)> {
    let first = tokens.first()?;
    let greeting = GREETINGS.contains(&first.lower.as_ref());
    // Rule 1: "<Name>, <request>" or "<Name> will …" (not after a greeting).
    if !greeting && is_name_word(text, first) {
        let mut n = 1;
        if tokens.get(1).is_some_and(|t| is_name_word(text, t))
            && text[first.end..tokens[1].start].trim().is_empty()
        {
            n = 2;
        }
        let name = text[first.start..tokens[n - 1].end].to_owned();
        if name.chars().count() > NAME_CHARS_MAX {
            return classify_unnamed(text, tokens, greeting);
        }
        let after_comma = tokens
            .get(n)
            .is_some_and(|t| text[tokens[n - 1].end..t.start].contains(','));
        if after_comma && has_request(&tokens[n..]) {
            return Some((OwnerRule::Named, Some(name)));
        }
        if !after_comma && NAMED_COMMITMENTS.iter().any(|p| words_at(tokens, n, p)) {
            return Some((OwnerRule::Named, Some(name)));
        }
    }
    classify_unnamed(text, tokens, greeting)
}

/// Rules 2 to 6.
fn classify_unnamed(
    text: &str,
    tokens: &[Token<'_>],
    greeting: bool,
) -> Option<(OwnerRule, Option<String>)> {
    let first = tokens.first()?;
    // Rule 2: skip a greeting with its name ("Hi Bob,") before looking for an imperative.
    let body_start = if greeting {
        tokens
            .iter()
            .skip(1)
            .position(|t| text[..t.start].ends_with(", ") || text[..t.start].ends_with(','))
            .map_or(1, |p| p + 1)
    } else {
        0
    };
    if has_request(&tokens[body_start.min(tokens.len())..]) {
        return Some((OwnerRule::Request, None));
    }
    // Rules 3, 4 and 6 in one pass; phrases are only tried on their first words (a test
    // checks the lists).
    let mut commitment = false;
    let mut group = first.lower == "lets";
    let mut deadline = false;
    for i in 0..tokens.len() {
        match tokens[i].lower.as_ref() {
            "i" | "i'll" | "i'm" | "im" | "will" => commitment |= commitment_at(tokens, i),
            "let" => {
                commitment |= commitment_at(tokens, i);
                group |= any_phrase_at(tokens, i, &[GROUP_PHRASES]);
            }
            "we" | "we'll" | "let's" | "someone" | "somebody" => {
                group |= any_phrase_at(tokens, i, &[GROUP_PHRASES]);
            }
            "due" | "deadline" | "overdue" => deadline = true,
            _ => {}
        }
    }
    if commitment {
        return Some((OwnerRule::Commitment, None));
    }
    // An exclamation ("Let's celebrate!", "We should do this again!") cheers; it asks nothing.
    let exclaims = tokens
        .last()
        .is_some_and(|last| text[last.end..].trim_start().starts_with('!'));
    if group && !exclaims {
        return Some((OwnerRule::Group, None));
    }
    // Rule 5.
    if MARKERS.iter().any(|p| words_at(tokens, 0, p)) {
        return Some((OwnerRule::Marker, None));
    }
    // Rule 6 (the caller drops it without a date phrase).
    deadline.then_some((OwnerRule::Deadline, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use aura_sdk::ToolErrorKind;
    use serde_json::{Value, json};

    fn run(args: Value) -> ExtractActionItemsResult {
        let args: ExtractActionItemsArgs = serde_json::from_value(args).unwrap();
        let result = extract_action_items(args).unwrap();
        let schema = SCHEMAS.load("extract_action_items.result.json");
        aura_testkit::assert_valid(&schema, &serde_json::to_value(&result).unwrap());
        result
    }

    fn item(
        text: &str,
        owner: Option<&str>,
        owner_rule: OwnerRule,
        due: Option<(&str, &str)>,
        message_index: u32,
    ) -> ActionItem {
        ActionItem {
            text: text.into(),
            owner: owner.map(Into::into),
            owner_rule,
            due: due.map(|(_, d)| d.into()),
            due_phrase: due.map(|(p, _)| p.into()),
            message_index,
        }
    }

    /// Sentences of one message from someone else to the user, without `me`: (rule, owner).
    fn rules(body: &str) -> Vec<(OwnerRule, Option<String>)> {
        run(json!({"thread": [{"sender": "x@y", "body": body, "sent_at": "2026-11-23T09:00:00Z"}]}))
            .items
            .into_iter()
            .map(|i| (i.owner_rule, i.owner))
            .collect()
    }

    fn thread() -> Value {
        json!({
            "thread": [
                {"sender": "Ann Lee <ann@corp.example>", "to": ["sam@corp.example"],
                 "sent_at": "2026-11-23T09:00:00Z",
                 "body": "Hi Sam,\n\nCan you send me the Q3 numbers by Friday? I will prepare the \
                          slides tomorrow 3pm.\nPriya will book the room.\nWe need to agree on \
                          the agenda next week.\n\nThanks,\nAnn"},
                {"sender": "sam@corp.example", "to": ["Ann <ann@corp.example>"],
                 "sent_at": "2026-11-23T16:30:00Z",
                 "body": "Sure. I'll send them by EOD.\n\nCould you share the template?\n\n\
                          On Mon, 23 Nov 2026, Ann wrote:\n> Can you send me the Q3 numbers by Friday?"},
                {"sender": "Bob <bob@corp.example>", "to": ["team@corp.example"],
                 "sent_at": "2026-11-24T08:00:00Z",
                 "body": "Action item: update the budget sheet.\nThe report is due 2026-12-01.\n\
                          Please review the budget by Wednesday."},
                {"sender": "ann@corp.example", "to": ["sam@corp.example"],
                 "sent_at": "2026-11-24T09:00:00Z",
                 "body": "Can you send me the Q3 numbers by Friday?"}
            ],
            "me": "Sam@Corp.example",
            "utc_offset_minutes": 60
        })
    }

    #[test]
    fn a_cheer_is_not_a_task() {
        use OwnerRule::*;
        assert_eq!(rules("Let's celebrate the quarter!"), []);
        assert_eq!(rules("We should do this again soon!"), []);
        // The same words as a plan, or with a request in the cheer, are items.
        assert_eq!(
            rules("Let's celebrate the quarter on Friday."),
            [(Group, None)]
        );
        assert_eq!(rules("Let's finalize the deck by Friday."), [(Group, None)]);
        // A request in an exclamation is still a request, to the reader ("me": the message
        // is from someone else and names no `to`).
        assert_eq!(
            rules("Can you book the restaurant!"),
            [(Request, Some("me".to_owned()))]
        );
    }

    #[test]
    fn a_thread_with_every_rule() {
        use OwnerRule::*;
        let result = run(thread());
        assert!(!result.truncated);
        assert_eq!(
            result.items,
            [
                // Ann → Sam (me) on Monday 10:00 local: a request to me; Friday 27th 17:00.
                item(
                    "Can you send me the Q3 numbers by Friday?",
                    Some("me"),
                    Request,
                    Some(("by Friday", "2026-11-27T17:00:00+01:00")),
                    0
                ),
                // Ann commits: owner Ann; tomorrow (Tuesday 24th) 15:00.
                item(
                    "I will prepare the slides tomorrow 3pm.",
                    Some("ann@corp.example"),
                    Commitment,
                    Some(("tomorrow 3pm", "2026-11-24T15:00:00+01:00")),
                    0
                ),
                item("Priya will book the room.", Some("Priya"), Named, None, 0),
                // Monday of the next ISO week, 09:00.
                item(
                    "We need to agree on the agenda next week.",
                    None,
                    Group,
                    Some(("next week", "2026-11-30T09:00:00+01:00")),
                    0
                ),
                // Sam (me) at 17:30 local: EOD has passed → 23:59 today. The quoted request
                // after "On … wrote:" is not read again.
                item(
                    "I'll send them by EOD.",
                    Some("me"),
                    Commitment,
                    Some(("by EOD", "2026-11-23T23:59:00+01:00")),
                    1
                ),
                // Sam asks Ann, the only other recipient.
                item(
                    "Could you share the template?",
                    Some("ann@corp.example"),
                    Request,
                    None,
                    1
                ),
                item(
                    "Action item: update the budget sheet.",
                    None,
                    Marker,
                    None,
                    2
                ),
                item(
                    "The report is due 2026-12-01.",
                    None,
                    Deadline,
                    Some(("due 2026-12-01", "2026-12-01T17:00:00+01:00")),
                    2
                ),
                // Bob writes to the team list, not to me: owner the list. Sent Tuesday 09:00
                // local → Wednesday 25th 17:00.
                item(
                    "Please review the budget by Wednesday.",
                    Some("team@corp.example"),
                    Request,
                    Some(("by Wednesday", "2026-11-25T17:00:00+01:00")),
                    2
                ),
                // Message 3 repeats item 0 (same text and owner): left out.
            ]
        );
    }

    #[test]
    fn without_me_every_message_is_addressed_to_the_user() {
        let mut args = thread();
        args.as_object_mut().unwrap().remove("me");
        let result = run(args);
        let of_message_1: Vec<(&str, Option<&str>)> = result
            .items
            .iter()
            .filter(|i| i.message_index == 1)
            .map(|i| (i.text.as_str(), i.owner.as_deref()))
            .collect();
        assert_eq!(
            of_message_1,
            [
                ("I'll send them by EOD.", Some("sam@corp.example")),
                ("Could you share the template?", Some("me")),
            ]
        );
    }

    #[test]
    fn names_greetings_and_negations() {
        use OwnerRule::*;
        let bob = Some("Bob".to_owned());
        assert_eq!(
            rules("Bob, can you check the numbers?"),
            [(Named, bob.clone())]
        );
        assert_eq!(
            rules("Bob Smith, could you review it?"),
            [(Named, Some("Bob Smith".to_owned()))]
        );
        assert_eq!(rules("Bob is going to call them."), [(Named, bob)]);
        // A greeting names the recipient: the user.
        assert_eq!(
            rules("Hi Bob, send me the file please."),
            [(Request, Some("me".into()))]
        );
        // All capitals is no name.
        assert_eq!(rules("FYI, can you check?"), [(Request, Some("me".into()))]);
        // An imperative after softeners.
        assert_eq!(
            rules("Please also book a room."),
            [(Request, Some("me".into()))]
        );
        assert_eq!(
            rules("Will do by Monday."),
            [(Commitment, Some("x@y".into()))]
        );
        assert_eq!(
            rules("Let me check with finance."),
            [(Commitment, Some("x@y".into()))]
        );
        assert_eq!(rules("Let's meet on Friday."), [(Group, None)]);
        assert_eq!(rules("TODO: fix the totals."), [(Marker, None)]);
        for nothing in [
            "Also, I will not attend.",
            "Please find attached the report.",
            "Let me know if you have any questions.",
            "Good morning!",
            "Look forward to it.",
            "The meeting was great.",
            "The deadline is flexible.",
            "Bob, thanks for the update.",
            "",
        ] {
            assert_eq!(rules(nothing), [], "{nothing}");
        }
    }

    #[test]
    fn searched_lists_are_sorted() {
        for list in [IMPERATIVE_VERBS, NOT_NAMES] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        }
    }

    #[test]
    fn every_listed_phrase_fires_its_rule() {
        use OwnerRule::*;
        for phrase in REQUEST_PHRASE_LISTS.iter().copied().flatten() {
            let body = format!("x {} y.", phrase.join(" "));
            assert_eq!(rules(&body), [(Request, Some("me".into()))], "{body}");
        }
        for verb in IMPERATIVE_VERBS {
            let body = format!("{verb} y.");
            assert_eq!(rules(&body), [(Request, Some("me".into()))], "{body}");
        }
        for phrase in COMMITMENT_PHRASES {
            let body = format!("{} y.", phrase.join(" "));
            assert_eq!(rules(&body), [(Commitment, Some("x@y".into()))], "{body}");
        }
        for phrase in GROUP_PHRASES {
            let body = format!("{} y.", phrase.join(" "));
            assert_eq!(rules(&body), [(Group, None)], "{body}");
        }
        for word in DEADLINE_WORDS {
            let body = format!("x {word} tomorrow.");
            assert_eq!(rules(&body), [(Deadline, None)], "{body}");
        }
        for phrase in MARKERS {
            let body = format!("{}: y.", phrase.join(" "));
            assert_eq!(rules(&body), [(Marker, None)], "{body}");
        }
    }

    #[test]
    fn long_sentences_are_cut_and_lists_capped() {
        // "Please review " (14) + 60 × "section " (480) = a 493-char sentence after trimming;
        // cut at 300: the first 299 chars end inside a word ((299 − 14) mod 8 = 5 → inside
        // "section"), so the cut goes back to the last space: 14 + 35 × 8 = 294 chars, minus
        // the trailing space = 293, then '…' → 294.
        let body = format!("Please review {}", "section ".repeat(60));
        let result = run(json!({"thread": [{"sender": "x@y", "body": body,
                                            "sent_at": "2026-11-23T09:00:00Z"}]}));
        let text = &result.items[0].text;
        assert_eq!(
            *text,
            format!("Please review {}…", "section ".repeat(35).trim_end())
        );
        assert_eq!(text.chars().count(), 294);

        // 501 different requests: 500 kept, truncated.
        let body: String = (0..501).map(|i| format!("Send file {i}. ")).collect();
        let result = run(json!({"thread": [{"sender": "x@y", "body": body,
                                            "sent_at": "2026-11-23T09:00:00Z"}]}));
        assert_eq!(result.items.len(), ITEMS_MAX);
        assert!(result.truncated);
        assert_eq!(result.items[499].text, "Send file 499.");
        // An empty thread has no items.
        let result = run(json!({"thread": []}));
        assert_eq!(result.items, []);
        assert!(!result.truncated);
    }

    #[test]
    fn inconsistent_args_are_invalid() {
        let ok = json!({"sender": "x@y", "body": "", "sent_at": "2026-11-23T09:00:00Z"});
        let with = |key: &str, value: Value| {
            let mut m = ok.clone();
            m[key] = value;
            m
        };
        for (args, needle) in [
            (
                json!({"thread": [ok.clone(), with("sender", json!(" <> "))]}),
                "thread[1].sender: blank",
            ),
            (json!({"thread": [ok.clone()], "me": "  "}), "me: blank"),
            (
                json!({"thread": [with("to", json!(["a@b", ""]))]}),
                "thread[0].to[1]",
            ),
            (
                json!({"thread": [with("sent_at", json!("Monday"))]}),
                "thread[0].sent_at",
            ),
            (
                json!({"thread": [], "utc_offset_minutes": -841}),
                "utc_offset_minutes",
            ),
        ] {
            let args: ExtractActionItemsArgs = serde_json::from_value(args).unwrap();
            let e = extract_action_items(args).unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
            assert!(e.message.contains(needle), "{needle}: {}", e.message);
        }
    }

    #[test]
    fn schema_example_runs_and_schemas_follow_the_house_rules() {
        let schema = SCHEMAS.load("extract_action_items.args.json");
        SCHEMAS.assert_header(&schema, "extract_action_items.args.json");
        let result_schema = SCHEMAS.load("extract_action_items.result.json");
        SCHEMAS.assert_header(&result_schema, "extract_action_items.result.json");
        let example = &schema["examples"][0];
        aura_testkit::assert_valid(&schema, example);
        let result = run(example.clone());
        assert_eq!(result.items.len(), 4);
        assert_eq!(schema["properties"]["utc_offset_minutes"]["default"], 0);
        let unknown = json!({"thread": [], "subject": "x"});
        assert!(serde_json::from_value::<ExtractActionItemsArgs>(unknown.clone()).is_err());
        assert!(!aura_testkit::is_valid(&schema, &unknown));
    }
}
