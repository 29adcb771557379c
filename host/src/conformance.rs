//! Conformance: whether a component is a faithful implementation of a catalogue agent, the
//! checks `aura test-agent` runs for an agent's author (what `spin test` is for Spin).
//!
//! It owns the list of checks and how each is judged: the component within its agent's size
//! bound; admitted as that agent (compiled, its manifest the catalogue's name and tools); each
//! tool's args `examples` answered with the reference answer kept at the same index of its
//! result schema's `examples`; each of the agent's tick examples
//! (`schemas/<agent>/tick.examples.json`) proposing the reference's calls, each of which then
//! answers. Everything runs through a real host on a plugins dir of its own (the component,
//! plus the shipped agents it may call), so every call crosses exactly as it does in a day.
//! It must not check anything the crossing checks itself (it reports what the crossing
//! refused), nor hold a reference answer of its own: the references live with the schemas,
//! worked out by hand.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::admission::LoadError;
use crate::catalogue::{self, AgentSpec, ToolSpec};
use crate::envelope::{Surface, ToolCall};
use crate::host::{Host, HostConfig};
use crate::limits::DIFFERENCE_CHARS_MAX;
use crate::plugins::{PluginError, PluginsDir};
use crate::recovery::escape_pointer_token;

/// How one check came out, with what was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "detail")]
pub enum Verdict {
    /// As the reference.
    Pass(String),
    /// Not as the reference, or refused by the crossing: why.
    Fail(String),
    /// Not run, as an earlier check failed.
    Skipped(String),
}

/// One check of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What was checked: `load`, `stress_score example 1`, `tick example 2`.
    pub name: String,
    /// How it came out.
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// What `aura test-agent` found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The agent the component was tested as.
    pub agent: &'static str,
    /// The component file.
    pub component: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// Its sha256, as a plugins manifest records it.
    pub sha256: String,
    /// Where the test's host kept its records (the quarantine log of every refusal).
    pub data_dir: PathBuf,
    /// Every check, in the order run.
    pub checks: Vec<Check>,
}

impl Report {
    /// Whether no check failed.
    pub fn passed(&self) -> bool {
        self.count(|verdict| matches!(verdict, Verdict::Fail(_))) == 0
    }

    /// How many checks came out as `which` says.
    pub fn count(&self, which: impl Fn(&Verdict) -> bool) -> usize {
        self.checks
            .iter()
            .filter(|check| which(&check.verdict))
            .count()
    }
}

/// Why the checks could not be run at all (not a failed check: a failed check is a
/// [`Verdict::Fail`] in the report).
#[derive(Debug, thiserror::Error)]
pub enum ConformanceError {
    /// The agent asked for is not in the catalogue.
    #[error("`{agent}` is not a catalogue agent (the catalogue has {known})")]
    UnknownAgent {
        /// The name given.
        agent: String,
        /// The catalogue's agents.
        known: String,
    },
    /// The component file could not be read.
    #[error("cannot read the component {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An agent the tested one may call is not in the plugins dir the test takes it from.
    #[error(
        "{agent} may call {callee}, so the test needs {callee} from the plugins dir {dir} (--plugins-dir): {error}"
    )]
    Callee {
        /// The agent tested.
        agent: String,
        /// The agent it may call.
        callee: String,
        /// The plugins dir read.
        dir: PathBuf,
        /// Why it could not be read.
        #[source]
        error: Box<PluginError>,
    },
    /// The test's own plugins dir could not be written.
    #[error(transparent)]
    Plugins(Box<PluginError>),
    /// The test's host could not open (its data dir, the engine).
    #[error(transparent)]
    Host(Box<LoadError>),
    /// The test's data dir could not be cleared.
    #[error("cannot clear {path}: {source}")]
    Clear {
        /// The dir.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The catalogue's examples are malformed: a build defect (a unit test keeps them whole).
    #[error("the catalogue's examples for {agent} are malformed: {message}")]
    Examples {
        /// The agent.
        agent: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// What to test, and where.
#[derive(Debug, Clone)]
pub struct Subject {
    /// The component file (.wasm).
    pub component: PathBuf,
    /// The catalogue agent to test it as.
    pub agent: String,
    /// Where the agents it may call come from (the shipped plugins dir).
    pub plugins_dir: PathBuf,
    /// A dir the test owns: cleared, then its plugins dir and its host's data dir.
    pub work_dir: PathBuf,
    /// The compilation cache (so a large component compiles once, not on every run).
    pub cache_dir: Option<PathBuf>,
}

/// One tick example: a context and the proposals a faithful implementation makes for it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TickExample {
    /// Why the reference proposes what it does, worked out by hand.
    pub about: String,
    /// The tick's context.
    pub context: Value,
    /// The reference's proposals, in order.
    pub proposals: Vec<ExpectedProposal>,
}

/// One proposal of the reference: its tool and priority, and whatever else the example pins.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedProposal {
    /// The tool proposed (one of the agent's own).
    pub tool: String,
    /// Its priority, 0-100.
    pub priority: u8,
    /// Where the user sees it, if the example pins it.
    #[serde(default)]
    pub expected_surface: Option<Surface>,
    /// Whether it asks the user first, if the example pins it.
    #[serde(default)]
    pub confirm_required: Option<bool>,
    /// What drove it, if the example pins it.
    #[serde(default)]
    pub signals: Option<Vec<String>>,
}

