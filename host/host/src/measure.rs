//! Measuring a call in the sandbox alone, and the device calibration built on it.
//!
//! It owns [`Host::measure`](crate::Host::measure) (a checked call run in the sandbox with its full budget, the
//! crossing's checks left out on purpose: for calibration and benchmarks) and
//! [`Host::calibrate`](crate::Host::calibrate) (the reference workload measured and its fuel rate stored). It must not
//! decide the rate (the calibration module does, from the runs).

use std::time::Duration;

use aura_contract::crossing::CheckedCall;
use aura_contract::envelope;
use aura_sandbox::{Budget, Frame};

use crate::calibrate::{self, Calibration, CalibrationError};
use crate::shared::{Refused, Shared, ids_of};
use std::sync::Arc;

impl Shared {
    /// Runs a checked call `runs` times in the sandbox alone, with its full budget, timing
    /// each run around the sandbox: (fuel burned, wall time) per run. For calibration and
    /// benchmarks: the crossing's checks and the reply's are left out on purpose.
    pub(crate) async fn measure(
        self: &Arc<Self>,
        call: &CheckedCall,
        runs: usize,
    ) -> Result<Vec<(u64, Duration)>, Refused> {
        let shared = self;
        let budget = Budget::for_deadline(call.deadline_ms(), shared.fuel_per_ms);
        let agent = shared
            .agent(&call.call().agent)
            .await
            .map_err(|error| shared.refuse(error, ids_of(call, &[]), call.canonical()))?;
        let mut measured = Vec::with_capacity(runs);
        for _ in 0..runs {
            let started = std::time::Instant::now();
            let frame = Frame::root(budget, envelope::unix_ns(&call.call().ts));
            let invocation = shared
                .sandbox
                .invoke(
                    &agent,
                    &call.call().call_id,
                    call.canonical(),
                    frame,
                    shared.clone(),
                )
                .await
                .map_err(|error| shared.refuse(error, ids_of(call, &[]), call.canonical()))?;
            measured.push((invocation.fuel_used, started.elapsed()));
        }
        Ok(measured)
    }

    /// Measures this device's fuel per millisecond with the reference workload
    /// ([`calibrate`]: one unmeasured run, then [`calibrate::CALIBRATION_RUNS`] measured
    /// ones) and stores it in the data dir, where later hosts read it. Open the host with
    /// [`HostConfig::for_calibration`](crate::HostConfig::for_calibration).
    pub(crate) async fn calibrate(
        self: &Arc<Self>,
        data_dir: &std::path::Path,
    ) -> Result<Calibration, CalibrationError> {
        let text = serde_json::to_string(&calibrate::workload_call()).unwrap_or_default();
        let workload = self
            .check(&text)
            .map_err(|refused| CalibrationError::Workload(refused.to_string()))?;
        let failed = |refused: Refused| CalibrationError::Workload(refused.to_string());
        // One unmeasured run warms caches and the instance pool.
        self.measure(&workload, 1).await.map_err(failed)?;
        let runs = self
            .measure(&workload, calibrate::CALIBRATION_RUNS)
            .await
            .map_err(failed)?;
        let calibration = calibrate::from_runs(&runs)?;
        calibrate::store(data_dir, &calibration)?;
        Ok(calibration)
    }
}
