# aura's recipes. `just --list` shows them.

set shell := ["bash", "-euo", "pipefail", "-c"]

jobs := env_var_or_default("CARGO_BUILD_JOBS", "2")

# Build every agent (release, wasm32-wasip2) into plugins/<agent>.wasm and plugins/manifest.json.
build-plugins:
    AURA_PLUGINS_REBUILD="$(date +%s%N)" cargo build -j{{jobs}} -p aura-agents
    @cat plugins/manifest.json

# The pinned componentize-py that builds the Python agents (issue 21's pin).
componentize_py := "componentize-py==0.25.1"

# Build the Python wellness (agents-py/, componentize-py from PyPI into target/py-venv) into
# plugins/python/: it and the Rust calendar, comms and finance with their manifest, then check it
# with `aura test-agent`. Use it with --plugins-dir plugins/python.
build-plugins-py: build-plugins
    cargo build -j{{jobs}} -p aura
    test -f target/py-venv/{{componentize_py}} || (python3 -m venv target/py-venv && target/py-venv/bin/pip install --quiet --disable-pip-version-check {{componentize_py}} && touch target/py-venv/{{componentize_py}})
    cd agents-py/wellness && ../../target/py-venv/bin/componentize-py -d ../../wit -w agent componentize app -p . -p ../sdk -o ../../target/wellness-py.wasm
    target/debug/aura pack plugins/python wellness=target/wellness-py.wasm calendar=plugins/calendar.wasm comms=plugins/comms.wasm finance=plugins/finance.wasm
    target/debug/aura test-agent plugins/python/wellness.wasm --as wellness

# The Python wellness against the Rust one, per call in-process (issue 21): each tool's example,
# interleaved, medians and p99 (bench profile).
bench-python:
    cargo test --profile bench -j{{jobs}} -p aura --test all bench_python_against_rust_per_call -- --ignored --nocapture

# Check a component as a catalogue agent: `just test-agent my.wasm wellness`.
test-agent component agent:
    cargo run -q -j{{jobs}} -p aura -- test-agent {{component}} --as {{agent}}

# Run the whole test suite (the README's test command).
test:
    cargo test --workspace -j{{jobs}}

# Format and lint.
check:
    cargo fmt --all -- --check
    cargo clippy --workspace -j{{jobs}} --all-targets -- -D warnings

# The phone's target: static musl, so one binary runs on any ARM64 Android (and Linux).
phone_target := "aarch64-unknown-linux-musl"
# Debian's cross gcc links it (with Rust's self-contained musl crt) and builds wasmtime's C helper.
phone_env := "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=aarch64-linux-gnu-gcc CC_aarch64_unknown_linux_musl=aarch64-linux-gnu-gcc AR_aarch64_unknown_linux_musl=aarch64-linux-gnu-ar"

# The key the phone builds trust (AURA_TRUSTED_KEYS, compiled in). By default the phone check's
# own test key (tests/data/phone-signing.key, public and committed: it proves the phone binary
# checks signatures, it protects nothing); set AURA_TRUSTED_KEYS to your key for a real phone.
phone_keys := env_var_or_default("AURA_TRUSTED_KEYS", "1fc458522aa498ac30282f333e462c89ee3f50854872f8eb9bafa090324a49f6")
phone_signing_key := env_var_or_default("AURA_PHONE_SIGNING_KEY", "tests/data/phone-signing.key")

# The phone build: plugins precompiled for aarch64 (plugins/aarch64-unknown-linux-musl/*.cwasm)
# and the runtime-only host for aarch64 (no Cranelift): target/aarch64-unknown-linux-musl/phone/aura.
build-phone:
    rustup target list --installed | grep -qx {{phone_target}} || rustup target add {{phone_target}}
    command -v aarch64-linux-gnu-gcc >/dev/null || { echo "needs Debian's gcc-aarch64-linux-gnu" >&2; exit 1; }
    cargo build -j{{jobs}} -p aura
    ./target/debug/aura compile --target {{phone_target}}
    ./target/debug/aura --plugins-dir plugins/{{phone_target}} sign --key {{phone_signing_key}}
    {{phone_env}} AURA_TRUSTED_KEYS={{phone_keys}} cargo build -j{{jobs}} --profile phone --target {{phone_target}} -p aura --no-default-features
    @ls -l target/{{phone_target}}/phone/aura plugins/{{phone_target}}/

# The iOS path, on this machine: plugins precompiled to Pulley bytecode (plugins/pulley64/) and
# the runtime-only host with the Pulley interpreter: target/phone/aura.
build-pulley:
    cargo build -j{{jobs}} -p aura
    ./target/debug/aura compile --target pulley64
    ./target/debug/aura compile --target "$(rustc -vV | sed -n 's/^host: //p')"
    ./target/debug/aura --plugins-dir plugins/pulley64 sign --key {{phone_signing_key}}
    ./target/debug/aura --plugins-dir "plugins/$(rustc -vV | sed -n 's/^host: //p')" sign --key {{phone_signing_key}}
    AURA_TRUSTED_KEYS={{phone_keys}} cargo build -j{{jobs}} --profile phone -p aura --no-default-features --features pulley
    @ls -l target/phone/aura plugins/pulley64/

