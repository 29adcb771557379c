//! Reading a subject of a fleet stream: its last message, or every message up to the last as
//! of now, each step bounded. It must not interpret what it reads.

use async_nats::jetstream::message::StreamMessage;
use async_nats::jetstream::{self, consumer, stream};
use futures_util::StreamExt;

use super::{step, within};
use crate::protocol::Seq;
use crate::store::{FleetError, failed as nats};

/// The last message on `subject` of `stream`, if it has one.
pub(super) async fn last_message(
    stream: &stream::Stream,
    subject: &str,
    doing: &'static str,
) -> Result<Option<StreamMessage>, FleetError> {
    match within(doing, stream.get_last_raw_message_by_subject(subject)).await? {
        Ok(message) => Ok(Some(message)),
        Err(error) if error.kind() == stream::LastRawMessageErrorKind::NoMessageFound => Ok(None),
        Err(error) => Err(nats(doing)(&error)),
    }
}

/// Every message on `subject` of `stream` up to its last as of now (at most `max`), with its
/// stream sequence. The ordered consumer that read them is deleted after, so a host that
/// takes many people over does not leave a consumer per person behind on the server.
pub(super) async fn read_subject(
    stream: &stream::Stream,
    subject: String,
    max: usize,
    doing: &'static str,
) -> Result<Vec<(Seq, jetstream::Message)>, FleetError> {
    let Some(last) = last_message(stream, &subject, doing).await? else {
        return Ok(Vec::new());
    };
    let consumer = step(
        doing,
        stream.create_consumer(consumer::pull::OrderedConfig {
            filter_subject: subject,
            deliver_policy: consumer::DeliverPolicy::All,
            ..Default::default()
        }),
    )
    .await?;
    let name = consumer.cached_info().name.clone();
    let read = async {
        let mut messages = step(doing, consumer.messages()).await?;
        let mut read = Vec::new();
        while read.len() < max {
            let Some(message) = within(doing, messages.next()).await? else {
                return Err(FleetError::Store {
                    doing,
                    detail: "the consumer ended before the subject's last message".to_owned(),
                });
            };
            let message = message.map_err(|e| nats(doing)(&e))?;
            let seq = message.info().map_err(|e| nats(doing)(&e))?.stream_sequence;
            read.push((seq, message));
            if seq >= last.sequence {
                break;
            }
        }
        Ok(read)
    };
    let read = read.await;
    // Best effort: an ordered consumer left behind goes after 30 s of inactivity.
    let _ = within(doing, stream.delete_consumer(&name)).await;
    read
}
