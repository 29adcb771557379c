//! `aura pack`: a plugins dir from component files.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};

use super::print_manifest;

/// Write a plugins dir from component files: each copied in as <agent>.wasm, then its
/// manifest.json with their sizes and sha256 (e.g. the shipped agents with another
/// implementation of one of them, for `--plugins-dir`).
#[derive(clap::Args, Debug)]
pub struct PackCommand {
    /// The plugins dir to write (created if needed; files of the same name are replaced).
    out: PathBuf,
    /// AGENT=FILE: a catalogue agent and its component, e.g. wellness=wellness.wasm.
    #[arg(required = true, value_name = "AGENT=FILE")]
    components: Vec<String>,
}

impl PackCommand {
    /// Reads each component within its agent's bound and writes the dir.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        let mut read = Vec::new();
        for pair in &self.components {
            let (agent, file) = pair
                .split_once('=')
                .with_context(|| format!("`{pair}` is not AGENT=FILE"))?;
            if aura_contract::catalogue::agent(agent).is_none() {
                bail!("`{agent}` is not a catalogue agent");
            }
            let bound = aura_contract::catalogue::component_bytes_max(agent);
            let bytes = aura_plugins::files::read_at_most(file.as_ref(), bound)
                .with_context(|| format!("cannot read {file}"))?;
            if bytes.len() as u64 > bound {
                bail!("{file} is more than the {bound} bytes the catalogue lets {agent} be");
            }
            read.push((agent, bytes));
        }
        let manifest = aura_plugins::write_components(&self.out, &read)?;
        print_manifest(&self.out, &manifest);
        Ok(ExitCode::SUCCESS)
    }
}
