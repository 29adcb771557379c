//! A life's homes under the suite every home passes (`aura_day::store::suite`): the fleet's,
//! on a real nats-server's JetStream (the files and memory homes run it in `aura-day`'s own
//! tests).

use std::sync::atomic::{AtomicU64, Ordering};

use aura_fleet::jetstream;
use aura_fleet::life::FleetHome;

use crate::wire::NatsServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jetstream_home_passes_the_suite() {
    let server = NatsServer::start("store-homes");
    let client = async_nats::connect(&server.url).await.unwrap();
    let fleet = jetstream::open(&client).await.unwrap();
    let store = fleet.store();
    // Each home the suite asks for is a life of its own, empty.
    let n = AtomicU64::new(0);
    aura_day::store::suite::conformance(|| {
        let life = format!("suite-{}", n.fetch_add(1, Ordering::Relaxed));
        FleetHome::new(store.clone(), &life).unwrap()
    })
    .await;
}

/// The JetStream home fences a lapsed opener: its hold's key ended as the bucket's age limit
/// ends it, another opener in, the older one's first write (each kind in turn) is refused by
/// the server and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jetstream_home_fences_an_opener_whose_lease_lapsed() {
    let server = NatsServer::start("store-lapse");
    let client = async_nats::connect(&server.url).await.unwrap();
    let fleet = jetstream::open(&client).await.unwrap();
    let store = fleet.store();
    let n = AtomicU64::new(0);
    aura_day::store::suite::a_lapsed_opener_writes_nothing(
        || {
            FleetHome::new(
                store.clone(),
                &format!("lapse-{}", n.fetch_add(1, Ordering::Relaxed)),
            )
            .unwrap()
        },
        |_| lapse_every_hold(store.clone()),
    )
    .await;
}

/// Ends every hold of a life on `store` as its key's age limit does (the opener is not told).
pub(crate) async fn lapse_every_hold(store: std::sync::Arc<dyn aura_fleet::store::FleetStore>) {
    use aura_fleet::store::Bucket;
    for key in store.keys(Bucket::LifeHolds, 1_000).await.unwrap() {
        if let Some(entry) = store.get(Bucket::LifeHolds, &key).await.unwrap() {
            store
                .delete(Bucket::LifeHolds, &key, entry.revision)
                .await
                .unwrap();
        }
    }
}

/// Median and p99 of `samples`, in µs.
fn figures(samples: &mut [std::time::Duration]) -> (f64, f64) {
    samples.sort();
    let at =
        |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1e6;
    (at(0.5), at(0.99))
}

