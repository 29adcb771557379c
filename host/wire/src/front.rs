//! How a front joins the wire: as a client of the workers (`--nats` on `run`, `call`,
//! `dispatch`, `mcp`, `serve`) or as a worker (`aura worker`).
//!
//! It owns turning a host's config into one that sends every call and tick to the workers
//! (discovered first, and checked to draw from the run's seed), or one that serves its agents
//! and sends its agents' calls to agents it does not serve to the workers that do; both
//! publishing their events to the stream. It must not open the host nor serve it (the front
//! does, through the host's seam and [`crate::worker::Worker`]).

use std::sync::Arc;

use aura_host::HostConfig;
use aura_host::remote::Remote;

use crate::cluster::Cluster;
use crate::stream::{Published, Publisher};
use crate::{Connection, NatsAccess, WireError};

/// What a front that joined the wire has to know and to wait for.
#[derive(Debug)]
pub struct Joined {
    /// The workers found (a client's discovery; 0 for a worker, which discovers nothing).
    pub workers: usize,
    /// The agents they serve, in catalogue order.
    pub agents: Vec<&'static str>,
    /// The task publishing the host's events (await it once the host is dropped, so they all
    /// go out before the process ends); `None` when the stream could not be set up.
    pub events: Option<tokio::task::JoinHandle<Published>>,
    /// Why the stream could not be set up, when it could not: the host runs, unpublished.
    pub events_error: Option<WireError>,
}

/// Makes `config` a pure client of the workers on the server `access` names: no agent of its own, every call and
/// tick sent to the workers, which must draw from `guest_seed` when one is given (a run on
/// them must be the same as one here); their fuel rate unless the config sets one; the host's
/// events published to the stream.
pub async fn join_as_client(
    config: &mut HostConfig,
    access: &NatsAccess,
    guest_seed: Option<u64>,
) -> Result<Joined, WireError> {
    let cluster = Cluster::connect(access).await?;
    if let Some(seed) = guest_seed
        && cluster.guest_seed() != Some(seed)
    {
        return Err(WireError::SeedMismatch {
            workers: cluster.guest_seed(),
            wanted: seed,
        });
    }
    if config.fuel_per_ms.is_none() {
        config.fuel_per_ms = cluster.fuel_per_ms();
    }
    let (events, events_error) = publish_events(config, cluster.client()).await;
    let joined = Joined {
        workers: cluster.workers(),
        agents: cluster.agents(),
        events,
        events_error,
    };
    config.agents = Some(Vec::new());
    config.remote = Some(Arc::new(cluster));
    Ok(joined)
}

/// Makes `config` a worker's on `connection`'s server: the calls its agents make to agents it does
/// not serve go to the workers that do; its events are published to the stream.
pub async fn join_as_worker(config: &mut HostConfig, connection: &Connection) -> Joined {
    config.remote = Some(Arc::new(Cluster::undiscovered(connection)));
    let (events, events_error) = publish_events(config, &connection.client).await;
    Joined {
        workers: 0,
        agents: Vec::new(),
        events,
        events_error,
    }
}

/// Starts publishing the host's events to the stream, as `config`'s event sink.
async fn publish_events(
    config: &mut HostConfig,
    client: &async_nats::Client,
) -> (
    Option<tokio::task::JoinHandle<Published>>,
    Option<WireError>,
) {
    match Publisher::start(client).await {
        Ok((publisher, task)) => {
            config.events = Some(Arc::new(publisher));
            (Some(task), None)
        }
        Err(error) => (None, Some(error)),
    }
}
