//! The client side of the wire: a host's [`Remote`] made of the workers on a nats-server.
//!
//! It owns discovery (`$SRV.INFO.aura`: which agents the workers serve, built from which
//! sources, at which fuel rate and guest seed; workers that disagree are refused, since a run
//! could not be the same on both), and sending a request: its frame in headers, a timeout of
//! its deadline plus the backstop margin and [`WIRE_REPLY_GRACE_MS`], retried by the remote
//! seam's rules ([`with_retries`]) after a timeout, no responder or a lost connection, with
//! the wire's backoff between attempts. With trusted workers configured, discovery keeps only
//! the workers whose info a trusted key signed, and an answer is taken only when a trusted
//! worker signed it over the request sent ([`crate::provenance`]): another is reported as
//! untrusted and the request sent again. It must not check what an answer says (the host
//! does).

use aura_contract::caused::Caused;
use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;

use super::provenance::{self, Provenance, REQUEST_ID_HEADER};
use super::{Connection, NatsAccess, SERVICE_NAME, WireError, frame_headers};
use aura_contract::error::CrossingError;
use aura_contract::limits::{
    EPOCH_BACKSTOP_MARGIN_MS, WIRE_BODY_BYTES_MAX, WIRE_DISCOVERY_MS, WIRE_REPLY_GRACE_MS,
    WIRE_WORKERS_MAX,
};
use aura_host::remote::{
    AttemptFailed, Remote, RemoteRequest, RemoteWork, SentFrame, request_key, with_retries,
};

/// The workers on one nats-server, as a host's remote.
#[derive(Debug, Clone)]
pub struct Cluster {
    client: async_nats::Client,
    provenance: Provenance,
    agents: Vec<&'static str>,
    sources: BTreeMap<String, String>,
    workers: usize,
    fuel_per_ms: Option<u64>,
    guest_seed: Option<u64>,
}

/// What one worker said of itself in discovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerInfo {
    /// Its service instance id.
    pub id: String,
    /// The agents it serves.
    pub agents: Vec<String>,
    /// Their sources' sha256, by agent.
    pub sources: BTreeMap<String, String>,
    /// Its fuel rate.
    pub fuel_per_ms: Option<u64>,
    /// Its agents' random seed.
    pub guest_seed: Option<u64>,
}

impl Cluster {
    /// Connects to the server `access` names and discovers the workers; none found because
    /// the server refused the discovery (this user may not ask), that refusal is the error.
    pub async fn connect(access: &NatsAccess) -> Result<Self, WireError> {
        let connection = super::connect(access).await?;
        match Self::discover(&connection).await {
            Err(WireError::NoWorkers) => {
                connection
                    .check("this client's discovery of the workers")
                    .await?;
                Err(WireError::NoWorkers)
            }
            found => found,
        }
    }

    /// Discovers the workers on `client`'s server: at least one must answer, and any two
    /// serving the same agent must serve it built from the same source at the same fuel rate.
    pub async fn discover(connection: &Connection) -> Result<Self, WireError> {
        let client = connection.client.clone();
        let provenance = connection.provenance.clone();
        let (workers, untrusted) = discover(&client, &provenance).await?;
        if workers.is_empty() {
            return match untrusted {
                0 => Err(WireError::NoWorkers),
                untrusted => Err(WireError::NoTrustedWorkers { untrusted }),
            };
        }
        let mut sources: BTreeMap<String, String> = BTreeMap::new();
        let mut fuel_per_ms: Option<u64> = None;
        let mut guest_seed: Option<u64> = None;
        for worker in &workers {
            for agent in &worker.agents {
                let Some(source) = worker.sources.get(agent) else {
                    continue;
                };
                match sources.get(agent) {
                    Some(known) if known != source => {
                        return Err(WireError::WorkersDisagree {
                            agent: agent.clone(),
                            one: known.clone(),
                            other: source.clone(),
                        });
                    }
                    _ => {
                        sources.insert(agent.clone(), source.clone());
                    }
                }
            }
            agree(&mut fuel_per_ms, worker.fuel_per_ms, "fuel_per_ms")?;
            agree(&mut guest_seed, worker.guest_seed, "guest_seed")?;
        }
        let agents = aura_contract::catalogue::CATALOGUE
            .iter()
            .filter(|spec| sources.contains_key(spec.name))
            .map(|spec| spec.name)
            .collect();
        Ok(Self {
            client,
            provenance,
            agents,
            sources,
            workers: workers.len(),
            fuel_per_ms,
            guest_seed,
        })
    }

