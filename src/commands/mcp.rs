//! `aura mcp`: the catalogue as MCP tools over stdin and stdout.

use std::process::ExitCode;

use anyhow::Context;

use super::{Globals, open_host, warn_load_failures};

/// Serve the catalogue as MCP tools over stdin and stdout (what an MCP client's config
/// starts). Logs go to stderr.
#[derive(clap::Args, Debug)]
pub struct McpCommand {}

impl McpCommand {
    /// Serves one client until it closes the pipe.
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        // Over stdio one client talks to one process through one pipe: a single-threaded
        // runtime serves it with no hand-offs between threads (calls still interleave at the
        // sandbox's fuel yields; the epoch backstop has its own thread). Measured against the
        // multi-threaded one in one run (BENCHMARKS.md, Wassette side by side): 297 µs against
        // 327 µs per round trip, 5 874 against 4 973 calls/s with 8 clients.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        runtime.block_on(async {
            let (host, _events) =
                open_host(globals.host_config(), globals.nats.as_ref(), None).await?;
            warn_load_failures(&host);
            let server = aura_mcp::McpServer::new(std::sync::Arc::new(host));
            server.serve_stdio().await?;
            anyhow::Ok(ExitCode::SUCCESS)
        })
    }
}
