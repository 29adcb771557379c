"""The reference validator side by side with aura's crossing (`just bench`; BENCHMARKS.md).

ADR-0009 pins Python jsonschema==4.23.0. This script validates the same toolcall.v1 envelope
and the same args schema as the Rust benches, read from schemas/ and bench/instances.json, on
the same instances, with Draft202012Validator and its format checker (rfc3339-validator
installed, so date-time is really checked: the script refuses to run otherwise). Each figure is
timed per iteration with time.perf_counter_ns; p50 and p99 by nearest rank, as the Rust side.

Writes $AURA_BENCH_DIR/reference.json (default target/bench/reference.json) for
bench/report.py. AURA_BENCH_SCALE scales the iteration counts (default 1).
"""

import importlib.metadata
import json
import math
import os
import pathlib
import platform
import sys
import time

from jsonschema import Draft202012Validator

ROOT = pathlib.Path(__file__).resolve().parent.parent
INSTANCES = ROOT / "bench" / "instances.json"
SCHEMAS = ROOT / "schemas"
TOOLCALL_SCHEMA = "toolcall.v1.json"
PINNED_JSONSCHEMA = "4.23.0"

# Timed iterations per figure, and untimed ones before them (the same counts as the Rust
# side's FAST_ITERS and WARM_UP_PERCENT).
ITERATIONS = 20_000
WARM_UP_PERCENT = 5


def scale():
    try:
        value = float(os.environ.get("AURA_BENCH_SCALE", "1"))
    except ValueError:
        return 1.0
    return value if value > 0 else 1.0


def nearest_rank(sorted_values, percent):
    if not sorted_values:
        return 0
    n = len(sorted_values)
    rank = min(max(math.ceil(percent * n / 100), 1), n)
    return sorted_values[rank - 1]


def summary(ns):
    ns.sort()
    us = lambda v: round(v / 1000, 2)
    return {
        "n": len(ns),
        "p50_us": us(nearest_rank(ns, 50)),
        "p90_us": us(nearest_rank(ns, 90)),
        "p95_us": us(nearest_rank(ns, 95)),
        "p99_us": us(nearest_rank(ns, 99)),
        "mean_us": us(sum(ns) / len(ns)),
        "min_us": us(ns[0]),
        "max_us": us(ns[-1]),
    }


def timed(fn, iterations):
    iterations = max(1, int(iterations * scale()))
    for _ in range(max(1, iterations * WARM_UP_PERCENT // 100)):
        fn()
    ns = []
    clock = time.perf_counter_ns
    for _ in range(iterations):
        started = clock()
        fn()
        ns.append(clock() - started)
    return summary(ns)


def validator(path):
    schema = json.loads((SCHEMAS / path).read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def check_setup(envelope_validator):
    installed = importlib.metadata.version("jsonschema")
    if installed != PINNED_JSONSCHEMA:
        sys.exit(f"jsonschema {installed} is installed; ADR-0009 pins {PINNED_JSONSCHEMA}")
    checker = Draft202012Validator.FORMAT_CHECKER
    if "date-time" not in checker.checkers:
        sys.exit("date-time is not checked: install rfc3339-validator")
    bad = {
        "call_id": "t_abcdef0123", "agent": "calendar", "tool": "x", "args": {},
        "ts": "2026-13-45T25:00:00Z", "confirm_required": False,
    }
    if envelope_validator.is_valid(bad):
        sys.exit("a bad date-time passed: the format checker is not in effect")


def main():
    out_dir = pathlib.Path(os.environ.get("AURA_BENCH_DIR", ROOT / "target" / "bench"))
    instances = json.loads(INSTANCES.read_text())
    envelope_validator = validator(TOOLCALL_SCHEMA)
    check_setup(envelope_validator)

    figures = {}

    def record(name, value):
        print(f"{name:<40} {json.dumps(value)}")
        figures[name] = value

    for name in ("small_call", "hop_call"):
        entry = instances[name]
        envelope = entry["envelope"]
        args = envelope["args"]
        args_validator = validator(entry["args_schema"])
        # The text the host receives: compact, keys sorted (serde_json's map is ordered).
        text = json.dumps(envelope, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
        for what, v, instance in (("envelope", envelope_validator, envelope), ("args", args_validator, args)):
            errors = list(v.iter_errors(instance))
            if errors:
                sys.exit(f"{name} {what} is invalid: {errors[0].message}")

        def envelope_and_args():
            envelope_validator.validate(envelope)
            args_validator.validate(args)

        def parse_envelope_and_args():
            parsed = json.loads(text)
            envelope_validator.validate(parsed)
            args_validator.validate(parsed["args"])

        record(f"{name}/validate_envelope", timed(lambda: envelope_validator.validate(envelope), ITERATIONS))
        record(f"{name}/is_valid_envelope", timed(lambda: envelope_validator.is_valid(envelope), ITERATIONS))
        record(f"{name}/validate_args", timed(lambda: args_validator.validate(args), ITERATIONS))
        record(f"{name}/validate_envelope_and_args", timed(envelope_and_args, ITERATIONS))
        record(f"{name}/parse_and_validate_envelope_and_args", timed(parse_envelope_and_args, ITERATIONS))
        figures[f"{name}/envelope_text"] = text

    out = {
        "format": "aura-bench-reference.v1",
        "scale": scale(),
        "python": platform.python_version(),
        "jsonschema": importlib.metadata.version("jsonschema"),
        "validator": "Draft202012Validator, format_checker=Draft202012Validator.FORMAT_CHECKER (rfc3339-validator)",
        "figures": figures,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "reference.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
