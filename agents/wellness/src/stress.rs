//! `stress_score`: a 0..100 stress score from today's physiological readings against the user's
//! baselines, with every factor's share spelled out.
//!
//! Rules (also stated in `schemas/wellness/stress_score.*.json`):
//! - Three factors, each a deviation from the user's baseline, in whole units:
//!   - `hrv`: heart-rate variability (RMSSD) drop in percent, `100·(baseline − reading) /
//!     baseline` (negative when HRV is above baseline);
//!   - `resting_hr`: resting heart-rate rise in bpm, `reading − baseline`;
//!   - `sleep`: sleep shortfall in minutes, `baseline − reading` (negative for a long night).
//! - Each deviation maps to a sub-score 0..100 by a clamped piecewise-linear ramp: 0 up to the
//!   factor's dead-zone edge `zero`, 100 from `full` on, linear in between:
//!   `sub = clamp(round(100·(deviation − zero) / (full − zero)), 0, 100)`, computed from the
//!   exact (unrounded) deviation. The breakpoints are [`HRV_DROP_PCT`] (10 %, 50 %),
//!   [`RHR_RISE_BPM`] (2, 12 bpm) and [`SLEEP_SHORT_MINUTES`] (30, 210 minutes).
//! - Nominal weights, in per-mille so they stay exact: HRV 500, resting HR 300, sleep 200
//!   ([`WEIGHT_HRV_PERMILLE`] …). A reading that is absent drops out and the weights of the
//!   present factors are renormalized: `score = round(Σ wᵢ·subᵢ / Σ wᵢ)` over present factors.
//!   With no reading at all the call is `invalid_args`.
//! - Reported per factor: reading, baseline, deviation (rounded), sub-score, the effective
//!   weight in per-mille (renormalized, split by largest remainder so they add up to exactly
//!   1000) and the contribution in score points (`wᵢ·subᵢ / Σ wᵢ`, split by largest remainder
//!   so the contributions add up to exactly the score).
//! - `level`: low below 30, moderate 30..59, high from 60 (see [`crate::common::Level`]).
//!
//! This module must not guess a missing baseline (the tick supplies documented defaults, the
//! tool requires all three) and must not use floating point.

use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};

use aura_sdk::args::check_range;

use aura_sdk::round::div_round;

use crate::common::{Level, largest_remainder};

/// Plausible RMSSD range in whole milliseconds (below 1 is a sensor fault, above 300 is not an
/// adult at rest).
pub const HRV_MS: (u32, u32) = (1, 300);
/// Plausible resting heart rate in bpm (elite athletes ~30, tachycardia at rest tops out ~200).
pub const RESTING_HR_BPM: (u32, u32) = (25, 220);
/// Sleep reading in minutes: 0 up to a whole day.
pub const SLEEP_MINUTES: (u32, u32) = (0, 1440);
/// Sleep baseline in minutes: a usual night of less than an hour is not a baseline.
pub const SLEEP_BASELINE_MINUTES: (u32, u32) = (60, 1440);

/// Weight of the HRV factor, per mille: HRV drop is the most specific marker of acute load.
pub const WEIGHT_HRV_PERMILLE: i64 = 500;
/// Weight of the resting-heart-rate factor, per mille: a rise is telling but also follows
/// caffeine, heat and illness.
pub const WEIGHT_RHR_PERMILLE: i64 = 300;
/// Weight of the sleep factor, per mille: short sleep raises stress reactivity, but one night
/// says less than the two cardiac markers.
pub const WEIGHT_SLEEP_PERMILLE: i64 = 200;
/// The whole, per mille.
pub const PERMILLE: i64 = 1000;

