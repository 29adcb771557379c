//! Exact integer rounding, as every agent rounds: no floating point in a reply, every
//! fractional value an exact ratio rounded once, halves away from zero.
//!
//! It owns that one rule. It must not know what is rounded.

/// The rule, written once for each width an agent computes in (an `i64` division is one wasm
/// instruction, an `i128` one a call into compiler-rt: agents that fit `i64` keep it).
macro_rules! half_away {
    ($(#[$doc:meta])* $name:ident: $int:ty) => {
        $(#[$doc])*
        pub fn $name(n: $int, d: $int) -> $int {
            debug_assert!(d > 0);
            let (q, r) = (n / d, n % d);
            if 2 * r.abs() >= d { q + n.signum() } else { q }
        }
    };
}

half_away!(
    /// `n / d` rounded to the nearest integer, halves away from zero. `d` must be positive.
    div_round_half_away: i128
);

half_away!(
    /// [`div_round_half_away`] of `i64`s: the same rule in the width most agents compute in.
    div_round: i64
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_halves_away_from_zero() {
        assert_eq!(div_round_half_away(7, 2), 4); // 3.5 → 4
        assert_eq!(div_round_half_away(-7, 2), -4); // -3.5 → -4
        assert_eq!(div_round_half_away(10, 3), 3); // 3.33 → 3
        assert_eq!(div_round_half_away(11, 3), 4); // 3.67 → 4
        assert_eq!(div_round_half_away(-11, 3), -4);
        assert_eq!(div_round_half_away(0, 5), 0);
    }

    #[test]
    fn the_i64_rounding_is_the_same_rule() {
        // From wellness' ratios: 1.67, -1.67, 1.33, -1.33, 0, -0.33.
        assert_eq!(div_round(5, 3), 2);
        assert_eq!(div_round(-5, 3), -2);
        assert_eq!(div_round(4, 3), 1);
        assert_eq!(div_round(-4, 3), -1);
        assert_eq!(div_round(0, 9), 0);
        assert_eq!(div_round(-1, 3), 0);
        for (n, d) in [
            (7, 2),
            (-7, 2),
            (10, 3),
            (11, 3),
            (-11, 3),
            (0, 5),
            (-3, 2),
            (i64::MAX, 1),
        ] {
            assert_eq!(
                i128::from(div_round(n, d)),
                div_round_half_away(i128::from(n), i128::from(d))
            );
        }
    }
}
