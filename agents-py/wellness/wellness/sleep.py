"""`sleep_summary`: nightly sleep, sleep debt and bedtime consistency over a window of nights.
The rules are the Rust agent's (`sleep.rs`, and `schemas/wellness/sleep_summary.*.json`):
sessions in whole minutes, overlapping ones merged, a night D collects the blocks ending between
18:00 local on D−1 and 18:00 on D, debt without carrying surplus, bedtimes unwrapped at their
largest gap on the clock's circle. It invents no sleep and reads no clock."""

import math

from aura_sdk import ToolError, quoted, check_len, check_range
from aura_sdk.time import (MINUTES_PER_DAY, check_offset, format_date, format_hh_mm,
                           minutes_floor, parse_time)

from aura_sdk.round import div_round

MAX_SESSIONS = 100
MAX_SESSION_MINUTES = 1440
NIGHTS = (1, 31)
DEFAULT_NIGHTS = 7
TARGET_MINUTES = (60, 1440)
DEFAULT_TARGET_MINUTES = 480
NIGHT_BOUNDARY_MINUTE = 18 * 60


def sleep_summary(args: dict) -> dict:
    sessions = args.get("sessions", [])
    target_minutes = args.get("target_minutes", DEFAULT_TARGET_MINUTES)
    offset = args["utc_offset_minutes"]
    window = args.get("nights", DEFAULT_NIGHTS)
    check_len(sessions, "sessions", MAX_SESSIONS)
    check_range(target_minutes, "target_minutes", *TARGET_MINUTES)
    check_offset(offset, "utc_offset_minutes")
    check_range(window, "nights", *NIGHTS)
    now = parse_time(args["now"], "now")

    spans = []
    for i, session in enumerate(sessions):
        field = f"sessions[{i}]"
        start = parse_time(session["start"], f"{field}.start")
        end = parse_time(session["end"], f"{field}.end")
        if end <= start:
            raise ToolError.invalid_args(
                f"{field}: end {quoted(session['end'])} must be after start {quoted(session['start'])}")
        if end > now:
            raise ToolError.invalid_args(f"{field}.end: {quoted(session['end'])} is after now {quoted(args['now'])}")
        start, end = minutes_floor(start), minutes_floor(end)
        if end - start > MAX_SESSION_MINUTES:
            raise ToolError.invalid_args(
                f"{field}: lasts {end - start} minutes, more than {MAX_SESSION_MINUTES}")
        spans.append((start, end))
    blocks = merge(spans)
    merged_sessions = len(sessions) - len(blocks)

    def night_of(minute):
        return (minute + offset + MINUTES_PER_DAY - NIGHT_BOUNDARY_MINUTE) // MINUTES_PER_DAY

    last_night = (minutes_floor(now) + offset) // MINUTES_PER_DAY
    first_night = last_night - window + 1
    # Per night of the window: [minutes, blocks, longest block].
    per_night = [[0, 0, None] for _ in range(window)]
    ignored_sessions = 0
    for start, end in blocks:
        night = night_of(end)
        if night < first_night or night > last_night:
            ignored_sessions += 1
            continue
        slot = per_night[night - first_night]
        length = end - start
        slot[0] += length
        slot[1] += 1
        # Blocks come in start order: on a tie the earlier block stays.
        if slot[2] is None or length > slot[2][1] - slot[2][0]:
            slot[2] = (start, end)

    nights, bedtimes = [], []
    debt = surplus = total = 0
    for i, (minutes, count, longest) in enumerate(per_night):
        night = {"date": format_date(first_night + i), "minutes": minutes, "sessions": count,
                 "shortfall_minutes": max(target_minutes - minutes, 0)}
        if minutes > 0 and longest is not None:
            bedtimes.append((longest[0] + offset) % MINUTES_PER_DAY)
            night["bedtime"] = format_hh_mm(longest[0] + offset)
            night["wake_time"] = format_hh_mm(longest[1] + offset)
        debt += max(target_minutes - minutes, 0)
        surplus += max(minutes - target_minutes, 0)
        total += minutes
        nights.append(night)

    result = {"nights": nights, "target_minutes": target_minutes, "sleep_debt_minutes": debt,
              "surplus_minutes": surplus, "average_minutes": div_round(total, window),
              "nights_with_sleep": len(bedtimes), "merged_sessions": merged_sessions,
              "ignored_sessions": ignored_sessions}
    stats = bedtime_stats(bedtimes)
    if stats is not None:
        mean, sd = stats
        result["bedtime_mean"] = format_hh_mm(mean)
        if sd is not None:
            result["bedtime_sd_minutes"] = sd
    return result


def merge(spans):
    """Overlapping or touching (start, end) spans merged, in start order."""
    merged = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def bedtime_stats(minutes_of_day):
    """(mean, population sd or None below 2) of clock times, cut at their largest gap."""
    if not minutes_of_day:
        return None
    v = sorted(minutes_of_day)
    n = len(v)
    # The gap across midnight, from the last round to the first, wins ties.
    best_gap = v[0] + MINUTES_PER_DAY - v[-1]
    cut_after = None
    for k in range(n - 1):
        gap = v[k + 1] - v[k]
        if gap > best_gap:
            best_gap, cut_after = gap, k
    if cut_after is not None:
        for k in range(cut_after + 1):
            v[k] += MINUTES_PER_DAY
    total = sum(v)
    mean = div_round(total, n) % MINUTES_PER_DAY
    if n < 2:
        return mean, None
    # sd = √(n·Σx² − (Σx)²)/n, rounded half up as ⌊(⌊√(4·that)⌋ + n) / (2n)⌋.
    scaled = n * sum(x * x for x in v) - total * total
    root = math.isqrt(max(4 * scaled, 0))
    return mean, (root + n) // (2 * n)