/// HRV drop (percent of baseline) where the sub-score starts rising and where it reaches 100:
/// day-to-day RMSSD varies by about ±10 %; half the baseline gone is a strong signal.
pub const HRV_DROP_PCT: (i64, i64) = (10, 50);
/// Resting-HR rise (bpm) where the sub-score starts rising and where it reaches 100: ±2 bpm is
/// day-to-day noise; a rise of 12 bpm is a marked strain (or illness) signal.
pub const RHR_RISE_BPM: (i64, i64) = (2, 12);
/// Sleep shortfall (minutes) where the sub-score starts rising and where it reaches 100: half
/// an hour short is ordinary; three and a half hours short is a bad night.
pub const SLEEP_SHORT_MINUTES: (i64, i64) = (30, 210);

/// The user's readings; any may be absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Readings {
    /// Heart-rate variability, RMSSD in whole ms (1..300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hrv_ms: Option<u32>,
    /// Resting heart rate in bpm (25..220).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resting_hr_bpm: Option<u32>,
    /// Last night's sleep in minutes (0..1440).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sleep_minutes: Option<u32>,
}

/// The user's usual values.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Baselines {
    /// Usual RMSSD in whole ms (1..300).
    pub hrv_ms: u32,
    /// Usual resting heart rate in bpm (25..220).
    pub resting_hr_bpm: u32,
    /// Usual sleep per night in minutes (60..1440).
    pub sleep_minutes: u32,
}

/// Args of `stress_score`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StressScoreArgs {
    /// Today's readings (at least one).
    pub readings: Readings,
    /// The user's baselines.
    pub baselines: Baselines,
}

/// The three factors, in the order they are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FactorName {
    Hrv,
    RestingHr,
    Sleep,
}

impl FactorName {
    /// The name as it appears in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            FactorName::Hrv => "hrv",
            FactorName::RestingHr => "resting_hr",
            FactorName::Sleep => "sleep",
        }
    }
}

/// What a factor's deviation measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviationUnit {
    /// Percent of the baseline HRV lost.
    PercentDrop,
    /// Beats per minute above the baseline.
    BpmRise,
    /// Minutes of sleep below the baseline.
    MinutesShort,
}

/// One factor's share of the score.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Factor {
    pub factor: FactorName,
    /// The reading as given.
    pub reading: u32,
    /// The baseline as given.
    pub baseline: u32,
    /// Deviation from the baseline, rounded half away from zero; positive means more stress.
    pub deviation: i64,
    pub deviation_unit: DeviationUnit,
    /// 0..100 from the ramp.
    pub sub_score: i64,
    /// Effective (renormalized) weight, per mille; the present factors' weights add up to 1000.
    pub weight_permille: i64,
    /// Score points from this factor; the contributions add up to the score.
    pub contribution: i64,
}

/// Result of `stress_score`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StressScoreResult {
    /// 0..100.
    pub score: u32,
    pub level: Level,
    /// The present factors, in the order hrv, resting_hr, sleep.
    pub factors: Vec<Factor>,
    /// The factors left out for lack of a reading, same order.
    pub missing: Vec<FactorName>,
}

