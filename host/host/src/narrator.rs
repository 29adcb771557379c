//! The narrator as the host runs it (seed 000, ADR-0009): the model that writes the rationale
//! of a novel case, loaded from the plugins dir like an agent and run in its own sandbox.
//!
//! It owns opening the narrator (its component digest-checked and, where the host requires
//! signatures, signature-checked, compiled or its precompiled code mapped, for the host's own
//! target), narrating one trace under [`NARRATOR_FUEL_MAX`] (the facts built from the trace,
//! the answer read within its bounds) and keeping the text only if it is grounded in the
//! trace's facts, as a [`NarrationRecord`]. It must not decide which cases are novel nor write
//! the record (the day does), and never touches the trace itself: the template's rationale
//! stays in traces.jsonl, the narration is a record of its own.

use serde::Deserialize;

use aura_contract::limits::NARRATOR_FUEL_MAX;
use aura_contract::trace::Trace;
use aura_contract::trace::narration::{
    NarrationFacts, NarrationOutcome, NarrationRecord, grounded,
};
use aura_plugins::PluginsDir;
use aura_plugins::code_cache::CodeCache;
use aura_sandbox::{
    Code, CodeTarget, NarrateError, NarratorAnswer, NarratorSandbox, PreparedNarrator,
};

use crate::admission::LoadError;
use crate::shared::Shared;

/// The narrator, ready to narrate: its engine and its component.
#[derive(Debug)]
pub struct Narrator {
    sandbox: NarratorSandbox,
    prepared: PreparedNarrator,
    fuel: u64,
}

/// The narrator component's answer (wit/narrator): a text, or why there is none.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    prompt_tokens: u32,
    #[serde(default)]
    tokens: u32,
    #[serde(default)]
    #[allow(dead_code)]
    stopped: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

impl Narrator {
    /// Opens the narrator of `plugins` for `target`: its component checked against the
    /// manifest (and its signature, where `plugins` requires one), then compiled, or its
    /// precompiled code mapped.
    pub fn open(plugins: &PluginsDir, target: &CodeTarget) -> Result<Self, LoadError> {
        Self::open_cached(plugins, target, None)
    }

    /// [`Self::open`], a plain component's compiled code kept in `cache` between starts (a
    /// JIT host without required signatures keeps one: the host's `cache_dir`).
    pub fn open_cached(
        plugins: &PluginsDir,
        target: &CodeTarget,
        cache: Option<&CodeCache>,
    ) -> Result<Self, LoadError> {
        let sandbox = NarratorSandbox::new(target)?;
        let prepared = match (&plugins.manifest().precompiled, cache) {
            (Some(_), _) => sandbox.prepare(Code::Precompiled(&plugins.check_narrator()?))?,
            (None, Some(cache)) => {
                // Checked by its digest (and signature) even when its code comes from the
                // cache: a tampered component is refused whatever the cache holds.
                let checked = plugins.check_narrator()?;
                sandbox.prepare_cached(checked.sha256(), cache, || {
                    Ok::<_, LoadError>(plugins.read_narrator()?)
                })?
            }
            (None, None) => sandbox.prepare(Code::Wasm(&plugins.read_narrator()?))?,
        };
        Ok(Self {
            sandbox,
            prepared,
            fuel: NARRATOR_FUEL_MAX,
        })
    }

    /// This narrator with a smaller fuel budget per narration (at most [`NARRATOR_FUEL_MAX`]):
    /// for tests of a narration that runs out.
    pub fn with_fuel(mut self, fuel: u64) -> Self {
        self.fuel = fuel.min(NARRATOR_FUEL_MAX);
        self
    }

    /// The target its code is for.
    pub fn target_name(&self) -> &str {
        self.sandbox.target_name()
    }

    /// Stops its narrations: the running one ends within an epoch tick, unanswered, and every
    /// later one at once ([`NarratorSandbox::stop`]). For an owner that is stopping.
    pub fn stop(&self) {
        self.sandbox.stop();
    }

    /// Whether [`Self::stop`] was called: a narration that ended since has no record to keep.
    pub fn stopped(&self) -> bool {
        self.sandbox.stopped()
    }

