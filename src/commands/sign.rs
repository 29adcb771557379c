//! `aura sign`: signatures for a plugins dir.

use std::path::PathBuf;
use std::process::ExitCode;

use super::Globals;

/// Sign the plugins dir (--plugins-dir, or the build's plugins/; a precompiled dir such
/// as plugins/<target> is signed on its own): writes <plugins-dir>/signatures.json, a
/// signature over the manifest and one over each component's sha256.
#[derive(clap::Args, Debug)]
pub struct SignCommand {
    /// The key file `aura keygen` wrote.
    #[arg(long)]
    key: PathBuf,
}

impl SignCommand {
    /// Signs the dir and says where the signatures went.
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        let dir = globals.plugins_dir();
        let public = aura_plugins::sign_dir(&dir, &self.key)?;
        println!(
            "{}",
            dir.join(aura_plugins::signing::SIGNATURES_FILE).display()
        );
        eprintln!("aura: signed {} with key {public}", dir.display());
        Ok(ExitCode::SUCCESS)
    }
}
