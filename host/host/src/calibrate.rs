//! Device calibration: how much wasm fuel this device burns per millisecond, so that a call's
//! `deadline_ms` becomes a fuel budget the device can actually spend in that time.
//!
//! Method: a fixed reference workload (the calendar's `detect_conflicts` over a deterministic
//! day of [`WORKLOAD_EVENTS`] events) runs [`CALIBRATION_RUNS`] times through the sandbox. Every
//! run burns exactly the same fuel (fuel counts wasm operators, not time); the wall time of each
//! run is measured around the sandbox call alone. The measured rate is fuel per run divided by
//! the median run time; the stored rate keeps only [`CALIBRATION_SAFETY_PERCENT`] of it, so a
//! deadline still holds when the device is busy with other work.
//!
//! This module owns the method (the workload, and the rate from the runs) and
//! `<data-dir>/calibration.json` (read and written through cap-std); [`Host::calibrate`]
//! runs it on a host opened with [`HostConfig::for_calibration`]. It must not change a budget
//! on its own: the host reads the stored rate when it opens, and uses
//! [`FUEL_PER_MS_DEFAULT`](aura_contract::limits::FUEL_PER_MS_DEFAULT) when there is none.
//!
//! [`Host::calibrate`]: crate::Host::calibrate
//! [`HostConfig::for_calibration`]: crate::HostConfig::for_calibration

use std::path::Path;
use std::time::Duration;

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use aura_contract::envelope::ToolCall;
use aura_contract::limits::{CALIBRATION_FILE_BYTES_MAX, DEADLINE_MS_MAX, FUEL_PER_MS_MIN};

/// The calibration file, relative to the data dir.
pub const CALIBRATION_FILE: &str = "calibration.json";

/// The format written and read.
pub const CALIBRATION_FORMAT: &str = "aura-calibration.v1";

/// Runs of the workload; odd, so the median is one run. 31 runs of a few milliseconds keep
/// `aura calibrate` under a second while the median shrugs off a few noisy runs.
pub const CALIBRATION_RUNS: usize = 31;

/// Share of the measured rate that is stored: half, so a deadline survives the device running
/// at half speed (thermal throttling, a busy second core).
pub const CALIBRATION_SAFETY_PERCENT: u64 = 50;

/// The agent of the reference workload.
pub const WORKLOAD_AGENT: &str = "calendar";

/// Events in the reference workload: enough that a run takes milliseconds, so timer
/// resolution and per-call overhead stay small against it.
pub const WORKLOAD_EVENTS: usize = 400;

/// A device's calibration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// Always [`CALIBRATION_FORMAT`].
    pub format: String,
    /// The rate the host uses: the measured rate × [`CALIBRATION_SAFETY_PERCENT`] / 100.
    pub fuel_per_ms: u64,
    /// The median rate measured.
    pub measured_fuel_per_ms: u64,
    /// The safety share applied.
    pub safety_percent: u64,
    /// What ran.
    pub workload: String,
    /// How many runs.
    pub runs: u64,
    /// Fuel of one run (the same every run).
    pub fuel_per_run: u64,
    /// Median wall time of a run, µs.
    pub median_run_us: u64,
    /// Fastest and slowest run, µs.
    pub min_run_us: u64,
    /// See `min_run_us`.
    pub max_run_us: u64,
}

/// Why a calibration could not be made, read or stored.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    /// The data dir or the file could not be read or written.
    #[error("cannot read or write {CALIBRATION_FILE}")]
    Io(#[from] std::io::Error),
    /// The file is not a calibration this host reads.
    #[error("{CALIBRATION_FILE} is not a valid calibration: {0}")]
    Invalid(String),
    /// The workload did not run the same way every time (a bug: fuel is deterministic).
    #[error("the reference workload burned different fuel on different runs: {0:?}")]
    Nondeterministic(Vec<u64>),
    /// The workload failed.
    #[error("the reference workload failed: {0}")]
    Workload(String),
}

/// The reference workload's call: `detect_conflicts` over a deterministic day of events.
pub fn workload_call() -> ToolCall {
    // A linear congruential generator (Knuth's MMIX constants) lays out the day the same way
    // every time: starts spread over 10 hours, 15-120 minute meetings, three places.
    let mut state: u64 = 0x5eed;
    let mut next = |modulus: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % modulus
    };
    let places = ["Office", "Cafe", "Home"];
    let events: Vec<Value> = (0..WORKLOAD_EVENTS)
        .map(|i| {
            let start_min = 8 * 60 + next(10 * 60);
            let end_min = start_min + 15 + next(106);
            let at = |m: u64| format!("2026-11-23T{:02}:{:02}:00Z", m / 60 % 24, m % 60);
            json!({
                "id": format!("e{i:04}"),
                "start": at(start_min),
                "end": if end_min < 24 * 60 { at(end_min) } else { at(24 * 60 - 1) },
                "location": places[next(3) as usize],
            })
        })
        .collect();
    let mut call = ToolCall::new(
        WORKLOAD_AGENT,
        "detect_conflicts",
        json!({ "events": events }),
        Some(DEADLINE_MS_MAX),
    );
    call.call_id = "t_calibrate0".into();
    call.ts = "2026-11-23T08:00:00Z".into();
    call
}

