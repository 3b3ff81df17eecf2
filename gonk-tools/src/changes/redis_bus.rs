//! [`RedisChangeBus`]: change notifications shared through Redis pub/sub.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::StreamExt;
use redis::aio::ConnectionManager;
use tokio::sync::mpsc;

use super::bus::{BusMessage, ChangeBus};

/// Messages waiting to be published; past it new ones are dropped (and
/// logged) rather than held while Redis is slow or away.
const OUTBOX: usize = 1024;
/// The longest wait between two attempts to reach Redis again.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// A [`ChangeBus`] on one Redis: messages are JSON on the channel
/// `PREFIX:changes`, so replicas pointed at the same Redis and prefix hear
/// each other.
///
/// While Redis cannot be reached, changes are still raised in the process
/// that made them; other replicas miss them (Redis pub/sub keeps nothing
/// for a subscriber that is away). Each side reconnects on its own, backing
/// off up to five seconds, and logs one warning per outage. Publishing
/// never waits: a change that cannot be sent is dropped.
pub struct RedisChangeBus {
    client: redis::Client,
    channel: String,
    outbox: mpsc::Sender<String>,
}

impl std::fmt::Debug for RedisChangeBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisChangeBus")
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

impl RedisChangeBus {
    /// A bus on the Redis at `url` (`redis://HOST:PORT[/DB]`), on the
    /// channel `PREFIX:changes`. Only the URL is checked here; connections
    /// are made in the background. Needs a Tokio runtime (it spawns the
    /// publisher).
    pub fn new(url: &str, prefix: &str) -> Result<Self, redis::RedisError> {
        let client = redis::Client::open(url)?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            redis::RedisError::from((
                redis::ErrorKind::Client,
                "RedisChangeBus::new needs a Tokio runtime: call it from inside one",
            ))
        })?;
        let channel = format!("{prefix}:changes");
        let (outbox, pending) = mpsc::channel(OUTBOX);
        runtime.spawn(publisher(client.clone(), channel.clone(), pending));
        Ok(RedisChangeBus {
            client,
            channel,
            outbox,
        })
    }

    /// The Redis channel the messages go on.
    pub fn channel(&self) -> &str {
        &self.channel
    }
}

impl ChangeBus for RedisChangeBus {
    fn publish(&self, message: BusMessage) {
        let Ok(json) = serde_json::to_string(&message) else {
            return;
        };
        if self.outbox.try_send(json).is_err() {
            tracing::warn!(
                target: "gonk_tools::changes",
                channel = %self.channel,
                "change not shared: the Redis publisher is behind or gone"
            );
        }
    }

    fn subscribe(&self) -> BoxStream<'static, BusMessage> {
        let (sender, receiver) = mpsc::channel(OUTBOX);
        tokio::spawn(subscriber(
            self.client.clone(),
            self.channel.clone(),
            sender,
        ));
        futures::stream::unfold(receiver, |mut receiver| async move {
            let message = receiver.recv().await?;
            Some((message, receiver))
        })
        .boxed()
    }
}

/// Logs the first failure of an outage and the recovery, not every retry.
struct Outage {
    what: &'static str,
    down: AtomicBool,
}

impl Outage {
    fn failed(&self, channel: &str, error: &dyn std::fmt::Display) {
        if !self.down.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                target: "gonk_tools::changes",
                %channel,
                "Redis unreachable ({error}): {} until it is back",
                self.what
            );
        }
    }

    fn recovered(&self, channel: &str) {
        if self.down.swap(false, Ordering::Relaxed) {
            tracing::info!(target: "gonk_tools::changes", %channel, "Redis reachable again");
        }
    }
}

fn backoff(previous: Duration) -> Duration {
    (previous * 2).clamp(Duration::from_millis(100), MAX_BACKOFF)
}

/// Sends the outbox to Redis, one `PUBLISH` per message; a message that
/// fails is dropped (notifications are best effort).
async fn publisher(client: redis::Client, channel: String, mut pending: mpsc::Receiver<String>) {
    let outage = Outage {
        what: "changes made here are not shared",
        down: AtomicBool::new(false),
    };
    let mut connection: Option<ConnectionManager> = None;
    while let Some(json) = pending.recv().await {
        if connection.is_none() {
            match client.get_connection_manager().await {
                Ok(made) => connection = Some(made),
                Err(error) => {
                    outage.failed(&channel, &error);
                    continue;
                }
            }
        }
        let Some(redis) = connection.as_mut() else {
            continue;
        };
        let sent: redis::RedisResult<i64> = redis::cmd("PUBLISH")
            .arg(&channel)
            .arg(json)
            .query_async(redis)
            .await;
        match sent {
            Ok(_) => outage.recovered(&channel),
            Err(error) => outage.failed(&channel, &error),
        }
    }
}

/// Listens on the channel and hands each message on; reconnects with
/// back-off until the stream's reader is gone.
async fn subscriber(client: redis::Client, channel: String, sender: mpsc::Sender<BusMessage>) {
    let outage = Outage {
        what: "changes made by other processes are not heard",
        down: AtomicBool::new(false),
    };
    let sender = Arc::new(sender);
    let mut wait = Duration::ZERO;
    while !sender.is_closed() {
        let subscribed = async {
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe(&channel).await?;
            Ok::<_, redis::RedisError>(pubsub)
        };
        let pubsub = match subscribed.await {
            Ok(pubsub) => pubsub,
            Err(error) => {
                outage.failed(&channel, &error);
                wait = backoff(wait);
                tokio::time::sleep(wait).await;
                continue;
            }
        };
        outage.recovered(&channel);
        wait = Duration::ZERO;
        let mut messages = pubsub.into_on_message();
        while let Some(message) = messages.next().await {
            let Ok(payload) = message.get_payload::<String>() else {
                continue;
            };
            // Someone else's message on our channel is skipped, not fatal.
            let Ok(message) = serde_json::from_str::<BusMessage>(&payload) else {
                tracing::debug!(target: "gonk_tools::changes", %channel, "skipped a message that is not a change");
                continue;
            };
            if sender.send(message).await.is_err() {
                return;
            }
        }
        // The connection ended: Redis went away or restarted.
        outage.failed(&channel, &"the subscription ended");
        wait = backoff(wait);
        tokio::time::sleep(wait).await;
    }
}
