# aura's recipes. `just --list` shows them.

set shell := ["bash", "-euo", "pipefail", "-c"]

jobs := env_var_or_default("CARGO_BUILD_JOBS", "2")

# Build every agent (release, wasm32-wasip2) into plugins/<agent>.wasm and plugins/manifest.json.
build-plugins:
    AURA_PLUGINS_REBUILD="$(date +%s%N)" cargo build -j{{jobs}} -p aura-host
    @cat plugins/manifest.json

# Run the whole test suite (the README's test command).
test:
    cargo test --workspace -j{{jobs}}

# Format and lint.
check:
    cargo fmt --all -- --check
    cargo clippy --workspace -j{{jobs}} --all-targets -- -D warnings

# Print the catalogue.
catalogue:
    cargo run -q -- catalogue
