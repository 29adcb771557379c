//! Hidden state: a guest writes a secret in one call and tries to read it in the next, through
//! its linear memory (the image's data, zeroed pages, memory it grew, statics, the arena, the
//! heap, the stack), its globals, its table and its WASI state, under every engine setting the
//! host runs or measures: each pool reset (dirty pages only, the whole kept region, madvise),
//! bounds-checked memories (ARM64's layout), and Pulley. Each call must find exactly what the
//! first found on a fresh instance, worked out by hand from the guests' own definitions.
//!
//! Two guests: `hoarder` (Rust, through the SDK as every agent is built: statics, arena, heap,
//! stack, WASI random and handles) and one written here in WAT, for what Rust never emits (a
//! mutable global of its own, `table.set` and `table.grow`, an exact memory layout), made a
//! component against wit/agent.wit by wit-component.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use aura_contract::limits::{DEADLINE_MS_DEFAULT, FUEL_PER_MS_DEFAULT};
use aura_sandbox::{
    Budget, Code, CodeTarget, EngineTuning, Frame, HostImports, NoImports, PoolReset,
    PreparedAgent, Sandbox,
};

use crate::support::guest_path;

/// What the WAT guest leaves behind (no ASCII byte in it).
const SECRET: u64 = 0x5EC2_E75E_C2E7_A55A;
/// The 8 bytes of the WAT guest's memory image at offset 0x40.
const IMAGE: &[u8; 8] = b"AURA-IMG";
/// Calls each guest gets in a row under one setting, and as many ticks between them.
const CALLS: usize = 3;