    /// The workers on `client`'s server, not discovered: a worker's remote, for the calls
    /// its agents make to agents it does not serve (whoever serves them answers, or none
    /// does and the call is `agent_unavailable`).
    pub fn undiscovered(connection: &Connection) -> Self {
        Self {
            client: connection.client.clone(),
            provenance: connection.provenance.clone(),
            agents: Vec::new(),
            sources: BTreeMap::new(),
            workers: 0,
            fuel_per_ms: None,
            guest_seed: None,
        }
    }

    /// The seed the workers' agents draw from.
    pub fn guest_seed(&self) -> Option<u64> {
        self.guest_seed
    }

    /// Workers that answered discovery.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// The fuel rate the workers run at (a client runs its calls' budgets at the same).
    pub fn fuel_per_ms(&self) -> Option<u64> {
        self.fuel_per_ms
    }

    /// The connection (for the event stream).
    pub fn client(&self) -> &async_nats::Client {
        &self.client
    }

    /// One attempt: the answer, or why there is none. With trusted workers its signature is
    /// checked before anything else is believed of it (a forged oversized answer is as
    /// untrusted as any other, and retried).
    async fn send_once(
        &self,
        sending: &Sending<'_>,
        timeout: Duration,
    ) -> Result<String, AttemptFailed> {
        let request = async_nats::Request::new()
            .payload(sending.body.clone())
            .headers(sending.headers.clone())
            .timeout(Some(timeout));
        let reply = self
            .client
            .send_request(sending.subject.to_owned(), request)
            .await
            .map_err(|error| match error.kind() {
                async_nats::RequestErrorKind::MaxPayloadExceeded => AttemptFailed::TooLarge,
                _ => AttemptFailed::Lost(error.to_string()),
            })?;
        // No responders: the server's own word (a status, no body), not an answer.
        if let Some(status) = reply.status.filter(|s| !s.is_success()) {
            return Err(AttemptFailed::Lost(format!("status {status}")));
        }
        let checked = self.provenance.check_answer(
            sending.subject,
            &sending.request_id,
            &sending.key,
            reply.headers.as_ref(),
            &reply.payload,
        );
        if let Err(refusal) = checked {
            let shown = &reply.payload[..reply.payload.len().min(WIRE_BODY_BYTES_MAX)];
            return Err(AttemptFailed::Untrusted {
                answer: String::from_utf8_lossy(shown).into_owned(),
                reason: refusal.to_string(),
            });
        }
        if reply.payload.len() > WIRE_BODY_BYTES_MAX {
            return Err(AttemptFailed::BadAnswer(format!(
                "the answer is {} bytes, more than {WIRE_BODY_BYTES_MAX}",
                reply.payload.len()
            )));
        }
        String::from_utf8(reply.payload.to_vec())
            .map_err(|_| AttemptFailed::BadAnswer("the answer is not UTF-8".into()))
    }
}

/// One request as every attempt sends it.
struct Sending<'a> {
    subject: &'a str,
    headers: async_nats::HeaderMap,
    body: Bytes,
    /// Its random id (also in `headers`).
    request_id: String,
    /// What a worker signs its answer over ([`request_key`]).
    key: [u8; 32],
}

