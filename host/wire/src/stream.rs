//! The event stream on JetStream: the stream [`STREAM_NAME`] over `aura.evt.>`, a host's
//! publisher ([`Publisher`], an [`EventSink`]) and reading it back through a durable consumer
//! ([`read`], `aura events`).
//!
//! It owns the stream's settings (bounds in `limits.rs`; duplicates by message_id dropped
//! within [`EVENTS_DUPLICATE_WINDOW_S`]) and the publisher's queue: a call hands its events
//! over without waiting (at most [`EVENTS_QUEUED_MAX`] queued; past it they are counted and
//! logged as dropped, never blocking a call), and one task publishes them in order, each
//! acknowledged by the stream (sent again with the same message id while the server is
//! away), and says when all so far are stored ([`EventSink::settled`]: a worker answers only
//! then). Events are what happened after the fact: a quarantine record is durable in the
//! host's own log first. It must not build events (the host does).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_nats::jetstream::context::PublishAckFuture;
use async_nats::jetstream::{self, consumer, stream};
use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;

use super::WireError;
use aura_contract::limits::{
    EVENTS_ACK_TIMEOUT_MS, EVENTS_ACKS_PENDING_MAX, EVENTS_DUPLICATE_WINDOW_S,
    EVENTS_PUBLISH_ATTEMPTS_MAX, EVENTS_QUEUED_MAX, EVENTS_STREAM_AGE_S,
    EVENTS_STREAM_MESSAGES_MAX,
};
use aura_host::events::{AgentMessage, EventSink};

/// The JetStream stream of every host's events.
pub const STREAM_NAME: &str = "AURA_EVENTS";

/// Its subjects.
pub const STREAM_SUBJECTS: &str = "aura.evt.>";

/// The durable consumer `aura events` reads through unless told another.
pub const DURABLE_DEFAULT: &str = "aura-events";

/// The subject of an event.
pub fn event_subject(message: &AgentMessage) -> String {
    format!("aura.evt.{}", message.event.as_str())
}

/// The stream, created if it is not there yet (the same settings from every host).
pub async fn ensure_stream(
    client: &async_nats::Client,
) -> Result<jetstream::stream::Stream, WireError> {
    let context = jetstream::new(client.clone());
    context
        .get_or_create_stream(stream::Config {
            name: STREAM_NAME.to_owned(),
            subjects: vec![STREAM_SUBJECTS.to_owned()],
            max_messages: EVENTS_STREAM_MESSAGES_MAX,
            max_age: Duration::from_secs(EVENTS_STREAM_AGE_S),
            duplicate_window: Duration::from_secs(EVENTS_DUPLICATE_WINDOW_S),
            discard: stream::DiscardPolicy::Old,
            storage: stream::StorageType::File,
            ..Default::default()
        })
        .await
        .map_err(|error| WireError::Stream(error.to_string()))
}

/// A host's events, published to the stream by one task.
#[derive(Debug, Clone)]
pub struct Publisher {
    queue: tokio::sync::mpsc::Sender<Queued>,
    dropped: Arc<AtomicU64>,
}

/// What the publishing task takes, in order.
#[derive(Debug)]
enum Queued {
    /// An event to publish.
    Event(Box<AgentMessage>),
    /// Tell this sender once every event before it is stored (or given up on).
    Settle(tokio::sync::oneshot::Sender<()>),
}

/// What the publishing task did, once its queue is closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Published {
    /// Acknowledged by the stream (a duplicate the stream dropped included).
    pub acknowledged: u64,
    /// Not acknowledged (logged each).
    pub failed: u64,
}

/// An event sent, its acknowledgement not yet awaited.
type Sent = (Box<AgentMessage>, Result<PublishAckFuture, String>);

impl Publisher {
    /// A publisher on `client`'s server (the stream made sure of first), and the task that
    /// publishes; the task ends once every clone of the publisher is dropped and the queue
    /// is empty. The task sends events back to back and awaits their acknowledgements in
    /// order when the queue runs dry, when [`EVENTS_ACKS_PENDING_MAX`] are pending, or when
    /// asked to settle; an event not acknowledged is published again with the same id.
    pub async fn start(
        client: &async_nats::Client,
    ) -> Result<(Self, tokio::task::JoinHandle<Published>), WireError> {
        ensure_stream(client).await?;
        let context = jetstream::ContextBuilder::new()
            .timeout(Duration::from_millis(EVENTS_ACK_TIMEOUT_MS))
            .build(client.clone());
        let (queue, mut queued) = tokio::sync::mpsc::channel::<Queued>(EVENTS_QUEUED_MAX);
        let task = tokio::spawn(async move {
            let mut published = Published::default();
            let mut pending: VecDeque<Sent> = VecDeque::new();
            loop {
                let item = match queued.try_recv() {
                    Ok(item) => item,
                    Err(tokio::sync::mpsc::error::TryRecvError::Empty) => {
                        settle(&context, &mut pending, &mut published).await;
                        match queued.recv().await {
                            Some(item) => item,
                            None => break,
                        }
                    }
                    Err(tokio::sync::mpsc::error::TryRecvError::Disconnected) => break,
                };
                match item {
                    Queued::Event(message) => {
                        let sent = send(&context, &message).await;
                        pending.push_back((message, sent));
                        if pending.len() >= EVENTS_ACKS_PENDING_MAX {
                            settle(&context, &mut pending, &mut published).await;
                        }
                    }
                    Queued::Settle(done) => {
                        settle(&context, &mut pending, &mut published).await;
                        let _ = done.send(());
                    }
                }
            }
            settle(&context, &mut pending, &mut published).await;
            published
        });
        Ok((
            Self {
                queue,
                dropped: Arc::new(AtomicU64::new(0)),
            },
            task,
        ))
    }