/// Turns measured runs (fuel, wall time) into a calibration.
pub fn from_runs(runs: &[(u64, Duration)]) -> Result<Calibration, CalibrationError> {
    let fuel: Vec<u64> = runs.iter().map(|(fuel, _)| *fuel).collect();
    if fuel.is_empty() {
        return Err(CalibrationError::Workload("no runs".into()));
    }
    if fuel.iter().any(|f| *f != fuel[0]) {
        return Err(CalibrationError::Nondeterministic(fuel));
    }
    let mut micros: Vec<u64> = runs
        .iter()
        .map(|(_, time)| u64::try_from(time.as_micros()).unwrap_or(u64::MAX).max(1))
        .collect();
    micros.sort_unstable();
    let median_us = micros[micros.len() / 2];
    let measured_fuel_per_ms = fuel[0].saturating_mul(1000) / median_us;
    let fuel_per_ms =
        (measured_fuel_per_ms / 100 * CALIBRATION_SAFETY_PERCENT).max(FUEL_PER_MS_MIN);
    Ok(Calibration {
        format: CALIBRATION_FORMAT.into(),
        fuel_per_ms,
        measured_fuel_per_ms,
        safety_percent: CALIBRATION_SAFETY_PERCENT,
        workload: format!("calendar.detect_conflicts over {WORKLOAD_EVENTS} events"),
        runs: runs.len() as u64,
        fuel_per_run: fuel[0],
        median_run_us: median_us,
        min_run_us: micros[0],
        max_run_us: micros[micros.len() - 1],
    })
}

/// Reads the data dir's calibration, if it has one.
pub fn load(data_dir: &Path) -> Result<Option<Calibration>, CalibrationError> {
    use std::io::Read;
    let dir = match Dir::open_ambient_dir(data_dir, ambient_authority()) {
        Ok(dir) => dir,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let file = match dir.open(CALIBRATION_FILE) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut text = Vec::new();
    file.take(CALIBRATION_FILE_BYTES_MAX + 1)
        .read_to_end(&mut text)?;
    if text.len() as u64 > CALIBRATION_FILE_BYTES_MAX {
        return Err(CalibrationError::Invalid("file too large".into()));
    }
    let calibration: Calibration =
        serde_json::from_slice(&text).map_err(|e| CalibrationError::Invalid(e.to_string()))?;
    if calibration.format != CALIBRATION_FORMAT || calibration.fuel_per_ms < FUEL_PER_MS_MIN {
        return Err(CalibrationError::Invalid(format!(
            "format must be {CALIBRATION_FORMAT} and fuel_per_ms at least {FUEL_PER_MS_MIN}"
        )));
    }
    Ok(Some(calibration))
}

/// Writes the calibration into the data dir (replacing any earlier one atomically).
pub fn store(data_dir: &Path, calibration: &Calibration) -> Result<(), CalibrationError> {
    std::fs::create_dir_all(data_dir)?;
    let mut text = serde_json::to_string_pretty(calibration)
        .map_err(|e| CalibrationError::Invalid(e.to_string()))?;
    text.push('\n');
    aura_plugins::files::write_replacing(&data_dir.join(CALIBRATION_FILE), text.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_is_fuel_over_the_median_time_times_the_safety_share() {
        // 5,000,000 fuel per run; runs of 3, 1, 2, 100 and 2 ms: the median is 2 ms, so the
        // device burns 2,500,000 fuel/ms and the host keeps half: 1,250,000.
        let ms = Duration::from_millis;
        let runs = [
            (5_000_000, ms(3)),
            (5_000_000, ms(1)),
            (5_000_000, ms(2)),
            (5_000_000, ms(100)),
            (5_000_000, ms(2)),
        ];
        let calibration = from_runs(&runs).unwrap();
        assert_eq!(calibration.measured_fuel_per_ms, 2_500_000);
        assert_eq!(calibration.fuel_per_ms, 1_250_000);
        assert_eq!(calibration.median_run_us, 2_000);
        assert_eq!(
            (calibration.min_run_us, calibration.max_run_us),
            (1_000, 100_000)
        );
    }

    #[test]
    fn a_stalled_measurement_never_goes_below_the_default() {
        let runs = [(1_000, Duration::from_secs(10))];
        assert_eq!(from_runs(&runs).unwrap().fuel_per_ms, FUEL_PER_MS_MIN);
    }

    #[test]
    fn runs_that_burn_different_fuel_are_refused() {
        let runs = [(1, Duration::from_millis(1)), (2, Duration::from_millis(1))];
        assert!(matches!(
            from_runs(&runs),
            Err(CalibrationError::Nondeterministic(_))
        ));
    }

    #[test]
    fn store_then_load_round_trips_and_bad_files_are_refused() {
        let dir = std::env::temp_dir().join(format!("aura-calibration-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(load(&dir).unwrap(), None);
        let calibration = from_runs(&[(9_000_000, Duration::from_millis(3))]).unwrap();
        store(&dir, &calibration).unwrap();
        assert_eq!(load(&dir).unwrap(), Some(calibration));
        std::fs::write(dir.join(CALIBRATION_FILE), r#"{"format":"x"}"#).unwrap();
        assert!(matches!(load(&dir), Err(CalibrationError::Invalid(_))));
    }

    #[test]
    fn the_workload_is_the_same_every_time() {
        let a = workload_call();
        let b = workload_call();
        assert_eq!(a.args, b.args);
        assert_eq!(a.args["events"].as_array().unwrap().len(), WORKLOAD_EVENTS);
    }
}
