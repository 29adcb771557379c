"""Sets aura's figures beside the reference validator's and against issue 7's targets.

Reads $AURA_BENCH_DIR/rust.json (benches/percentiles.rs), $AURA_BENCH_DIR/reference.json
(bench/reference.py) and criterion's saved estimates (--criterion-dir, the `criterion` folder
of the cargo target dir), prints the tables, and with --write FILE replaces the generated
part of FILE (BENCHMARKS.md) between its `<!-- bench:begin -->` and `<!-- bench:end -->`
markers. Standard library only, so it runs outside the reference's virtualenv too.
"""

import argparse
import datetime
import json
import os
import pathlib
import platform
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Where the criterion medians go (BENCHMARKS.md keeps the figures, the notes the detail).
CRITERION_NOTE = "bench/notes/criterion-medians.md"
BEGIN = "<!-- bench:begin -->"
END = "<!-- bench:end -->"

# Issue 7's targets (benchmark goals, not test assertions).
CROSSING_P50_US_MAX = 15.0
CROSSING_P99_US_MAX = 60.0
CROSSINGS_PER_S_MIN = 50_000
OVERHEAD_P50_US_MAX = 10.0
REFERENCE_RATIO_MIN = 4.0
TICK_MEDIAN_US_MAX = 1_000.0
# ADR-0009's tick budget (the seed's): median 300 ms, p95 700 ms.
SEED_TICK_MEDIAN_US_MAX = 300_000.0
SEED_TICK_P95_US_MAX = 700_000.0

# The criterion benches, in the order shown: (group/bench, what it measures).
CRITERION = [
    ("crossing/full", "full crossing (dispatch of the small call)"),
    ("crossing/native", "the agent's invoke compiled for the host (the floor)"),
    ("crossing/check_call", "inbound checks: parse, I-JSON, canonicalize, toolcall.v1, catalogue, args"),
    ("crossing/check_reply", "outbound checks: parse, I-JSON, reply.v1, result schema"),
    ("parts/parse_canonical_envelope", "parse + I-JSON + canonicalize the envelope"),
    ("parts/canonicalize_envelope", "canonicalize only (RFC 8785 writer)"),
    ("parts/validate_envelope", "toolcall.v1 validation only"),
    ("parts/validate_args", "args schema validation only"),
    ("parts/validate_reply_and_result", "reply.v1 + result schema validation"),
    ("sandbox/instantiate_and_call", "sandbox: fresh store, instantiate, call (Host::measure)"),
    ("sandbox/probe_instantiate", "probe: fresh store + instantiate only"),
    ("sandbox/probe_call", "probe: the call only, on a fresh instance"),
    ("hop/suggest_break_with_hop", "wellness.suggest_break -> calendar.find_free_slots"),
    ("hop/suggest_break_without_hop", "wellness.suggest_break at low stress (no hop)"),
    ("fuel/on", "400-event detect_conflicts, fuel metered"),
    ("fuel/off", "the same, fuel metering off"),
    ("fuel/native", "the same, natively"),
    ("tick/all_four", "one tick of the four agents (mid-day context)"),
    ("tick/all_four_native", "the same ticks natively, one after the other"),
]


def load(path):
    try:
        return json.loads(pathlib.Path(path).read_text())
    except FileNotFoundError:
        sys.exit(f"{path} is missing: run `just bench` (or the step that writes it)")


def criterion_median_ns(criterion_dir, name):
    if criterion_dir is None:
        return None
    path = pathlib.Path(criterion_dir, *name.split("/"), "new", "estimates.json")
    try:
        return json.loads(path.read_text())["median"]["point_estimate"]
    except (FileNotFoundError, KeyError, ValueError):
        return None


def machine():
    cpu = "unknown"
    cores = os.cpu_count()
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    try:
        load_avg = pathlib.Path("/proc/loadavg").read_text().split()[:3]
    except OSError:
        load_avg = []
    try:
        rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    except OSError:
        rustc = "rustc ?"
    lock = (ROOT / "Cargo.lock").read_text()
    found = re.search(r'name = "wasmtime"\nversion = "([^"]+)"', lock)
    return {
        "cpu": cpu,
        "cores": cores,
        "memory": memory,
        "load": " ".join(load_avg),
        "os": platform.platform(terse=True),
        "rustc": rustc,
        "wasmtime": found.group(1) if found else "?",
        "date": datetime.date.today().isoformat(),
    }


