# aura's recipes. `just --list` shows them.

set shell := ["bash", "-euo", "pipefail", "-c"]

jobs := env_var_or_default("CARGO_BUILD_JOBS", "2")

# The host binary the recipes below run (to precompile and sign plugins, to run a scenario):
# the dev build's, built first with `cargo build -p aura`; or AURA_HOST_BIN, one already built.
# CI names the one its `cargo test --workspace` built: the same code with the tests' features
# (tokio's test-util, the contract's test support), which `cargo build -p aura` would build
# again for the binary's own features: 9 minutes on 2 cores.
host_bin := env_var_or_default("AURA_HOST_BIN", "")
aura := if host_bin == "" { "./target/debug/aura" } else { host_bin }
build_host := if host_bin == "" { "cargo build -j" + jobs + " -p aura" } else { "test -x " + host_bin }

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
    {{build_host}}
    test -f target/py-venv/{{componentize_py}} || (python3 -m venv target/py-venv && target/py-venv/bin/pip install --quiet --disable-pip-version-check {{componentize_py}} && touch target/py-venv/{{componentize_py}})
    cd agents-py/wellness && ../../target/py-venv/bin/componentize-py -d ../../wit -w agent componentize app -p . -p ../sdk -o ../../target/wellness-py.wasm
    {{aura}} pack plugins/python wellness=target/wellness-py.wasm calendar=plugins/calendar.wasm comms=plugins/comms.wasm finance=plugins/finance.wasm
    {{aura}} test-agent plugins/python/wellness.wasm --as wellness

# The Python wellness against the Rust one, per call in-process (issue 21): each tool's example,
# interleaved, medians and p99 (bench profile).
bench-python:
    cargo test --profile bench -j{{jobs}} -p aura --test all bench_python_against_rust_per_call -- --ignored --nocapture

# A life's store (issue 74): a signal's durable append and a rollover on the files and memory
# homes through the trait, beside the journal written straight as before it, and on the
# fleet's JetStream home beside the fleet's own journal publish (interleaved; medians, p99).
bench-store:
    cargo test --profile bench -j{{jobs}} -p aura-day --lib store::bench -- --ignored --nocapture
    cargo test --profile bench -j{{jobs}} -p aura --test all bench_store_ -- --ignored --nocapture

# Check a component as a catalogue agent: `just test-agent my.wasm wellness`.
test-agent component agent:
    @{{build_host}}
    {{aura}} test-agent {{component}} --as {{agent}}

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
    {{build_host}}
    {{aura}} compile --target {{phone_target}}
    {{aura}} --plugins-dir plugins/{{phone_target}} sign --key {{phone_signing_key}}
    {{phone_env}} AURA_TRUSTED_KEYS={{phone_keys}} cargo build -j{{jobs}} --profile phone --target {{phone_target}} -p aura --no-default-features
    @ls -l target/{{phone_target}}/phone/aura plugins/{{phone_target}}/

# The plugins precompiled to Pulley bytecode (plugins/pulley64/) and for this machine
# (plugins/<host triple>/), each signed: what the iOS path runs, and its native counterpart.
# Any host binary with Cranelift runs Pulley bytecode too (the `jit` feature includes `pulley`).
pulley-plugins:
    {{build_host}}
    {{aura}} compile --target pulley64
    {{aura}} compile --target "$(rustc -vV | sed -n 's/^host: //p')"
    {{aura}} --plugins-dir plugins/pulley64 sign --key {{phone_signing_key}}
    {{aura}} --plugins-dir "plugins/$(rustc -vV | sed -n 's/^host: //p')" sign --key {{phone_signing_key}}

# The iOS binary, on this machine: the runtime-only host with the Pulley interpreter and the
# phone's profile (target/phone/aura), over pulley-plugins. For the phone's figures
# (bench-phone, bench-narrator); phone-check runs Pulley in the host binary instead.
build-pulley: pulley-plugins
    AURA_TRUSTED_KEYS={{phone_keys}} cargo build -j{{jobs}} --profile phone -p aura --no-default-features --features pulley
    @ls -l target/phone/aura plugins/pulley64/

