"""The wellness agent's tick: proposes `stress_score` for new readings, `suggest_break` when the
stress is high during a working day, and `sleep_summary` in the morning. The rules, signals,
priorities, surfaces and call_id seeds are the Rust agent's (`tick.rs`), so both propose the
very same calls; the context is read leniently and no clock is read."""

import aura_sdk
from aura_sdk import ToolError
from aura_sdk.hours import ProfileHours
from aura_sdk.time import (MINUTES_PER_DAY, SECS_PER_MINUTE, format_date, minutes_floor,
                           offset_minutes_of, parse_hh_mm, try_parse_time, weekday_of_day)

from . import breaks, sleep, stress
from .common import LEVEL_HIGH_MIN, level as level_of

AGENT = "wellness"
TICK_BREAK_MIN_SCORE = LEVEL_HIGH_MIN
DEFAULT_BASELINES = {"hrv_ms": 50, "resting_hr_bpm": 60, "sleep_minutes": 480}
MORNING = (6 * 60, 10 * 60)


def tick(context: dict) -> dict:
    now_text = context.get("now")
    if not isinstance(now_text, str):
        raise ToolError.invalid_args("tick context: `now` must be an RFC 3339 string")
    now = aura_sdk.time.parse_time(now_text, "tick context: now")
    offset = context.get("utc_offset_minutes")
    if offset is None:
        offset = 0
    else:
        offset = offset_minutes_of(offset)
        if offset is None:
            raise ToolError.invalid_args(
                "tick context: `utc_offset_minutes` must be an integer in -840..840")
    local_minute = minutes_floor(now) + offset
    today = local_minute // MINUTES_PER_DAY
    date = format_date(today)
    profile = context.get("profile") if isinstance(context.get("profile"), dict) else None

    proposals = []
    stressed = stress_proposal(context, profile, now_text, date)
    if stressed is not None:
        proposal, score = stressed
        proposals.append(proposal)
        if score >= TICK_BREAK_MIN_SCORE:
            brk = break_proposal(context, profile, now_text, now, offset, score)
            if brk is not None:
                proposals.append(brk)
    if MORNING[0] <= local_minute % MINUTES_PER_DAY < MORNING[1]:
        slept = sleep_proposal(context, now_text, now, offset, date)
        if slept is not None:
            proposals.append(slept)
    return {"proposals": proposals}


def proposed_call(seed, tool, args, now, surface):
    call = aura_sdk.tool_call(seed, AGENT, tool, args, now)
    call["expected_surface"] = surface
    return call


def int_in(obj, key, bounds):
    if not isinstance(obj, dict):
        return None
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if bounds[0] <= value <= bounds[1] else None


