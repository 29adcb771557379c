//! `aura keygen`: an ed25519 key for signing plugins, or (with `--nkey`) a NATS user's nkey.

use std::path::PathBuf;
use std::process::ExitCode;

/// Make a key: an ed25519 signing key for plugins (a host built with
/// AURA_TRUSTED_KEYS=<public key> trusts it), or with --nkey a NATS user's nkey seed (name
/// the user by the printed public key in the nats-server's config; give the seed file to the
/// process with --nats-nkey). Writes the key file (readable by its owner only; an existing
/// file is never replaced) and prints the public key.
#[derive(clap::Args, Debug)]
pub struct KeygenCommand {
    /// The key file to write (must not exist).
    #[arg(long)]
    out: PathBuf,
    /// Make a NATS user nkey instead of a plugin signing key.
    #[cfg(feature = "nats")]
    #[arg(long)]
    nkey: bool,
}

impl KeygenCommand {
    /// Writes the key and prints its public half.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        #[cfg(feature = "nats")]
        if self.nkey {
            use anyhow::Context;
            let (seed, public) = aura_wire::access::new_user_nkey()?;
            aura_plugins::files::write_secret(&self.out, format!("{seed}\n").as_bytes())
                .with_context(|| format!("cannot write {}", self.out.display()))?;
            println!("{public}");
            eprintln!(
                "aura: wrote {}; name the user {{ nkey: {public} }} in the nats-server's config and start the process with --nats-nkey {}",
                self.out.display(),
                self.out.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        let public = aura_plugins::signing::keygen(&self.out)?;
        println!("{public}");
        eprintln!(
            "aura: wrote {}; build the host with AURA_TRUSTED_KEYS={public} to trust it",
            self.out.display()
        );
        Ok(ExitCode::SUCCESS)
    }
}