/// The WAT guest. `invoke` (and `tick`) first reports, as six hex fields: its global, its
/// table's size, whether table slot 1 is null (1) or set (0), its memory's size in pages, the
/// image's 8 bytes at 0x40 (little-endian), and how many 8-byte words of its whole memory hold
/// the secret. Then it sets the global, sets slot 1 and grows the table by 4, grows memory by
/// 2 pages, and writes the secret over the image, into a zeroed page, at the first page's end,
/// and into both grown pages.
fn wat_guest() -> String {
    let prefix = r#"{"ok":true,"result":{"findings":""#;
    let suffix = r#""}}"#;
    let escaped = |text: &str| text.replace('\\', "\\\\").replace('"', "\\\"");
    format!(
        r#"(module
  (memory (export "memory") 1 16)
  (global $kept (mut i64) (i64.const 0))
  (global $heap (mut i32) (i32.const 0x4000))
  (global $out (mut i32) (i32.const 0))
  (table $t 4 64 funcref)
  (elem declare func $hidden)
  (data (i32.const 0x40) "{image}")
  (data (i32.const 0x100) "{prefix}")
  (data (i32.const 0x180) "{suffix}")
  (data (i32.const 0x1c0) "{{}}")
  (func $hidden (result i32) (i32.const 42))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (local $p i32)
    (local.set $p (i32.and
      (i32.add (global.get $heap) (i32.sub (local.get 2) (i32.const 1)))
      (i32.xor (i32.sub (local.get 2) (i32.const 1)) (i32.const -1))))
    (global.set $heap (i32.add (local.get $p) (local.get 3)))
    (local.get $p))
  (func $byte (param i32)
    (i32.store8 (global.get $out) (local.get 0))
    (global.set $out (i32.add (global.get $out) (i32.const 1))))
  (func $copy (param $from i32) (param $len i32)
    (memory.copy (global.get $out) (local.get $from) (local.get $len))
    (global.set $out (i32.add (global.get $out) (local.get $len))))
  (func $hex (param $v i64)
    (local $i i32) (local $n i32)
    (local.set $i (i32.const 15))
    (loop $digits
      (local.set $n (i32.wrap_i64 (i64.and
        (i64.shr_u (local.get $v) (i64.extend_i32_u (i32.mul (local.get $i) (i32.const 4))))
        (i64.const 15))))
      (call $byte (select
        (i32.add (local.get $n) (i32.const 48))
        (i32.add (local.get $n) (i32.const 87))
        (i32.lt_u (local.get $n) (i32.const 10))))
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (br_if $digits (i32.ge_s (local.get $i) (i32.const 0))))
    (call $byte (i32.const 32)))
  (func $secret_words (result i32)
    (local $a i32) (local $end i32) (local $count i32)
    (local.set $end (i32.mul (memory.size) (i32.const 65536)))
    (loop $words
      (if (i64.eq (i64.load (local.get $a)) (i64.const {secret}))
        (then (local.set $count (i32.add (local.get $count) (i32.const 1)))))
      (local.set $a (i32.add (local.get $a) (i32.const 8)))
      (br_if $words (i32.lt_u (local.get $a) (local.get $end))))
    (local.get $count))
  (func $run (param i32 i32) (result i32)
    (global.set $out (i32.const 0x400))
    (call $copy (i32.const 0x100) (i32.const {prefix_len}))
    (call $hex (global.get $kept))
    (call $hex (i64.extend_i32_u (table.size $t)))
    (call $hex (i64.extend_i32_u (ref.is_null (table.get $t (i32.const 1)))))
    (call $hex (i64.extend_i32_u (memory.size)))
    (call $hex (i64.load (i32.const 0x40)))
    (call $hex (i64.extend_i32_u (call $secret_words)))
    (call $copy (i32.const 0x180) (i32.const {suffix_len}))
    (global.set $kept (i64.const {secret}))
    (table.set $t (i32.const 1) (ref.func $hidden))
    (drop (table.grow $t (ref.null func) (i32.const 4)))
    (drop (memory.grow (i32.const 2)))
    (i64.store (i32.const 0x40) (i64.const {secret}))
    (i64.store (i32.const 0x2000) (i64.const {secret}))
    (i64.store (i32.const 0xfff8) (i64.const {secret}))
    (i64.store (i32.const 0x10010) (i64.const {secret}))
    (i64.store (i32.const 0x2fff8) (i64.const {secret}))
    (i32.store (i32.const 0x200) (i32.const 0x400))
    (i32.store (i32.const 0x204) (i32.sub (global.get $out) (i32.const 0x400)))
    (i32.const 0x200))
  (func (export "invoke") (param i32 i32) (result i32)
    (call $run (local.get 0) (local.get 1)))
  (func (export "tick") (param i32 i32) (result i32)
    (call $run (local.get 0) (local.get 1)))
  (func (export "manifest") (result i32)
    (i32.store (i32.const 0x200) (i32.const 0x1c0))
    (i32.store (i32.const 0x204) (i32.const 2))
    (i32.const 0x200)))"#,
        image = std::str::from_utf8(IMAGE).unwrap(),
        prefix = escaped(prefix),
        suffix = escaped(suffix),
        prefix_len = prefix.len(),
        suffix_len = suffix.len(),
        secret = SECRET as i64,
    )
}

/// The WAT guest as a component of wit/agent.wit's `agent` world.
fn wat_component() -> Vec<u8> {
    let mut module = wat::parse_str(wat_guest()).unwrap();
    let mut resolve = wit_parser::Resolve::default();
    let wit = Path::new(env!("CARGO_MANIFEST_DIR")).join("wit/agent.wit");
    let package = resolve.push_file(&wit).unwrap();
    let world = resolve.select_world(&[package], Some("agent")).unwrap();
    wit_component::embed_component_metadata(
        &mut module,
        &resolve,
        world,
        wit_component::StringEncoding::UTF8,
    )
    .unwrap();
    wit_component::ComponentEncoder::default()
        .module(&module)
        .unwrap()
        .validate(true)
        .encode()
        .unwrap()
}

/// The six fields a fresh WAT guest reports, worked out from its definition: the global's
/// initial 0, the table's 4 slots, slot 1 null, 1 page, the image's bytes, no secret.
fn wat_fresh() -> String {
    let fields = [0, 4, 1, 1, u64::from_le_bytes(*IMAGE), 0];
    fields.iter().map(|f| format!("{f:016x} ")).collect()
}

