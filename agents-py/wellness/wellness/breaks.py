"""`suggest_break`: a short break in the earliest free slot that fits, sized by stress, in the
free time the caller gives, else asked of `calendar.find_free_slots` through the host. The rules are the Rust agent's
(`breaks.rs`, and `schemas/wellness/suggest_break.*.json`): tiers by score (below 40 none;
breathing 5, stretch 10, walk 15 minutes), preferred kinds that fit, one agent-to-agent call
for the rest of today's working day, placement in whole minutes, four fixed reasons. Only
`suggest_break` calls the host; the rest are pure functions."""

import aura_sdk
from aura_sdk import ToolError, quoted, check_len, check_range
from aura_sdk.time import (MINUTES_PER_DAY, SECS_PER_MINUTE, check_offset, format_hh_mm,
                           format_time, minutes_ceil, minutes_floor, parse_hh_mm, parse_time,
                           weekday_of_day)

from .common import SCORE_MAX, level as level_of

FREE_SLOTS_AGENT = "calendar"
FREE_SLOTS_TOOL = "find_free_slots"
BUSY_MAX = 500
MAX_SLOTS = 100
FREE_SLOT_MINUTES_MIN = 5
FREE_SLOTS_HORIZON_DAYS = 1
FREE_SLOTS_DEADLINE_MS = 300
BREAK_MIN_SCORE = 40
BREAK_TIERS = ((80, 15, "walk"), (60, 10, "stretch"), (BREAK_MIN_SCORE, 5, "breathing"))
MIN_BREAK_MINUTES = (1, 60)
DEFAULT_MIN_BREAK_MINUTES = 5
KIND_MIN_MINUTES = {"breathing": 2, "stretch": 5, "walk": 10}
PHRASES = {"walk": "walk", "breathing": "breathing exercise", "stretch": "stretch"}
MAX_REASON_CHARS = 200
FREE_SLOTS_UNAVAILABLE = "free slots unavailable"


def suggest_break(args: dict) -> dict:
    call = free_slots_call(args)
    if call is None:
        free_slots = []
    elif "free_slots" in args:
        # The caller knows today's free time (calendar, placing a break after its event):
        # calendar is not asked back.
        free_slots = args["free_slots"]
    else:
        free_slots = free_slots_from_answer(aura_sdk.call(call))
    return place_break(args["stress"], free_slots, args["now"], args["utc_offset_minutes"],
                       args.get("min_break_minutes", DEFAULT_MIN_BREAK_MINUTES),
                       args.get("preferred_kinds", []))


def free_slots_call(args: dict):
    """The envelope of the call to calendar.find_free_slots, or None when stress earns no
    break; every arg checked first."""
    stress = args["stress"]
    offset = args["utc_offset_minutes"]
    check_request(stress, offset, args.get("min_break_minutes", DEFAULT_MIN_BREAK_MINUTES),
                  args.get("preferred_kinds", []))
    now = parse_time(args["now"], "now")
    busy = args.get("busy", [])
    check_len(busy, "busy", BUSY_MAX)
    for i, span in enumerate(busy):
        check_span(span["start"], span["end"], f"busy[{i}]")
    hours = args["working_hours"]
    aura_sdk.hours.check_span(hours["start"], hours["end"], "working_hours")
    if tier(stress["score"]) is None:
        return None
    today = (minutes_floor(now) + offset) // MINUTES_PER_DAY
    find_args = {
        "busy": [{"start": span["start"], "end": span["end"]} for span in busy],
        "working_hours": {"start": hours["start"], "end": hours["end"],
                          "weekdays": [weekday_of_day(today)]},
        "utc_offset_minutes": offset,
        "duration_minutes": FREE_SLOT_MINUTES_MIN,
        "from": args["now"],
        "horizon_days": FREE_SLOTS_HORIZON_DAYS,
        "max_slots": MAX_SLOTS,
    }
    seed = f"wellness/suggest_break\n{args['now']}\n{aura_sdk.canonical(find_args)}"
    return aura_sdk.tool_call(seed, FREE_SLOTS_AGENT, FREE_SLOTS_TOOL, find_args, args["now"],
                              deadline_ms=FREE_SLOTS_DEADLINE_MS)


