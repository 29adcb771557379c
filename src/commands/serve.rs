//! `aura serve`: the catalogue as MCP tools over streamable HTTP.

use std::process::ExitCode;

use anyhow::Context;

use super::{Globals, open_host, runtime, shutdown_signal, warn_load_failures};

/// Serve the catalogue as MCP tools over streamable HTTP at http(s)://<listen>/mcp until
/// SIGINT or SIGTERM. A browser's request is served only from a loopback origin or one
/// --allow-origin names (else 403). With --auth-issuer every request needs a bearer token
/// (scope aura.read; aura.act for a tool the user must confirm); only then, and with TLS, may
/// it listen beyond loopback.
#[derive(clap::Args, Debug)]
pub struct ServeCommand {
    /// Address to listen on (port 0 picks a free port, printed on stderr): loopback, or any
    /// with TLS and --auth-issuer.
    #[arg(long, default_value = "127.0.0.1:8765")]
    listen: std::net::SocketAddr,
    #[command(flatten)]
    guard: super::guard::GuardArgs,
}

impl ServeCommand {
    /// Serves many clients on every core until a signal.
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        let listen = self.listen;
        runtime()?.block_on(async {
            let guard = self.guard.guard().await?;
            guard.check_listen(listen)?;
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
            let signalled = shutdown_signal();
            tokio::spawn(async move {
                signalled.await;
                stop.cancel();
            });
            server.serve_http(listener, &guard, shutdown).await?;
            anyhow::Ok(ExitCode::SUCCESS)
        })
    }
}