# The proof: the day and the weekend with a fixed seed on x86_64 (Cranelift), on aarch64 under
# qemu-user and under Pulley, each from its own precompiled plugins; the three traces.jsonl of
# each must be identical. The narrator writes the first `narrations` novel cases' rationales of
# each on each (its model under Pulley takes minutes a case: BENCHMARKS.md, "The narrator");
# its records must be identical too.
phone-check seed="7" narrations="1": build-phone build-pulley
    rm -rf target/phone-check
    for s in day weekend; do ./target/debug/aura run scenarios/$s.json --seed {{seed}} --data-dir target/phone-check/x86_64-$s --narrate --narrations {{narrations}} > /dev/null || exit 1; done
    # aarch64 under qemu and Pulley each take one core for minutes: side by side.
    (for s in day weekend; do qemu-aarch64 target/{{phone_target}}/phone/aura run scenarios/$s.json --seed {{seed}} --data-dir target/phone-check/aarch64-$s --plugins-dir plugins/{{phone_target}} --narrate --narrations {{narrations}} > /dev/null || exit 1; done) & aarch64=$!; for s in day weekend; do target/phone/aura run scenarios/$s.json --seed {{seed}} --data-dir target/phone-check/pulley-$s --plugins-dir plugins/pulley64 --narrate --narrations {{narrations}} > /dev/null || exit 1; done; wait $aarch64
    sha256sum target/phone-check/*/traces.jsonl target/phone-check/*/narrations.jsonl
    for s in day weekend; do for t in aarch64 pulley; do \
        cmp target/phone-check/x86_64-$s/traces.jsonl target/phone-check/$t-$s/traces.jsonl && \
        cmp target/phone-check/x86_64-$s/narrations.jsonl target/phone-check/$t-$s/narrations.jsonl || exit 1; \
    done; test "$(wc -l < target/phone-check/x86_64-$s/narrations.jsonl)" -eq {{narrations}} || exit 1; done
    @echo "aarch64 (qemu) and Pulley reproduce the x86_64 traces and narrations of the day and the weekend byte for byte"
    # The day lived: its signals on stdin as they happen (urgent kinds ticking at once), at a
    # replayed clock, on each build.
    python3 -c 'import json, sys, datetime; d = json.load(open("scenarios/day.json")); [print(json.dumps(s)) for s in sorted(d["signals"], key=lambda s: datetime.datetime.fromisoformat(s["at"]))]' > target/phone-check/day-signals.jsonl
    ./target/debug/aura --data-dir target/phone-check/live-x86_64 live --stdin --clock replay --seed {{seed}} scenarios/day.json < target/phone-check/day-signals.jsonl > /dev/null
    qemu-aarch64 target/{{phone_target}}/phone/aura --data-dir target/phone-check/live-aarch64 --plugins-dir plugins/{{phone_target}} live --stdin --clock replay --seed {{seed}} scenarios/day.json < target/phone-check/day-signals.jsonl > /dev/null
    target/phone/aura --data-dir target/phone-check/live-pulley --plugins-dir plugins/pulley64 live --stdin --clock replay --seed {{seed}} scenarios/day.json < target/phone-check/day-signals.jsonl > /dev/null
    sha256sum target/phone-check/live-*/traces.jsonl
    cmp target/phone-check/live-x86_64/traces.jsonl target/phone-check/live-aarch64/traces.jsonl
    cmp target/phone-check/live-x86_64/traces.jsonl target/phone-check/live-pulley/traces.jsonl
    @echo "aura live --stdin: aarch64 (qemu) and Pulley reproduce the x86_64 traces byte for byte"
    # Both phone binaries check signatures: the same .cwasm without signatures.json, or with
    # its last byte cut after signing, is refused before it is mapped.
    for dir in plugins/{{phone_target}} plugins/pulley64; do \
        rm -rf target/phone-check/unsigned target/phone-check/altered; \
        cp -r "$dir" target/phone-check/unsigned; rm target/phone-check/unsigned/signatures.json; \
        cp -r "$dir" target/phone-check/altered; truncate -s -1 target/phone-check/altered/calendar.cwasm; \
        case "$dir" in *pulley64) bin="target/phone/aura";; *) bin="qemu-aarch64 target/{{phone_target}}/phone/aura";; esac; \
        for bad in unsigned altered; do \
            if $bin --data-dir target/phone-check/refused --plugins-dir target/phone-check/$bad \
                call calendar detect_conflicts '{"events":[]}' > /dev/null 2> target/phone-check/refused.txt; then \
                echo "the phone binary ran a $bad plugin from $dir" >&2; exit 1; \
            fi; \
            grep -E "not signed|signature does not verify" target/phone-check/refused.txt; \
        done; \
    done