/// Computes the stress score. See the module documentation for the rules.
pub fn stress_score(args: StressScoreArgs) -> ToolResult<StressScoreResult> {
    let StressScoreArgs {
        readings,
        baselines,
    } = args;
    let (lo, hi) = HRV_MS;
    check_range(baselines.hrv_ms, "baselines.hrv_ms", lo, hi)?;
    if let Some(r) = readings.hrv_ms {
        check_range(r, "readings.hrv_ms", lo, hi)?;
    }
    let (lo, hi) = RESTING_HR_BPM;
    check_range(baselines.resting_hr_bpm, "baselines.resting_hr_bpm", lo, hi)?;
    if let Some(r) = readings.resting_hr_bpm {
        check_range(r, "readings.resting_hr_bpm", lo, hi)?;
    }
    let (lo, hi) = SLEEP_BASELINE_MINUTES;
    check_range(baselines.sleep_minutes, "baselines.sleep_minutes", lo, hi)?;
    if let Some(r) = readings.sleep_minutes {
        let (lo, hi) = SLEEP_MINUTES;
        check_range(r, "readings.sleep_minutes", lo, hi)?;
    }

    /// One factor before scoring: its deviation is the exact ratio `num / den` (den > 0).
    struct Raw {
        name: FactorName,
        reading: Option<u32>,
        baseline: u32,
        num: i64,
        den: i64,
        unit: DeviationUnit,
        ramp: (i64, i64),
        weight: i64,
    }
    let raw = [
        Raw {
            name: FactorName::Hrv,
            reading: readings.hrv_ms,
            baseline: baselines.hrv_ms,
            num: 100 * (i64::from(baselines.hrv_ms) - i64::from(readings.hrv_ms.unwrap_or(0))),
            den: i64::from(baselines.hrv_ms),
            unit: DeviationUnit::PercentDrop,
            ramp: HRV_DROP_PCT,
            weight: WEIGHT_HRV_PERMILLE,
        },
        Raw {
            name: FactorName::RestingHr,
            reading: readings.resting_hr_bpm,
            baseline: baselines.resting_hr_bpm,
            num: i64::from(readings.resting_hr_bpm.unwrap_or(0))
                - i64::from(baselines.resting_hr_bpm),
            den: 1,
            unit: DeviationUnit::BpmRise,
            ramp: RHR_RISE_BPM,
            weight: WEIGHT_RHR_PERMILLE,
        },
        Raw {
            name: FactorName::Sleep,
            reading: readings.sleep_minutes,
            baseline: baselines.sleep_minutes,
            num: i64::from(baselines.sleep_minutes)
                - i64::from(readings.sleep_minutes.unwrap_or(0)),
            den: 1,
            unit: DeviationUnit::MinutesShort,
            ramp: SLEEP_SHORT_MINUTES,
            weight: WEIGHT_SLEEP_PERMILLE,
        },
    ];
    let missing: Vec<FactorName> = raw
        .iter()
        .filter(|f| f.reading.is_none())
        .map(|f| f.name)
        .collect();
    let present: Vec<&Raw> = raw.iter().filter(|f| f.reading.is_some()).collect();
    if present.is_empty() {
        return Err(ToolError::invalid_args(
            "readings: give at least one of hrv_ms, resting_hr_bpm, sleep_minutes",
        ));
    }

    let subs: Vec<i64> = present.iter().map(|f| ramp(f.num, f.den, f.ramp)).collect();
    let total_weight: i64 = present.iter().map(|f| f.weight).sum();
    let weighted: Vec<i64> = present
        .iter()
        .zip(&subs)
        .map(|(f, sub)| f.weight * sub)
        .collect();
    let score = div_round(weighted.iter().sum(), total_weight);
    let contributions = largest_remainder(&weighted, total_weight, score);
    let weights = largest_remainder(
        &present
            .iter()
            .map(|f| f.weight * PERMILLE)
            .collect::<Vec<_>>(),
        total_weight,
        PERMILLE,
    );

    let factors = present
        .iter()
        .enumerate()
        .map(|(i, f)| Factor {
            factor: f.name,
            reading: f.reading.unwrap_or_default(),
            baseline: f.baseline,
            deviation: div_round(f.num, f.den),
            deviation_unit: f.unit,
            sub_score: subs[i],
            weight_permille: weights[i],
            contribution: contributions[i],
        })
        .collect();
    // Sub-scores are 0..=100 and the weights positive, so the weighted mean is too.
    let score = u32::try_from(score.clamp(0, 100)).unwrap_or(0);
    Ok(StressScoreResult {
        score,
        level: Level::from_score(score),
        factors,
        missing,
    })
}

