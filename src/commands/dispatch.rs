//! `aura dispatch`: a raw toolcall.v1 envelope dispatched exactly as given.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use aura_contract::limits::DISPATCH_INPUT_BYTES_MAX;
use aura_host::CallInput;

use super::Globals;
use super::call::dispatch_one;

/// Dispatch a raw toolcall.v1 envelope exactly as given, from a file or `-` for stdin.
#[derive(clap::Args, Debug)]
pub struct DispatchCommand {
    /// File holding the envelope, or `-`.
    input: PathBuf,
}

impl DispatchCommand {
    /// Reads the envelope (a little past the crossing's bound, to report its size honestly)
    /// and dispatches its bytes.
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        let bytes = read_input(&self.input)?;
        dispatch_one(globals, CallInput::Bytes(&bytes))
    }
}

fn read_input(input: &PathBuf) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if input.as_os_str() == "-" {
        std::io::stdin()
            .take(DISPATCH_INPUT_BYTES_MAX)
            .read_to_end(&mut bytes)
            .context("cannot read stdin")?;
    } else {
        std::fs::File::open(input)
            .with_context(|| format!("cannot open {}", input.display()))?
            .take(DISPATCH_INPUT_BYTES_MAX)
            .read_to_end(&mut bytes)
            .with_context(|| format!("cannot read {}", input.display()))?;
    }
    Ok(bytes)
}
