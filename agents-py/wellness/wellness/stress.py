"""`stress_score`: a 0..100 stress score from today's readings against the user's baselines,
with every factor's share spelled out. The rules are the Rust agent's (`stress.rs`, and
`schemas/wellness/stress_score.*.json`): three factors (HRV drop in percent, resting-HR rise in
bpm, sleep shortfall in minutes), each mapped by a clamped linear ramp to a 0..100 sub-score,
weighted 500/300/200 per mille over the factors present; no floating point."""

from aura_sdk import ToolError, check_range

from aura_sdk.round import div_round

from .common import largest_remainder, level

HRV_MS = (1, 300)
RESTING_HR_BPM = (25, 220)
SLEEP_MINUTES = (0, 1440)
SLEEP_BASELINE_MINUTES = (60, 1440)
WEIGHT_HRV_PERMILLE = 500
WEIGHT_RHR_PERMILLE = 300
WEIGHT_SLEEP_PERMILLE = 200
PERMILLE = 1000
HRV_DROP_PCT = (10, 50)
RHR_RISE_BPM = (2, 12)
SLEEP_SHORT_MINUTES = (30, 210)


def ramp(num: int, den: int, zero_full) -> int:
    """The sub-score of the exact deviation num/den: 0 up to `zero`, 100 from `full` on."""
    zero, full = zero_full
    return max(0, min(100, div_round(100 * (num - zero * den), (full - zero) * den)))


def stress_score(args: dict) -> dict:
    readings, baselines = args["readings"], args["baselines"]
    check_range(baselines["hrv_ms"], "baselines.hrv_ms", *HRV_MS)
    if "hrv_ms" in readings:
        check_range(readings["hrv_ms"], "readings.hrv_ms", *HRV_MS)
    check_range(baselines["resting_hr_bpm"], "baselines.resting_hr_bpm", *RESTING_HR_BPM)
    if "resting_hr_bpm" in readings:
        check_range(readings["resting_hr_bpm"], "readings.resting_hr_bpm", *RESTING_HR_BPM)
    check_range(baselines["sleep_minutes"], "baselines.sleep_minutes", *SLEEP_BASELINE_MINUTES)
    if "sleep_minutes" in readings:
        check_range(readings["sleep_minutes"], "readings.sleep_minutes", *SLEEP_MINUTES)

    hrv, rhr, sleep = (readings.get(k) for k in ("hrv_ms", "resting_hr_bpm", "sleep_minutes"))
    raw = [
        ("hrv", hrv, baselines["hrv_ms"], 100 * (baselines["hrv_ms"] - (hrv or 0)),
         baselines["hrv_ms"], "percent_drop", HRV_DROP_PCT, WEIGHT_HRV_PERMILLE),
        ("resting_hr", rhr, baselines["resting_hr_bpm"], (rhr or 0) - baselines["resting_hr_bpm"],
         1, "bpm_rise", RHR_RISE_BPM, WEIGHT_RHR_PERMILLE),
        ("sleep", sleep, baselines["sleep_minutes"], baselines["sleep_minutes"] - (sleep or 0),
         1, "minutes_short", SLEEP_SHORT_MINUTES, WEIGHT_SLEEP_PERMILLE),
    ]
    missing = [f[0] for f in raw if f[1] is None]
    present = [f for f in raw if f[1] is not None]
    if not present:
        raise ToolError.invalid_args(
            "readings: give at least one of hrv_ms, resting_hr_bpm, sleep_minutes")

    subs = [ramp(f[3], f[4], f[6]) for f in present]
    total_weight = sum(f[7] for f in present)
    weighted = [f[7] * sub for f, sub in zip(present, subs)]
    score = div_round(sum(weighted), total_weight)
    contributions = largest_remainder(weighted, total_weight, score)
    weights = largest_remainder([f[7] * PERMILLE for f in present], total_weight, PERMILLE)
    factors = [
        {"factor": f[0], "reading": f[1], "baseline": f[2], "deviation": div_round(f[3], f[4]),
         "deviation_unit": f[5], "sub_score": subs[i], "weight_permille": weights[i],
         "contribution": contributions[i]}
        for i, f in enumerate(present)
    ]
    score = max(0, min(100, score))
    return {"score": score, "level": level(score), "factors": factors, "missing": missing}
