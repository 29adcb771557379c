"""What the wellness tools share: stress levels and the split of a total into parts (see the
Rust agent's `common.rs`: the same rules, the same answers). Rounding is the SDK's
(`aura_sdk.round`)."""

LEVEL_MODERATE_MIN = 30
LEVEL_HIGH_MIN = 60
SCORE_MAX = 100


def level(score: int) -> str:
    """low below 30, moderate 30..59, high from 60."""
    if score >= LEVEL_HIGH_MIN:
        return "high"
    if score >= LEVEL_MODERATE_MIN:
        return "moderate"
    return "low"


def largest_remainder(numerators, den: int, target: int):
    """Splits Σ numerators/den into integer parts adding up to `target`: each part floored,
    the units missing given to the largest remainders (ties: the earlier)."""
    parts = [n // den for n in numerators]
    missing = target - sum(parts)
    order = sorted(range(len(numerators)), key=lambda i: -(numerators[i] % den))
    for i in order[: max(missing, 0)]:
        parts[i] += 1
    return parts
