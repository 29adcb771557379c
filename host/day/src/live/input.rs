//! What comes into a live session: one signal or answer as its sender wrote it, checked like
//! any crossing, or refused with a reason.
//!
//! It owns the checks an input passes before it is taken (size, I-JSON, the live signal
//! schema, when it takes effect, whether an answer reaches a question) and the refusal each
//! failed check gets ([`InputRefusal`]: its kind, what to fix, what to do next), and the rate
//! bound ([`Bucket`]). It must not write anything (the session journals what it takes and
//! quarantines what it refuses) nor read the machine's clock: the session's clock is given.

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use aura_contract::canonical::parse_i_json;
use aura_contract::catalogue::LIVE_SIGNAL_SCHEMA;
use aura_contract::error::{CrossingError, Phase};
use aura_contract::limits::{
    LIVE_BATCH_SIGNALS_MAX, LIVE_PUSHES_PER_SECOND_MAX, LIVE_SIGNAL_AHEAD_MAX_MINUTES,
    LIVE_SIGNAL_BYTES_MAX, LIVE_URGENT_PUSHES_RESERVED,
};
use aura_contract::quarantine::InputRefusal;
use aura_contract::recovery::{Action, Recovery};
use aura_contract::schema::SchemaRegistry;

use crate::scenario::{Answer, Reply, Scenario, Signal};

/// An input as the session takes it: the signal, and its record for the journal (a
/// scenario.v1 signal, `at` as it takes effect).
#[derive(Debug)]
pub(crate) enum Taken {
    /// A new input: the signal, its record for the journal (a scenario.v1 signal, `at` as it
    /// takes effect, plus the sender's `id`, `sent` when that is not the time it was sent
    /// with, or `stamped` when it was sent with none) and, when it has an id, the id and what
    /// was sent under it.
    New {
        signal: Signal,
        record: Value,
        sent: Option<(String, Sent)>,
    },
    /// The same signal again under its id (a sender sending again what it had no
    /// acknowledgement for): the id.
    Again(String),
}

/// What was sent under an id: sha256 of its time as sent (an instant; none when stamped on
/// arrival), kind and data.
pub(crate) type Sent = [u8; 32];

/// What a signal sent at `at` (none: stamped on arrival) with `kind` and `data` is.
pub(crate) fn sent(at: Option<OffsetDateTime>, kind: &str, data: &Value) -> Sent {
    use sha2::Digest;
    let value = serde_json::json!({
        "at_ns": at.map(|at| at.unix_timestamp_nanos().to_string()),
        "kind": kind,
        "data": data,
    });
    // An I-JSON value (its parts came through the checks): it has a canonical form.
    let canonical = aura_contract::canonical::to_canonical_string(&value).unwrap_or_default();
    sha2::Sha256::digest(canonical.as_bytes()).into()
}

/// Where the session stands when an input arrives: what the checks of time and answers need.
pub(crate) struct Standing<'a> {
    /// The session's clock now.
    pub(crate) now: OffsetDateTime,
    /// When the open day began: its first tick.
    pub(crate) begins: OffsetDateTime,
    /// When its last tick ran, if one has.
    pub(crate) last_tick: Option<OffsetDateTime>,
    /// Its last tick, if the day has an end.
    pub(crate) end: Option<OffsetDateTime>,
    /// The call_ids of the pending questions an answer reaches (none, one, or several).
    pub(crate) reaches: &'a dyn Fn(&Answer) -> Vec<String>,
    /// Questions answered yes or no by inputs taken and not yet applied (a second answer to
    /// one is refused).
    pub(crate) answered: &'a std::collections::BTreeSet<String>,
    /// What was taken under an id before, if anything was.
    pub(crate) seen: &'a dyn Fn(&str) -> Option<Sent>,
}

