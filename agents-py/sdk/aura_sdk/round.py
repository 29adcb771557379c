"""Exact integer rounding, as every agent rounds (the Rust SDK's `aura_sdk::round`): an exact
ratio rounded once, halves away from zero."""


def div_round(num: int, den: int) -> int:
    """num/den rounded to the nearest integer, halves away from zero (den > 0)."""
    q, r = divmod(num, den)
    if 2 * r > den or (2 * r == den and num >= 0):
        return q + 1
    return q
