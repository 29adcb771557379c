//! The WASI stubs of agents/build (`aura_agents::wasi_stubs`): run, they answer as the host's
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
/// byte there, the handle, or 0 after a drop. Memory 0x10..0x18 holds 0xff bytes first, so an
/// answer that is not written reads back as all ones.
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
                format!("(call $s{i} (i32.const 0x10)) (i64.load8_u (i32.const 0x10))")
            }
            StubAnswer::Nothing => format!("(call $s{i} (i32.const 1)) (i64.const 0)"),
            StubAnswer::StdinHandle => format!("(i64.extend_i32_u (call $s{i}))"),
        };
        calls.push_str(&format!(
            "(func (export \"call{i}\") (result i64)\n  (i64.store (i32.const 0x10) (i64.const -1))\n  {body})\n"
        ));
    }
    format!("(module\n{imports}(memory 1)\n{calls})")
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
        // The host's answers (aura-sandbox pins them): an empty list is pointer 0 and length
        // 0; `none` is discriminant 0 (stdin is closed, stdout and stderr are pipes: no
        // terminal); the stdin handle is only ever dropped; a drop does nothing.
        let expected = match stub.answer {
            StubAnswer::EmptyList | StubAnswer::NoneOption | StubAnswer::Nothing => 0,
            StubAnswer::StdinHandle => i64::from(STDIN_HANDLE),
        };
        assert_eq!(
            call.call(&mut store, ()).unwrap(),
            expected,
            "{} {}",
            stub.interface,
            stub.name
        );
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
