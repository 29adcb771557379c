#!/usr/bin/env python3
"""Checks a directory written by scenarios/gen_life.py (setup.json, signals.jsonl).

    python3 scenarios/check_life.py DIR [--schema schemas/scenario.v1.json] [--live scenarios/live.json]

Stdlib only. Every line is validated against scenario.v1's `$defs/signal` as a live session
takes it (the sender's optional `id`, and `time_zone` in `utc_offset` data, patched into a copy
in memory) by a small validator of the JSON Schema keywords scenario.v1 uses; where the
`jsonschema` package can be imported (e.g. run with target/tmp/life-venv/bin/python), by it
too, with its date-time format checks. Besides the schema it checks what the schema cannot:
every line parses as I-JSON and is written canonically, ids unique, arrival times
non-decreasing, each `at` (and `received_at`, transaction `time`, sleep times) written in the
offset of where she is at that instant (the setup's time zone, then each `utc_offset`
signal's), `utc_offset` signals only where she changes zone or the zone she is visiting
changes its offset (never for the home zone's own DST), local days inside the run, answers
naming an invitation heard before, cancellations naming an event known before, and the
setup's `initial` within its bounds. Exits 1 on any violation; prints the figures.
"""

import argparse
import copy
import json
import os
import re
import sys
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

HERE = os.path.dirname(os.path.abspath(__file__))
RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
LIVE_SIGNAL_BYTES_MAX = 64 * 1024
SCENARIO_SIGNALS_MAX = 10000
I_JSON_INT = 2 ** 53 - 1


# ---------------------------------------------------------------------------------------------
# A JSON Schema validator for the keywords scenario.v1 uses
# ---------------------------------------------------------------------------------------------

def parse_time(text):
    """An RFC 3339 date-time as an aware datetime, or None."""
    if not isinstance(text, str):
        return None
    m = RFC3339.match(text)
    if not m:
        return None
    try:
        return datetime.fromisoformat(text.replace("z", "Z").replace("t", "T").replace("Z", "+00:00"))
    except ValueError:
        return None


def type_ok(value, kind):
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    raise ValueError("unknown type " + kind)


KNOWN = {"$schema", "$id", "title", "description", "type", "required", "properties",
         "additionalProperties", "$defs", "$ref", "enum", "const", "minLength", "maxLength",
         "pattern", "format", "minimum", "maximum", "minProperties", "maxItems", "items",
         "uniqueItems", "oneOf", "anyOf", "allOf", "if", "then", "else"}


