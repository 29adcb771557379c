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

# The soak: 10,000 concurrent calls mixing hostile and healthy agents; prints RSS.
soak:
    cargo test -j{{jobs}} -p aura-host --test all soak -- --ignored --nocapture

# Fuzz the crossing for a fixed time per target (nightly + cargo-fuzz). New inputs go to a
# scratch dir, so the committed seed corpus stays small; crashes land in host/fuzz/artifacts.
fuzz seconds="60":
    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
    rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
    for target in crossing_envelope crossing_output; do \
        scratch="$(mktemp -d)"; \
        (cd host && AURA_SKIP_PLUGIN_BUILD=1 CARGO_BUILD_JOBS={{jobs}} cargo +nightly fuzz run "$target" "$scratch" "fuzz/corpus/$target" -- -max_total_time={{seconds}} -rss_limit_mb=4096) || exit 1; \
        echo "$target: $(ls "$scratch" | wc -l) new inputs in {{seconds}} s"; \
        rm -rf "$scratch"; \
    done

# Measure this machine's fuel per millisecond and store it in the data dir.
calibrate:
    cargo run -q -- calibrate

# The main job: the orchestrator over the day scenario (pass e.g. `--seed 3 -v` or `--json`).
run *args:
    cargo run -q -- run scenarios/day.json {{args}}