def us(value):
    if value is None:
        return "n/a"
    if value >= 1000:
        return f"{value / 1000:,.2f} ms"
    return f"{value:,.2f} µs"


def verdict(ok):
    return "**met**" if ok else "**missed**"


def build(rust, reference, criterion_dir):
    f = rust["figures"]
    r = reference["figures"]
    m = machine()
    lines = []
    add = lines.append

    full = f["crossing_full"]
    native = f["native_call"]
    ref_env = r["small_call/validate_envelope"]
    ref_env_fast = r["small_call/is_valid_envelope"]
    throughput = f.get(f"throughput_2_workers", {})
    day = f["tick_day_all_four"]
    orchestrator = f["tick_orchestrator_day"]
    overhead = full["p50_us"] - native["p50_us"]
    ratio = ref_env["p50_us"] / full["p50_us"]
    ratio_fast = ref_env_fast["p50_us"] / full["p50_us"]
    tick_median = day["p50_us"]

    add(f"Generated by `python3 bench/report.py` from the run of {m['date']}: {m['cores']} cores, "
        f"{m['cpu']}, {m['memory']}, {m['os']}, {m['rustc']}, wasmtime {m['wasmtime']} "
        f"(host in the `bench` profile: release), Python {reference['python']}, jsonschema "
        f"{reference['jsonschema']}. Load average when the report was written: {m['load']}."
        + (f" Iteration counts scaled by {rust['scale']}." if rust.get("scale", 1) != 1 else ""))
    add("")
    add("Command for every figure: `just bench` (criterion, then the percentiles harness, then the "
        "reference, then this report). Per figure: `cargo bench -p aura --bench percentiles` "
        "(p50/p99, throughput, ticks: `target/bench/rust.json`), `cargo bench -p aura --bench "
        "crossing -- <group>/` (criterion medians), `python bench/reference.py` in the virtualenv "
        "(`target/bench/reference.json`).")
    add("")
    add("### Against the targets")
    add("")
    add("| target | goal | measured | |")
    add("|---|---|---|---|")
    add(f"| full crossing p50 | ≤ {CROSSING_P50_US_MAX:g} µs | {us(full['p50_us'])} | {verdict(full['p50_us'] <= CROSSING_P50_US_MAX)} |")
    add(f"| full crossing p99 | ≤ {CROSSING_P99_US_MAX:g} µs | {us(full['p99_us'])} | {verdict(full['p99_us'] <= CROSSING_P99_US_MAX)} |")
    if throughput:
        add(f"| crossings per second, {throughput['workers']} cores, {throughput['tasks']} callers | ≥ {CROSSINGS_PER_S_MIN:,} | {throughput['per_second']:,.0f} | {verdict(throughput['per_second'] >= CROSSINGS_PER_S_MIN)} |")
    add(f"| host overhead over the native call, p50 | ≤ {OVERHEAD_P50_US_MAX:g} µs | {us(overhead)} ({us(full['p50_us'])} − {us(native['p50_us'])}) | {verdict(overhead <= OVERHEAD_P50_US_MAX)} |")
    add(f"| full crossing vs the reference validating the envelope alone (p50) | ≥ {REFERENCE_RATIO_MIN:g}× faster | {ratio:.2f}× ({us(ref_env['p50_us'])} / {us(full['p50_us'])}); {ratio_fast:.2f}× against `is_valid` | {verdict(ratio >= REFERENCE_RATIO_MIN)} |")
    add(f"| one tick of all four agents, median over the day | ≤ {TICK_MEDIAN_US_MAX / 1000:g} ms | {us(tick_median)} | {verdict(tick_median <= TICK_MEDIAN_US_MAX)} |")
    add(f"| the seed's tick budget (ADR-0009), `aura run` over the day | median ≤ 300 ms, p95 ≤ 700 ms | {us(orchestrator['median_us'])}, p95 {us(orchestrator['p95_us'])} | {verdict(orchestrator['median_us'] <= SEED_TICK_MEDIAN_US_MAX and orchestrator['p95_us'] <= SEED_TICK_P95_US_MAX)} |")
    add("")

    add("### A crossing and its parts (p50 / p99)")
    add("")
    add("The small real call: `calendar.detect_conflicts` over the README's four events "
        f"(`bench/instances.json`, {len(rust['envelope_text'])} bytes, eight date-times; "
        f"{rust.get('small_call_fuel', 0):,} fuel). One call at a time on one core; "
        "each iteration timed with `Instant`.")
    add("")
    add("| figure | p50 | p99 | mean | n |")
    add("|---|---|---|---|---|")
    rows = [
        ("crossing_full", "**full crossing**: envelope parse + canonicalize + validate, catalogue, args, fresh instance, call, output parse + validate, result.v1"),
        ("native_call", "the agent's invoke compiled for the host (the floor)"),
        ("check_call", "inbound checks (parse, I-JSON, canonicalize, toolcall.v1, catalogue, args)"),
        ("check_reply", "outbound checks (parse, I-JSON, reply.v1, result schema)"),
        ("parse_canonical_envelope", "canonicalization: parse + I-JSON + RFC 8785 text of the envelope"),
        ("parse_i_json_envelope", "parse + I-JSON checks only"),
        ("parse_plain_serde_json_envelope", "for scale: plain `serde_json::from_str::<Value>`, no checks"),
        ("canonicalize_envelope", "canonicalization: RFC 8785 text only"),
        ("validate_envelope", "validation only: toolcall.v1"),
        ("validate_args", "validation only: the args schema"),
        ("validate_envelope_and_args", "validation only: toolcall.v1 + args"),
        ("validate_reply_and_result", "validation only: reply.v1 + result schema"),
        ("sandbox_instantiate_and_call", "sandbox: fresh store + instantiate + call (`Host::measure`)"),
        ("probe_store", "probe: fresh store (WASI context, limits, fuel) only"),
        ("probe_instantiate", "instantiate only (probe: fresh store + instantiate)"),
        ("probe_call", "component call only (probe: on a fresh instance)"),
        ("probe_call_again", "the same call again on the instance that just ran it (pages resident, allocator warm)"),
    ]
    for key, label in rows:
        s = f.get(key)
        if s:
            add(f"| {label} | {us(s['p50_us'])} | {us(s['p99_us'])} | {us(s['mean_us'])} | {s['n']:,} |")
    add("")

    add("### What a crossing's time goes to (p50s of the parts above)")
    add("")
    sandbox = f["sandbox_instantiate_and_call"]["p50_us"]
    instantiate = f["probe_instantiate"]["p50_us"]
    call = f["probe_call"]["p50_us"]
    again = f["probe_call_again"]["p50_us"]
    parts = [
        ("inbound checks (`check_call`)", f["check_call"]["p50_us"]),
        ("fresh store + instantiation", instantiate),
        ("the guest running the call: the same work again on a warm instance", again),
        ("the guest running the call: first touch of a fresh instance (page faults, allocator growth; call − call again)", call - again),
        ("freeing the instance: the pool resetting its dirty pages in place (sandbox − instantiate − call)", sandbox - instantiate - call),
        ("outbound checks (`check_reply`)", f["check_reply"]["p50_us"]),
        ("the rest of dispatch (result.v1, spans, cold caches after the sandbox: full − sandbox − checks)", full["p50_us"] - sandbox - f["check_call"]["p50_us"] - f["check_reply"]["p50_us"]),
    ]
    add("| part | p50 | share of the full crossing |")
    add("|---|---|---|")
    for label, value in parts:
        if value < 0:
            # The parts are timed one after the other, not inside one call: on a loaded
            # machine a difference of p50s can come out below zero.
            add(f"| {label} | ≈ 0 (below the noise: {us(value)}) | — |")
        else:
            add(f"| {label} | {us(value)} | {value / full['p50_us'] * 100:.0f} % |")
    add(f"| **full crossing** | {us(full['p50_us'])} | 100 % |")
    add(f"| for scale: the agent's logic natively | {us(native['p50_us'])} | {native['p50_us'] / full['p50_us'] * 100:.0f} % |")
    add("")

    if "pool_sandbox" in f:
        add("### The pooling allocator: wasmtime's default reset against the sandbox's (memory kept resident)")
        add("")
        add("The probe's whole call (fresh store, instantiate, call, free), the variants taking turns in "
            "blocks of 100 calls; then the same calls from 8 tasks on 2 workers.")
        add("")
        add("| pool | small call p50 | p99 | calls per second, 2 cores | the day's ticks, four agents in turn, median |")
        add("|---|---|---|---|---|")
        for key, label in (
            ("pool_madvise", "wasmtime's default: memory decommitted with madvise on every free"),
            ("pool_keep_resident_memset", "`linear_memory_keep_resident(4 MiB)`, the low 4 MiB reset with memset (kernels before 6.7)"),
            ("pool_sandbox", "**the sandbox's**: the same + `pagemap_scan(Auto)`, only the pages the call dirtied reset"),
            ("pool_sandbox_bounds_checked", "the sandbox's pool with ARM64's memory layout (64 MiB reserved, every access bounds-checked)"),
        ):
            s = f[key]
            per_s = f.get(f"{key}_per_second_2_workers")
            ticks = f.get(f"{key}_day_ticks_sequential")
            add(f"| {label} | {us(s['p50_us'])} | {us(s['p99_us'])} | {'n/a' if per_s is None else f'{per_s:,.0f}/s'} | {'n/a' if ticks is None else us(ticks['p50_us'])} |")
        add("")

    add("### Side by side with the reference validator (p50 / p99)")
    add("")
    add("Python jsonschema 4.23.0, `Draft202012Validator` with `FORMAT_CHECKER` (rfc3339-validator "
        "installed, so date-time is checked), on the same instances (`bench/instances.json`) and the "
        "same schema files; timed per iteration with `time.perf_counter_ns`.")
    add("")
    add("| what | aura | reference | reference / aura |")
    add("|---|---|---|---|")
    pairs = [
        ("toolcall.v1 validation (`validate`)", "validate_envelope", "small_call/validate_envelope"),
        ("args validation (`validate`)", "validate_args", "small_call/validate_args"),
        ("toolcall.v1 + args validation", "validate_envelope_and_args", "small_call/validate_envelope_and_args"),
        ("parse + (canonicalize +) toolcall.v1 + args: aura's `check_call`; reference `json.loads` + both `validate`", "check_call", "small_call/parse_and_validate_envelope_and_args"),
        ("**aura's full crossing** vs the reference validating the envelope alone", "crossing_full", "small_call/validate_envelope"),
        ("**aura's full crossing** vs the reference's `is_valid` on the envelope alone", "crossing_full", "small_call/is_valid_envelope"),
        ("**aura's full crossing** vs the reference validating envelope + args", "crossing_full", "small_call/validate_envelope_and_args"),
    ]
    for label, ours, theirs in pairs:
        a, b = f[ours], r[theirs]
        add(f"| {label} | {us(a['p50_us'])} / {us(a['p99_us'])} | {us(b['p50_us'])} / {us(b['p99_us'])} | {b['p50_us'] / a['p50_us']:.1f}× / {b['p99_us'] / a['p99_us']:.1f}× |")
    add("")

    add("### Throughput, the agent-to-agent hop, fuel")
    add("")
    add("| figure | value |")
    add("|---|---|")
    for workers in (1, 2):
        t = f.get(f"throughput_{workers}_workers")
        if t:
            add(f"| crossings per second, {t['workers']} tokio worker(s), {t['tasks']} concurrent callers, {t['calls']:,} calls | **{t['per_second']:,.0f}/s** ({t['seconds']:.2f} s) |")
    add(f"| one call at a time (1 / mean full crossing) | {1e6 / full['mean_us']:,.0f}/s |")
    hop, no_hop = f["hop_suggest_break_with_hop"], f["hop_suggest_break_without_hop"]
    hop_fuel = f.get("hop_fuel", {})
    add(f"| wellness.suggest_break → calendar.find_free_slots through `host.call` (two crossings, two instances), p50 / p99 | {us(hop['p50_us'])} / {us(hop['p99_us'])} ({hop_fuel.get('with_hop', 0):,} fuel) |")
    add(f"| the same call at stress 25 (no hop), p50 / p99 | {us(no_hop['p50_us'])} / {us(no_hop['p99_us'])} ({hop_fuel.get('without_hop', 0):,} fuel) |")
    add(f"| the hop's cost (difference of p50s) | {us(hop['p50_us'] - no_hop['p50_us'])} |")
    on, off, nat = f["fuel_on"], f["fuel_off"], f["fuel_native"]
    work = f.get("fuel_workload", {})
    add(f"| compute-heavy: detect_conflicts over {work.get('events', 400)} events ({work.get('fuel_per_run', 0):,} fuel), fuel on, p50 / p99 | {us(on['p50_us'])} / {us(on['p99_us'])} |")
    add(f"| the same, fuel metering off, p50 / p99 | {us(off['p50_us'])} / {us(off['p99_us'])} |")
    add(f"| fuel's cost | {(on['p50_us'] / off['p50_us'] - 1) * 100:+.0f} % (p50) |")
    add(f"| the same natively, p50 | {us(nat['p50_us'])} (wasm with fuel is {on['p50_us'] / nat['p50_us']:.1f}× native) |")
    add("")

    add("### One tick of all four agents")
    add("")
    add("| figure | median | p95 | p99 |")
    add("|---|---|---|---|")
    for key, label in (
        ("tick_day_all_four", "the day's 69 contexts through the host, four ticks joined on one task (as `aura run`), checks included"),
        ("tick_day_all_four_spawned_2_cores", "the same, each tick spawned as a task on 2 workers"),
        ("tick_day_all_four_native", "the same ticks natively, one after the other"),
        ("tick_day_native_calendar", "natively, calendar alone"),
        ("tick_day_native_wellness", "natively, wellness alone"),
        ("tick_day_native_finance", "natively, finance alone"),
        ("tick_day_native_comms", "natively, comms alone"),
    ):
        s = f.get(key)
        if s:
            add(f"| {label} | {us(s['p50_us'])} | {us(s['p95_us'])} | {us(s['p99_us'])} |")
    canon = f.get("tick_context_canonicalize")
    size = f.get("tick_context_bytes")
    if canon and size:
        add(f"| the host canonicalizing one context (median {size['median']:,} bytes, at most {size['max']:,}); `Host::tick_all` does it once per tick | {us(canon['p50_us'])} | {us(canon['p95_us'])} | {us(canon['p99_us'])} |")
    add(f"| `aura run` over the day (the orchestrator's own figure, {orchestrator['ticks']} ticks, {orchestrator['tick_fuel']:,} fuel) | {us(orchestrator['median_us'])} | {us(orchestrator['p95_us'])} | |")
    add("")

    medians = [(name, label, criterion_median_ns(criterion_dir, name)) for name, label in CRITERION]
    details = []
    if any(value is not None for _, _, value in medians):
        add(f"Criterion's medians of every part: [{CRITERION_NOTE}]({CRITERION_NOTE}).")
        add("")
        details += [
            "# Criterion medians of the crossing's parts",
            "",
            "Written by `python3 bench/report.py --write BENCHMARKS.md` (`just bench`) with the "
            "report in BENCHMARKS.md. `cargo bench -p aura --bench crossing` (criterion 0.8, 1 s "
            "warm-up, 3 s per bench, 50 samples; 10 samples over 5 s for fuel and ticks).",
            "",
            "| bench | what | median |",
            "|---|---|---|",
        ]
        for name, label, value in medians:
            details.append(f"| `{name}` | {label} | {us(None if value is None else value / 1000)} |")
    return "\n".join(lines), "\n".join(details)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", default=os.environ.get("AURA_BENCH_DIR", ROOT / "target" / "bench"))
    parser.add_argument("--criterion-dir", default=None)
    parser.add_argument("--write", default=None, help="replace the generated section of this file")
    args = parser.parse_args()
    rust = load(pathlib.Path(args.dir, "rust.json"))
    reference = load(pathlib.Path(args.dir, "reference.json"))
    if reference["figures"].get("small_call/envelope_text") != rust["envelope_text"]:
        sys.exit("the reference did not validate the text the host received: instances differ")
    report, details = build(rust, reference, args.criterion_dir)
    print(report)
    print(details)
    if args.write:
        path = pathlib.Path(args.write)
        text = path.read_text()
        if BEGIN not in text or END not in text:
            sys.exit(f"{path} has no {BEGIN} ... {END} section to replace")
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        path.write_text(f"{head}{BEGIN}\n{report}\n{END}{tail}")
        print(f"\nwrote the generated section of {path}")
        if details:
            pathlib.Path(ROOT, CRITERION_NOTE).write_text(details + "\n")
            print(f"wrote {CRITERION_NOTE}")


if __name__ == "__main__":
    main()
