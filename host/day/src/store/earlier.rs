//! A data dir as the release before the store (05f960c) wrote it opens in the files home as
//! it is: its bytes written here by hand, in that release's format (its `life.json` has no
//! read positions; its journals' lines are signals only).

use std::path::Path;

use serde_json::json;

use super::{Appended, FileStore, LifeStore, ReadPosition};

/// `life.json` as that release wrote it: canonical JSON, `previous` and `time_zone` null when
/// unknown, no `positions`.
const LIFE: &str = r#"{"base":2,"decided_base":5,"format":"aura.life.v1","open":"2026-11-10","previous":"2026-11-09","setup_sha256":"abababababababababababababababababababababababababababababababab","time_zone":"Europe/Berlin"}"#;
const SETUP: &str = r#"{"initial":{},"name":"earlier","start":"2026-11-10T00:00:00+01:00","tick_on":["message"],"utc_offset_minutes":60}"#;
const CLOSED_LINE: &str = r#"{"at":"2026-11-09T08:00:00+01:00","data":{"from":"ann@example.com","text":"Lunch?"},"id":"m0","kind":"message","seq":0}"#;
const RECORD: &str = r#"{"end":"2026-11-09T23:45:00+01:00","initial":{},"name":"earlier","signals":[],"start":"2026-11-09T00:00:00+01:00","unfinished":true}"#;
const OPEN_LINES: [&str; 2] = [
    r#"{"at":"2026-11-10T00:00:00+01:00","data":{"time_zone":"Europe/Berlin","utc_offset_minutes":60},"id":"time_zone:2026-11-10T00:00:00+01:00","kind":"utc_offset"}"#,
    r#"{"at":"2026-11-10T08:30:00+01:00","data":{"from":"bob@example.com","text":"Call at 9?"},"id":"m1","kind":"message","seq":2}"#,
];

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn a_data_dir_the_release_before_wrote_opens_as_it_is_and_goes_on() {
    let data = std::env::temp_dir().join(format!("aura-store-earlier-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    write(&data.join("life.json"), LIFE);
    write(&data.join("traces.jsonl"), "");
    let closed = data.join("days/2026-11-09");
    write(&closed.join("live.json"), &SETUP.replace("11-10", "11-09"));
    write(&closed.join("signals.jsonl"), &format!("{CLOSED_LINE}\n"));
    write(&closed.join("day.json"), RECORD);
    write(&closed.join("traces.jsonl"), "");
    let open = data.join("days/2026-11-10");
    write(&open.join("live.json"), SETUP);
    write(
        &open.join("signals.jsonl"),
        &format!("{}\n", OPEN_LINES.join("\n")),
    );

    let store = FileStore::open(&data, None).unwrap();
    let life = store.life().await.unwrap().expect("the life is read");
    assert_eq!(
        (
            life.open.as_str(),
            life.previous.as_deref(),
            life.base,
            life.decided_base
        ),
        ("2026-11-10", Some("2026-11-09"), 2, 5)
    );
    assert_eq!(life.time_zone.as_deref(), Some("Europe/Berlin"));
    assert!(
        life.positions.is_empty(),
        "that release kept no read positions"
    );
    assert_eq!(store.days().await.unwrap(), ["2026-11-09", "2026-11-10"]);
    assert_eq!(store.lines("2026-11-10").await.unwrap(), OPEN_LINES);
    assert_eq!(store.lines("2026-11-09").await.unwrap(), [CLOSED_LINE]);
    let record: serde_json::Value = serde_json::from_str(RECORD).unwrap();
    assert_eq!(store.record("2026-11-09").await.unwrap(), Some(record));
    assert_eq!(
        store.setup("2026-11-10").await.unwrap(),
        serde_json::from_str::<serde_json::Value>(SETUP).unwrap()
    );
    // It goes on: a signal it took is known by its id, a new one stored with a read position,
    // a rollover carries the position into a life.json that now names it.
    let again = json!({"at": "2026-11-10T08:31:00+01:00", "kind": "message", "id": "m1",
        "data": {"from": "bob@example.com", "text": "Call at 9?"}, "seq": 3});
    assert_eq!(
        store.append("2026-11-10", &[again], &[]).await.unwrap(),
        [Appended::Already(OPEN_LINES[1].to_owned())]
    );
    let new = json!({"at": "2026-11-10T09:00:00+01:00", "kind": "message", "id": "m2",
        "data": {"from": "cy@example.com", "text": "Done"}, "seq": 3});
    let read = ReadPosition {
        source: "mail".to_owned(),
        position: "7:42".to_owned(),
    };
    store
        .append("2026-11-10", &[new], std::slice::from_ref(&read))
        .await
        .unwrap();
    store
        .begin_day("2026-11-11", &json!({"name": "earlier"}), &[])
        .await
        .unwrap();
    let mut next = life.clone();
    next.open = "2026-11-11".to_owned();
    next.previous = Some("2026-11-10".to_owned());
    store.commit(&next).await.unwrap();
    drop(store);
    let written = std::fs::read_to_string(data.join("life.json")).unwrap();
    assert!(
        written.contains(r#""positions":{"mail":"7:42"}"#),
        "{written}"
    );
    let store = FileStore::open(&data, None).unwrap();
    assert_eq!(store.positions().await.unwrap()["mail"], "7:42");
    let _ = std::fs::remove_dir_all(&data);
}