# The proof: the day and the weekend with a fixed seed on x86_64 (Cranelift), on aarch64 under
# qemu-user (the phone binary) and under Pulley (the host binary's interpreter, the iOS path's
# code), each from its own precompiled plugins; the three traces.jsonl of each must be
# identical. The narrator writes the weekend's first `narrations` novel cases on each (its
# model, a forward pass per token, is the same code for every case: one case checks it; under
# Pulley a token takes 1.7 s, BENCHMARKS.md, "The narrator"; the day's cases are narrated
# natively by the tests); the three narrations.jsonl must be identical too. Then the day lived
# on each: its signals on stdin as they happen (urgent kinds ticking at once), at a replayed
# clock, the three traces compared again. Pulley's runs (one core, four minutes) go on while
# the phone binary builds; the x86_64 and aarch64 runs share the cores after it.
phone-check seed="7" narrations="1": pulley-plugins
    rm -rf target/phone-check && mkdir -p target/phone-check
    python3 -c 'import json, sys, datetime; d = json.load(open("scenarios/day.json")); [print(json.dumps(s)) for s in sorted(d["signals"], key=lambda s: datetime.datetime.fromisoformat(s["at"]))]' > target/phone-check/day-signals.jsonl
    pc=target/phone-check; \
    ( {{aura}} run scenarios/day.json --seed {{seed}} --data-dir $pc/pulley-day --plugins-dir plugins/pulley64 && \
      {{aura}} run scenarios/weekend.json --seed {{seed}} --data-dir $pc/pulley-weekend --plugins-dir plugins/pulley64 --narrate --narrations {{narrations}} && \
      {{aura}} --data-dir $pc/live-pulley --plugins-dir plugins/pulley64 live --stdin --clock replay --seed {{seed}} scenarios/day.json < $pc/day-signals.jsonl \
    ) > $pc/pulley.log 2>&1 & pulley=$!; \
    {{just_executable()}} build-phone || { kill $pulley; exit 1; }; \
    ( {{aura}} run scenarios/day.json --seed {{seed}} --data-dir $pc/x86_64-day && \
      {{aura}} run scenarios/weekend.json --seed {{seed}} --data-dir $pc/x86_64-weekend --narrate --narrations {{narrations}} && \
      {{aura}} --data-dir $pc/live-x86_64 live --stdin --clock replay --seed {{seed}} scenarios/day.json < $pc/day-signals.jsonl \
    ) > $pc/x86_64.log 2>&1 & x86=$!; \
    ( qemu-aarch64 target/{{phone_target}}/phone/aura run scenarios/day.json --seed {{seed}} --data-dir $pc/aarch64-day --plugins-dir plugins/{{phone_target}} && \
      qemu-aarch64 target/{{phone_target}}/phone/aura --data-dir $pc/live-aarch64 --plugins-dir plugins/{{phone_target}} live --stdin --clock replay --seed {{seed}} scenarios/day.json < $pc/day-signals.jsonl \
    ) > $pc/aarch64.log 2>&1 & aarch64=$!; \
    weekend=0; qemu-aarch64 target/{{phone_target}}/phone/aura run scenarios/weekend.json --seed {{seed}} --data-dir $pc/aarch64-weekend --plugins-dir plugins/{{phone_target}} --narrate --narrations {{narrations}} > $pc/aarch64-weekend.log 2>&1 || weekend=$?; \
    failed=""; \
    wait $pulley || failed="$failed pulley"; wait $x86 || failed="$failed x86_64"; wait $aarch64 || failed="$failed aarch64"; \
    test $weekend -eq 0 || failed="$failed aarch64-weekend"; \
    if [ -n "$failed" ]; then for f in $failed; do echo "== $f" >&2; tail -20 $pc/$f.log >&2; done; exit 1; fi
    sha256sum target/phone-check/*/traces.jsonl target/phone-check/*-weekend/narrations.jsonl
    for t in aarch64 pulley; do \
        cmp target/phone-check/x86_64-day/traces.jsonl target/phone-check/$t-day/traces.jsonl && \
        cmp target/phone-check/x86_64-weekend/traces.jsonl target/phone-check/$t-weekend/traces.jsonl && \
        cmp target/phone-check/x86_64-weekend/narrations.jsonl target/phone-check/$t-weekend/narrations.jsonl && \
        cmp target/phone-check/live-x86_64/traces.jsonl target/phone-check/live-$t/traces.jsonl || exit 1; \
    done; test "$(wc -l < target/phone-check/x86_64-weekend/narrations.jsonl)" -eq {{narrations}}
    @echo "aarch64 (qemu) and Pulley reproduce the x86_64 traces of the day and the weekend, the weekend's narrations and the day lived on stdin, byte for byte"
    # The phone binary checks signatures with the key compiled into it: the same .cwasm
    # without signatures.json, or with its last byte cut after signing, is refused before it is
    # mapped. (The same check of a signed Pulley dir: tests/all/signing.rs.)
    rm -rf target/phone-check/unsigned target/phone-check/altered
    cp -r plugins/{{phone_target}} target/phone-check/unsigned; rm target/phone-check/unsigned/signatures.json
    cp -r plugins/{{phone_target}} target/phone-check/altered; truncate -s -1 target/phone-check/altered/calendar.cwasm
    for bad in unsigned altered; do \
        if qemu-aarch64 target/{{phone_target}}/phone/aura --data-dir target/phone-check/refused --plugins-dir target/phone-check/$bad \
            call calendar detect_conflicts '{"events":[]}' > /dev/null 2> target/phone-check/refused.txt; then \
            echo "the phone binary ran a $bad plugin" >&2; exit 1; \
        fi; \
        grep -E "not signed|signature does not verify" target/phone-check/refused.txt; \
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
    {{build_host}}
    rm -rf target/bench-narrator
    {{aura}} --data-dir target/bench-narrator/plain run scenarios/day.json | grep 'tick of all agents'
    /usr/bin/time -f "day with the narrator: peak RSS %M KiB" {{aura}} --data-dir target/bench-narrator/day run scenarios/day.json --narrate | grep -E "tick of all agents|narrator"
    {{aura}} --data-dir target/bench-narrator/weekend run scenarios/weekend.json --narrate | grep -E "narrator"
    test -x target/phone/aura || { echo "the Pulley figures need just build-pulley" >&2; exit 1; }
    /usr/bin/time -f "Pulley: peak RSS %M KiB" target/phone/aura --data-dir target/bench-narrator/pulley --plugins-dir plugins/pulley64 run scenarios/day.json --narrate --narrations 1 | grep -E "narrator"

# The per-agent component tests against another plugins dir (an agent implemented anew, in
# Rust or another language, beside the agents it calls): the very tests the built agents pass.
test-agents dir:
    AURA_TEST_PLUGINS_DIR={{dir}} cargo test -j{{jobs}} -p aura --test all -- calendar:: comms:: finance:: wellness::

# The deterministic simulation with faults (seed 002's DST): N seeds, each run twice (the same
# event log both times), seed 002's invariants checked after every step. A failing seed prints
# how to replay it (DST_SEED=N ... dst::replay). CI runs seeds until every kind of fault has
# happened (151 seeds at this commit; at least 100).
dst n="1000":
    DST_SEEDS={{n}} cargo test -j{{jobs}} -p aura --test all dst::dst_seeds -- --nocapture

# The deterministic simulation of a life (tests/all/dst_life.rs): N seeds, each living three days
# on the memory home through the session's working copy with one write broken (or the session
# stopped) where the seed says, then on from an empty data dir; the days must be the
# uninterrupted life's. The tests run 12.
dst-life n="100":
    DST_LIFE_SEEDS={{n}} cargo test -j{{jobs}} -p aura --test all dst_life -- --nocapture

# The fleet's deterministic simulation: N seeds of three hosts living five people's days over the
# simulated store through crashes, partitions, freezes and storage faults (tests/all/dst_fleet.rs),
# each seed twice (the same event log both times). The tests run 2.
dst-fleet n="20":
    DST_FLEET_SEEDS={{n}} cargo test -j{{jobs}} -p aura --test all dst_fleet::a_fleet -- --nocapture

# The fleet's day at full size (tests/all/fleet_day.rs, which CI runs with 30 people): three
# `aura fleet host` processes living N people's days through a SIGKILL and a partition; prints
# the takeover times after the kill (BENCHMARKS.md, "The fleet").
fleet-day people="100":
    FLEET_DAY_PEOPLE={{people}} cargo test -j{{jobs}} --workspace --test all fleet_day::three_hosts -- --nocapture

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
    @{{build_host}}
    @{{aura}} catalogue

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

# On the machine's clock over HTTP (release): an urgent message's POST-to-decision time without
# and during a flood of readings posted as batches, and a week's batch against one-by-one POSTs,
# in durable signals a second (BENCHMARKS.md, "A flood").
bench-flood:
    cargo build --release -p aura
    python3 bench/flood.py target/release/aura plugins --urgent 100 --gap 0.25 --readings 20000 --singles 2000

# A life of DAYS days lived by `aura live --clock replay` (the dev build): CPU seconds and RSS at
# each rollover, each day's size on disk, the rollovers' times, the signals a second it took
# durably (BENCHMARKS.md, "A life").
bench-life DAYS="120":
    {{build_host}}
    python3 bench/life.py {{aura}} plugins {{DAYS}}

# The same life on the Pulley interpreter (the plugins as Pulley bytecode; a week by default).
bench-life-pulley DAYS="7":
    {{build_host}}
    {{aura}} compile --target pulley64
    python3 bench/life.py {{aura}} plugins/pulley64 {{DAYS}} --work target/tmp/bench-life-pulley

# An hour and more of durable signals: 2,000 days of the life (65 minutes here), a month
# kept, the signals acknowledged a second in each ten minutes.
bench-life-hour:
    {{build_host}}
    python3 bench/life.py {{aura}} plugins 2000 --keep-days 31 --work target/tmp/bench-life-hour

# The soak: 10,000 concurrent calls mixing hostile and healthy agents; prints RSS.
soak:
    cargo test -j{{jobs}} --workspace --test all soak -- --ignored --nocapture

# Fuzz the crossing for a fixed time per target (nightly + cargo-fuzz). New inputs go to a
# scratch dir, so the committed seed corpus stays small; crashes land in host/contract/fuzz/artifacts.
fuzz seconds="60":
    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
    rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
    for target in crossing_envelope crossing_output; do \
        scratch="$(mktemp -d)"; \
        (cd host/contract && CARGO_BUILD_JOBS={{jobs}} cargo +nightly fuzz run "$target" "$scratch" "fuzz/corpus/$target" -- -max_total_time={{seconds}} -rss_limit_mb=4096) || exit 1; \
        echo "$target: $(ls "$scratch" | wc -l) new inputs in {{seconds}} s"; \
        rm -rf "$scratch"; \
    done

# Measure this machine's fuel per millisecond and store it in the data dir.
calibrate:
    @{{build_host}}
    {{aura}} calibrate

# The main job: the orchestrator over the day scenario (pass e.g. `--seed 3 -v` or `--json`).
run *args:
    @{{build_host}}
    {{aura}} run scenarios/day.json {{args}}

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