/// `just bench-store`'s JetStream half: a signal's durable append on the fleet's home of a
/// life beside the fleet's own journal append (a publish with the expected last sequence, as
/// `Fleet::append` makes it), interleaved, and a rollover (the record, the next day begun, the
/// commit). One nats-server on this machine, file storage synced at every write
/// (`sync_interval: always`, as deploy/nats/aura.conf runs it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: just bench-store"]
async fn bench_store_jetstream() {
    use aura_day::store::{Home, LIFE_FORMAT, LifeState};
    use aura_fleet::protocol::Stored;
    use aura_fleet::store::{Log, journal_subject};
    use serde_json::json;
    const APPENDS: usize = 2_000;
    const ROLLOVERS: usize = 100;
    let server = NatsServer::start_with("store-bench", Some("sync_interval: always"));
    let client = async_nats::connect(&server.url).await.unwrap();
    let fleet = jetstream::open(&client).await.unwrap();
    let store = fleet.store();
    let home = FleetHome::new(store.clone(), "bench").unwrap();
    let life = home.open(None).await.unwrap();
    let state = |open: &str| LifeState {
        format: LIFE_FORMAT.to_owned(),
        setup_sha256: "ab".repeat(32),
        open: open.to_owned(),
        previous: None,
        base: 0,
        decided_base: 0,
        time_zone: None,
        positions: Default::default(),
    };
    let setup = json!({"name": "bench", "start": "2026-01-01T00:00:00+01:00", "initial": {}});
    let day = |n: usize| {
        (time::Date::from_calendar_date(2026, time::Month::January, 1).unwrap()
            + time::Duration::days(n as i64))
        .to_string()
    };
    life.begin_day(&day(0), &setup, &[]).await.unwrap();
    life.commit(&state(&day(0))).await.unwrap();
    let person = aura_contract::person::Person::new("bench", "person").unwrap();
    let subject = journal_subject(&person);
    let mut last = 0;
    let (mut straight, mut through) = (Vec::new(), Vec::new());
    for n in 0..APPENDS {
        let line = json!({"at": "2026-01-01T08:00:00+01:00", "kind": "reading",
            "data": {"metric": "heart_rate", "value": 60 + n % 40}, "id": format!("w-{n}"), "seq": n});
        for first_straight in [n % 2 == 0, n % 2 == 1] {
            let started = std::time::Instant::now();
            match first_straight {
                true => {
                    let record = json!({"signal": {"id": n.to_string(), "signal": line}});
                    let bytes = serde_json::to_vec(&record).unwrap();
                    let headers = vec![("Aura-Epoch", "1".to_owned())];
                    let stored = store
                        .publish(
                            Log::Journal,
                            subject.clone(),
                            headers,
                            bytes.into(),
                            Some(last),
                        )
                        .await
                        .unwrap();
                    let Stored::At(seq) = stored else {
                        panic!("conflict")
                    };
                    last = seq;
                    straight.push(started.elapsed());
                }
                false => {
                    life.append(&day(0), std::slice::from_ref(&line), &[])
                        .await
                        .unwrap();
                    through.push(started.elapsed());
                }
            }
        }
    }
    let (a, a99) = figures(&mut straight);
    let (b, b99) = figures(&mut through);
    println!("A signal's durable append on JetStream ({APPENDS} each, interleaved):");
    println!("  the fleet's journal publish (before)   median {a:>8.1} µs   p99 {a99:>8.1} µs");
    println!("  the fleet's home of a life             median {b:>8.1} µs   p99 {b99:>8.1} µs");
    println!("  home / journal publish: {:.3}", b / a);
    let mut rollovers = Vec::new();
    for n in 1..=ROLLOVERS {
        let started = std::time::Instant::now();
        life.put_record(&day(n - 1), &json!({"name": "bench", "signals": []}))
            .await
            .unwrap();
        life.begin_day(&day(n), &setup, &[]).await.unwrap();
        life.commit(&state(&day(n))).await.unwrap();
        rollovers.push(started.elapsed());
    }
    let (r, r99) = figures(&mut rollovers);
    println!("A rollover on JetStream ({ROLLOVERS}): median {r:>8.1} µs   p99 {r99:>8.1} µs");
}

/// The session knows nothing of where its life is kept: the same days lived with the life in
/// the data dir, in the memory home and in the fleet's JetStream home (a real nats-server)
/// keep the same journal, traces, deliveries and records, day by day, also when the session
/// is stopped midway and the life goes on from a new, empty data dir (another machine).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_life_lived_on_any_home_keeps_the_same_days() {
    use crate::dst_life::{kept, lines_of, live_on, three_days};
    use aura_day::store::{FileHome, Home, MemoryHome};
    use std::sync::Arc;
    let dir = crate::support::temp_dir("store-homes-lived");
    let scenario = three_days(&dir);
    // (A line no session takes among them: refused, quarantined in its day, on every home.)
    let lines = lines_of(&scenario);
    let lived = live_on("lived-files", &scenario, None, &lines, true).await;
    lived.ended.unwrap();
    let files = kept(&FileHome { path: lived.data }).await;
    assert_eq!(files.len(), 3, "{:?}", files.keys().collect::<Vec<_>>());
    let traces: usize = files.values().map(|day| day.traces.len()).sum();
    assert!(traces > 20, "{traces} traces");
    let handed: usize = files.values().map(|day| day.handed.len()).sum();
    assert_eq!(handed, traces, "each decision handed over once");
    assert!(
        files.values().any(|day| !day.quarantine.is_empty()),
        "the refusal is quarantined"
    );

    let memory = MemoryHome::new();
    let home: Arc<dyn Home> = Arc::new(memory.clone());
    let lived = live_on("lived-memory", &scenario, Some(home.clone()), &lines, true).await;
    lived.ended.unwrap();
    assert_eq!(kept(&memory).await, files, "the memory home");

    // Stopped at the first day's noon, then on from an empty data dir.
    let memory = MemoryHome::new();
    let home: Arc<dyn Home> = Arc::new(memory.clone());
    let (before, after) = lines.split_at(150);
    live_on(
        "lived-stopped",
        &scenario,
        Some(home.clone()),
        before,
        false,
    )
    .await;
    live_on("lived-moved", &scenario, Some(home), after, true).await;
    assert_eq!(kept(&memory).await, files, "stopped and moved");

    let server = NatsServer::start("store-homes-lived");
    let client = async_nats::connect(&server.url).await.unwrap();
    let fleet = jetstream::open(&client).await.unwrap();
    let jetstream = FleetHome::new(fleet.store(), "lived").unwrap();
    let home: Arc<dyn Home> = Arc::new(jetstream.clone());
    let lived = live_on("lived-js", &scenario, Some(home.clone()), before, false).await;
    lived.ended.unwrap();
    let lived = live_on("lived-js-moved", &scenario, Some(home), after, true).await;
    lived.ended.unwrap();
    assert_eq!(kept(&jetstream).await, files, "the JetStream home");
}

