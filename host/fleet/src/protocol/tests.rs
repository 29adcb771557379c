//! The protocol's rules on hand-worked cases; the model (`model`) checks them together.

use super::*;

#[test]
fn a_free_person_is_created_a_held_one_left_and_a_holder_renews_only_its_own_revision() {
    assert_eq!(lease_step("a", None, LeaseEntry::Absent), LeaseStep::Create);
    let held_by_b = LeaseEntry::Held {
        host: "b",
        revision: 7,
    };
    assert_eq!(lease_step("a", None, held_by_b), LeaseStep::Wait);
    let mut holding = Holding::acquired(7, 0);
    assert_eq!(holding.epoch, 7);
    let mine = LeaseEntry::Held {
        host: "a",
        revision: 7,
    };
    assert_eq!(
        lease_step("a", Some(&holding), mine),
        LeaseStep::Renew { revision: 7 }
    );
    holding.renewed(9);
    assert_eq!(holding.epoch, 7, "renewing keeps the epoch");
    // The key expired and another host created it: this host's revision is gone.
    let taken = LeaseEntry::Held {
        host: "b",
        revision: 12,
    };
    assert_eq!(lease_step("a", Some(&holding), taken), LeaseStep::Lost);
    // The key at an older revision of this host (a reply crossed a renewal): not this holding.
    assert_eq!(lease_step("a", Some(&holding), mine), LeaseStep::Lost);
    assert_eq!(
        lease_step("a", Some(&holding), LeaseEntry::Absent),
        LeaseStep::Lost
    );
}

#[test]
fn a_takeover_refused_reads_again_and_a_holder_refused_after_it_is_fenced() {
    // Read the journal up to 4, then another record landed: the takeover is refused.
    let mut holding = Holding::acquired(3, 4);
    assert_eq!(holding.expected(), 4);
    assert_eq!(holding.appended(Stored::Conflict), AfterAppend::Reread);
    assert!(!holding.taken_over);
    // What landed was the old holder's last record: take over after it.
    assert_eq!(holding.reread(5, 1), AfterAppend::Go);
    assert_eq!(holding.expected(), 5);
    assert_eq!(holding.appended(Stored::At(6)), AfterAppend::Go);
    assert!(holding.taken_over);
    assert_eq!(holding.expected(), 6);
    assert_eq!(holding.appended(Stored::At(7)), AfterAppend::Go);
    // A newer holder's takeover landed at 8: this host's next append is refused, and it stops.
    assert_eq!(holding.appended(Stored::Conflict), AfterAppend::Fenced);

    // What landed was a newer holder's takeover (epoch 5 > 3): the older lease stops instead
    // of taking the person back.
    let mut older = Holding::acquired(3, 4);
    assert_eq!(older.appended(Stored::Conflict), AfterAppend::Reread);
    assert_eq!(older.reread(5, 5), AfterAppend::Fenced);
    assert_eq!(older.expected(), 4, "nothing more is appended");
}

#[test]
fn decisions_are_delivered_after_the_journal_holds_them_each_after_the_one_before() {
    let mut outbox = Outbox::read(None);
    assert_eq!((outbox.next, outbox.last), (0, 0));
    assert!(!outbox.due(0), "nothing journaled, nothing to deliver");
    assert!(outbox.due(1));
    assert_eq!(outbox.published(Stored::At(1)), AfterPublish::Delivered);
    assert_eq!((outbox.next, outbox.last), (1, 1));
    assert!(!outbox.due(1));
    // Decision 1 is journaled; an older holder delivered 1 and 2 before this host could.
    assert_eq!(outbox.published(Stored::Conflict), AfterPublish::ReadLast);
    outbox.caught_up(Some((2, 3))).unwrap();
    assert_eq!((outbox.next, outbox.last), (3, 3));
    // A last message that goes back (a stranger's, or a purged subject) is not followed.
    let before = outbox.clone();
    assert_eq!(
        outbox.caught_up(Some((0, 4))),
        Err(Regressed {
            next: 3,
            last: Some(0)
        })
    );
    assert_eq!(
        outbox.caught_up(None),
        Err(Regressed {
            next: 3,
            last: None
        })
    );
    assert_eq!(outbox, before, "a refused catch-up changes nothing");
    assert!(!outbox.due(3));
    assert!(outbox.due(4));
    // At takeover, the subject's last message was decision 5 at sequence 9.
    assert_eq!(Outbox::read(Some((5, 9))), Outbox { next: 6, last: 9 });
}

type R = Record<&'static str, &'static str>;

fn signal(id: &str, signal: &'static str) -> R {
    Record::Signal {
        id: id.to_owned(),
        signal,
    }
}

#[test]
fn a_journal_replays_each_signal_once_and_its_decisions_in_order() {
    let records = vec![
        (
            1,
            Record::Takeover {
                host: "a".into(),
                epoch: 1,
            },
        ),
        (2, signal("s1", "first")),
        (
            3,
            Record::Decision {
                number: 0,
                decision: "d0",
            },
        ),
        (
            5,
            Record::Takeover {
                host: "b".into(),
                epoch: 4,
            },
        ),
        // Sent again after the first holder journaled it and died before acknowledging it.
        (6, signal("s1", "first again")),
        (7, signal("s2", "second")),
        (
            8,
            Record::Decision {
                number: 1,
                decision: "d1",
            },
        ),
    ];
    let replayed = replay(records).unwrap();
    assert_eq!(
        replayed.signals,
        vec![("s1".to_owned(), "first"), ("s2".to_owned(), "second")]
    );
    assert_eq!(replayed.decisions, vec!["d0", "d1"]);
    assert_eq!(replayed.last, 8);
    assert_eq!(replayed.epoch, 4);
    assert_eq!(replay(Vec::<(Seq, R)>::new()).unwrap().last, 0);
}

