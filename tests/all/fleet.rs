//! The fleet's protocol on a real nats-server's JetStream: two hosts (two connections) contend
//! for people through the lease bucket, and the journal's and decisions' sequence checks
//! refuse a holder that lost its lease, whatever it believes. What the model checker explores
//! (host/fleet, `protocol::model`), here on the server that enforces it.

use std::time::{Duration, Instant};

use serde_json::json;

use aura_contract::limits::FLEET_LEASE_MS;
use aura_contract::person::Person;
use aura_day::logs::RunLogs;
use aura_fleet::jetstream;
use aura_fleet::protocol::{AfterAppend, LeaseStep, Record};
use aura_fleet::store::{Claim, Fleet, Journaled, decisions_subject};

use crate::wire::NatsServer;

async fn host(server: &NatsServer) -> Fleet {
    let client = async_nats::connect(&server.url).await.unwrap();
    jetstream::open(&client).await.unwrap()
}

fn signal(id: &str, text: &str) -> Journaled {
    Record::Signal {
        id: id.to_owned(),
        signal: json!({"kind": "message", "text": text}),
    }
}

fn decision(number: u64, summary: &str) -> Journaled {
    Record::Decision {
        number,
        decision: json!({"summary": summary}),
    }
}

/// Claims `person` for `me` as soon as nobody holds them (polling; at most ten leases).
async fn claim_when_free(fleet: &Fleet, person: &Person, me: &str) -> Claim {
    let started = Instant::now();
    loop {
        if let Some(claim) = fleet.claim(person, me).await.unwrap() {
            eprintln!("{me} claimed {person} after {:?}", started.elapsed());
            return claim;
        }
        assert!(
            started.elapsed() < Duration::from_millis(10 * FLEET_LEASE_MS),
            "{person} was never free for {me}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Appends `record` to `person`'s journal under `claim`'s fence.
async fn append(
    fleet: &Fleet,
    person: &Person,
    claim: &mut Claim,
    record: Journaled,
) -> AfterAppend {
    fleet
        .append(person, &mut claim.holding, &record)
        .await
        .unwrap()
}

/// Takes `person` over for `me` after claiming them.
async fn holder(fleet: &Fleet, person: &Person, me: &str) -> Claim {
    let mut claim = claim_when_free(fleet, person, me).await;
    assert!(fleet.take_over(person, me, &mut claim).await.unwrap());
    claim
}

#[tokio::test]
async fn another_host_takes_a_person_only_once_the_lease_ran_out_and_the_first_can_write_no_more() {
    let server = NatsServer::start("fleet-lease");
    let (a, b) = (host(&server).await, host(&server).await);
    let alice = Person::new("acme", "alice").unwrap();
    let mut held = holder(&a, &alice, "host-a").await;
    assert_eq!(
        append(&a, &alice, &mut held, signal("s1", "hello")).await,
        AfterAppend::Go
    );
    // Renewed every sixth of a lease (a host renews every third; a test machine under load
    // gets the margin), for two leases: she stays host-a's.
    for _ in 0..12 {
        tokio::time::sleep(Duration::from_millis(FLEET_LEASE_MS / 6)).await;
        let step = a.renew(&alice, "host-a", &mut held.holding).await.unwrap();
        assert!(matches!(step, LeaseStep::Renew { .. }), "{step:?}");
        assert!(b.claim(&alice, "host-b").await.unwrap().is_none());
    }
    assert_eq!(
        a.lease(&alice).await.unwrap().map(|(host, _)| host),
        Some("host-a".to_owned())
    );
    // host-a stops renewing (paused, cut off): the server lets the key go, host-b takes her
    // over from what the journal holds.
    let mut taken = claim_when_free(&b, &alice, "host-b").await;
    assert!(taken.holding.epoch > held.holding.epoch);
    assert_eq!(taken.replayed.signals.len(), 1);
    assert_eq!(taken.replayed.signals[0].0, "s1");
    assert!(b.take_over(&alice, "host-b", &mut taken).await.unwrap());
    // host-a wakes up believing it holds her: JetStream refuses its record, and its renewal
    // finds the key another host's.
    assert_eq!(
        append(&a, &alice, &mut held, signal("s2", "late")).await,
        AfterAppend::Fenced
    );
    assert_eq!(
        a.renew(&alice, "host-a", &mut held.holding).await.unwrap(),
        LeaseStep::Lost
    );
    // The journal: host-a's takeover, s1, host-b's takeover; nothing of host-a's after it.
    let journal = b.read_journal(&alice).await.unwrap();
    assert_eq!(journal.signals.len(), 1);
    assert_eq!(journal.epoch, taken.holding.epoch);
    assert_eq!(journal.last, 3);
    assert_eq!(
        append(&b, &alice, &mut taken, signal("s2", "on time")).await,
        AfterAppend::Go
    );
}

#[tokio::test]
async fn a_record_the_old_holder_wrote_after_the_new_one_read_is_read_again_and_kept() {
    let server = NatsServer::start("fleet-reread");
    let (a, b) = (host(&server).await, host(&server).await);
    let bob = Person::new("acme", "bob").unwrap();
    let mut held = holder(&a, &bob, "host-a").await;
    // host-a's lease runs out; host-b claims bob and reads a journal of one record.
    let mut taken = claim_when_free(&b, &bob, "host-b").await;
    assert!(taken.replayed.signals.is_empty());
    // Before host-b's takeover lands, host-a (still believing) journals a signal and
    // acknowledges it to its sender: the fence lets it, nobody took over yet.
    assert_eq!(
        append(&a, &bob, &mut held, signal("s1", "acknowledged")).await,
        AfterAppend::Go
    );
    // host-b's takeover is refused, it reads again, and takes over with the signal.
    assert!(b.take_over(&bob, "host-b", &mut taken).await.unwrap());
    assert_eq!(
        taken.replayed.signals.len(),
        1,
        "the acknowledged signal is kept"
    );
    assert_eq!(
        append(&a, &bob, &mut held, signal("s2", "too late")).await,
        AfterAppend::Fenced
    );
}

#[tokio::test]
async fn a_decision_both_holders_deliver_reaches_the_person_once() {
    let server = NatsServer::start("fleet-deliver");
    let (a, b) = (host(&server).await, host(&server).await);
    let carol = Person::new("acme", "carol").unwrap();
    let mut held = holder(&a, &carol, "host-a").await;
    assert_eq!(
        append(&a, &carol, &mut held, decision(0, "lunch moved")).await,
        AfterAppend::Go
    );
    let journaled_by_a = vec![json!({"summary": "lunch moved"})];
    // host-a pauses before delivering; host-b takes carol over and delivers decision 0.
    let mut taken = holder(&b, &carol, "host-b").await;
    assert_eq!(taken.replayed.decisions, journaled_by_a);
    let delivered = b
        .deliver(&carol, &mut taken.outbox, &taken.replayed.decisions, 0)
        .await
        .unwrap();
    assert_eq!(delivered, 1);
    // host-a wakes and delivers what it journaled: the subject has moved, it reads the last
    // decision and publishes nothing.
    let again = a
        .deliver(&carol, &mut held.outbox, &journaled_by_a, 0)
        .await
        .unwrap();
    assert_eq!(again, 0);
    assert_eq!(held.outbox.next, 1);
    assert_eq!(
        b.deliver(&carol, &mut taken.outbox, &taken.replayed.decisions, 0)
            .await
            .unwrap(),
        0
    );
    // What carol's apps read: one message, decision 0.
    let client = async_nats::connect(&server.url).await.unwrap();
    let stream = async_nats::jetstream::new(client)
        .get_stream(aura_fleet::jetstream::DECISIONS_STREAM)
        .await
        .unwrap();
    let last = stream
        .get_last_raw_message_by_subject(&decisions_subject(&carol))
        .await
        .unwrap();
    assert_eq!(
        last.sequence, 1,
        "one message on the subject, and it is the first"
    );
    let body: serde_json::Value = serde_json::from_slice(&last.payload).unwrap();
    assert_eq!(body, json!({"summary": "lunch moved"}));
}

#[tokio::test]
async fn people_are_held_and_journaled_apart_and_a_release_frees_one_at_once() {
    let server = NatsServer::start("fleet-apart");
    let (a, b) = (host(&server).await, host(&server).await);
    let dana = Person::new("acme", "dana").unwrap();
    let erin = Person::new("acme", "erin").unwrap();
    // The same user id in another tenant is another person.
    let other_dana = Person::new("globex", "dana").unwrap();
    let mut dana_held = holder(&a, &dana, "host-a").await;
    let mut erin_held = holder(&b, &erin, "host-b").await;
    let mut other_held = holder(&b, &other_dana, "host-b").await;
    assert!(b.claim(&dana, "host-b").await.unwrap().is_none());
    assert!(a.claim(&erin, "host-a").await.unwrap().is_none());
    for (fleet, person, claim, id) in [
        (&a, &dana, &mut dana_held, "dana-1"),
        (&b, &erin, &mut erin_held, "erin-1"),
        (&b, &other_dana, &mut other_held, "globex-dana-1"),
    ] {
        assert_eq!(
            append(fleet, person, claim, signal(id, id)).await,
            AfterAppend::Go
        );
    }
    for (person, id) in [
        (&dana, "dana-1"),
        (&erin, "erin-1"),
        (&other_dana, "globex-dana-1"),
    ] {
        let journal = a.read_journal(person).await.unwrap();
        let ids: Vec<&str> = journal.signals.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, [id], "{person}'s journal holds only their own");
    }
    // A host that stops cleanly lets its person go: the next host need not wait a lease.
    a.release(&dana, &dana_held.holding).await.unwrap();
    let started = Instant::now();
    let claim = b.claim(&dana, "host-b").await.unwrap();
    assert!(claim.is_some(), "dana is free the moment host-a let her go");
    eprintln!("claimed after a release in {:?}", started.elapsed());
}

#[tokio::test]
async fn a_journal_record_the_fleet_did_not_write_is_a_typed_error_not_a_takeover() {
    let server = NatsServer::start("fleet-garbage");
    let a = host(&server).await;
    let frank = Person::new("acme", "frank").unwrap();
    // A stranger with access to the journal's subjects writes into frank's.
    let client = async_nats::connect(&server.url).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let subject = aura_fleet::store::journal_subject(&frank);
    js.publish(subject, "not json".into())
        .await
        .unwrap()
        .await
        .unwrap();
    let error = a.claim(&frank, "host-a").await.unwrap_err();
    assert!(
        matches!(&error, aura_fleet::store::FleetError::Record { seq: 1, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("acme/frank"), "{error}");
    assert_eq!(
        a.lease(&frank).await.unwrap(),
        None,
        "frank is let go at once"
    );
}

/// What a person's state costs on JetStream against the file journal (one signal record of a
/// typical size, appended and acknowledged), and how long a person waits after their host
/// dies until another host holds them. Not a test: timings are never asserted.
/// `just bench-fleet`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: just bench-fleet"]
async fn bench_fleet_durable_append_and_takeover() {
    use crate::wire::percentile;
    const APPENDS: usize = 2_000;
    const PEOPLE: usize = 40;
    const POLL_MS: u64 = 25;
    // A message signal as the day's are, ~300 bytes.
    let body = json!({"at": "2026-11-23T09:14:00+01:00", "kind": "message", "id": "m-0001",
        "data": {"from": "Dana Whitfield", "channel": "email",
                 "text": "Can we move the design review to Thursday afternoon? The venue is booked until 3."}});
    let report = |name: &str, micros: &[u64]| {
        eprintln!(
            "{name}: p50 {} µs, p99 {} µs ({} appends)",
            percentile(micros, 50),
            percentile(micros, 99),
            micros.len()
        );
    };

    let dir = crate::support::temp_dir("bench-fleet-file");
    let journal = aura_host::journal::Journal::open(&dir).unwrap();
    journal.open_live().unwrap();
    let mut file = Vec::with_capacity(APPENDS);
    for _ in 0..APPENDS {
        let started = Instant::now();
        journal.signal(&body).unwrap();
        file.push(started.elapsed().as_micros() as u64);
    }
    file.sort_unstable();
    report("file journal (fsync per record)", &file);

    for (name, settings) in [
        ("JetStream, the server's default sync (every 2 min)", ""),
        (
            "JetStream, sync_interval: always (fsync per record)",
            "sync_interval: always",
        ),
    ] {
        let server =
            NatsServer::start_with(&format!("bench-fleet-{}", settings.len()), Some(settings));
        let fleet = host(&server).await;
        let person = Person::new("bench", "append").unwrap();
        let mut claim = holder(&fleet, &person, "host-a").await;
        let mut micros = Vec::with_capacity(APPENDS);
        for i in 0..APPENDS {
            let record = Record::Signal {
                id: format!("s{i}"),
                signal: body.clone(),
            };
            let started = Instant::now();
            let answer = fleet
                .append(&person, &mut claim.holding, &record)
                .await
                .unwrap();
            micros.push(started.elapsed().as_micros() as u64);
            assert_eq!(answer, AfterAppend::Go);
        }
        micros.sort_unstable();
        report(name, &micros);
    }

    // Takeover: host-a holds PEOPLE people, renews each once more, and dies (no release);
    // host-b looks for free people every POLL_MS and takes each over as soon as it can.
    let server = NatsServer::start("bench-fleet-takeover");
    let (a, b) = (host(&server).await, host(&server).await);
    let people: Vec<Person> = (0..PEOPLE)
        .map(|i| Person::new("bench", &format!("p{i}")).unwrap())
        .collect();
    let mut last_renewal = Vec::new();
    for person in &people {
        let mut held = holder(&a, person, "host-a").await;
        let step = a.renew(person, "host-a", &mut held.holding).await.unwrap();
        assert!(matches!(step, LeaseStep::Renew { .. }));
        last_renewal.push(Instant::now());
    }
    let mut waited_ms: Vec<u64> = Vec::new();
    let mut free: Vec<usize> = (0..PEOPLE).collect();
    while !free.is_empty() {
        let mut still = Vec::new();
        for i in free {
            match b.claim(&people[i], "host-b").await.unwrap() {
                Some(mut claim) => {
                    assert!(b.take_over(&people[i], "host-b", &mut claim).await.unwrap());
                    waited_ms.push(last_renewal[i].elapsed().as_millis() as u64);
                }
                None => still.push(i),
            }
        }
        free = still;
        tokio::time::sleep(Duration::from_millis(POLL_MS)).await;
    }
    waited_ms.sort_unstable();
    eprintln!(
        "takeover after a host's death (lease {FLEET_LEASE_MS} ms, polled every {POLL_MS} ms): \
         p50 {} ms, p99 {} ms, max {} ms ({PEOPLE} people)",
        percentile(&waited_ms, 50),
        percentile(&waited_ms, 99),
        waited_ms[waited_ms.len() - 1]
    );
}

#[tokio::test]
async fn a_host_whose_lease_differs_from_the_buckets_is_refused_at_start() {
    let server = NatsServer::start("fleet-mismatch");
    let client = async_nats::connect(&server.url).await.unwrap();
    // A fleet started with a 10 s lease made the bucket.
    async_nats::jetstream::new(client.clone())
        .create_key_value(async_nats::jetstream::kv::Config {
            bucket: aura_fleet::jetstream::LEASES_BUCKET.to_owned(),
            history: 1,
            max_age: Duration::from_secs(10),
            ..Default::default()
        })
        .await
        .unwrap();
    let error = jetstream::open(&client).await.unwrap_err();
    assert!(
        matches!(
            error,
            aura_fleet::store::FleetError::LeaseMismatch { found_ms: 10_000 }
        ),
        "{error}"
    );
}

/// A signal sent again (a sender that lost the answer) is stored once: the server answers the
/// first one's sequence, however its JSON was spelled. For another person, another signal
/// under the same id (the session refuses that one, `id_reused`, and quarantines it) or a
/// signal with no id (the session tells those apart), it stores a new one each time.
#[tokio::test]
async fn a_signal_resent_under_its_id_is_stored_once() {
    let server = NatsServer::start("fleet-dedupe");
    let fleet = host(&server).await;
    let alice = Person::new("acme", "alice").unwrap();
    let bob = Person::new("acme", "bob").unwrap();
    let first = br#"{"id":"m-1","kind":"message","data":{"a":1}}"#;
    let again = br#"{"data": {"a": 1.0}, "kind":"message", "id":"m-1"}"#;
    let reused = br#"{"id":"m-1","kind":"message","data":{"a":2}}"#;
    let no_id = br#"{"kind":"message","data":{}}"#;
    let sent = fleet.send(&alice, Some(first)).await.unwrap();
    assert_eq!(fleet.send(&alice, Some(again)).await.unwrap(), sent);
    let for_bob = fleet.send(&bob, Some(first)).await.unwrap();
    let other = fleet.send(&alice, Some(reused)).await.unwrap();
    let (once, twice) = (
        fleet.send(&alice, Some(no_id)).await.unwrap(),
        fleet.send(&alice, Some(no_id)).await.unwrap(),
    );
    // Sequences are the stream's: bob's signal came between alice's.
    assert_eq!(
        [for_bob, other, once, twice],
        [sent + 1, sent + 2, sent + 3, sent + 4]
    );
}
