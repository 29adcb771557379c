//! `aura keygen`: an ed25519 key for signing plugins.

use std::path::PathBuf;
use std::process::ExitCode;

/// Make an ed25519 signing key for plugins: writes the key file (readable by its owner
/// only) and prints the public key, which a host built with
/// AURA_TRUSTED_KEYS=<public key> trusts.
#[derive(clap::Args, Debug)]
pub struct KeygenCommand {
    /// The key file to write (must not exist).
    #[arg(long)]
    out: PathBuf,
}

impl KeygenCommand {
    /// Writes the key and prints its public half.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        let public = aura_plugins::signing::keygen(&self.out)?;
        println!("{public}");
        eprintln!(
            "aura: wrote {}; build the host with AURA_TRUSTED_KEYS={public} to trust it",
            self.out.display()
        );
        Ok(ExitCode::SUCCESS)
    }
}