def free_slots_from_answer(answer) -> list:
    """The slots of calendar's result.v1, or `failed` saying why there are none."""
    ok = answer.get("ok") if isinstance(answer, dict) else None
    if ok is True:
        result = answer.get("result")
        slots = result.get("slots") if isinstance(result, dict) else None
        if not isinstance(slots, list) or not all(
                isinstance(s, dict) and isinstance(s.get("start"), str)
                and isinstance(s.get("end"), str) for s in slots):
            why = "ok without `result`" if result is None else "no list of {start, end} slots"
            raise ToolError.failed(
                f"{FREE_SLOTS_UNAVAILABLE}: {FREE_SLOTS_AGENT}.{FREE_SLOTS_TOOL} answered an "
                f"unreadable result: {why}")
        if len(slots) > MAX_SLOTS:
            raise ToolError.failed(
                f"{FREE_SLOTS_UNAVAILABLE}: {FREE_SLOTS_AGENT}.{FREE_SLOTS_TOOL} answered "
                f"{len(slots)} slots, more than the {MAX_SLOTS} asked for")
        return [{"start": s["start"], "end": s["end"]} for s in slots]
    if ok is False:
        error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
        kind = error.get("kind") if isinstance(error.get("kind"), str) else "unknown"
        message = error.get("message") if isinstance(error.get("message"), str) else ""
        raise ToolError.failed(f"{FREE_SLOTS_UNAVAILABLE}: {kind}: {message}")
    raise ToolError.failed(
        f"{FREE_SLOTS_UNAVAILABLE}: the host's answer is not a result.v1 (no boolean `ok`)")


def place_break(stress, free_slots, now_text, offset, min_break_minutes, preferred_kinds):
    score = stress["score"]
    level = check_request(stress, offset, min_break_minutes, preferred_kinds)
    check_len(free_slots, "free_slots", MAX_SLOTS)
    now = minutes_ceil(parse_time(now_text, "now"))
    usable = []
    for i, slot in enumerate(free_slots):
        start, end = check_span(slot["start"], slot["end"], f"free_slots[{i}]")
        usable.append((max(minutes_ceil(start), now), minutes_floor(end)))

    def none(wanted, why):
        return {"status": "none", "stress_score": score, "level": level, "wanted_minutes": wanted,
                "none_reason": why, "reason": reason_text(level, score, wanted, why, None)}

    found = tier(score)
    if found is None:
        return none(0, "stress_low")
    minutes, tier_kind = found
    wanted = max(minutes, min_break_minutes)
    kind = next((k for k in preferred_kinds if KIND_MIN_MINUTES[k] <= wanted), tier_kind)
    fitting = [(start, end) for start, end in usable if end - start >= wanted]
    if not fitting:
        any_left = any(end > start for start, end in usable)
        return none(wanted, "no_slot_long_enough" if any_left else "no_free_slot")
    # min keeps the first of equal keys: ties go to the earlier slot.
    start = min(fitting, key=lambda span: span[0])[0]
    return {
        "status": "suggested", "stress_score": score, "level": level, "wanted_minutes": wanted,
        "break": {"start": format_time(start * SECS_PER_MINUTE, offset),
                  "end": format_time((start + wanted) * SECS_PER_MINUTE, offset),
                  "minutes": wanted, "kind": kind},
        "reason": reason_text(level, score, wanted, None, (kind, start + offset)),
    }


def tier(score: int):
    for least, minutes, kind in BREAK_TIERS:
        if score >= least:
            return minutes, kind
    return None


def check_request(stress, offset, min_break_minutes, preferred_kinds) -> str:
    score = stress["score"]
    check_range(score, "stress.score", 0, SCORE_MAX)
    level = level_of(score)
    given = stress.get("level")
    if given is not None and given != level:
        raise ToolError.invalid_args(
            f'stress.level: "{given}" does not match score {score} (which is "{level}")')
    check_offset(offset, "utc_offset_minutes")
    check_range(min_break_minutes, "min_break_minutes", *MIN_BREAK_MINUTES)
    check_len(preferred_kinds, "preferred_kinds", len(KIND_MIN_MINUTES))
    for i, kind in enumerate(preferred_kinds):
        if kind in preferred_kinds[:i]:
            raise ToolError.invalid_args(f"preferred_kinds[{i}]: {kind.capitalize()} is listed twice")
    return level


def check_span(start_text, end_text, field):
    start = parse_time(start_text, f"{field}.start")
    end = parse_time(end_text, f"{field}.end")
    if end <= start:
        raise ToolError.invalid_args(f"{field}: end {quoted(end_text)} must be after start {quoted(start_text)}")
    return start, end


def reason_text(level, score, minutes, none_reason, placed) -> str:
    if placed is not None:
        kind, local_start = placed
        text = (f"Stress is {level} ({score}/100). Take a {minutes}-minute {PHRASES[kind]} at "
                f"{format_hh_mm(local_start)}.")
    elif none_reason == "stress_low":
        text = f"Stress is {level} ({score}/100): no break needed right now."
    elif none_reason == "no_free_slot":
        text = (f"Stress is {level} ({score}/100), but no free time is left today. "
                "Try a minute of slow breathing where you are.")
    else:
        text = (f"Stress is {level} ({score}/100), but no free gap of {minutes} minutes is left "
                "today. Try a minute of slow breathing where you are.")
    return text[:MAX_REASON_CHARS]
