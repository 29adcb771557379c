//! `aura calibrate`: this device's fuel per millisecond, measured and stored.

use std::process::ExitCode;

use anyhow::Context;

use aura_host::{Host, HostConfig};

use super::{Globals, runtime};

/// Measure this device's fuel per millisecond with a reference workload and store it in
/// the data dir; later runs turn deadlines into fuel at that rate.
#[derive(clap::Args, Debug)]
pub struct CalibrateCommand {}

impl CalibrateCommand {
    /// Measures, stores and prints the calibration.
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        let options = globals.host_config();
        let mut config =
            HostConfig::for_calibration(options.plugins_dir.clone(), options.data_dir.clone());
        config.cache_dir = options.cache_dir;
        let data_dir = options.data_dir;
        let calibration = runtime()?.block_on(async {
            let host = Host::open(&config).await.context("cannot start the host")?;
            anyhow::Ok(host.calibrate(&data_dir).await?)
        })?;
        println!("{}", serde_json::to_string_pretty(&calibration)?);
        Ok(ExitCode::SUCCESS)
    }
}