/// Checks `text` (one signal or answer as sent) against the live signal schema and the
/// session's `standing`.
pub(crate) fn check(
    text: &str,
    schemas: &SchemaRegistry,
    scenario: &Scenario,
    standing: &Standing<'_>,
) -> Result<Taken, InputRefusal> {
    if text.len() > LIVE_SIGNAL_BYTES_MAX {
        return Err(refusal(
            "too_large",
            format!(
                "the input is {} bytes, more than the {LIVE_SIGNAL_BYTES_MAX} one signal may have",
                text.len()
            ),
            Action::CorrectCall,
        ));
    }
    let mut value = parse_i_json(text, LIVE_SIGNAL_BYTES_MAX).map_err(|error| {
        crossing_refusal(&CrossingError::Json {
            phase: Phase::Signal,
            error,
        })
    })?;
    // `at` defaults to the arrival time.
    let stamped = value.get("at").is_none();
    if let Some(object) = value.as_object_mut()
        && stamped
    {
        object.insert(
            "at".to_owned(),
            Value::String(scenario.format(standing.now)),
        );
    }
    schemas
        .validate(LIVE_SIGNAL_SCHEMA.path, &value, "")
        .map_err(|violation| {
            crossing_refusal(&CrossingError::Schema {
                phase: Phase::Signal,
                violation,
            })
        })?;
    // The schema checked the format; a time `time` cannot hold is refused all the same.
    let given = value["at"].as_str().unwrap_or_default();
    let at = OffsetDateTime::parse(given, &Rfc3339).map_err(|e| {
        refusal(
            "schema_error",
            format!("`at` {given}: {e}"),
            Action::CorrectCall,
        )
    })?;
    let kind = value["kind"].as_str().unwrap_or_default().to_owned();
    let id = value["id"].as_str().map(str::to_owned);
    let what = sent((!stamped).then_some(at), &kind, &value["data"]);
    if let Some(id) = &id
        && let Some(before) = (standing.seen)(id)
    {
        return match before == what {
            true => Ok(Taken::Again(id.clone())),
            false => Err(refusal(
                "id_reused",
                format!(
                    "id `{}` was taken before for another signal",
                    visible_id(id)
                ),
                Action::CorrectCall,
            )),
        };
    }
    let effective = effective_at(at, standing)?;
    let signal = Signal {
        at: effective,
        kind,
        data: value["data"].clone(),
    };
    if signal.kind == "answer" {
        check_answer(&Answer::of(&signal.data), standing)?;
    }
    let mut record = serde_json::json!({
        "at": scenario.format(effective),
        "kind": signal.kind,
        "data": signal.data,
    });
    if stamped {
        record["stamped"] = Value::Bool(true);
    } else if effective != at {
        record["sent"] = Value::String(scenario.format(at));
    }
    if let Some(id) = &id {
        record["id"] = Value::String(id.clone());
    }
    Ok(Taken::New {
        signal,
        record,
        sent: id.map(|id| (id, what)),
    })
}

/// A sender's id as a message shows it (visible, cut).
fn visible_id(id: &str) -> String {
    aura_contract::visible::visible(id)
        .chars()
        .take(64)
        .collect()
}

/// When a signal stamped `at` takes effect: then, unless a tick has already run at or after
/// it (then 1 ms after that tick: no tick runs again), or it is stamped before the open day
/// began (then at its first tick: a day before is closed). Refused past the end and too far
/// ahead of the clock.
fn effective_at(
    at: OffsetDateTime,
    standing: &Standing<'_>,
) -> Result<OffsetDateTime, InputRefusal> {
    if let Some(end) = standing.end
        && at > end
    {
        return Err(refusal(
            "after_end",
            format!("it is stamped after the day's end ({end})"),
            Action::Finish,
        ));
    }
    let ahead = time::Duration::minutes(LIVE_SIGNAL_AHEAD_MAX_MINUTES);
    if at > standing.now + ahead {
        return Err(refusal(
            "too_far_ahead",
            format!(
                "it is stamped more than {LIVE_SIGNAL_AHEAD_MAX_MINUTES} minutes after the session's clock ({})",
                standing.now
            ),
            Action::CorrectCall,
        ));
    }
    Ok(match standing.last_tick {
        Some(last) if at <= last => last + time::Duration::milliseconds(1),
        None if at < standing.begins => standing.begins,
        _ => at,
    })
}

/// An answer by question must reach a pending question not answered since it was asked.
/// An answer by item (scenario.v1's other form) is taken as it is: its tick records it, and
/// traces it as reaching no question or several where it does (as `aura run` does).
fn check_answer(answer: &Answer, standing: &Standing<'_>) -> Result<(), InputRefusal> {
    let Answer::Question { question, reply } = answer else {
        return Ok(());
    };
    if !(standing.reaches)(answer).contains(question) {
        return Err(refusal(
            "answer_unplaced",
            format!(
                "question {question} is not pending: nothing asked it, or it was answered or expired"
            ),
            Action::Finish,
        ));
    }
    if *reply != Reply::Later && standing.answered.contains(question) {
        return Err(refusal(
            "answer_unplaced",
            format!(
                "question {question} was answered already; that answer waits for the next tick"
            ),
            Action::Finish,
        ));
    }
    Ok(())
}

/// The refusal of a crossing error of phase `signal`: its kind, words, pointers and the
/// recovery the crossing would give.
fn crossing_refusal(error: &CrossingError) -> InputRefusal {
    InputRefusal {
        kind: error.kind(),
        reason: error.to_string(),
        instance_path: error.instance_path().map(str::to_owned),
        schema_path: error.schema_path().map(str::to_owned),
        recovery: Box::new(Recovery::for_refusal(error, None, None)),
    }
}

/// A refusal of `kind` with no field to point at.
pub(crate) fn refusal(kind: &'static str, reason: String, action: Action) -> InputRefusal {
    InputRefusal {
        kind,
        reason,
        instance_path: None,
        schema_path: None,
        recovery: Box::new(Recovery::plain(action)),
    }
}

