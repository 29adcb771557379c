use super::*;

/// Every import of `module` (module name, name), in order.
fn imports_of(module: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(module) {
        if let wasmparser::Payload::ImportSection(reader) = payload.unwrap() {
            for import in reader.into_imports() {
                let import = import.unwrap();
                out.push((import.module.to_owned(), import.name.to_owned()));
            }
        }
    }
    out
}

/// The name the name section gives the function that `export` exports, and the names of
/// the functions in the element segments, in order.
fn names_of(module: &[u8]) -> (std::collections::BTreeMap<String, String>, Vec<String>) {
    let mut names = std::collections::BTreeMap::new();
    let mut exports = Vec::new();
    let mut elements = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(module) {
        match payload.unwrap() {
            wasmparser::Payload::ExportSection(reader) => {
                for export in reader {
                    let export = export.unwrap();
                    exports.push((export.name.to_owned(), export.index));
                }
            }
            wasmparser::Payload::ElementSection(reader) => {
                for element in reader {
                    if let wasmparser::ElementItems::Functions(funcs) = element.unwrap().items {
                        elements.extend(funcs.into_iter().map(Result::unwrap));
                    }
                }
            }
            wasmparser::Payload::CustomSection(reader) => {
                if let wasmparser::KnownCustom::Name(section) = reader.as_known() {
                    for sub in section {
                        if let wasmparser::Name::Function(map) = sub.unwrap() {
                            let mut last = None;
                            for naming in map {
                                let naming = naming.unwrap();
                                assert!(last < Some(naming.index), "names out of order");
                                last = Some(naming.index);
                                names.insert(naming.index, naming.name.to_owned());
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let exported = exports
        .into_iter()
        .map(|(export, index)| (export, names[&index].clone()))
        .collect();
    let elements = elements.iter().map(|index| names[index].clone()).collect();
    (exported, elements)
}

/// Each function's index and the functions its body calls, in order, by the function's
/// index (imported functions have no body), and each export's index.
fn layout_of(
    module: &[u8],
) -> (
    std::collections::BTreeMap<u32, Vec<u32>>,
    std::collections::BTreeMap<String, u32>,
) {
    let mut imported = 0;
    let mut calls = std::collections::BTreeMap::new();
    let mut exports = std::collections::BTreeMap::new();
    for payload in wasmparser::Parser::new(0).parse_all(module) {
        match payload.unwrap() {
            wasmparser::Payload::ImportSection(reader) => {
                imported = reader.into_imports().count() as u32;
            }
            wasmparser::Payload::ExportSection(reader) => {
                for export in reader {
                    let export = export.unwrap();
                    exports.insert(export.name.to_owned(), export.index);
                }
            }
            wasmparser::Payload::CodeSectionEntry(body) => {
                let mut targets = Vec::new();
                for op in body.get_operators_reader().unwrap() {
                    if let wasmparser::Operator::Call { function_index } = op.unwrap() {
                        targets.push(function_index);
                    }
                }
                calls.insert(imported + calls.len() as u32, targets);
            }
            _ => {}
        }
    }
    (calls, exports)
}

/// A module with all eight, between two imports that stay, each called by an exported
/// function, the environment's in the table, and a realloc.
const EVERY_STUB: &str = r#"(module
  (import "wasi:cli/exit@0.2.0" "exit" (func $exit (param i32)))
  (import "wasi:cli/environment@0.2.0" "get-environment" (func $env (param i32)))
  (import "wasi:cli/terminal-stdin@0.2.0" "get-terminal-stdin" (func $tin (param i32)))
  (import "wasi:cli/terminal-stdout@0.2.0" "get-terminal-stdout" (func $tout (param i32)))
  (import "wasi:cli/terminal-stderr@0.2.0" "get-terminal-stderr" (func $terr (param i32)))
  (import "wasi:cli/terminal-input@0.2.0" "[resource-drop]terminal-input" (func $din (param i32)))
  (import "wasi:cli/terminal-output@0.2.0" "[resource-drop]terminal-output" (func $dout (param i32)))
  (import "wasi:io/streams@0.2.0" "[method]output-stream.check-write" (func $check (param i32 i32)))
  (import "wasi:cli/stdin@0.2.0" "get-stdin" (func $stdin (result i32)))
  (import "wasi:io/streams@0.2.0" "[resource-drop]input-stream" (func $dstdin (param i32)))
  (memory 1)
  (table 2 funcref)
  (elem (i32.const 0) func $env $exit)
  (func $call_exit (export "call_exit") (call $exit (i32.const 0)))
  (func $call_env (export "call_env") (call $env (i32.const 8)))
  (func $call_terminals (export "call_terminals")
    (call $tin (i32.const 8)) (call $tout (i32.const 8)) (call $terr (i32.const 8))
    (call $din (i32.const 1)) (call $dout (i32.const 1)))
  (func $call_check (export "call_check") (call $check (i32.const 1) (i32.const 8)))
  (func $call_stdin (export "call_stdin") (call $dstdin (call $stdin)))
  (func $realloc (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (local.get 2))
  (export "env" (func $env)))"#;

#[test]
fn every_stub_leaves_the_imports_and_every_reference_follows_its_function() {
    let core = wat::parse_str(EVERY_STUB).unwrap();
    let out = stub_unused_wasi(&core).unwrap();
    let kept = vec![
        ("wasi:cli/exit@0.2.0".to_owned(), "exit".to_owned()),
        (
            "wasi:io/streams@0.2.0".to_owned(),
            "[method]output-stream.check-write".to_owned(),
        ),
    ];
    assert_eq!(imports_of(&out.module), kept);
    assert_eq!(out.stubbed.len(), 8);
    assert_eq!(out.stubbed[0], "wasi:cli/environment@0.2.0 get-environment");
    assert_eq!(
        out.stubbed[7],
        "wasi:io/streams@0.2.0 [resource-drop]input-stream"
    );
    // Each export still names its own function, the exported import is its stub, and the
    // table holds the environment's stub, then exit.
    let (exported, elements) = names_of(&out.module);
    let (before, before_elements) = names_of(&core);
    assert_eq!(exported, before);
    assert_eq!(exported["env"], "env");
    assert_eq!(exported["call_stdin"], "call_stdin");
    assert_eq!(elements, before_elements);
    assert_eq!(elements, ["env", "exit"]);
    // Worked out by hand: the two kept imports are 0 (exit) and 1 (check-write); the six
    // defined functions follow at 2..=7 (call_exit … cabi_realloc); then the eight stubs in
    // the imports' order at 8..=15 (environment 8, the terminal getters 9-11, the terminal
    // drops 12-13, get-stdin 14, the input stream's drop 15).
    let (calls, exports) = layout_of(&out.module);
    let expected_exports = [
        ("call_exit", 2),
        ("call_env", 3),
        ("call_terminals", 4),
        ("call_check", 5),
        ("call_stdin", 6),
        ("cabi_realloc", 7),
        ("env", 8),
    ];
    assert_eq!(
        exports,
        expected_exports
            .iter()
            .map(|(name, index)| (name.to_string(), *index))
            .collect()
    );
    let expected_calls: [(u32, &[u32]); 14] = [
        (2, &[0]),
        (3, &[8]),
        (4, &[9, 10, 11, 12, 13]),
        (5, &[1]),
        (6, &[14, 15]),
        (7, &[]),
        // The environment's stub asks the module's realloc for its list, as the host does.
        (8, &[7]),
        (9, &[]),
        (10, &[]),
        (11, &[]),
        (12, &[]),
        (13, &[]),
        (14, &[]),
        (15, &[]),
    ];
    assert_eq!(
        calls,
        expected_calls
            .iter()
            .map(|(index, targets)| (*index, targets.to_vec()))
            .collect()
    );
}

#[test]
fn stdin_stays_the_hosts_when_an_input_stream_is_read() {
    let core = wat::parse_str(
        r#"(module
          (import "wasi:cli/stdin@0.2.3" "get-stdin" (func $stdin (result i32)))
          (import "wasi:io/streams@0.2.3" "[resource-drop]input-stream" (func (param i32)))
          (import "wasi:io/streams@0.2.3" "[method]input-stream.read" (func (param i32 i64 i32)))
          (import "wasi:cli/environment@0.2.3" "get-environment" (func (param i32)))
          (memory 1)
          (func (export "stdin") (result i32) (call $stdin))
          (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (local.get 2)))"#,
    )
    .unwrap();
    let out = stub_unused_wasi(&core).unwrap();
    assert_eq!(out.stubbed, ["wasi:cli/environment@0.2.3 get-environment"]);
    assert_eq!(imports_of(&out.module).len(), 3);
}

#[test]
fn stdin_stays_the_hosts_when_anything_else_could_hold_an_input_stream() {
    for (module, name, signature) in [
        (
            "wasi:io/streams@0.2.0",
            "[method]input-stream.subscribe",
            "(param i32) (result i32)",
        ),
        (
            "wasi:io/streams@0.2.0",
            "[method]output-stream.splice",
            "(param i32 i32 i64 i32)",
        ),
        (
            "wasi:filesystem/types@0.2.0",
            "[method]descriptor.read-via-stream",
            "(param i32 i64 i32)",
        ),
        (
            "wasi:sockets/tcp@0.2.0",
            "[method]tcp-socket.accept",
            "(param i32 i32)",
        ),
    ] {
        let core = wat::parse_str(format!(
            r#"(module
              (import "wasi:cli/stdin@0.2.0" "get-stdin" (func (result i32)))
              (import "wasi:io/streams@0.2.0" "[resource-drop]input-stream" (func (param i32)))
              (import "{module}" "{name}" (func {signature}))
              (import "wasi:cli/terminal-stdout@0.2.0" "get-terminal-stdout" (func (param i32)))
              (memory 1)
              (func))"#
        ))
        .unwrap();
        let out = stub_unused_wasi(&core).unwrap();
        assert_eq!(
            out.stubbed,
            ["wasi:cli/terminal-stdout@0.2.0 get-terminal-stdout"],
            "{name}"
        );
    }
}

#[test]
fn a_signature_other_than_the_interfaces_is_refused() {
    let core = wat::parse_str(
        r#"(module
          (import "wasi:cli/environment@0.2.0" "get-environment" (func (param i32 i32)))
          (memory 1))"#,
    )
    .unwrap();
    assert_eq!(
        stub_unused_wasi(&core),
        Err(StubError::Signature {
            module: "wasi:cli/environment@0.2.0".to_owned(),
            name: "get-environment".to_owned(),
            params: 2,
            results: 0,
        })
    );
}

#[test]
fn an_i64_where_the_interface_has_an_i32_is_refused() {
    let core = wat::parse_str(
        r#"(module
          (import "wasi:cli/terminal-stdin@0.2.0" "get-terminal-stdin" (func (param i64)))
          (memory 1) (func))"#,
    )
    .unwrap();
    assert!(matches!(
        stub_unused_wasi(&core),
        Err(StubError::Signature { params: 1, .. })
    ));
}

#[test]
fn the_environment_needs_a_realloc() {
    let core = wat::parse_str(
        r#"(module
          (import "wasi:cli/environment@0.2.0" "get-environment" (func (param i32)))
          (memory 1) (func))"#,
    )
    .unwrap();
    assert!(matches!(
        stub_unused_wasi(&core),
        Err(StubError::NoRealloc { .. })
    ));
}

#[test]
fn an_answer_through_memory_needs_a_memory() {
    let core = wat::parse_str(
        r#"(module (import "wasi:cli/terminal-stdout@0.2.0" "get-terminal-stdout" (func (param i32))))"#,
    )
    .unwrap();
    assert!(matches!(
        stub_unused_wasi(&core),
        Err(StubError::NoMemory { .. })
    ));
    let core = wat::parse_str(
        r#"(module
          (import "wasi:cli/terminal-stdout@0.2.0" "get-terminal-stdout" (func (param i32)))
          (memory 1))"#,
    )
    .unwrap();
    assert_eq!(stub_unused_wasi(&core), Err(StubError::NoFunctions));
}

#[test]
fn debug_info_would_be_left_wrong_so_it_is_refused() {
    let core = wat::parse_str(
        r#"(module
          (import "wasi:cli/terminal-stdout@0.2.0" "get-terminal-stdout" (func (param i32)))
          (memory 1) (func)
          (@custom ".debug_info" "x"))"#,
    )
    .unwrap();
    assert_eq!(
        stub_unused_wasi(&core),
        Err(StubError::IndexedCustomSection {
            name: ".debug_info".to_owned()
        })
    );
}

#[test]
fn a_module_without_them_comes_back_as_it_was() {
    let core = wat::parse_str(
        r#"(module (import "wasi:cli/exit@0.2.0" "exit" (func (param i32))) (memory 1))"#,
    )
    .unwrap();
    let out = stub_unused_wasi(&core).unwrap();
    assert_eq!(out.module, core);
    assert!(out.stubbed.is_empty());
    assert!(matches!(
        stub_unused_wasi(b"\0asm\x01\0\0\0\x01"),
        Err(StubError::Invalid { stage: "given", .. })
    ));
}

#[test]
fn only_wasi_0_2_is_stubbed() {
    let env = |module| stub_for(module, "get-environment").is_some();
    assert!(env("wasi:cli/environment@0.2.0"));
    assert!(env("wasi:cli/environment@0.2.12"));
    assert!(!env("wasi:cli/environment@0.3.0"));
    assert!(!env("wasi:cli/environment@0.2."));
    assert!(!env("wasi:cli/environment@0.2.0-rc"));
    assert!(!env("wasi:cli/environment"));
    assert!(stub_for("wasi:cli/environment@0.2.0", "get-arguments").is_none());
}