/// The tick examples of `spec`.
pub fn tick_examples(spec: &AgentSpec) -> Result<Vec<TickExample>, ConformanceError> {
    serde_json::from_str(spec.tick_examples).map_err(|error| ConformanceError::Examples {
        agent: spec.name,
        message: format!("tick.examples.json: {error}"),
    })
}

/// The args examples of `tool`, each with its reference answer (the result schema's example at
/// the same index).
pub fn tool_examples(
    spec: &AgentSpec,
    tool: &ToolSpec,
) -> Result<Vec<(Value, Value)>, ConformanceError> {
    let examples = |text: &str, which: &str| -> Result<Vec<Value>, ConformanceError> {
        let schema: Value =
            serde_json::from_str(text).map_err(|error| ConformanceError::Examples {
                agent: spec.name,
                message: format!("{}.{which}.json: {error}", tool.name),
            })?;
        Ok(schema["examples"].as_array().cloned().unwrap_or_default())
    };
    let args = examples(tool.args_schema.text, "args")?;
    let answers = examples(tool.result_schema.text, "result")?;
    if args.len() != answers.len() {
        return Err(ConformanceError::Examples {
            agent: spec.name,
            message: format!(
                "{}: {} args examples but {} reference answers",
                tool.name,
                args.len(),
                answers.len()
            ),
        });
    }
    Ok(args.into_iter().zip(answers).collect())
}

/// Runs every check on `subject` and reports each.
pub async fn test_agent(subject: &Subject) -> Result<Report, ConformanceError> {
    let spec = catalogue::agent(&subject.agent).ok_or_else(|| ConformanceError::UnknownAgent {
        agent: subject.agent.clone(),
        known: catalogue::CATALOGUE
            .iter()
            .map(|spec| spec.name)
            .collect::<Vec<_>>()
            .join(", "),
    })?;
    let bound = spec.component_bytes_max;
    let bytes = crate::plugins::read_at_most(&subject.component, bound).map_err(|source| {
        ConformanceError::Read {
            path: subject.component.clone(),
            source,
        }
    })?;
    let data_dir = subject.work_dir.join("data");
    let mut report = Report {
        agent: spec.name,
        component: subject.component.clone(),
        bytes: bytes.len() as u64,
        sha256: crate::plugins::sha256_hex(&bytes),
        data_dir: data_dir.clone(),
        checks: Vec::new(),
    };
    if bytes.len() as u64 > bound {
        report.checks.push(fail(
            "size",
            format!(
                "the component is more than {bound} bytes, the most the catalogue lets {} be",
                spec.name
            ),
        ));
        skip_the_rest(&mut report, spec, "the component was not loaded")?;
        return Ok(report);
    }
    report.checks.push(pass(
        "size",
        format!(
            "{} bytes, within the {bound} the catalogue allows {}",
            bytes.len(),
            spec.name
        ),
    ));

    let host = open_host(subject, spec, bytes, &data_dir).await?;
    let failures = host.load_failures();
    if !failures.is_empty() {
        let why: Vec<String> = failures.iter().map(|error| error.to_string()).collect();
        report.checks.push(fail("load", why.join("; ")));
        skip_the_rest(&mut report, spec, "the component was not admitted")?;
        return Ok(report);
    }
    report.checks.push(pass(
        "load",
        format!(
            "compiled; its manifest names {} and exactly its {} catalogue tools",
            spec.name,
            spec.tools.len()
        ),
    ));

    for tool in spec.tools {
        for (index, (args, reference)) in tool_examples(spec, tool)?.into_iter().enumerate() {
            let name = format!("{} example {}", tool.name, index + 1);
            let verdict = answer(&host, spec, tool, args, &reference).await;
            report.checks.push(Check { name, verdict });
        }
    }
    for (index, example) in tick_examples(spec)?.iter().enumerate() {
        let name = format!("tick example {}", index + 1);
        let verdict = tick(&host, spec, example).await;
        report.checks.push(Check { name, verdict });
    }
    Ok(report)
}

