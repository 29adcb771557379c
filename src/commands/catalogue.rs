//! `aura catalogue`: the locked catalogue as JSON.

use std::process::ExitCode;

/// Print the locked catalogue as JSON.
#[derive(clap::Args, Debug)]
pub struct CatalogueCommand {}

impl CatalogueCommand {
    /// Prints it, canonical.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        println!(
            "{}",
            aura_contract::canonical::to_canonical_string(&aura_contract::catalogue::to_json())?
        );
        Ok(ExitCode::SUCCESS)
    }
}
