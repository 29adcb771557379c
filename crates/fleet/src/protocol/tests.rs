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

#[test]
fn a_journal_not_written_under_the_fence_does_not_replay() {
    let twice: Vec<(Seq, R)> = vec![
        (
            1,
            Record::Decision {
                number: 0,
                decision: "d0",
            },
        ),
        (
            2,
            Record::Decision {
                number: 0,
                decision: "d0 again",
            },
        ),
    ];
    assert_eq!(
        replay(twice),
        Err(ReplayError::DecisionOutOfOrder {
            seq: 2,
            number: 0,
            expected: 1
        })
    );
    let backwards = vec![(4, signal("s1", "x")), (4, signal("s2", "y"))];
    assert_eq!(
        replay(backwards),
        Err(ReplayError::OutOfOrder { seq: 4, after: 4 })
    );
}