fn takeover(host: &str, epoch: Epoch) -> R {
    Record::Takeover {
        host: host.into(),
        epoch,
    }
}

fn decision(number: u64, decision: &'static str) -> R {
    Record::Decision { number, decision }
}

#[test]
fn a_journal_not_written_under_the_fence_does_not_replay() {
    let twice: Vec<(Seq, R)> = vec![
        (1, takeover("a", 1)),
        (2, decision(0, "d0")),
        (3, decision(0, "d0 again")),
    ];
    assert_eq!(
        replay(twice),
        Err(ReplayError::DecisionOutOfOrder {
            seq: 3,
            number: 0,
            expected: 1
        })
    );
    let backwards = vec![
        (3, takeover("a", 1)),
        (4, signal("s1", "x")),
        (4, signal("s2", "y")),
    ];
    assert_eq!(
        replay(backwards),
        Err(ReplayError::OutOfOrder { seq: 4, after: 4 })
    );
}

/// A journal of records 10..=16 (the stream's sequences: other people's records are between
/// a person's, so a person's first is any number): a takeover, three signals, two decisions,
/// a second holder's takeover, one more signal and decision.
fn journal() -> Vec<(Seq, R)> {
    vec![
        (10, takeover("a", 3)),
        (11, signal("1", "s1")),
        (12, decision(0, "d0")),
        (13, signal("2", "s2")),
        (14, decision(1, "d1")),
        (16, signal("3", "s3")),
        (20, takeover("b", 9)),
        (21, signal("4", "s4")),
        (22, decision(2, "d2")),
    ]
}

#[test]
fn a_journal_purged_below_its_checkpoint_replays_from_it_as_the_whole_one_does_after_it() {
    // Captured right after signal 2 (record 13), by the holder of epoch 3: one decision (d0)
    // journaled by then, the inbox read to 2 (the next is 3).
    let covered = Covered {
        fence: 13,
        decisions: 1,
        epoch: 3,
        inbox_next: 3,
    };
    let whole = replay(journal()).unwrap();
    assert_eq!(whole.decisions, vec!["d0", "d1", "d2"]);
    assert_eq!((whole.last, whole.epoch, whole.covered), (22, 9, None));
    // Purged below the fence: record 13 is kept, the ones before are gone.
    let purged: Vec<_> = journal()
        .into_iter()
        .filter(|(seq, _)| *seq >= 13)
        .collect();
    let from = replay_from(Some(covered), purged).unwrap();
    assert_eq!(from.decisions, vec!["d1", "d2"]);
    assert_eq!(from.decisions_base(), 1);
    assert_eq!(
        from.signals,
        vec![("3".to_owned(), "s3"), ("4".to_owned(), "s4")]
    );
    assert_eq!(
        (from.last, from.epoch, from.covered),
        (22, 9, Some(covered))
    );
    // Not purged yet (d0 may not have been delivered): its signals are the checkpoint's, but
    // d0 is kept, counted back from the checkpoint's one decision.
    let unpurged = replay_from(Some(covered), journal()).unwrap();
    assert_eq!(unpurged.decisions, vec!["d0", "d1", "d2"]);
    assert_eq!(unpurged.decisions_base(), 0);
    assert_eq!(unpurged.signals, from.signals);
    // Purged below record 12: d0 (record 12) is before the fence and still kept.
    let partly: Vec<_> = journal()
        .into_iter()
        .filter(|(seq, _)| *seq >= 12)
        .collect();
    let partly = replay_from(Some(covered), partly).unwrap();
    assert_eq!((partly.decisions_base(), partly.decisions.len()), (0, 3));
}

#[test]
fn a_journal_purged_past_what_a_checkpoint_holds_or_read_before_it_does_not_replay() {
    let covered = Covered {
        fence: 13,
        decisions: 1,
        epoch: 3,
        inbox_next: 3,
    };
    // Record 13 purged too: 14..16 are not its state's, and nothing holds 13.
    let past: Vec<_> = journal().into_iter().filter(|(seq, _)| *seq > 13).collect();
    assert_eq!(
        replay_from(Some(covered), past.clone()),
        Err(ReplayError::Purged {
            first: 14,
            covered: 13
        })
    );
    // Without a checkpoint, a journal whose first record is not a takeover was purged.
    assert_eq!(
        replay(past),
        Err(ReplayError::Purged {
            first: 14,
            covered: 0
        })
    );
    // Read to record 12, then a checkpoint to 13 was stored: the journal moved since.
    let early: Vec<_> = journal()
        .into_iter()
        .filter(|(seq, _)| *seq <= 12)
        .collect();
    assert_eq!(
        replay_from(Some(covered), early),
        Err(ReplayError::Ahead {
            last: 12,
            covered: 13
        })
    );
    // A checkpoint that counts other decisions than the journal holds does not replay.
    let miscounted = Covered {
        decisions: 2,
        ..covered
    };
    assert_eq!(
        replay_from(Some(miscounted), journal()),
        Err(ReplayError::DecisionOutOfOrder {
            seq: 12,
            number: 0,
            expected: 1
        })
    );
}