/// Reports every check `report` has not run yet (the load, each example) as skipped, `why`.
fn skip_the_rest(report: &mut Report, spec: &AgentSpec, why: &str) -> Result<(), ConformanceError> {
    let mut names = vec!["load".to_owned()];
    for tool in spec.tools {
        let count = tool_examples(spec, tool)?.len();
        names.extend((1..=count).map(|n| format!("{} example {n}", tool.name)));
    }
    let ticks = tick_examples(spec)?.len();
    names.extend((1..=ticks).map(|n| format!("tick example {n}")));
    names.retain(|name| report.checks.iter().all(|check| &check.name != name));
    report.checks.extend(names.into_iter().map(|name| Check {
        name,
        verdict: Verdict::Skipped(why.to_owned()),
    }));
    Ok(())
}

fn pass(name: &str, detail: String) -> Check {
    Check {
        name: name.to_owned(),
        verdict: Verdict::Pass(detail),
    }
}

fn fail(name: &str, detail: String) -> Check {
    Check {
        name: name.to_owned(),
        verdict: Verdict::Fail(detail),
    }
}

/// A host on a plugins dir of the test's own: `bytes` as the agent, and each agent it may call
/// (transitively) from the subject's plugins dir.
async fn open_host(
    subject: &Subject,
    spec: &AgentSpec,
    bytes: Vec<u8>,
    data_dir: &Path,
) -> Result<Host, ConformanceError> {
    if subject.work_dir.exists() {
        std::fs::remove_dir_all(&subject.work_dir).map_err(|source| ConformanceError::Clear {
            path: subject.work_dir.clone(),
            source,
        })?;
    }
    let mut components = vec![(spec.name, bytes)];
    let callees: Vec<&str> = catalogue::reachable_from(spec.name)
        .into_iter()
        .filter(|&name| name != spec.name)
        .collect();
    if !callees.is_empty() {
        let callee_error = |callee: &str, error| ConformanceError::Callee {
            agent: spec.name.to_owned(),
            callee: callee.to_owned(),
            dir: subject.plugins_dir.clone(),
            error: Box::new(error),
        };
        let trusted = crate::signing::TrustedKeys::compiled_in()
            .map_err(|error| ConformanceError::Host(Box::new(LoadError::TrustedKeys(error))))?;
        let shipped = PluginsDir::open(&subject.plugins_dir, &trusted)
            .map_err(|error| callee_error(callees[0], error))?;
        for callee in callees {
            let bytes = shipped
                .read_component(callee)
                .map_err(|error| callee_error(callee, error))?;
            components.push((callee, bytes));
        }
    }
    let plugins_dir = subject.work_dir.join("plugins");
    crate::plugins::write_components(&plugins_dir, &components)
        .map_err(|error| ConformanceError::Plugins(Box::new(error)))?;
    let mut config = HostConfig::new(&plugins_dir, data_dir);
    config.cache_dir = subject.cache_dir.clone();
    Host::open(&config)
        .await
        .map_err(|error| ConformanceError::Host(Box::new(error)))
}

