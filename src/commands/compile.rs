//! `aura compile`: precompile a plugins dir for a runtime-only host (the phone).

use std::path::PathBuf;
use std::process::ExitCode;

use super::{Globals, print_manifest};

/// Precompile the plugins dir's components for a target (e.g. aarch64-unknown-linux-musl,
/// pulley64) into .cwasm files and a manifest with their sha256, for a runtime-only host.
#[derive(clap::Args, Debug)]
pub struct CompileCommand {
    /// Target triple, or pulley64 for the Pulley interpreter.
    #[arg(long)]
    target: String,
    /// Output dir [default: <plugins-dir>/<target>].
    #[arg(long)]
    out: Option<PathBuf>,
}

impl CompileCommand {
    /// Precompiles every catalogue agent of the dir and prints the manifest written.
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        let source = globals.plugins_dir();
        let target = aura_sandbox::CodeTarget::named(&self.target);
        let out = self.out.unwrap_or_else(|| source.join(target.name()));
        let manifest = aura_host::precompile_plugins(&source, &target, &out)?;
        print_manifest(&out, &manifest);
        Ok(ExitCode::SUCCESS)
    }
}