def stress_proposal(context, profile, now_text, date):
    raw = context.get("readings") if isinstance(context.get("readings"), dict) else None
    fields = (("hrv_ms", stress.HRV_MS), ("resting_hr_bpm", stress.RESTING_HR_BPM),
              ("sleep_minutes", stress.SLEEP_MINUTES))
    signals, readings = [], {}
    for key, bounds in fields:
        value = int_in(raw, key, bounds)
        if value is None:
            if raw is not None and raw.get(key) is not None:
                signals.append(f"dropped:{key}")
        else:
            readings[key] = value
    if not readings:
        return None
    heart_dropped = any(s in ("dropped:hrv_ms", "dropped:resting_hr_bpm") for s in signals)
    if heart_dropped and "hrv_ms" not in readings and "resting_hr_bpm" not in readings:
        return None

    base = profile.get("baselines") if profile is not None else None
    baselines = {}
    for key, bounds in (("hrv_ms", stress.HRV_MS), ("resting_hr_bpm", stress.RESTING_HR_BPM),
                        ("sleep_minutes", stress.SLEEP_BASELINE_MINUTES)):
        value = int_in(base, key, bounds)
        if value is None:
            signals.append(f"baseline_default:{key}")
            value = DEFAULT_BASELINES[key]
        baselines[key] = value
    args = {"readings": readings, "baselines": baselines}
    result = stress.stress_score(args)

    names = {"hrv": "hrv_drop_pct", "resting_hr": "rhr_rise_bpm", "sleep": "sleep_short_min"}
    every = [f"stress:{result['score']}", f"level:{result['level']}"]
    every += [f"{names[f['factor']]}:{f['deviation']}" for f in result["factors"]]
    every += [f"missing:{m}" for m in result["missing"]]
    every += signals

    def show(key):
        return str(readings[key]) if key in readings else "-"

    seed = (f"wellness/tick\nstress_score\n{date}\n"
            f"{show('hrv_ms')},{show('resting_hr_bpm')},{show('sleep_minutes')}\n"
            f"{baselines['hrv_ms']},{baselines['resting_hr_bpm']},{baselines['sleep_minutes']}")
    surface = "SILENT" if result["level"] == "low" else "WATCH"
    call = proposed_call(seed, "stress_score", args, now_text, surface)
    return aura_sdk.proposal(call, every, result["score"] // 2), result["score"]


def break_proposal(context, profile, now_text, now, offset, score):
    hours = ProfileHours.read(profile.get("working_hours")) if profile is not None else None
    if hours is None:
        return None
    today = (minutes_floor(now) + offset) // MINUTES_PER_DAY
    if not hours.works_on(weekday_of_day(today)):
        return None
    day_end = (today * MINUTES_PER_DAY - offset + hours.end_min) * SECS_PER_MINUTE
    if now >= day_end:
        return None
    events = context.get("events") if isinstance(context.get("events"), list) else []
    busy = today_busy(events, now, day_end)
    args = {"stress": {"score": score, "level": level_of(score)}, "busy": busy,
            "working_hours": hours.day(), "now": now_text, "utc_offset_minutes": offset,
            "min_break_minutes": breaks.DEFAULT_MIN_BREAK_MINUTES}
    # The tool's own checks, so a proposal is always a call it accepts (nothing is asked).
    breaks.free_slots_call(args)
    seed = f"wellness/tick\nsuggest_break\n{aura_sdk.canonical(args)}"
    call = proposed_call(seed, "suggest_break", args, now_text, "WATCH")
    return aura_sdk.proposal(call, [f"stress:{score}", f"busy:{len(busy)}"], 40 + score // 2)


def spans_of(items):
    """(index, start, end, start text, end text) of the items with RFC 3339 start and end."""
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        start_text, end_text = item.get("start"), item.get("end")
        if not isinstance(start_text, str) or not isinstance(end_text, str):
            continue
        start, end = try_parse_time(start_text), try_parse_time(end_text)
        if start is not None and end is not None:
            yield i, start, end, start_text, end_text


def today_busy(events, now, day_end):
    usable = [(i, start, {"start": st, "end": et}) for i, start, end, st, et in spans_of(events)
              if end > start and end > now and start < day_end]
    if len(usable) > breaks.BUSY_MAX:
        usable.sort(key=lambda u: (u[1], u[0]))
        usable = sorted(usable[:breaks.BUSY_MAX], key=lambda u: u[0])
    return [span for _, _, span in usable]


def sleep_proposal(context, now_text, now, offset, date):
    raw = context.get("sleep_sessions")
    if not isinstance(raw, list):
        return None
    usable = [(i, end, {"start": st, "end": et}) for i, start, end, st, et in spans_of(raw)
              if end > start and end <= now
              and minutes_floor(end) - minutes_floor(start) <= sleep.MAX_SESSION_MINUTES]
    if not usable:
        return None
    if len(usable) > sleep.MAX_SESSIONS:
        usable.sort(key=lambda u: (-u[1], u[0]))
        usable = sorted(usable[:sleep.MAX_SESSIONS], key=lambda u: u[0])
    args = {"sessions": [s for _, _, s in usable], "target_minutes": sleep.DEFAULT_TARGET_MINUTES,
            "utc_offset_minutes": offset, "nights": sleep.DEFAULT_NIGHTS, "now": now_text}
    result = sleep.sleep_summary(args)
    last = result["nights"][-1]["minutes"] if result["nights"] else 0
    # Last night not synced yet: nothing to tell about it.
    if result["nights_with_sleep"] == 0 or last == 0:
        return None
    debt = result["sleep_debt_minutes"]
    signals = [f"sleep_debt_min:{debt}", f"last_night_min:{last}",
               f"nights_with_sleep:{result['nights_with_sleep']}/{len(result['nights'])}"]
    seed = f"wellness/tick\nsleep_summary\n{date}"
    call = proposed_call(seed, "sleep_summary", args, now_text, "PHONE_CARD")
    return aura_sdk.proposal(call, signals, 20 + min(40, debt // 30))
