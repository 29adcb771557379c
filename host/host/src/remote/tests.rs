//! Tests of the remote module.

use super::*;

fn sent(chain: &[&str], fuel: Option<u64>, deadline_ms: Option<u64>) -> SentFrame {
    SentFrame {
        fuel,
        deadline_ms,
        chain: chain.iter().map(|a| (*a).to_owned()).collect(),
        trace: None,
        confirmation: None,
    }
}

/// The budget a worker with its own 1000 ms at 100,000 fuel/ms runs a call sent with
/// `fuel` and `deadline_ms` at.
fn budget_sent(fuel: Option<u64>, deadline_ms: Option<u64>) -> Budget {
    frame_from(&sent(&[], fuel, deadline_ms), "calendar", 1000, 100_000, 7)
        .unwrap()
        .budget
}

#[test]
fn a_sent_frame_only_lowers_the_workers_own_budget() {
    let budget = |fuel, deadline_ms| Budget { fuel, deadline_ms };
    // Own: 1000 ms at 100,000 fuel/ms = 100,000,000. Sent less: the sent fuel.
    assert_eq!(budget_sent(Some(5_000_000), None), budget(5_000_000, 1000));
    // Sent more fuel and a later deadline than the call's: its own (1000 ms, 1e8).
    assert_eq!(
        budget_sent(Some(u64::MAX), Some(9000)),
        budget(100_000_000, 1000)
    );
    // An earlier deadline: 300 ms buy 30,000,000.
    assert_eq!(budget_sent(None, Some(300)), budget(30_000_000, 300));
    let frame = frame_from(&sent(&[], None, None), "calendar", 1000, 100_000, 7).unwrap();
    assert_eq!(frame.clock_start_unix_ns, 7);
}

#[test]
fn a_sent_chain_is_checked_before_anything_runs() {
    let frame = frame_from(
        &sent(&["calendar", "wellness"], None, None),
        "finance",
        1000,
        1,
        0,
    )
    .unwrap();
    assert_eq!(frame.chain_above, ["calendar", "wellness"]);
    // The agent called is already above it: a cycle across hosts.
    let error = frame_from(
        &sent(&["calendar", "wellness"], None, None),
        "calendar",
        1000,
        1,
        0,
    )
    .unwrap_err();
    assert_eq!(error.kind(), "cycle_detected");
    // Five above it: the sixth is too deep.
    let five = ["calendar", "comms", "finance", "wellness", "calendar"];
    let error = frame_from(&sent(&five[..4], None, None), "finance", 1000, 1, 0).unwrap_err();
    assert_eq!(error.kind(), "cycle_detected");
    let error = frame_from(&sent(&five, None, None), "finance", 1000, 1, 0).unwrap_err();
    assert_eq!(
        error.kind(),
        "agent_call_unsupported",
        "a repeated name is no chain"
    );
    let error = frame_from(&sent(&["mallory"], None, None), "finance", 1000, 1, 0).unwrap_err();
    assert_eq!(error.kind(), "unknown_agent");
}

fn request<'a>(frame: &'a Frame, body: &'a str) -> RemoteRequest<'a> {
    RemoteRequest {
        agent: "wellness",
        work: RemoteWork::Call {
            tool: "stress_score",
        },
        id: "t_0123456789",
        body,
        frame,
        refused: &Unrecorded,
    }
}

#[tokio::test]
async fn a_request_is_tried_the_bounded_number_of_times_then_unreachable() {
    let frame = Frame::root(Budget::for_deadline(100, 1), 0);
    let request = request(&frame, "{}");
    let attempts = std::cell::Cell::new(0u32);
    let pauses = std::cell::RefCell::new(Vec::new());
    let outcome = with_retries(
        &request,
        |n| {
            attempts.set(n);
            std::future::ready(Err(AttemptFailed::Lost(format!("lost {n}"))))
        },
        |n| {
            pauses.borrow_mut().push(n);
            std::future::ready(())
        },
    )
    .await;
    assert_eq!(attempts.get(), WIRE_ATTEMPTS_MAX);
    // A pause before each attempt but the first.
    assert_eq!(*pauses.borrow(), (1..WIRE_ATTEMPTS_MAX).collect::<Vec<_>>());
    match outcome {
        Err(CrossingError::Unreachable {
            attempts, reason, ..
        }) => {
            assert_eq!(attempts, WIRE_ATTEMPTS_MAX);
            assert_eq!(reason, format!("lost {WIRE_ATTEMPTS_MAX}"));
        }
        other => panic!("{other:?}"),
    }
    // The third attempt answers: two pauses, the answer.
    let answered = with_retries(
        &request,
        |n| {
            std::future::ready(match n {
                3 => Ok("answer".to_owned()),
                _ => Err(AttemptFailed::Lost("lost".into())),
            })
        },
        |_| std::future::ready(()),
    )
    .await;
    assert_eq!(answered.unwrap(), "answer");
    // Too large or a bad answer: no second attempt.
    for (failed, expected) in [
        (AttemptFailed::TooLarge, "too_large"),
        (AttemptFailed::BadAnswer("x".into()), "schema_error"),
    ] {
        let tried = std::cell::Cell::new(0);
        let kind = with_retries(
            &request,
            |_| {
                tried.set(tried.get() + 1);
                std::future::ready(Err(failed.clone()))
            },
            |_| std::future::ready(()),
        )
        .await
        .unwrap_err()
        .kind();
        assert_eq!(tried.get(), 1);
        assert_eq!(kind, expected);
    }
}

