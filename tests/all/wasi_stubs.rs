//! The WASI stubs of sdk/build (`aura_agents::wasi_stubs`): run, they answer as the host's
//! WASI does, and the shipped agents import none of what they replace.
//!
//! What the host answers is pinned in aura-sandbox (`guest.rs`,
//! `the_context_answers_as_the_agents_wasi_stubs_do`); here the stubs themselves run, in a core
//! module made for the purpose, on wasmtime.

use aura_agents::wasi_stubs::{STDIN_HANDLE, STUBS, StubAnswer, stub_unused_wasi};
use wasmtime::{Engine, Instance, Module, Store};

use crate::support::plugins_dir;

/// A module that imports every stub of the table (at WASI 0.2.0) and exports `call<i>`, which
/// calls the i-th and returns what it answered as an i64: the 8 bytes at its return pointer, the
/// handle, or 0 after a drop. Memory 0x10..0x18 holds 0xff bytes first, so a byte the answer
/// does not write reads back as 0xff. Its realloc answers as wit-bindgen's does for 0 bytes:
/// the alignment asked for.
fn probe() -> String {
    let mut imports = String::new();
    let mut calls = String::new();
    for (i, stub) in STUBS.iter().enumerate() {
        let signature = match (stub.params, stub.results) {
            (1, 0) => "(param i32)",
            (0, 1) => "(result i32)",
            other => panic!("no probe for a stub of signature {other:?}"),
        };
        imports.push_str(&format!(
            "(import \"{}@0.2.0\" \"{}\" (func $s{i} {signature}))\n",
            stub.interface, stub.name
        ));
        let body = match stub.answer {
            StubAnswer::EmptyList => {
                format!("(call $s{i} (i32.const 0x10)) (i64.load (i32.const 0x10))")
            }
            StubAnswer::NoneOption => {
                format!("(call $s{i} (i32.const 0x10)) (i64.load (i32.const 0x10))")
            }
            StubAnswer::Nothing => format!("(call $s{i} (i32.const 1)) (i64.const 0)"),
            StubAnswer::StdinHandle => format!("(i64.extend_i32_u (call $s{i}))"),
        };
        calls.push_str(&format!(
            "(func (export \"call{i}\") (result i64)\n  (i64.store (i32.const 0x10) (i64.const -1))\n  {body})\n"
        ));
    }
    let realloc = "(func (export \"cabi_realloc\") (param i32 i32 i32 i32) (result i32) \
                   (local.get 2))";
    format!("(module\n{imports}(memory 1)\n{calls}{realloc})")
}

#[test]
fn the_stubs_answer_as_the_hosts_wasi_does() {
    let core = wat::parse_str(probe()).unwrap();
    let stubbed = stub_unused_wasi(&core).unwrap();
    assert_eq!(stubbed.stubbed.len(), STUBS.len());
    let engine = Engine::default();
    let module = Module::new(&engine, &stubbed.module).unwrap();
    assert_eq!(module.imports().len(), 0, "every import is stubbed");
    let mut store = Store::new(&engine, ());
    let instance = Instance::new(&mut store, &module, &[]).unwrap();
    for (i, stub) in STUBS.iter().enumerate() {
        let call = instance
            .get_typed_func::<(), i64>(&mut store, &format!("call{i}"))
            .unwrap();
        let answer = call.call(&mut store, ()).unwrap();
        let what = format!("{} {}", stub.interface, stub.name);
        // The host's answers (aura-sandbox pins them), in the canonical ABI's bytes.
        match stub.answer {
            // An empty list as wasmtime lowers it: the pointer realloc(0, 0, 4, 0) gave (4,
            // this module's realloc answering the alignment), then the length 0.
            StubAnswer::EmptyList => assert_eq!(answer, 4, "{what}"),
            // `none`: the discriminant byte 0, and nothing after it written (stdin is closed,
            // stdout and stderr are pipes: no terminal).
            StubAnswer::NoneOption => assert_eq!(answer as u64, 0xffff_ffff_ffff_ff00, "{what}"),
            // A drop returns nothing and does not trap.
            StubAnswer::Nothing => assert_eq!(answer, 0, "{what}"),
            // A handle is never 0 (the guest's handle table starts at 1).
            StubAnswer::StdinHandle => {
                assert_ne!(answer, 0, "{what}");
                assert_eq!(answer, i64::from(STDIN_HANDLE), "{what}");
            }
        }
    }
}

/// The top-level imports of a component: its instance names.
fn component_imports(component: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(component) {
        // The core modules' imports are `ImportSection`s: not the component's.
        if let wasmparser::Payload::ComponentImportSection(reader) = payload.unwrap() {
            for import in reader {
                names.push(import.unwrap().name.name.to_owned());
            }
        }
    }
    names
}

#[test]
fn the_shipped_agents_import_none_of_what_the_stubs_replace() {
    let replaced = [
        "wasi:cli/environment@",
        "wasi:cli/stdin@",
        "wasi:cli/terminal-input@",
        "wasi:cli/terminal-output@",
        "wasi:cli/terminal-stdin@",
        "wasi:cli/terminal-stdout@",
        "wasi:cli/terminal-stderr@",
    ];
    for name in ["calendar", "comms", "finance", "wellness", "narrator"] {
        let bytes = std::fs::read(plugins_dir().join(format!("{name}.wasm"))).unwrap();
        let imports = component_imports(&bytes);
        assert!(
            imports.iter().any(|i| i.starts_with("wasi:cli/stdout@")),
            "{name}: {imports:?}"
        );
        for import in &imports {
            assert!(
                !replaced.iter().any(|r| import.starts_with(r)),
                "{name} imports {import}"
            );
        }
    }
}