def validate(value, schema, root, path="", errors=None):
    """The violations of value against schema: a list of 'path: what'."""
    if errors is None:
        errors = []
    if schema is True:
        return errors
    if schema is False:
        errors.append("%s: not allowed" % (path or "/"))
        return errors
    unknown = set(schema) - KNOWN
    if unknown:
        raise ValueError("the validator does not know %s" % sorted(unknown))
    here = path or "/"
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), ref
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        validate(value, target, root, path, errors)
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(type_ok(value, k) for k in kinds):
            errors.append("%s: not of type %s" % (here, schema["type"]))
            return errors
    if "enum" in schema and value not in schema["enum"]:
        errors.append("%s: %r not one of %s" % (here, value, schema["enum"]))
    if "const" in schema and value != schema["const"]:
        errors.append("%s: %r is not %r" % (here, value, schema["const"]))
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append("%s: shorter than %d" % (here, schema["minLength"]))
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append("%s: longer than %d (%d)" % (here, schema["maxLength"], len(value)))
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append("%s: %r does not match %s" % (here, value, schema["pattern"]))
        if schema.get("format") == "date-time" and parse_time(value) is None:
            errors.append("%s: %r is not an RFC 3339 date-time" % (here, value))
    if type_ok(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append("%s: %r below %r" % (here, value, schema["minimum"]))
        if "maximum" in schema and value > schema["maximum"]:
            errors.append("%s: %r above %r" % (here, value, schema["maximum"]))
    if isinstance(value, dict):
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            errors.append("%s: fewer than %d properties" % (here, schema["minProperties"]))
        for key in schema.get("required", []):
            if key not in value:
                errors.append("%s: `%s` is required" % (here, key))
        props = schema.get("properties", {})
        for key in sorted(value):
            if key in props:
                validate(value[key], props[key], root, path + "/" + key, errors)
            elif "additionalProperties" in schema:
                extra = schema["additionalProperties"]
                if extra is False:
                    errors.append("%s: `%s` is not allowed" % (here, key))
                elif extra is not True:
                    validate(value[key], extra, root, path + "/" + key, errors)
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append("%s: more than %d items (%d)" % (here, schema["maxItems"], len(value)))
        if "items" in schema:
            for i, item in enumerate(value):
                validate(item, schema["items"], root, "%s/%d" % (path, i), errors)
        if schema.get("uniqueItems"):
            seen = [json.dumps(v, sort_keys=True) for v in value]
            if len(seen) != len(set(seen)):
                errors.append("%s: items not unique" % here)
    for sub in schema.get("allOf", []):
        validate(value, sub, root, path, errors)
    if "anyOf" in schema:
        if not any(not validate(value, sub, root, path, []) for sub in schema["anyOf"]):
            errors.append("%s: matches none of anyOf" % here)
    if "oneOf" in schema:
        matched = sum(1 for sub in schema["oneOf"] if not validate(value, sub, root, path, []))
        if matched != 1:
            errors.append("%s: matches %d of oneOf, not exactly 1" % (here, matched))
    if "if" in schema:
        if not validate(value, schema["if"], root, path, []):
            if "then" in schema:
                validate(value, schema["then"], root, path, errors)
        elif "else" in schema:
            validate(value, schema["else"], root, path, errors)
    return errors


def live_signal_schema(scenario):
    """scenario.v1's $defs/signal as `aura live` takes it (the sender's `id`, as the catalogue's
    LIVE_SIGNAL_SCHEMA adds it), with `time_zone` allowed in utc_offset data."""
    defs = copy.deepcopy(scenario["$defs"])
    signal = defs["signal"]
    signal["properties"]["id"] = {"type": "string", "minLength": 1, "maxLength": 128}
    patched = 0
    for branch in signal["allOf"]:
        if branch["if"]["properties"]["kind"].get("const") == "utc_offset":
            branch["then"]["properties"]["data"]["properties"]["time_zone"] = {
                "type": "string", "minLength": 1, "maxLength": 64,
                "description": "The IANA time zone the person is now in."}
            patched += 1
    assert patched == 1
    defs["live_signal"] = signal
    return {"$schema": scenario.get("$schema"), "title": "live signal.v1 (+time_zone)",
            "$ref": "#/$defs/live_signal", "$defs": defs}


def setup_schema(scenario):
    """live.v1 (scenario.v1 without its day) with the coming `start` and `time_zone`."""
    s = copy.deepcopy(scenario)
    for day in ["end", "signals", "unfinished"]:
        s["properties"].pop(day)
    s["properties"]["time_zone"] = {"type": "string", "minLength": 1, "maxLength": 64}
    s["required"] = ["scenario", "start", "time_zone", "tick_minutes", "utc_offset_minutes", "profile"]
    s["title"] = "live.v1 (+start, time_zone)"
    return s


# ---------------------------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------------------------

class Report:
    def __init__(self):
        self.errors = []
        self.counts = {}

    def fail(self, where, what):
        self.counts[what.split(":")[0]] = self.counts.get(what.split(":")[0], 0) + 1
        if len(self.errors) < 60:
            self.errors.append("%s: %s" % (where, what))


def i_json(value, path, report, where):
    """Integers within ±(2^53-1), no lone surrogates, strings valid (I-JSON, RFC 7493)."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int):
        if abs(value) > I_JSON_INT:
            report.fail(where, "i-json: %s: integer out of range" % path)
    elif isinstance(value, float):
        report.fail(where, "i-json: %s: a float (nothing here should be one)" % path)
    elif isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            report.fail(where, "i-json: %s: lone surrogate" % path)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            i_json(v, "%s/%d" % (path, i), report, where)
    elif isinstance(value, dict):
        for k, v in value.items():
            i_json(v, path + "/" + k, report, where)


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key")
    return dict(pairs)


def offset_of(text):
    m = RFC3339.match(text)
    tz = m.group(8)
    if tz in ("Z", "z"):
        return 0
    sign = 1 if tz[0] == "+" else -1
    return sign * (int(tz[1:3]) * 60 + int(tz[4:6]))


def zone_offset(zone, instant):
    return int(instant.astimezone(ZoneInfo(zone)).utcoffset().total_seconds()) // 60


def check(dir_, schema_path, live_path):
    report = Report()
    with open(schema_path, encoding="utf-8") as f:
        scenario_schema = json.load(f)
    sig_schema = live_signal_schema(scenario_schema)
    jsonschema_used = None
    js_validator = None
    try:
        import jsonschema  # noqa: F401
        from jsonschema import Draft202012Validator, FormatChecker
        js_validator = Draft202012Validator(sig_schema, format_checker=FormatChecker())
        jsonschema_used = "jsonschema (Draft 2020-12, format checks: %s)" % (
            "date-time" if "date-time" in FormatChecker().checkers else "none")
    except ImportError:
        pass

    # --- setup ---
    with open(os.path.join(dir_, "setup.json"), encoding="utf-8") as f:
        setup = json.load(f, object_pairs_hook=no_duplicates)
    for e in validate(setup, setup_schema(scenario_schema), setup_schema(scenario_schema)):
        report.fail("setup.json", "schema: " + e)
    if js_validator is not None:
        from jsonschema import Draft202012Validator, FormatChecker
        for e in Draft202012Validator(setup_schema(scenario_schema),
                                      format_checker=FormatChecker()).iter_errors(setup):
            report.fail("setup.json", "jsonschema: %s: %s" % ("/".join(map(str, e.absolute_path)), e.message))
    i_json(setup, "", report, "setup.json")
    home = setup.get("time_zone")
    try:
        ZoneInfo(home)
    except Exception:
        report.fail("setup.json", "time_zone: %r is not an IANA zone" % home)
        return report, {}
    start = parse_time(setup["start"])
    if start is None:
        report.fail("setup.json", "start: not RFC 3339")
        return report, {}
    if offset_of(setup["start"]) != zone_offset(home, start):
        report.fail("setup.json", "start: offset is not %s's" % home)
    if setup["utc_offset_minutes"] != zone_offset(home, start):
        report.fail("setup.json", "utc_offset_minutes: not %s's at start" % home)
    if (start.hour, start.minute, start.second) != (0, 0, 0):
        report.fail("setup.json", "start: not local midnight")
    if live_path and os.path.exists(live_path):
        with open(live_path, encoding="utf-8") as f:
            live = json.load(f)
        if sorted(live["profile"]) != sorted(setup["profile"]):
            report.fail("setup.json", "profile: keys differ from %s's" % os.path.basename(live_path))
        for key in sorted(live):
            if key not in setup:
                report.fail("setup.json", "keys: %s missing (live.json has it)" % key)
    initial = setup.get("initial", {})
    events = {}
    cancelled = set()
    for e in initial.get("events", []):
        if e["id"] in events:
            report.fail("setup.json", "ids: event %s twice" % e["id"])
        events[e["id"]] = e
        if parse_time(e["end"]) <= parse_time(e["start"]):
            report.fail("setup.json", "event: %s ends before it starts" % e["id"])
    tx_ids = set()
    for t in initial.get("transactions", []):
        if t["id"] in tx_ids:
            report.fail("setup.json", "ids: transaction %s twice" % t["id"])
        tx_ids.add(t["id"])
        when = parse_time(t["time"])
        if when >= start:
            report.fail("setup.json", "initial: transaction %s not before start" % t["id"])
        if offset_of(t["time"]) != zone_offset(home, when):
            # History may have been abroad; accept Berlin or New York only when it matches one.
            if offset_of(t["time"]) not in (zone_offset("Europe/Berlin", when),
                                            zone_offset("America/New_York", when)):
                report.fail("setup.json", "offset: transaction %s" % t["id"])
    for s in initial.get("sleep_sessions", []):
        if parse_time(s["end"]) <= parse_time(s["start"]) or parse_time(s["end"]) > start:
            report.fail("setup.json", "sleep: session %s..%s" % (s["start"], s["end"]))

    # --- signals ---
    zone = home
    last = None
    ids = set()
    msg_ids, inv_ids, answered = set(), {}, 0
    per_kind, per_day = {}, {}
    readings_gap = {}
    last_reading = None
    days = set()
    utc_offsets = []
    total_bytes = 0
    first_day = start.date()
    with open(os.path.join(dir_, "signals.jsonl"), encoding="utf-8", newline="") as f:
        text = f.read()
    total_bytes = len(text.encode("utf-8"))
    if text and not text.endswith("\n"):
        report.fail("signals.jsonl", "format: no final newline")
    lines = text.split("\n")[:-1] if text else []
    for n, line in enumerate(lines, 1):
        where = "line %d" % n
        if len(line.encode("utf-8")) > LIVE_SIGNAL_BYTES_MAX:
            report.fail(where, "size: over %d bytes" % LIVE_SIGNAL_BYTES_MAX)
        try:
            s = json.loads(line, object_pairs_hook=no_duplicates)
        except ValueError as e:
            report.fail(where, "parse: %s" % e)
            continue
        i_json(s, "", report, where)
        if json.dumps(s, sort_keys=True, separators=(",", ":"), ensure_ascii=False) != line:
            report.fail(where, "format: not canonical")
        for e in validate(s, sig_schema, sig_schema):
            report.fail(where, "schema: " + e)
        if js_validator is not None:
            for e in js_validator.iter_errors(s):
                report.fail(where, "jsonschema: %s: %s" % ("/".join(map(str, e.absolute_path)), e.message))
        if not isinstance(s, dict) or "at" not in s or parse_time(s.get("at")) is None:
            continue
        kind, data = s["kind"], s["data"]
        sid = s.get("id")
        if sid is None:
            report.fail(where, "ids: no id")
        elif sid in ids:
            report.fail(where, "ids: %s twice" % sid)
        ids.add(sid)
        at = parse_time(s["at"])
        if last is not None and at < last:
            report.fail(where, "order: %s before the line above" % s["at"])
        last = at
        if kind == "utc_offset" and "time_zone" in data:
            new = data["time_zone"]
            try:
                ZoneInfo(new)
            except Exception:
                report.fail(where, "utc_offset: %r is not an IANA zone" % new)
                new = zone
            if new == zone:
                # Only the zone she is visiting changing its offset: an instant of change.
                before = zone_offset(zone, at - timedelta(seconds=1))
                if before == zone_offset(zone, at):
                    report.fail(where, "utc_offset: %s again, and not at an offset change" % zone)
                if zone == home:
                    report.fail(where, "utc_offset: for the home zone's own DST change")
            zone = new
            utc_offsets.append((s["at"], data["utc_offset_minutes"], new))
            if data["utc_offset_minutes"] != zone_offset(zone, at):
                report.fail(where, "utc_offset: %d is not %s's offset then" % (
                    data["utc_offset_minutes"], zone))
        expected = zone_offset(zone, at)
        if offset_of(s["at"]) != expected:
            report.fail(where, "offset: at %s, %s's offset then is %+d min" % (s["at"], zone, expected))
        local_day = date.fromisoformat(s["at"][:10])
        days.add(local_day)
        if local_day < first_day:
            report.fail(where, "day: %s before the first day" % local_day)
        per_kind[kind] = per_kind.get(kind, 0) + 1
        per_day[local_day] = per_day.get(local_day, 0) + 1
        if kind == "message":
            check_new_id(report, where, kind, data, msg_ids)
            msg_ids.add(data["id"])
            check_stamp(report, where, data["received_at"], at, utc_offsets, home,
                        "message: received after it was heard", "received_at")
        elif kind == "transaction":
            check_new_id(report, where, kind, data, tx_ids)
            tx_ids.add(data["id"])
            check_stamp(report, where, data["time"], at, utc_offsets, home,
                        "transaction: its time is after it was heard", "transaction time")
        elif kind == "event":
            check_new_id(report, where, kind, data, events)
            events[data["id"]] = data
            check_span(report, where, kind, data)
        elif kind == "cancel_event":
            if data["id"] not in events:
                report.fail(where, "cancel_event: %s names no event known before" % data["id"])
            elif data["id"] in cancelled:
                report.fail(where, "cancel_event: %s cancelled twice" % data["id"])
            cancelled.add(data["id"])
        elif kind == "invitation":
            check_new_id(report, where, kind, data, inv_ids)
            inv_ids[data["id"]] = data
            check_span(report, where, kind, data)
        elif kind == "answer":
            item = data.get("signal", "")
            if not item.startswith("invitation:") or item[len("invitation:"):] not in inv_ids:
                report.fail(where, "answer: %s names no invitation heard before" % item)
            else:
                inv = inv_ids[item[len("invitation:"):]]
                if at >= parse_time(inv["start"]):
                    report.fail(where, "answer: after the invitation's event started")
                answered += 1
        elif kind == "sleep_session":
            a, b = parse_time(data["start"]), parse_time(data["end"])
            if b <= a or b > at:
                report.fail(where, "sleep: %s..%s heard at %s" % (data["start"], data["end"], s["at"]))
            for key in ("start", "end"):
                t = parse_time(data[key])
                if offset_of(data[key]) != zone_offset(zone_at_for(utc_offsets, home, t), t):
                    report.fail(where, "offset: sleep %s %s" % (key, data[key]))
        elif kind == "reading":
            if last_reading is not None:
                gap = int((at - last_reading).total_seconds())
                readings_gap[gap] = readings_gap.get(gap, 0) + 1
            last_reading = at
    for d in sorted(per_day):
        if per_day[d] > SCENARIO_SIGNALS_MAX:
            report.fail(str(d), "volume: more signals than a scenario may hold")
    figures = {
        "signals": len(lines), "bytes": total_bytes, "per_kind": per_kind, "days": len(days),
        "per_day_min": min(per_day.values()) if per_day else 0,
        "per_day_max": max(per_day.values()) if per_day else 0,
        "answers": answered, "invitations": len(inv_ids), "utc_offsets": utc_offsets,
        "readings_5min": readings_gap.get(300, 0), "schema_validators": ["check_life's own"] + (
            [jsonschema_used] if jsonschema_used else []),
        "initial": {k: len(v) for k, v in initial.items()},
    }
    return report, figures


def check_new_id(report, where, kind, data, seen):
    """A signal's data id not among those of its kind seen before."""
    if data["id"] in seen:
        report.fail(where, "ids: %s %s twice" % (kind, data["id"]))


def check_stamp(report, where, stamp, at, utc_offsets, home, late, label):
    """A time a signal carries (a message's received_at, a transaction's time): not after the
    signal is heard, and in the offset of where she was at that instant."""
    when = parse_time(stamp)
    if when is not None:
        if when > at:
            report.fail(where, late)
        if offset_of(stamp) != zone_offset(zone_at_for(utc_offsets, home, when), when):
            report.fail(where, "offset: %s %s" % (label, stamp))


def check_span(report, where, kind, data):
    """An event's or invitation's end after its start."""
    if parse_time(data["end"]) <= parse_time(data["start"]):
        report.fail(where, "%s: %s ends before it starts" % (kind, data["id"]))


def zone_at_for(changes, home, instant):
    """Where she was at `instant`, from the utc_offset signals so far (data times precede the
    signal they come in)."""
    zone = home
    for at, _, z in changes:
        if parse_time(at) <= instant:
            zone = z
    return zone


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--schema", default=os.path.join(HERE, "..", "schemas", "scenario.v1.json"))
    p.add_argument("--live", default=os.path.join(HERE, "live.json"))
    args = p.parse_args()
    report, figures = check(args.dir, args.schema, args.live)
    if figures:
        kinds = figures["per_kind"]
        print("%d signals over %d days (%d..%d a day, %.0f on average), %d bytes" % (
            figures["signals"], figures["days"], figures["per_day_min"], figures["per_day_max"],
            figures["signals"] / max(1, figures["days"]), figures["bytes"]))
        print("per kind: " + ", ".join("%s %d" % (k, kinds[k]) for k in sorted(kinds)))
        print("initial: " + ", ".join("%s %d" % (k, v) for k, v in sorted(figures["initial"].items())))
        print("invitations %d, answers naming one %d; readings 5 min after the last: %d" % (
            figures["invitations"], figures["answers"], figures["readings_5min"]))
        for at, minutes, zone in figures["utc_offsets"]:
            print("utc_offset at %s: %+d min, %s" % (at, minutes, zone))
        print("validated by: " + "; ".join(figures["schema_validators"]))
    if report.errors:
        print("FAILED: %d violation(s): %s" % (sum(report.counts.values()), ", ".join(
            "%s %d" % (k, v) for k, v in sorted(report.counts.items()))))
        for e in report.errors:
            print("  " + e)
        sys.exit(1)
    print("ok: no violations")


if __name__ == "__main__":
    main()