/// One args example through the crossing, its answer against the reference.
async fn answer(
    host: &Host,
    spec: &AgentSpec,
    tool: &ToolSpec,
    args: Value,
    reference: &Value,
) -> Verdict {
    let call = ToolCall::new(spec.name, tool.name, args, None);
    match host.dispatch(&call).await {
        Err(refused) => Verdict::Fail(format!("refused by the crossing: {refused}")),
        Ok(result) => match (result.result, result.error) {
            (Some(got), _) => match first_difference(reference, &got, String::new()) {
                None => Verdict::Pass(format!("the reference answer (fuel {})", result.fuel_used)),
                Some(difference) => Verdict::Fail(format!(
                    "not the reference answer: {difference} (fuel {})",
                    result.fuel_used
                )),
            },
            (None, Some(error)) => Verdict::Fail(format!(
                "answered a tool error, not the reference answer: {}: {}",
                error.kind, error.message
            )),
            (None, None) => Verdict::Fail("answered neither a result nor an error".into()),
        },
    }
}

/// One tick example: its proposals against the reference's, then each proposed call run.
async fn tick(host: &Host, spec: &AgentSpec, example: &TickExample) -> Verdict {
    let outcome = match host.tick(spec.name, &example.context).await {
        Ok(outcome) => outcome,
        Err(refused) => return Verdict::Fail(format!("the tick was refused: {refused}")),
    };
    if let Some(refused) = outcome.refused.first() {
        return Verdict::Fail(format!(
            "{} proposal(s) refused by the crossing; the first: {refused}",
            outcome.refused.len()
        ));
    }
    let got: Vec<&str> = outcome
        .proposals
        .iter()
        .map(|p| p.call.call().tool.as_str())
        .collect();
    let expected: Vec<&str> = example.proposals.iter().map(|p| p.tool.as_str()).collect();
    if got != expected {
        return Verdict::Fail(format!(
            "proposed {got:?}; the reference proposes {expected:?} ({})",
            example.about
        ));
    }
    for (n, (proposal, reference)) in outcome.proposals.iter().zip(&example.proposals).enumerate() {
        let call = proposal.call.call();
        let which = format!("proposal {} ({})", n + 1, call.tool);
        let mut differences = Vec::new();
        if proposal.priority != reference.priority {
            differences.push(format!(
                "priority {}, not {}",
                proposal.priority, reference.priority
            ));
        }
        if let Some(surface) = reference.expected_surface
            && call.expected_surface != Some(surface)
        {
            differences.push(format!(
                "surface {:?}, not {surface:?}",
                call.expected_surface
            ));
        }
        if let Some(confirm) = reference.confirm_required
            && call.confirm_required != confirm
        {
            differences.push(format!("confirm_required {}", call.confirm_required));
        }
        if let Some(signals) = &reference.signals
            && &proposal.signals != signals
        {
            differences.push(format!("signals {:?}, not {signals:?}", proposal.signals));
        }
        if !differences.is_empty() {
            return Verdict::Fail(format!("{which}: {}", differences.join("; ")));
        }
    }
    // Every proposal is a call the host can run as proposed.
    let mut fuel = outcome.fuel_used;
    for (n, proposal) in outcome.proposals.iter().enumerate() {
        let call = proposal.call.call();
        let which = format!("proposal {} ({})", n + 1, call.tool);
        match host.dispatch(call).await {
            Ok(result) if result.ok => fuel += result.fuel_used,
            Ok(result) => {
                let error = result.error.map(|e| format!("{}: {}", e.kind, e.message));
                return Verdict::Fail(format!(
                    "{which} answered a tool error when run: {}",
                    error.unwrap_or_default()
                ));
            }
            Err(refused) => {
                return Verdict::Fail(format!("{which} was refused when run: {refused}"));
            }
        }
    }
    Verdict::Pass(format!(
        "{} proposal(s) as the reference, each answering when run (fuel {fuel})",
        outcome.proposals.len()
    ))
}