/// Every setting the host runs or measures, by name.
fn settings() -> Vec<(&'static str, CodeTarget, EngineTuning)> {
    let tuned = |pool_reset, bounds_checks_always| EngineTuning {
        pool_reset,
        bounds_checks_always,
        ..EngineTuning::default()
    };
    vec![
        (
            "native, dirty pages reset (the host's)",
            CodeTarget::Native,
            EngineTuning::default(),
        ),
        (
            "native, the whole kept region reset",
            CodeTarget::Native,
            tuned(PoolReset::InPlaceWhole, false),
        ),
        (
            "native, madvise",
            CodeTarget::Native,
            tuned(PoolReset::Madvise, false),
        ),
        (
            "native, bounds-checked (ARM64's layout)",
            CodeTarget::Native,
            tuned(PoolReset::InPlaceDirtyPages, true),
        ),
        ("pulley", CodeTarget::Pulley, EngineTuning::default()),
    ]
}

/// Imports that refuse agent-to-agent calls (the guests make none).
fn no_imports() -> Arc<dyn HostImports> {
    Arc::new(NoImports {
        reason: "the hidden-state test runs no agent-to-agent calls",
    })
}

/// A default call's budget.
fn budget() -> Budget {
    Budget {
        fuel: DEADLINE_MS_DEFAULT * FUEL_PER_MS_DEFAULT,
        deadline_ms: DEADLINE_MS_DEFAULT,
    }
}