impl Remote for Cluster {
    fn agents(&self) -> Vec<&'static str> {
        self.agents.clone()
    }

    fn sources(&self) -> BTreeMap<String, String> {
        self.sources.clone()
    }

    fn send<'a>(
        &'a self,
        request: RemoteRequest<'a>,
    ) -> BoxFuture<'a, Result<String, CrossingError>> {
        Box::pin(async move {
            let subject = match request.work {
                RemoteWork::Call { tool } => super::tool_subject(request.agent, tool),
                RemoteWork::Tick => super::tick_subject(request.agent),
            };
            let mut headers = frame_headers(request.frame);
            // One id for every attempt of this send: a signed answer to it verifies for
            // this request alone.
            let request_id =
                provenance::request_id().map_err(|reason| CrossingError::Unreachable {
                    agent: request.agent.to_owned(),
                    attempts: 0,
                    reason,
                })?;
            headers.insert(REQUEST_ID_HEADER, request_id.as_str());
            let body = Bytes::copy_from_slice(request.body.as_bytes());
            let sending = Sending {
                subject: &subject,
                key: request_key(&subject, &SentFrame::of(request.frame), &body),
                headers,
                body,
                request_id,
            };
            let timeout = Duration::from_millis(
                request
                    .frame
                    .budget
                    .deadline_ms
                    .saturating_add(EPOCH_BACKSTOP_MARGIN_MS)
                    .saturating_add(WIRE_REPLY_GRACE_MS),
            );
            with_retries(
                &request,
                |_| self.send_once(&sending, timeout),
                |n| tokio::time::sleep(super::backoff(n)),
            )
            .await
        })
    }
}

/// Takes `known` as the workers' `what` if none was known yet; refuses another value.
fn agree(known: &mut Option<u64>, theirs: Option<u64>, what: &str) -> Result<(), WireError> {
    match (*known, theirs) {
        (Some(one), Some(other)) if one != other => Err(WireError::WorkersDisagree {
            agent: what.to_owned(),
            one: one.to_string(),
            other: other.to_string(),
        }),
        (None, theirs) => {
            *known = theirs;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The workers answering `$SRV.INFO.aura` within [`WIRE_DISCOVERY_MS`] whose info
/// `provenance` accepts, and how many answered that it did not (each logged).
pub async fn discover(
    client: &async_nats::Client,
    provenance: &Provenance,
) -> Result<(Vec<WorkerInfo>, usize), WireError> {
    let inbox = client.new_inbox();
    let mut answers = client
        .subscribe(inbox.clone())
        .await
        .map_err(|error| WireError::Discovery(error.to_string()))?;
    client
        .publish_with_reply(format!("$SRV.INFO.{SERVICE_NAME}"), inbox, Bytes::new())
        .await
        .map_err(|error| WireError::Discovery(error.to_string()))?;
    let mut workers = Vec::new();
    let mut untrusted = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_millis(WIRE_DISCOVERY_MS);
    while workers.len() + untrusted < WIRE_WORKERS_MAX {
        let Ok(Some(message)) = tokio::time::timeout_at(deadline, answers.next()).await else {
            break;
        };
        // "No responders" (a status, no body): nobody serves aura.
        if message.status.is_some_and(|status| !status.is_success()) {
            break;
        }
        let info: async_nats::service::Info = match serde_json::from_slice(&message.payload) {
            Ok(info) => info,
            // With trusted workers, an unreadable answer is one more stranger's: it must not
            // stop the client from finding the trusted ones.
            Err(error) if !provenance.trusted.is_empty() => {
                tracing::warn!(error = %Caused(&error), "an unreadable discovery answer is not used");
                untrusted += 1;
                continue;
            }
            Err(error) => return Err(WireError::Discovery(error.to_string())),
        };
        let metadata: BTreeMap<String, String> = info.metadata.clone().into_iter().collect();
        if let Err(refusal) = provenance.check_info(&metadata) {
            tracing::warn!(worker = %info.id, %refusal, "a worker that is not trusted is not used");
            untrusted += 1;
            continue;
        }
        let agents = info
            .metadata
            .get("agents")
            .map(|list| {
                list.split(',')
                    .filter(|a| !a.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let sources = match info.metadata.get("sources") {
            Some(text) => serde_json::from_str(text)
                .map_err(|error| WireError::Discovery(format!("sources: {error}")))?,
            None => BTreeMap::new(),
        };
        workers.push(WorkerInfo {
            id: info.id,
            agents,
            sources,
            fuel_per_ms: info
                .metadata
                .get("fuel_per_ms")
                .and_then(|r| r.parse().ok()),
            guest_seed: info.metadata.get("guest_seed").and_then(|s| s.parse().ok()),
        });
    }
    Ok((workers, untrusted))
}
