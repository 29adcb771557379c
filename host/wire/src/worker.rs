//! `aura worker`: a host serving its agents to the wire.
//!
//! It owns registering the NATS service (one endpoint per catalogued tool of each agent the
//! host serves, and one per agent's tick, all in [`super::QUEUE_GROUP`]), taking requests off
//! the wire (at most [`WIRE_REQUESTS_IN_FLIGHT_MAX`] at once) and answering each through the
//! host's seam ([`Host::serve_call`], [`Host::serve_tick`]), and its answer cache: a repeated
//! request (a client's retry) is answered from the cache, and one still running is waited for,
//! never run twice on this worker. An answer goes out once the call's events are stored,
//! signed with the host's identity over the request it answers, as is its discovery info
//! ([`crate::provenance`]). It must not check a call itself (the host does).

use aura_contract::caused::Caused;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use async_nats::service::ServiceExt;
use bytes::Bytes;
use futures_util::StreamExt;

use super::provenance::{Provenance, REQUEST_ID_HEADER};
use super::{Connection, QUEUE_GROUP, SERVICE_NAME, WireError};
use aura_contract::limits::WIRE_REQUESTS_IN_FLIGHT_MAX;
use aura_host::Host;
use aura_host::remote::AnswerCache;

/// A worker: the host, its service, and its answers kept for retries.
pub struct Worker {
    host: Arc<Host>,
    provenance: Arc<Provenance>,
    service: async_nats::service::Service,
    endpoints: Vec<async_nats::service::endpoint::Endpoint>,
    answers: Arc<AnswerCache>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("endpoints", &self.endpoints.len())
            .finish_non_exhaustive()
    }
}

impl Worker {
    /// Registers `host`'s agents on `client` as the service [`SERVICE_NAME`]: its metadata
    /// name the agents, their source digests, the fuel rate and the guest seed, so a client
    /// can check that every worker runs the same thing.
    pub async fn start(host: Arc<Host>, connection: &Connection) -> Result<Self, WireError> {
        let client = &connection.client;
        host.admit_all().await;
        let agents = host.loaded_agents();
        let sources = host.plugin_sources();
        let mut metadata = BTreeMap::from([
            ("agents".to_owned(), agents.join(",")),
            (
                "sources".to_owned(),
                serde_json::to_string(&sources).unwrap_or_default(),
            ),
            ("fuel_per_ms".to_owned(), host.fuel_per_ms().to_string()),
            ("guest_seed".to_owned(), host.guest_seed().to_string()),
        ]);
        connection.provenance.sign_info(&mut metadata);
        let service = client
            .service_builder()
            .description("aura: the locked catalogue's tools and ticks, each through the crossing")
            .metadata(metadata.into_iter().collect::<HashMap<_, _>>())
            .queue_group(QUEUE_GROUP)
            .start(SERVICE_NAME, env!("CARGO_PKG_VERSION"))
            .await
            .map_err(|error| WireError::Service(error.to_string()))?;
        let mut endpoints = Vec::new();
        for agent in &agents {
            let Some(spec) = aura_contract::catalogue::agent(agent) else {
                continue;
            };
            let mut subjects: Vec<(String, String)> = spec
                .tools
                .iter()
                .map(|tool| {
                    (
                        format!("{agent}-{}", tool.name),
                        super::tool_subject(agent, tool.name),
                    )
                })
                .collect();
            subjects.push((format!("{agent}-tick"), super::tick_subject(agent)));
            for (name, subject) in subjects {
                let endpoint = service
                    .endpoint_builder()
                    .name(name)
                    .add(subject)
                    .await
                    .map_err(|error| WireError::Service(error.to_string()))?;
                endpoints.push(endpoint);
            }
        }
        Ok(Self {
            host,
            provenance: Arc::new(connection.provenance.clone()),
            service,
            endpoints,
            answers: Arc::new(AnswerCache::default()),
        })
    }

    /// The agents this worker serves.
    pub fn agents(&self) -> Vec<&'static str> {
        self.host.loaded_agents()
    }

    /// Serves requests until `stop` completes, then stops the service (its subscriptions
    /// drained by the server) and waits for the answers in progress.
    pub async fn serve(self, stop: impl std::future::Future<Output = ()>) -> Result<(), WireError> {
        let Self {
            host,
            provenance,
            service,
            endpoints,
            answers,
        } = self;
        let mut requests = futures_util::stream::select_all(endpoints);
        let permits = Arc::new(tokio::sync::Semaphore::new(WIRE_REQUESTS_IN_FLIGHT_MAX));
        let mut tasks = tokio::task::JoinSet::new();
        tokio::pin!(stop);
        loop {
            let request = tokio::select! {
                () = &mut stop => break,
                request = requests.next() => request,
            };
            let Some(request) = request else { break };
            // Fewer than the bound in flight: take the next one; else wait for one to end.
            let Ok(permit) = permits.clone().acquire_owned().await else {
                break;
            };
            let (host, answers, provenance) = (host.clone(), answers.clone(), provenance.clone());
            tasks.spawn(async move {
                let key = request_key(&request.message);
                let made = || answer_request(&host, &request.message);
                let answer = Bytes::from_owner(Answer(answers.answer(key, made).await));
                let message = &request.message;
                let request_id = message
                    .headers
                    .as_ref()
                    .and_then(|headers| headers.get(REQUEST_ID_HEADER))
                    .map_or("", |id| id.as_str());
                let signed =
                    provenance.sign_answer(message.subject.as_str(), request_id, &key, &answer);
                // The call's events stored before its answer goes: a worker killed after
                // answering has lost none of them.
                host.events_settled().await;
                if let Err(error) = request.respond_with_headers(Ok(answer), signed).await {
                    tracing::warn!(error = %Caused(&error), "an answer could not be sent (the client retries)");
                }
                drop(permit);
            });
            // Reap the finished ones so the set does not grow.
            while tasks.try_join_next().is_some() {}
        }
        drop(requests);
        while tasks.join_next().await.is_some() {}
        service
            .stop()
            .await
            .map_err(|error| WireError::Service(error.to_string()))
    }
}

/// A kept answer as the bytes of a reply (shared, not copied).
struct Answer(Arc<str>);

impl AsRef<[u8]> for Answer {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// The cache key of a request off the wire.
fn request_key(message: &async_nats::Message) -> [u8; 32] {
    let sent = super::sent_frame(message.headers.as_ref());
    aura_host::remote::request_key(message.subject.as_str(), &sent, &message.payload)
}

/// The answer to one request, by its subject: a tool call or a tick. A subject outside the
/// protocol cannot reach here (only the endpoints' subjects are subscribed).
async fn answer_request(host: &Host, message: &async_nats::Message) -> String {
    let sent = super::sent_frame(message.headers.as_ref());
    let subject = message.subject.as_str();
    if let Some(agent) = subject.strip_prefix("aura.tick.") {
        return host.serve_tick(agent, &message.payload, &sent).await;
    }
    let addressed = subject
        .strip_prefix("aura.tool.")
        .and_then(|rest| rest.split_once('.'));
    host.serve_call(&message.payload, &sent, addressed).await
}