    /// Events that found the queue full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// Sends one event (its acknowledgement awaited later).
async fn send(
    context: &jetstream::Context,
    message: &AgentMessage,
) -> Result<PublishAckFuture, String> {
    let publish = jetstream::message::PublishMessage::build()
        .payload(Bytes::from(message.to_canonical()))
        .message_id(&message.message_id);
    context
        .send_publish(event_subject(message), publish)
        .await
        .map_err(|error| error.to_string())
}

/// Awaits the pending events' acknowledgements in order; one not acknowledged is published
/// again ([`republish`]).
async fn settle(
    context: &jetstream::Context,
    pending: &mut VecDeque<Sent>,
    published: &mut Published,
) {
    // Awaited together: each ack's timeout starts when it is awaited, so one after another
    // a server gone away would cost a timeout per pending event.
    let (messages, sent): (Vec<_>, Vec<_>) = pending.drain(..).unzip();
    let acks = futures_util::future::join_all(sent.into_iter().map(|sent| async move {
        match sent {
            Ok(ack) => ack.await.map(|_| ()).map_err(|e| e.to_string()),
            Err(error) => Err(error),
        }
    }))
    .await;
    for (message, acked) in messages.into_iter().zip(acks) {
        let acked = match acked {
            Ok(()) => Ok(()),
            Err(_) => republish(context, &message).await,
        };
        match acked {
            Ok(()) => published.acknowledged += 1,
            Err(error) => {
                published.failed += 1;
                tracing::warn!(%error, message_id = %message.message_id, "event not published");
            }
        }
    }
}

/// Publishes one event that was not acknowledged until the stream acknowledges it: up to
/// [`EVENTS_PUBLISH_ATTEMPTS_MAX`] attempts in all with backoff (a server restart is waited
/// out); every attempt carries the same Nats-Msg-Id, so one whose ack was lost is not stored
/// twice.
async fn republish(context: &jetstream::Context, message: &AgentMessage) -> Result<(), String> {
    let mut reason = String::new();
    for attempt in 2..=EVENTS_PUBLISH_ATTEMPTS_MAX {
        tokio::time::sleep(super::backoff(attempt - 1)).await;
        let acked = match send(context, message).await {
            Ok(ack) => ack.await.map(|_| ()).map_err(|e| e.to_string()),
            Err(error) => Err(error),
        };
        match acked {
            Ok(()) => return Ok(()),
            Err(error) => reason = error,
        }
    }
    Err(format!("{EVENTS_PUBLISH_ATTEMPTS_MAX} attempts: {reason}"))
}

impl EventSink for Publisher {
    fn publish(&self, message: AgentMessage) {
        if let Err(error) = self.queue.try_send(Queued::Event(Box::new(message))) {
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            tracing::warn!(dropped, reason = %error, "event dropped: the publish queue is full");
        }
    }

    fn settled(&self) -> BoxFuture<'static, ()> {
        let queue = self.queue.clone();
        Box::pin(async move {
            let (done, settled) = tokio::sync::oneshot::channel();
            if queue.send(Queued::Settle(done)).await.is_ok() {
                let _ = settled.await;
            }
        })
    }
}

/// Reads the stream through the durable consumer `durable` (created if new: from the first
/// event on), handing each event's text to `each` and acknowledging it after. Without
/// `follow` it stops once nothing is pending; with it, it waits for more until `each` says
/// stop (returns false).
pub async fn read(
    client: &async_nats::Client,
    durable: &str,
    follow: bool,
    mut each: impl FnMut(&str) -> bool,
) -> Result<u64, WireError> {
    let failed = |error: &dyn std::fmt::Display| WireError::Stream(error.to_string());
    let stream = ensure_stream(client).await?;
    let consumer: consumer::PullConsumer = stream
        .get_or_create_consumer(
            durable,
            consumer::pull::Config {
                durable_name: Some(durable.to_owned()),
                deliver_policy: consumer::DeliverPolicy::All,
                ack_policy: consumer::AckPolicy::Explicit,
                ..Default::default()
            },
        )
        .await
        .map_err(|e| failed(&e))?;
    let mut read = 0u64;
    loop {
        let mut batch = consumer
            .fetch()
            .max_messages(256)
            .expires(Duration::from_millis(if follow { 1000 } else { 200 }))
            .messages()
            .await
            .map_err(|e| failed(&e))?;
        let mut got = 0;
        while let Some(message) = batch.next().await {
            let message = message.map_err(|e| failed(&e))?;
            got += 1;
            read += 1;
            let text = String::from_utf8_lossy(&message.payload);
            let more = each(&text);
            message.ack().await.map_err(|e| failed(&e))?;
            if !more {
                return Ok(read);
            }
        }
        if got == 0 && !follow {
            return Ok(read);
        }
    }
}