/// `just bench-store`'s session half: the recorded day lived on past two midnights (217
/// pushes, 3 days, 2 rollovers) in a session whose life is kept in the data dir, in the memory
/// home and in the fleet's home (one nats-server on this machine, synced at every write),
/// the last two through the session's working copy; rounds interleaved. Each push's answer
/// (durable when it comes: the records shipped, the signal appended) and the whole life's
/// time, median and p99.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: just bench-store"]
async fn bench_store_sessions() {
    use aura_day::live::{self, Clock, LiveConfig};
    use aura_day::store::{Home, MemoryHome};
    use std::sync::Arc;
    const ROUNDS: usize = 5;
    let server = NatsServer::start_with("store-bench-sessions", Some("sync_interval: always"));
    let client = async_nats::connect(&server.url).await.unwrap();
    let fleet = jetstream::open(&client).await.unwrap();
    let dir = crate::support::temp_dir("store-bench-sessions");
    let scenario = crate::dst_life::three_days(&dir);
    let lines = crate::dst_life::lines_of(&scenario);
    let names = ["files", "memory", "jetstream"];
    let mut pushes: Vec<Vec<std::time::Duration>> = vec![Vec::new(); 3];
    let mut lives: Vec<Vec<std::time::Duration>> = vec![Vec::new(); 3];
    for round in 0..ROUNDS {
        for (which, name) in names.iter().enumerate() {
            let home: Option<Arc<dyn Home>> = match which {
                0 => None,
                1 => Some(Arc::new(MemoryHome::new())),
                _ => Some(Arc::new(
                    FleetHome::new(fleet.store(), &format!("bench-{round}")).unwrap(),
                )),
            };
            let (host, _data) = crate::support::host(&format!("bench-{name}-{round}")).await;
            let mut config =
                LiveConfig::load(&scenario, host.crossing().schemas(), 7, Clock::Replay).unwrap();
            config.tick_on = Some(Vec::new());
            config.home = home;
            let (handle, inbox) = live::channel(&host);
            let began = std::time::Instant::now();
            let session = tokio::spawn({
                let host = host.clone();
                async move { live::live(&host, config, Vec::new(), inbox, |_| {}).await }
            });
            for line in &lines {
                let pushed = std::time::Instant::now();
                let _ = handle.push_in_order(line.as_bytes()).await;
                pushes[which].push(pushed.elapsed());
            }
            handle.close().await;
            session.await.unwrap().unwrap();
            lives[which].push(began.elapsed());
        }
    }
    for (which, name) in names.iter().enumerate() {
        let (push_median, push_p99) = figures(&mut pushes[which]);
        let (life_median, life_p99) = figures(&mut lives[which]);
        println!(
            "{name}: a push answered, median {push_median:.0} µs, p99 {push_p99:.0} µs; the three days {:.1} ms median, {:.1} ms p99",
            life_median / 1e3,
            life_p99 / 1e3
        );
    }
}