/// The refusal of a push that came faster than [`LIVE_PUSHES_PER_SECOND_MAX`], or found the
/// session's queue full, or a day's journal full: retry after `retry_after_ms`.
pub(crate) fn busy(reason: String, retry_after_ms: u64) -> InputRefusal {
    InputRefusal {
        recovery: Box::new(Recovery {
            retry_after_ms: Some(retry_after_ms),
            ..Recovery::plain(Action::Retry)
        }),
        ..refusal("busy", reason, Action::Retry)
    }
}

/// The rate bound: a bucket of [`LIVE_PUSHES_PER_SECOND_MAX`] tokens that refills at that
/// rate per second of the machine's monotonic clock (the rate is the machine's to protect,
/// whatever the session's clock says), read through tokio's clock: the same instant, except
/// under a deterministic simulation's paused clock, where the rate is the simulated time's and
/// a run does not depend on how fast the machine ran it. Its last
/// [`LIVE_URGENT_PUSHES_RESERVED`] tokens are for urgent pushes only.
#[derive(Debug)]
pub(crate) struct Bucket {
    tokens: f64,
    last: tokio::time::Instant,
}

impl Bucket {
    pub(crate) fn new() -> Self {
        Self {
            tokens: f64::from(LIVE_PUSHES_PER_SECOND_MAX),
            last: tokio::time::Instant::now(),
        }
    }

    /// Takes a token for a push (`urgent`: it carries a signal of a `tick_on` kind, and may
    /// take the reserved ones), or says how many milliseconds until one is there for it.
    pub(crate) fn take(&mut self, urgent: bool) -> Result<(), u64> {
        let rate = f64::from(LIVE_PUSHES_PER_SECOND_MAX);
        let now = tokio::time::Instant::now();
        let elapsed = now.duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * rate).min(rate);
        let floor = match urgent {
            true => 0.0,
            false => f64::from(LIVE_URGENT_PUSHES_RESERVED),
        };
        if self.tokens >= 1.0 + floor {
            self.tokens -= 1.0;
            return Ok(());
        }
        Err((((1.0 + floor - self.tokens) / rate * 1000.0).ceil() as u64).max(1))
    }
}

/// The refusal of a push that came while the bucket was empty: retry after `wait_ms`.
pub(crate) fn too_fast(wait_ms: u64) -> InputRefusal {
    busy(
        format!("more than {LIVE_PUSHES_PER_SECOND_MAX} pushes a second"),
        wait_ms,
    )
}

/// How a batch's signals are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchForm {
    /// One JSON value a line (`application/x-ndjson`); blank lines are skipped.
    Ndjson,
    /// A JSON array of them.
    Array,
}

impl BatchForm {
    /// A JSON array's, when `bytes` begin with one (after white space); what else they are
    /// is the front's to say (NDJSON by a content type, or one signal).
    pub fn of(bytes: &[u8]) -> Option<Self> {
        (bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')).then_some(Self::Array)
    }
}

/// A batch's signals, each as its sender wrote it (its bytes are checked one by one by the
/// session, as a single push's are), at most [`LIVE_BATCH_SIGNALS_MAX`].
pub(crate) fn split_batch(text: &str, form: BatchForm) -> Result<Vec<String>, InputRefusal> {
    let too_many = || {
        refusal(
            "too_large",
            format!("a batch holds at most {LIVE_BATCH_SIGNALS_MAX} signals"),
            Action::CorrectCall,
        )
    };
    match form {
        BatchForm::Ndjson => {
            let mut items = Vec::new();
            for line in text.lines().filter(|line| !line.trim().is_empty()) {
                if items.len() == LIVE_BATCH_SIGNALS_MAX {
                    return Err(too_many());
                }
                items.push(line.to_owned());
            }
            Ok(items)
        }
        BatchForm::Array => {
            use serde::Deserializer as _;
            let mut reader = serde_json::Deserializer::from_str(text);
            let items = reader
                .deserialize_seq(Items)
                .and_then(|items| reader.end().map(|()| items));
            match items {
                Ok(items) => Ok(items.into_iter().map(|raw| raw.get().to_owned()).collect()),
                Err(e) if e.to_string().starts_with(TOO_MANY) => Err(too_many()),
                Err(e) => Err(refusal(
                    "malformed_json",
                    format!("the batch is not a JSON array: {e}"),
                    Action::CorrectCall,
                )),
            }
        }
    }
}

/// What a batch past its bound fails with while it is read.
const TOO_MANY: &str = "too many signals";

/// Reads a JSON array's items as they were written, stopping past [`LIVE_BATCH_SIGNALS_MAX`].
struct Items;

impl<'de> serde::de::Visitor<'de> for Items {
    type Value = Vec<&'de serde_json::value::RawValue>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a JSON array of signals")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            if items.len() == LIVE_BATCH_SIGNALS_MAX {
                return Err(serde::de::Error::custom(TOO_MANY));
            }
            items.push(item);
        }
        Ok(items)
    }
}

/// The kind a pushed signal says it is, read without checking anything else (the session
/// checks it whole): what decides its lane and the tokens it may take.
pub(crate) fn kind_of(text: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Kind {
        kind: Option<String>,
    }
    serde_json::from_str::<Kind>(text).ok()?.kind
}