    /// The component's raw answer for `facts` (the canonical JSON of [`NarrationFacts`]), in a
    /// fresh instance under this narrator's fuel: what [`Self::narrate`] reads. Blocks the
    /// thread while the model runs.
    pub fn answer(&self, facts: &str) -> Result<NarratorAnswer, NarrateError> {
        self.sandbox.narrate(&self.prepared, facts, self.fuel)
    }

    /// Narrates `trace` (case `case`, its tool's catalogue lead `lead`) in a fresh instance:
    /// kept when its text is grounded in the trace's facts, else discarded or failed, with
    /// why. Blocks the thread while the model runs (seconds): run it off an executor.
    pub fn narrate(&self, trace: &Trace, lead: &str, case: &str) -> NarrationRecord {
        let mut record = NarrationRecord {
            trace_id: trace.trace_id.clone(),
            run: trace.run.clone(),
            case: case.to_owned(),
            outcome: NarrationOutcome::Failed,
            rationale: None,
            reason: None,
            fuel_used: 0,
            prompt_tokens: 0,
            tokens: 0,
            memory_bytes: 0,
        };
        let Some(facts) = NarrationFacts::of(trace, lead) else {
            record.reason = Some("the trace is about no call".to_owned());
            return record;
        };
        match self.text_for(&facts, &mut record) {
            Ok(text) => judge(&mut record, &text, &facts),
            Err(why) => record.reason = Some(why),
        }
        record
    }

    /// The model's text for `facts`, what it cost written into `record`; why there is none
    /// when it wrote none.
    fn text_for(
        &self,
        facts: &NarrationFacts,
        record: &mut NarrationRecord,
    ) -> Result<String, String> {
        let json = serde_json::to_value(facts).unwrap_or_default();
        let json = aura_contract::canonical::to_canonical_string(&json)
            .map_err(|error| format!("the trace's facts are not canonical JSON: {error}"))?;
        let answer = self.answer(&json).map_err(|error| {
            record.fuel_used = error.fuel_used();
            error.to_string()
        })?;
        record.fuel_used = answer.fuel_used;
        record.memory_bytes = answer.memory_bytes_peak as u64;
        let answer: Answer = serde_json::from_str(&answer.answer)
            .map_err(|error| format!("the narrator's answer is not its JSON: {error}"))?;
        record.prompt_tokens = answer.prompt_tokens;
        record.tokens = answer.tokens;
        match (answer.text, answer.error) {
            (Some(text), None) => Ok(text),
            (_, Some(error)) => Err(format!("the narrator failed: {error}")),
            (None, None) => Err("the narrator's answer has no text".to_owned()),
        }
    }
}

/// Keeps `text` in `record` when it is grounded in `facts`' texts; else discards it, with why
/// and what it wrote (cut to a rationale's length and made visible: it may hold anything).
fn judge(record: &mut NarrationRecord, text: &str, facts: &NarrationFacts) {
    let texts = facts.texts();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    match grounded(text, &texts) {
        Ok(kept) => {
            record.outcome = NarrationOutcome::Kept;
            record.rationale = Some(kept);
        }
        Err(why) => {
            record.outcome = NarrationOutcome::Discarded;
            let wrote = aura_contract::visible::visible(text);
            let wrote: String = wrote
                .chars()
                .take(aura_contract::limits::RATIONALE_CHARS_MAX)
                .collect();
            record.reason = Some(format!("{why}; it wrote: {wrote}"));
        }
    }
}

impl Shared {
    /// [`Host::narrator`](crate::Host::narrator): the narrator of this host's plugins dir.
    pub(crate) fn narrator(&self) -> Result<Narrator, LoadError> {
        let Some(plugins) = self.agents.plugins() else {
            return Err(aura_plugins::PluginError::NotInManifest {
                agent: aura_plugins::NARRATOR_COMPONENT.to_owned(),
            }
            .into());
        };
        let target = CodeTarget::named(self.sandbox.target_name());
        Narrator::open_cached(plugins, &target, self.agents.cache())
    }
}