/// Keeps what it is told of refused answers.
#[derive(Default)]
struct Kept(std::sync::Mutex<Vec<(String, String)>>);

impl RefusedAnswers for Kept {
    fn refused(&self, error: CrossingError, answer: &str) {
        self.0
            .lock()
            .unwrap()
            .push((error.to_string(), answer.to_owned()));
    }
}

#[tokio::test]
async fn untrusted_answers_are_reported_and_sent_again_at_once_up_to_the_bound() {
    let frame = Frame::root(Budget::for_deadline(100, 1), 0);
    let kept = Kept::default();
    let request = RemoteRequest {
        refused: &kept,
        ..request(&frame, "{}")
    };
    // Two impostors' answers, then a trusted one: the trusted one is the answer, the two
    // are reported, and no pause was taken (nothing was lost).
    let calls = std::cell::Cell::new(0u32);
    let pauses = std::cell::Cell::new(0u32);
    let answered = with_retries(
        &request,
        |_| {
            calls.set(calls.get() + 1);
            std::future::ready(match calls.get() {
                1 | 2 => Err(AttemptFailed::Untrusted {
                    answer: format!("forged {}", calls.get()),
                    reason: "it is not signed".into(),
                }),
                _ => Ok("trusted".to_owned()),
            })
        },
        |_| {
            pauses.set(pauses.get() + 1);
            std::future::ready(())
        },
    )
    .await;
    assert_eq!(answered.unwrap(), "trusted");
    assert_eq!(pauses.get(), 0);
    let reported = kept.0.lock().unwrap().clone();
    assert_eq!(
        reported,
        [1, 2]
            .map(|n| (
                "reply: an answer for `wellness` does not come from a trusted worker: it is not signed".to_owned(),
                format!("forged {n}")
            ))
            .to_vec()
    );
    // Only impostors: every answer reported (each has its record), then the call fails at
    // the bound.
    let kept = Kept::default();
    let again = RemoteRequest {
        refused: &kept,
        ..request
    };
    let failed = with_retries(
        &again,
        |_| {
            std::future::ready(Err::<String, _>(AttemptFailed::Untrusted {
                answer: "forged".into(),
                reason: "it is not signed".into(),
            }))
        },
        |_| std::future::ready(()),
    )
    .await
    .unwrap_err();
    assert_eq!(failed.kind(), "agent_unavailable");
    assert!(
        failed
            .to_string()
            .contains("32 answers came, none from a trusted worker"),
        "{failed}"
    );
    assert_eq!(
        kept.0.lock().unwrap().len(),
        WIRE_UNTRUSTED_ANSWERS_MAX as usize
    );
}

#[tokio::test]
async fn a_repeated_request_is_answered_once_and_its_copies_wait_for_it() {
    let cache = AnswerCache::default();
    let made = std::cell::Cell::new(0);
    let sent = sent(&[], Some(10), Some(100));
    let key = request_key("aura.tool.wellness.stress_score", &sent, b"{}");
    let make = |text: &'static str| {
        let made = &made;
        async move {
            made.set(made.get() + 1);
            // Yields, so the copy arrives while the first is still being made.
            tokio::task::yield_now().await;
            text.to_owned()
        }
    };
    let (first, copy) = tokio::join!(
        cache.answer(key, || make("first")),
        cache.answer(key, || make("second"))
    );
    assert_eq!((&*first, &*copy), ("first", "first"));
    assert_eq!(made.get(), 1);
    // Another frame is another request.
    let other = request_key("aura.tool.wellness.stress_score", &sent_with_fuel(9), b"{}");
    assert_ne!(key, other);
    assert_eq!(&*cache.answer(other, || make("third")).await, "third");
    assert_eq!(made.get(), 2);
}

fn sent_with_fuel(fuel: u64) -> SentFrame {
    sent(&[], Some(fuel), Some(100))
}

#[test]
fn a_tick_id_names_the_agent_and_the_context() {
    let id = tick_id("calendar", "{}");
    assert!(aura_protocol::is_call_id(&id), "{id}");
    assert_eq!(id, tick_id("calendar", "{}"));
    assert_ne!(id, tick_id("comms", "{}"));
    assert_ne!(id, tick_id("calendar", "{\"a\":1}"));
}
