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

use aura_contract::caused::caused;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::admission::LoadError;
use crate::config::HostConfig;
use crate::host::Host;
use aura_contract::catalogue::{self, AgentSpec};
use aura_plugins::{PluginError, PluginsDir};

mod examples;

pub use examples::{ExpectedProposal, TickExample, first_difference, tick_examples, tool_examples};
use examples::{answer, tick};

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
    #[error("cannot read the component {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An agent the tested one may call is not in the plugins dir the test takes it from.
    #[error(
        "{agent} may call {callee}, so the test needs {callee} from the plugins dir {dir} (--plugins-dir)"
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
    #[error("cannot clear {path}")]
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
    let bytes = aura_plugins::files::read_at_most(&subject.component, bound).map_err(|source| {
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
        sha256: aura_contract::digest::sha256_hex(&bytes),
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
        let why: Vec<String> = failures.iter().map(|error| caused(error)).collect();
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

    run_examples(&mut report, &host, spec).await?;
    Ok(report)
}

/// Runs each tool's examples against their reference answers, then the tick examples.
async fn run_examples(
    report: &mut Report,
    host: &Host,
    spec: &AgentSpec,
) -> Result<(), ConformanceError> {
    for tool in spec.tools {
        for (index, (args, reference)) in tool_examples(spec, tool)?.into_iter().enumerate() {
            let name = format!("{} example {}", tool.name, index + 1);
            let verdict = answer(host, spec, tool, args, &reference).await;
            report.checks.push(Check { name, verdict });
        }
    }
    for (index, example) in tick_examples(spec)?.iter().enumerate() {
        let name = format!("tick example {}", index + 1);
        let verdict = tick(host, spec, example).await;
        report.checks.push(Check { name, verdict });
    }
    Ok(())
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
        let trusted = aura_plugins::signing::TrustedKeys::compiled_in()
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
    aura_plugins::write_components(&plugins_dir, &components)
        .map_err(|error| ConformanceError::Plugins(Box::new(error)))?;
    let mut config = HostConfig::new(&plugins_dir, data_dir);
    config.cache_dir = subject.cache_dir.clone();
    Host::open(&config)
        .await
        .map_err(|error| ConformanceError::Host(Box::new(error)))
}