/// One call of `agent` on a fresh instance, its `invoke` or its `tick` (the guests run the same
/// body for both): what it answered.
async fn call(sandbox: &Sandbox, agent: &PreparedAgent, n: usize, tick: bool) -> String {
    let (imports, frame) = (no_imports(), Frame::root(budget(), 0));
    let call_id = format!("t_hidden{n:04}");
    let answer = match tick {
        false => {
            let call = format!(r#"{{"call_id":"{call_id}"}}"#);
            sandbox.invoke(agent, &call_id, &call, frame, imports).await
        }
        true => sandbox.tick(agent, "{}", frame, imports).await,
    };
    answer
        .unwrap_or_else(|e| panic!("call {n} (tick: {tick}): {e}"))
        .output
}

/// What a reply reports: its `findings`.
fn findings(output: &str) -> String {
    let reply: Value = serde_json::from_str(output).unwrap_or_else(|e| panic!("{e}: {output}"));
    reply["result"]["findings"].as_str().unwrap().to_owned()
}

/// The two guests' components, and the memory they may have (they pose as calendar).
fn guests() -> (Vec<u8>, Vec<u8>, usize) {
    let hoarder = std::fs::read(guest_path("hoarder")).unwrap();
    let calendar = aura_contract::catalogue::agent("calendar").unwrap();
    (wat_component(), hoarder, calendar.memory_bytes_max)
}

#[tokio::test]
async fn a_secret_written_in_one_call_is_never_read_in_the_next() {
    let (wat, hoarder, memory_bytes_max) = guests();
    for (name, target, tuning) in settings() {
        let sandbox = Sandbox::tuned(0, &target, tuning).unwrap();
        let wat_agent = sandbox
            .prepare("calendar", memory_bytes_max, Code::Wasm(&wat))
            .unwrap();
        let rust_agent = sandbox
            .prepare("calendar", memory_bytes_max, Code::Wasm(&hoarder))
            .unwrap();
        let mut first_rust: Option<Value> = None;
        // The two guests take turns, and each a call then a tick (which run in slots of their
        // own), so a slot one freed may serve the other next.
        for n in 0..2 * CALLS {
            let tick = n % 2 == 1;
            let found = findings(&call(&sandbox, &wat_agent, 2 * n, tick).await);
            assert_eq!(found, wat_fresh(), "{name}: WAT guest, call {n}");

            let found = findings(&call(&sandbox, &rust_agent, 2 * n + 1, tick).await);
            let found: Value = serde_json::from_str(&found).unwrap();
            assert_eq!(
                found["secret_words"], 0,
                "{name}: hoarder, call {n}: {found}"
            );
            assert_eq!(found["zeroed"], 0, "{name}: hoarder, call {n}");
            assert_eq!(found["initialised"], 1, "{name}: hoarder, call {n}");
            match &first_rust {
                // Memory's size, the first random number and the first handle start over (a
                // tick's as a call's: an agent's random source is seeded by its name).
                Some(first) => assert_eq!(&found, first, "{name}: hoarder, call {n}"),
                None => first_rust = Some(found),
            }
        }
    }
}

/// The control: two calls on one instance (what the host never does) find what the first left,
/// so the test above would see a secret that survived.
#[tokio::test]
async fn on_one_instance_the_second_call_finds_the_first_calls_secret() {
    let (wat, hoarder, memory_bytes_max) = guests();
    let sandbox = Sandbox::tuned(0, &CodeTarget::Native, EngineTuning::default()).unwrap();
    let (imports, budget) = (no_imports(), budget());
    let twice = |code: Vec<u8>| {
        let (sandbox, imports) = (&sandbox, imports.clone());
        async move {
            let agent = sandbox
                .prepare("calendar", memory_bytes_max, Code::Wasm(&code))
                .unwrap();
            let mut store = sandbox
                .call_store(&agent, None, Frame::root(budget, 0), imports)
                .unwrap();
            let instance = store.instantiate().await.unwrap();
            let call = r#"{"call_id":"t_control01"}"#;
            let first = store.invoke(&instance, call).await.unwrap();
            let second = store.invoke(&instance, call).await.unwrap();
            (findings(&first), findings(&second))
        }
    };

    let (first, second) = twice(wat).await;
    assert_eq!(first, wat_fresh());
    // The global holds the secret, the table grew by 4 with slot 1 set, memory grew by 2
    // pages, the image's bytes are the secret, and 5 words of memory hold it.
    let left = [SECRET, 8, 0, 3, SECRET, 5];
    let left: String = left.iter().map(|f| format!("{f:016x} ")).collect();
    assert_eq!(second, left);

    let (first, second) = twice(hoarder).await;
    let (first, second): (Value, Value) = (
        serde_json::from_str(&first).unwrap(),
        serde_json::from_str(&second).unwrap(),
    );
    assert_eq!(first["secret_words"], 0);
    assert_eq!(second["zeroed"], SECRET);
    assert_eq!(second["initialised"], SECRET);
    assert!(
        second["secret_words"].as_u64().unwrap() > 1 << 18,
        "{second}"
    );
    assert!(
        second["pages"].as_u64() > first["pages"].as_u64(),
        "{second}"
    );
    assert_ne!(second["random"], first["random"]);
    assert_ne!(second["stdout_handle"], first["stdout_handle"]);
}

/// An agent's calls and its ticks keep to pool slots of their own (its tick twin is another
/// compiled module, and the pool hands a call its module's last slot): calls and ticks in turn
/// leave two warm memory slots, where one copy of the code left one that a tick's pages then
/// bloated for every call after it.
#[tokio::test]
async fn an_agents_calls_and_its_ticks_keep_to_slots_of_their_own() {
    let (_, hoarder, memory_bytes_max) = guests();
    for (name, target, tuning) in settings() {
        let sandbox = Sandbox::tuned(0, &target, tuning).unwrap();
        let agent = sandbox
            .prepare("calendar", memory_bytes_max, Code::Wasm(&hoarder))
            .unwrap();
        assert_eq!(sandbox.warm_memory_slots(), 0, "{name}");
        for (n, tick) in [false, true, false, true, false].into_iter().enumerate() {
            findings(&call(&sandbox, &agent, n, tick).await);
        }
        // madvise gives a freed slot's pages back, but the slot stays warm (affine).
        assert_eq!(sandbox.warm_memory_slots(), 2, "{name}");
    }
}