/// The clamped piecewise-linear ramp of a deviation `num / den` (den > 0): 0 up to `zero`,
/// 100 from `full` on, linear in between, rounded half away from zero.
pub fn ramp(num: i64, den: i64, (zero, full): (i64, i64)) -> i64 {
    div_round(100 * (num - zero * den), (full - zero) * den).clamp(0, 100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use aura_sdk::ToolErrorKind;
    use serde_json::json;

    fn baselines() -> Baselines {
        Baselines {
            hrv_ms: 60,
            resting_hr_bpm: 58,
            sleep_minutes: 450,
        }
    }

    fn run(hrv: Option<u32>, rhr: Option<u32>, sleep: Option<u32>) -> StressScoreResult {
        let result = stress_score(StressScoreArgs {
            readings: Readings {
                hrv_ms: hrv,
                resting_hr_bpm: rhr,
                sleep_minutes: sleep,
            },
            baselines: baselines(),
        })
        .unwrap();
        let schema = SCHEMAS.load("stress_score.result.json");
        aura_testkit::assert_valid(&schema, &serde_json::to_value(&result).unwrap());
        result
    }

    /// (sub_score, weight_permille, contribution) per factor.
    fn shares(result: &StressScoreResult) -> Vec<(i64, i64, i64)> {
        result
            .factors
            .iter()
            .map(|f| (f.sub_score, f.weight_permille, f.contribution))
            .collect()
    }

    #[test]
    fn ramp_breakpoints() {
        // HRV ramp 10 %..50 %: 10 → 0, 30 → 50, 50 → 100, beyond clamps.
        assert_eq!(ramp(10, 1, HRV_DROP_PCT), 0);
        assert_eq!(ramp(30, 1, HRV_DROP_PCT), 50);
        assert_eq!(ramp(50, 1, HRV_DROP_PCT), 100);
        assert_eq!(ramp(90, 1, HRV_DROP_PCT), 100);
        assert_eq!(ramp(-300, 1, HRV_DROP_PCT), 0);
        // Sleep 30..210: 90 short → 60·100/180 = 33.3 → 33; 120 → 50; 31 → 0.56 → 1.
        assert_eq!(ramp(90, 1, SLEEP_SHORT_MINUTES), 33);
        assert_eq!(ramp(120, 1, SLEEP_SHORT_MINUTES), 50);
        assert_eq!(ramp(31, 1, SLEEP_SHORT_MINUTES), 1);
        // Exact fraction: a drop of 1100/40 % = 27.5 % → 17.5·100/40 = 43.75 → 44.
        assert_eq!(ramp(1100, 40, HRV_DROP_PCT), 44);
    }

    #[test]
    fn all_three_factors() {
        // Baselines HRV 60, RHR 58, sleep 450. Readings HRV 42, RHR 65, sleep 360.
        // HRV drop 100·18/60 = 30 % → (30−10)·100/40 = 50.
        // RHR rise 7 bpm → (7−2)·100/10 = 50.
        // Sleep short 90 min → (90−30)·100/180 = 33.3 → 33.
        // Score (500·50 + 300·50 + 200·33)/1000 = 46 600/1000 = 46.6 → 47: moderate.
        // Contributions 25, 15, 6.6: floors 46, the missing point to sleep (remainder .6).
        let result = run(Some(42), Some(65), Some(360));
        assert_eq!(result.score, 47);
        assert_eq!(result.level, Level::Moderate);
        assert!(result.missing.is_empty());
        let deviations: Vec<i64> = result.factors.iter().map(|f| f.deviation).collect();
        assert_eq!(deviations, [30, 7, 90]);
        assert_eq!(
            shares(&result),
            [(50, 500, 25), (50, 300, 15), (33, 200, 7)]
        );
    }

    #[test]
    fn missing_reading_renormalizes() {
        // No RHR: weights 500 and 200 over 700 → 714.29 and 285.71 → 714 + 286 = 1000.
        // HRV 36 vs 60: drop 40 % → (40−10)·100/40 = 75. Sleep 420 vs 450: 30 short → 0.
        // Score 500·75/700 = 53.57 → 54: moderate. Contributions 53.57 + 0: floors 53, the
        // missing point to HRV.
        let result = run(Some(36), None, Some(420));
        assert_eq!(result.score, 54);
        assert_eq!(result.level, Level::Moderate);
        assert_eq!(result.missing, [FactorName::RestingHr]);
        assert_eq!(shares(&result), [(75, 714, 54), (0, 286, 0)]);

        // RHR alone: 75 vs 58 → 17 bpm → clamped 100; weight 1000; score 100.
        let result = run(None, Some(75), None);
        assert_eq!(result.score, 100);
        assert_eq!(result.level, Level::High);
        assert_eq!(result.missing, [FactorName::Hrv, FactorName::Sleep]);
        assert_eq!(shares(&result), [(100, 1000, 100)]);
    }

    #[test]
    fn better_than_baseline_scores_zero_with_negative_deviations() {
        // HRV 90 vs 60: drop −50 %. RHR 50 vs 58: −8 bpm. Sleep 540 vs 450: −90 min.
        let result = run(Some(90), Some(50), Some(540));
        assert_eq!(result.score, 0);
        assert_eq!(result.level, Level::Low);
        let deviations: Vec<i64> = result.factors.iter().map(|f| f.deviation).collect();
        assert_eq!(deviations, [-50, -8, -90]);
        assert_eq!(shares(&result), [(0, 500, 0), (0, 300, 0), (0, 200, 0)]);
    }

    #[test]
    fn high_stress() {
        // HRV 30 vs 60: drop 50 % → 100. RHR 64: +6 → 40. Sleep 300: 150 short →
        // 120·100/180 = 66.7 → 67. Score (50 000 + 12 000 + 13 400)/1000 = 75.4 → 75.
        // Contributions 50, 12, 13.4: floors 75 = score, nothing to add.
        let result = run(Some(30), Some(64), Some(300));
        assert_eq!(result.score, 75);
        assert_eq!(result.level, Level::High);
        assert_eq!(
            shares(&result),
            [(100, 500, 50), (40, 300, 12), (67, 200, 13)]
        );
    }

    #[test]
    fn hrv_percent_rounds_from_the_exact_ratio() {
        // Baseline 60, reading 47: drop 1300/60 = 21.67 % → reported 22; sub-score from the
        // exact value: (21.67−10)·100/40 = 29.17 → 29 (from the rounded 22 it would be 30).
        let result = run(Some(47), None, None);
        assert_eq!(result.factors[0].deviation, 22);
        assert_eq!(result.factors[0].sub_score, 29);
        assert_eq!(result.score, 29);
        assert_eq!(result.level, Level::Low);
    }

    #[test]
    fn invalid_inputs() {
        let expect = |readings: Readings, baselines: Baselines, needle: &str| {
            let e = stress_score(StressScoreArgs {
                readings,
                baselines,
            })
            .unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
            assert!(e.message.contains(needle), "{needle}: {}", e.message);
        };
        expect(Readings::default(), baselines(), "at least one");
        let mut b = baselines();
        b.hrv_ms = 0;
        let r = Readings {
            hrv_ms: Some(40),
            ..Readings::default()
        };
        expect(r.clone(), b, "baselines.hrv_ms");
        let mut b = baselines();
        b.sleep_minutes = 59;
        expect(r, b, "baselines.sleep_minutes");
        let r = Readings {
            resting_hr_bpm: Some(221),
            ..Readings::default()
        };
        expect(r, baselines(), "readings.resting_hr_bpm");
    }

    #[test]
    fn schema_examples_deserialize_and_run() {
        let (args_schema, result_schema, examples) = SCHEMAS.tool_schemas("stress_score");
        for example in examples {
            let args: StressScoreArgs = serde_json::from_value(example).unwrap();
            let result = stress_score(args).unwrap();
            aura_testkit::assert_valid(&result_schema, &serde_json::to_value(&result).unwrap());
        }
        // Unknown fields are refused on both sides.
        let extra = json!({"readings": {"hrv_ms": 40, "spo2": 97},
                           "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450}});
        assert!(serde_json::from_value::<StressScoreArgs>(extra.clone()).is_err());
        assert!(!aura_testkit::is_valid(&args_schema, &extra));
        // Empty readings pass the schema (the tool refuses them, naming the field).
        let empty = json!({"readings": {},
                           "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450}});
        assert!(aura_testkit::is_valid(&args_schema, &empty));
    }
}
