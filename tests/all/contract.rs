//! The WIT contract as the built components carry it: the `aura:agent` world, and only
//! `string` crossing, in every export and every host import.

use wasmtime::Engine;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Type};

use crate::support::plugins_dir;

fn assert_string_only(name: &str, item: &ComponentItem, engine: &Engine) {
    match item {
        ComponentItem::ComponentFunc(func) => {
            for (param, ty) in func.params() {
                assert!(
                    matches!(ty, Type::String),
                    "{name}({param}) is not a string"
                );
            }
            for ty in func.results() {
                assert!(matches!(ty, Type::String), "{name} returns a non-string");
            }
        }
        ComponentItem::ComponentInstance(instance) => {
            for (inner, item) in instance.exports(engine) {
                assert_string_only(&format!("{name}#{inner}"), &item.ty, engine);
            }
        }
        other => panic!("{name}: unexpected item {other:?}"),
    }
}

#[test]
fn every_agent_exports_exactly_the_string_only_world() {
    let engine = Engine::new(&aura_sandbox::engine_config()).unwrap();
    for agent in aura_contract::catalogue::CATALOGUE {
        let path = plugins_dir().join(format!("{}.wasm", agent.name));
        let component = Component::from_file(&engine, &path).unwrap();
        let ty = component.component_type();
        let mut exports: Vec<_> = ty
            .exports(&engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        exports.sort();
        assert_eq!(exports, ["invoke", "manifest", "tick"], "{}", agent.name);
        for (name, item) in ty.exports(&engine) {
            assert_string_only(name, &item.ty, &engine);
        }
        let host_import = ty
            .imports(&engine)
            .find(|(name, _)| *name == "aura:agent/host@0.1.0")
            .map(|(_, item)| item.ty)
            .expect("imports aura:agent/host");
        let ComponentItem::ComponentInstance(host) = &host_import else {
            panic!("aura:agent/host is not an instance");
        };
        // The linker keeps only the imports an agent uses: a subset of the world's two.
        for (function, _) in host.exports(&engine) {
            assert!(
                ["call", "emit"].contains(&function),
                "{}: imports {function}",
                agent.name
            );
        }
        assert_string_only("aura:agent/host", &host_import, &engine);
        // Every other import is WASI, which the host links deny-by-default.
        for (name, _) in ty.imports(&engine) {
            assert!(
                name == "aura:agent/host@0.1.0" || name.starts_with("wasi:"),
                "{}: unexpected import {name}",
                agent.name
            );
        }
    }
}
