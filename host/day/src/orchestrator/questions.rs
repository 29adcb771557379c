//! The questions a run puts to the person, and the answers that reach them.
//!
//! It owns [`Question`] (a confirm_required proposal waiting for a yes or no), binding a
//! question to the person's pending item it asks about (the host binds it, from the tool's
//! catalogue entry and the call's args, never from what the agent's signals claim), and which
//! pending questions an answer reaches (those bound to the item it names). It must not run a
//! call (the decision does, on a yes).

use aura_contract::envelope::Surface;
use aura_host::Proposal;

use aura_contract::trace::TracedAnswer;

use crate::scenario::{Answer, Reply, World};

/// A question put to the user, waiting for an answer.
#[derive(Debug, Clone)]
pub(super) struct Question {
    pub(super) proposal: Proposal,
    pub(super) surface: Surface,
    /// The user's item it is about (`<kind>:<id>`), as the host bound it.
    pub(super) about: Option<String>,
    /// When it was asked (or answered "later"): it expires a bound time after.
    pub(super) asked_at: time::OffsetDateTime,
}

/// Where in `pending` the questions `answer` is about are: by item, those the host bound to
/// the item it names, of its agent and tool; by question, the one with its call_id. One is an
/// answer; none, or several, run nothing.
pub(super) fn questions_answered(pending: &[Question], answer: &Answer) -> Vec<usize> {
    pending
        .iter()
        .enumerate()
        .filter(|(_, q)| {
            let call = q.proposal.call.call();
            match answer {
                Answer::Item {
                    agent,
                    tool,
                    signal,
                    ..
                } => {
                    q.about.as_deref() == Some(signal.as_str())
                        && call.agent == *agent
                        && call.tool == *tool
                }
                Answer::Question { question, .. } => call.call_id == *question,
            }
        })
        .map(|(index, _)| index)
        .collect()
}

/// The answer as its trace records it, given the question it reached, if one: by item, as
/// said; by question, that question's agent, tool and item (`question:<call_id>` where the
/// host bound it to none, or where no question has that call_id).
pub(super) fn traced(answer: &Answer, reached: Option<&Question>) -> TracedAnswer {
    match answer {
        Answer::Item {
            agent,
            tool,
            signal,
            confirm,
        } => TracedAnswer {
            agent: agent.clone(),
            tool: tool.clone(),
            item: signal.clone(),
            confirm: *confirm,
        },
        Answer::Question { question, reply } => {
            let call = reached.map(|q| q.proposal.call.call());
            TracedAnswer {
                agent: call.map(|c| c.agent.clone()).unwrap_or_default(),
                tool: call.map(|c| c.tool.clone()).unwrap_or_default(),
                item: reached
                    .and_then(|q| q.about.clone())
                    .unwrap_or_else(|| format!("question:{question}")),
                confirm: *reply == Reply::Yes,
            }
        }
    }
}

/// The user's pending item a question of `proposal` is about, as the host binds it: the item
/// of its tool's kind whose content the call's args match (first in the world's order). What
/// the proposing agent's signals say plays no part.
pub(super) fn bind_question(proposal: &Proposal, world: &World) -> Option<String> {
    let about = proposal.call.spec().about?;
    let args = &proposal.call.call().args;
    world
        .pending(about.kind)
        .iter()
        .find(|item| (about.matches)(args, item))
        .and_then(|item| item["id"].as_str())
        .map(|id| format!("{}:{id}", about.kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pending schedule_event question with `call_id` and `title`, bound to `about`.
    fn question(call_id: &str, title: &str, about: Option<&str>) -> Question {
        let crossing = aura_contract::crossing::Crossing::new().unwrap();
        let envelope = serde_json::json!({"call_id": call_id, "agent": "calendar",
            "tool": "schedule_event", "args": {"event": {"title": title,
                "start": "2026-11-23T14:00:00+01:00", "end": "2026-11-23T14:45:00+01:00"}},
            "ts": "2026-11-23T08:00:00Z", "confirm_required": true});
        Question {
            proposal: Proposal {
                proposed_by: "calendar",
                call: crossing.check_call(&envelope.to_string()).unwrap(),
                signals: vec!["invitation:i1".into()],
                priority: 60,
            },
            surface: Surface::PhoneCard,
            about: about.map(str::to_owned),
            asked_at: time::macros::datetime!(2026-11-23 08:00 UTC),
        }
    }

    fn yes(item: &str) -> Answer {
        Answer::Item {
            agent: "calendar".into(),
            tool: "schedule_event".into(),
            signal: item.into(),
            confirm: true,
        }
    }

    #[test]
    fn an_answer_reaches_the_question_bound_to_its_item_and_not_the_ones_claiming_it() {
        // The first two carry i1's signal but are not bound to it (another title: the host
        // found no pending invitation they schedule); the third is.
        let pending = [
            question("t_forged0001", "Wire money", None),
            question("t_other00001", "Lunch", Some("invitation:i2")),
            question("t_real000001", "Dentist", Some("invitation:i1")),
        ];
        assert_eq!(questions_answered(&pending, &yes("invitation:i1")), [2]);
        assert_eq!(
            questions_answered(&pending, &yes("invitation:i9")),
            Vec::<usize>::new()
        );
        let other_tool = Answer::Item {
            agent: "calendar".into(),
            tool: "find_free_slots".into(),
            signal: "invitation:i1".into(),
            confirm: true,
        };
        assert!(questions_answered(&pending, &other_tool).is_empty());
        // By question: the one with that call_id, whatever it is bound to.
        let by_question = |id: &str| Answer::Question {
            question: id.into(),
            reply: Reply::Yes,
        };
        assert_eq!(
            questions_answered(&pending, &by_question("t_forged0001")),
            [0]
        );
        assert!(questions_answered(&pending, &by_question("t_nothing001")).is_empty());
        let unbound = traced(&by_question("t_forged0001"), Some(&pending[0]));
        assert_eq!(
            (
                unbound.agent.as_str(),
                unbound.item.as_str(),
                unbound.confirm
            ),
            ("calendar", "question:t_forged0001", true)
        );
        assert_eq!(
            traced(&by_question("t_real000001"), Some(&pending[2])).item,
            "invitation:i1"
        );
        // Two bound to the same item (the orchestrator asks only one, but the rule does not
        // lean on that): ambiguous, so nothing runs.
        let twice = [
            question("t_real000001", "Dentist", Some("invitation:i1")),
            question("t_real000002", "Dentist", Some("invitation:i1")),
        ];
        assert_eq!(questions_answered(&twice, &yes("invitation:i1")), [0, 1]);
    }
}