# The phone's figures for BENCHMARKS.md (after build-phone and build-pulley): stripped sizes,
# .cwasm sizes, cold start of the runtime-only host to the first crossing result (hyperfine,
# median), peak RSS of the day, and Pulley against native code on the same binary and day.
bench-phone seed="7":
    stat -c '%n %s bytes' target/{{phone_target}}/phone/aura target/phone/aura
    stat -c '%n %s bytes' plugins/*.wasm plugins/{{phone_target}}/*.cwasm plugins/pulley64/*.cwasm
    rm -rf target/bench-phone && mkdir -p target/bench-phone
    native="plugins/$(rustc -vV | sed -n 's/^host: //p')"; \
    hyperfine -N --warmup 10 --runs 100 --export-json target/bench-phone/cold.json \
        "target/phone/aura --data-dir target/bench-phone/cold --plugins-dir $native call calendar detect_conflicts '{\"events\":[]}'"; \
    python3 -c 'import json; r = json.load(open("target/bench-phone/cold.json"))["results"][0]; print("cold start median %.2f ms" % (r["median"] * 1000))'; \
    for dir in "$native" plugins/pulley64; do \
        /usr/bin/time -f "$dir: day in %e s, peak RSS %M KiB" target/phone/aura run scenarios/day.json --seed {{seed}} \
            --data-dir "target/bench-phone/$(basename $dir)" --plugins-dir "$dir" | grep 'tick of all agents'; \
    done

# The narrator's figures for BENCHMARKS.md: the day's ticks without it, then the day and the
# weekend with every novel case narrated (this machine's Cranelift), then the day's first case
# under Pulley (after build-pulley). Each prints the narrator's tokens, fuel, time and counts.
bench-narrator:
    cargo build -j{{jobs}} -p aura
    rm -rf target/bench-narrator
    ./target/debug/aura --data-dir target/bench-narrator/plain run scenarios/day.json | grep 'tick of all agents'
    /usr/bin/time -f "day with the narrator: peak RSS %M KiB" ./target/debug/aura --data-dir target/bench-narrator/day run scenarios/day.json --narrate | grep -E "tick of all agents|narrator"
    ./target/debug/aura --data-dir target/bench-narrator/weekend run scenarios/weekend.json --narrate | grep -E "narrator"
    test -x target/phone/aura || { echo "the Pulley figures need just build-pulley" >&2; exit 1; }
    /usr/bin/time -f "Pulley: peak RSS %M KiB" target/phone/aura --data-dir target/bench-narrator/pulley --plugins-dir plugins/pulley64 run scenarios/day.json --narrate --narrations 1 | grep -E "narrator"

# The per-agent component tests against another plugins dir (an agent implemented anew, in
# Rust or another language, beside the agents it calls): the very tests the built agents pass.
test-agents dir:
    AURA_TEST_PLUGINS_DIR={{dir}} cargo test -j{{jobs}} -p aura --test all -- calendar:: comms:: finance:: wellness::

# The deterministic simulation with faults (seed 002's DST): N seeds, each run twice (the same
# event log both times), seed 002's invariants checked after every step. A failing seed prints
# how to replay it (DST_SEED=N ... dst::replay). CI runs 300 as part of the tests.
dst n="1000":
    DST_SEEDS={{n}} cargo test -j{{jobs}} -p aura --test all dst::dst_seeds -- --nocapture

# The fleet's deterministic simulation: N seeds of three hosts living five people's days over the
# simulated store through crashes, partitions, freezes and storage faults (tests/all/dst_fleet.rs),
# each seed twice (the same event log both times). The tests run 2.
dst-fleet n="20":
    DST_FLEET_SEEDS={{n}} cargo test -j{{jobs}} -p aura --test all dst_fleet::a_fleet -- --nocapture

# The start-up cost of signature checks (BENCHMARKS.md): signed and trusted against unsigned,
# interleaved in one process, medians. The tests built with the bench profile.
bench-signing:
    cargo test --profile bench -j{{jobs}} -p aura --test all bench_signature_startup_cost -- --ignored --nocapture

# The wire (issue 20): a call's hop over NATS against in-process, the locked deployment's hop
# (mutual TLS, credentials, signed answers) against the open one, and throughput with 1, 2, 4
# workers.
bench-wire:
    cargo test --profile bench -j{{jobs}} -p aura --test all bench_wire_hop_and_throughput -- --ignored --nocapture

# The MCP round trip with bearer-token checking (and TLS) against without, side by side.
bench-tokens:
    cargo test --profile bench -j{{jobs}} -p aura --test all bench_mcp_round_trip_with_and_without_tokens -- --ignored --nocapture

# Print the catalogue.
catalogue:
    cargo run -q -- catalogue

# The fleet's protocol under the model checker (issue 36): each check's states and time, and
# what it finds with the fence removed.
model-check:
    cargo test -j{{jobs}} -p aura-fleet -- --nocapture --test-threads 1

# The fleet's state on JetStream against the file journal, and takeover after a host's death
# (issue 36). Disk, loopback and the server's timers, not the host's code: the test build
# (dependencies optimized) measures them as the bench profile would, without its 10-minute build.
bench-fleet:
    cargo test -j{{jobs}} --workspace --test all bench_fleet -- --ignored --nocapture

# One `aura fleet host` (release) living K people's whole days on a nats-server with JetStream:
# CPU and memory per person, what holding one costs, the store per person-day. The nats-server
# is the one the tests fetched (`cargo test --workspace --test all fleet::` once) or NATS_SERVER.
# People per fleet host (BENCHMARKS.md).
bench-fleet-people K="20":
    cargo build --release -p aura
    python3 bench/fleet_people.py target/release/aura plugins ${NATS_SERVER:-target/tmp/nats-venv/bin/nats-server} {{K}}

# The soak: 10,000 concurrent calls mixing hostile and healthy agents; prints RSS.
soak:
    cargo test -j{{jobs}} --workspace --test all soak -- --ignored --nocapture

# Fuzz the crossing for a fixed time per target (nightly + cargo-fuzz). New inputs go to a
# scratch dir, so the committed seed corpus stays small; crashes land in crates/contract/fuzz/artifacts.
fuzz seconds="60":
    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
    rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
    for target in crossing_envelope crossing_output; do \
        scratch="$(mktemp -d)"; \
        (cd crates/contract && CARGO_BUILD_JOBS={{jobs}} cargo +nightly fuzz run "$target" "$scratch" "fuzz/corpus/$target" -- -max_total_time={{seconds}} -rss_limit_mb=4096) || exit 1; \
        echo "$target: $(ls "$scratch" | wc -l) new inputs in {{seconds}} s"; \
        rm -rf "$scratch"; \
    done

# Measure this machine's fuel per millisecond and store it in the data dir.
calibrate:
    cargo run -q -- calibrate

# The main job: the orchestrator over the day scenario (pass e.g. `--seed 3 -v` or `--json`).
run *args:
    cargo run -q -- run scenarios/day.json {{args}}

# Benchmarks (BENCHMARKS.md): criterion medians, then p50/p99, throughput and the day's ticks
# (target/bench/rust.json), then the reference validator (Python jsonschema 4.23.0 in
# target/bench-venv) on the same instances, then the ratios against issue 7's targets.
# `just bench --write BENCHMARKS.md` also rewrites the report's generated section.
bench *report_args:
    cargo bench -j{{jobs}} -p aura --bench crossing
    cargo bench -j{{jobs}} -p aura --bench percentiles
    test -x target/bench-venv/bin/python || python3 -m venv target/bench-venv
    target/bench-venv/bin/pip install -q --disable-pip-version-check -r bench/requirements.txt
    target/bench-venv/bin/python bench/reference.py
    python3 bench/report.py --criterion-dir "${CARGO_TARGET_DIR:-target}/criterion" {{report_args}}

# MCP round trips with the official TypeScript client (tests/mcp/bench.mjs): p50/p99 of a
# tools/call and of the framing floor over stdio and HTTP, and calls/s with 8 clients. The
# release host; figures in BENCHMARKS.md.
bench-mcp calls="2000":
    #!/usr/bin/env bash
    set -euo pipefail
    npm ci --prefix tests/mcp --no-audit --no-fund --silent
    cargo build --release -j{{jobs}} -p aura
    rm -rf target/bench-mcp && mkdir -p target/bench-mcp
    ./target/release/aura --data-dir target/bench-mcp serve --listen 127.0.0.1:0 2> target/bench-mcp/serve.log &
    server=$!
    trap 'kill $server 2>/dev/null || true' EXIT
    until grep -q "serving MCP at" target/bench-mcp/serve.log; do sleep 0.1; done
    url=$(sed -n 's/^aura: serving MCP at //p' target/bench-mcp/serve.log)
    node tests/mcp/bench.mjs "$PWD/target/release/aura" "$PWD/target/bench-mcp" "$url" {{calls}}

# aura and Wassette side by side over MCP, same calendar logic, one client, one run
# (BENCHMARKS.md). Wassette is built outside CI: bench/wassette/run names the pinned commit.
bench-wassette wassette calls="2000":
    JOBS={{jobs}} bench/wassette/run {{wassette}} {{calls}}
