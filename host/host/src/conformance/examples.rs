//! The examples kept with the schemas, and running them: each tool's args examples against the
//! reference answers at the same index of its result schema's `examples`, and each agent's
//! tick examples (`schemas/<agent>/tick.examples.json`) against the proposals they call for.
//!
//! It owns reading the examples, running one through the real crossing and saying where an
//! answer first differs from its reference. It must not decide what a report holds (the
//! conformance module does).

use serde::Deserialize;
use serde_json::Value;

use aura_contract::catalogue::{AgentSpec, ToolSpec};
use aura_contract::envelope::{Surface, ToolCall};
use aura_contract::limits::DIFFERENCE_CHARS_MAX;
use aura_contract::recovery::escape_pointer_token;

use super::{ConformanceError, Verdict};
use crate::host::Host;
use crate::tick::Proposal;

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

/// One args example through the crossing, its answer against the reference.
pub(super) async fn answer(
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
pub(super) async fn tick(host: &Host, spec: &AgentSpec, example: &TickExample) -> Verdict {
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
    if let Some(failed) = differences_from_reference(&outcome.proposals, &example.proposals) {
        return failed;
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

/// The first of `proposals` whose priority, surface, confirmation or signals differ from what
/// its reference pins, as a failed verdict.
fn differences_from_reference(
    proposals: &[Proposal],
    references: &[ExpectedProposal],
) -> Option<Verdict> {
    for (n, (proposal, reference)) in proposals.iter().zip(references).enumerate() {
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
            return Some(Verdict::Fail(format!(
                "{which}: {}",
                differences.join("; ")
            )));
        }
    }
    None
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
    use aura_contract::catalogue;
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
        let crossing = aura_contract::crossing::Crossing::new().unwrap();
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
