//! `aura worker`: this host's agents served to the wire.

use std::process::ExitCode;

use anyhow::Context;

use aura_host::Host;

use super::{Globals, runtime, shutdown_signal, warn_load_failures};

/// Serve this host's agents to the wire: every catalogued tool and each agent's tick as the
/// NATS service `aura` (queue group `aura`: requests spread over workers) on --nats, with
/// events published to the JetStream stream AURA_EVENTS, until SIGINT or SIGTERM.
#[derive(clap::Args, Debug)]
pub struct WorkerCommand {
    /// Serve only these agents (comma-separated); calls their agents make to others go
    /// to the workers serving those [default: every agent of the plugins dir].
    #[arg(long, value_delimiter = ',')]
    agents: Option<Vec<String>>,
    /// Seed of the agents' random sources (a run sent here must use the same).
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

impl WorkerCommand {
    /// Serves until a signal, then waits for the events still being published.
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        let access = globals
            .nats
            .clone()
            .context("aura worker needs --nats nats://HOST:PORT")?;
        let mut config = globals.host_config();
        config.agents = self.agents;
        config.guest_seed = self.seed;
        config.identity = access.provenance().identity.clone();
        config.trusted_fronts = access.provenance().fronts.clone();
        runtime()?.block_on(async {
            let connection = aura_wire::connect(&access).await?;
            let joined = aura_wire::front::join_as_worker(&mut config, &connection).await;
            if let Some(error) = joined.events_error {
                eprintln!("aura: warning: no events published: {error}");
            }
            let host = Host::open(&config).await.context("cannot start the host")?;
            // The host holds what it needs; the config's own handle on the event publisher
            // would keep the publishing task waiting for more after the host is gone.
            drop(config);
            warn_load_failures(&host);
            if access.provenance().fronts.is_empty() {
                eprintln!(
                    "aura: warning: a confirm_required call from anyone on the bus runs here without a proof of the user's yes (--trust-fronts names the fronts whose proofs it needs)"
                );
            }
            let worker =
                aura_wire::worker::Worker::start(std::sync::Arc::new(host), &connection).await?;
            // A user without a worker's permissions is refused its subscriptions only after
            // the fact: serving nothing while saying it serves would hide that.
            connection.check("this worker's start").await?;
            eprintln!(
                "aura: worker serving {} on {access}",
                worker.agents().join(", ")
            );
            worker.serve(shutdown_signal()).await?;
            if let Some(events) = joined.events {
                let _ = events.await;
            }
            anyhow::Ok(ExitCode::SUCCESS)
        })
    }
}
