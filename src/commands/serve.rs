//! `aura serve`: the catalogue as MCP tools over streamable HTTP.

use std::process::ExitCode;

use anyhow::{Context, bail};

use super::{Globals, open_host, runtime, shutdown_signal, warn_load_failures};

/// Serve the catalogue as MCP tools over streamable HTTP at http(s)://<listen>/mcp until
/// SIGINT or SIGTERM. Loopback only: there is no authentication yet. A browser's request is
/// served only from a loopback origin or one --allow-origin names (else 403).
#[derive(clap::Args, Debug)]
pub struct ServeCommand {
    /// Address to listen on (a loopback address; port 0 picks a free port, printed on
    /// stderr).
    #[arg(long, default_value = "127.0.0.1:8765")]
    listen: std::net::SocketAddr,
    #[command(flatten)]
    guard: super::guard::GuardArgs,
}

impl ServeCommand {
    /// Serves many clients on every core until a signal.
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        let listen = self.listen;
        if !listen.ip().is_loopback() {
            bail!(
                "aura serve listens on loopback only (it has no authentication): use 127.0.0.1:{}",
                listen.port()
            );
        }
        let guard = self.guard.guard()?;
        runtime()?.block_on(async {
            let (host, _events) =
                open_host(globals.host_config(), globals.nats.as_ref(), None).await?;
            warn_load_failures(&host);
            let server = aura_mcp::McpServer::new(std::sync::Arc::new(host));
            let listener = tokio::net::TcpListener::bind(listen)
                .await
                .with_context(|| format!("cannot listen on {listen}"))?;
            let bound = listener.local_addr()?;
            eprintln!("aura: serving MCP at {}://{bound}/mcp", guard.scheme());
            let shutdown = tokio_util::sync::CancellationToken::new();
            let stop = shutdown.clone();
            tokio::spawn(async move {
                shutdown_signal().await;
                stop.cancel();
            });
            server.serve_http(listener, &guard, shutdown).await?;
            anyhow::Ok(ExitCode::SUCCESS)
        })
    }
}