/// Where `got` first differs from `expected`, as a JSON pointer and both values; `None` when
/// they are the same JSON (numbers by value, members in any order).
pub fn first_difference(expected: &Value, got: &Value, at: String) -> Option<String> {
    let shown = |value: &Value| {
        let text = value.to_string();
        match text.chars().count() > DIFFERENCE_CHARS_MAX {
            true => format!(
                "{}…",
                text.chars().take(DIFFERENCE_CHARS_MAX).collect::<String>()
            ),
            false => text,
        }
    };
    let place = |at: &str| match at.is_empty() {
        true => "the root".to_owned(),
        false => at.to_owned(),
    };
    match (expected, got) {
        (Value::Object(want), Value::Object(have)) => {
            for (key, value) in want {
                let here = format!("{at}/{}", escape_pointer_token(key));
                match have.get(key) {
                    Some(other) => {
                        if let Some(difference) = first_difference(value, other, here) {
                            return Some(difference);
                        }
                    }
                    None => return Some(format!("{here} is missing (expected {})", shown(value))),
                }
            }
            have.keys().find(|key| !want.contains_key(*key)).map(|key| {
                format!(
                    "{at}/{} is not in the reference (got {})",
                    escape_pointer_token(key),
                    shown(&have[key])
                )
            })
        }
        (Value::Array(want), Value::Array(have)) => {
            for (index, (value, other)) in want.iter().zip(have).enumerate() {
                if let Some(difference) = first_difference(value, other, format!("{at}/{index}")) {
                    return Some(difference);
                }
            }
            (want.len() != have.len()).then(|| {
                format!(
                    "{} has {} items, the reference {}",
                    place(&at),
                    have.len(),
                    want.len()
                )
            })
        }
        (Value::Number(want), Value::Number(have)) if want.as_f64() == have.as_f64() => None,
        _ if expected == got => None,
        _ => Some(format!(
            "at {}: expected {}, got {}",
            place(&at),
            shown(expected),
            shown(got)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_difference_is_named_by_its_pointer() {
        let want = json!({"score": 47, "factors": [{"factor": "hrv", "contribution": 25}]});
        assert_eq!(first_difference(&want, &want.clone(), String::new()), None);
        // Members in another order, 25 and 25.0: the same JSON.
        let same = json!({"factors": [{"contribution": 25.0, "factor": "hrv"}], "score": 47});
        assert_eq!(first_difference(&want, &same, String::new()), None);
        let off = json!({"score": 47, "factors": [{"factor": "hrv", "contribution": 24}]});
        assert_eq!(
            first_difference(&want, &off, String::new()).unwrap(),
            "at /factors/0/contribution: expected 25, got 24"
        );
        let short = json!({"score": 47, "factors": []});
        assert_eq!(
            first_difference(&want, &short, String::new()).unwrap(),
            "/factors has 0 items, the reference 1"
        );
        let extra = json!({"score": 47, "factors": [{"factor": "hrv", "contribution": 25}],
                           "a/b": 1});
        assert_eq!(
            first_difference(&want, &extra, String::new()).unwrap(),
            "/a~1b is not in the reference (got 1)"
        );
        let missing = json!({"factors": [{"factor": "hrv", "contribution": 25}]});
        assert_eq!(
            first_difference(&want, &missing, String::new()).unwrap(),
            "/score is missing (expected 47)"
        );
        assert_eq!(
            first_difference(&json!(1), &json!("1"), String::new()).unwrap(),
            "at the root: expected 1, got \"1\""
        );
    }

    /// Every catalogue tool has args examples, each with a reference answer valid against its
    /// result schema; every agent has tick examples proposing only its own tools.
    #[test]
    fn every_example_has_a_reference_the_schemas_accept() {
        let crossing = crate::crossing::Crossing::new().unwrap();
        for spec in catalogue::CATALOGUE {
            for tool in spec.tools {
                let examples = tool_examples(spec, tool).unwrap();
                assert!(
                    !examples.is_empty(),
                    "{}.{} has no example",
                    spec.name,
                    tool.name
                );
                for (args, reference) in &examples {
                    crossing
                        .schemas()
                        .validate(tool.args_schema.path, args, "/args")
                        .unwrap();
                    crossing
                        .schemas()
                        .validate(tool.result_schema.path, reference, "/result")
                        .unwrap_or_else(|v| panic!("{}.{}: {v}", spec.name, tool.name));
                }
            }
            let ticks = tick_examples(spec).unwrap();
            assert!(!ticks.is_empty(), "{} has no tick example", spec.name);
            for example in &ticks {
                assert!(example.context["now"].is_string(), "{}", example.about);
                for proposal in &example.proposals {
                    assert!(
                        catalogue::tool(spec.name, &proposal.tool).is_some(),
                        "{} proposes {}",
                        spec.name,
                        proposal.tool
                    );
                }
            }
        }
    }
}
