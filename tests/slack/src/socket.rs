//! Socket Mode (api.slack.com/apis/socket-mode): single-use tickets from `apps.connections.open`,
//! `hello` on connect, envelopes the test delivers, the client's acks within the deadline on the
//! fake's clock, Events API redelivery, `disconnect` messages and abrupt drops.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::state::{Inner, Shared};
use crate::{Ack, EnvelopeKind, EnvelopeRecord};

/// Events API redeliveries: "nearly immediately", then after 1 minute, then after 5 minutes
/// (api.slack.com/apis/connections/events-api, "Failure conditions"); then Slack gives up.
const EVENT_RETRY_DELAYS: [Duration; 3] = [
    Duration::ZERO,
    Duration::from_secs(60),
    Duration::from_secs(300),
];

/// What the test (or the sweep) asks of one connection's task.
#[derive(Debug)]
pub(crate) enum Outbound {
    Text(String),
    /// Close with a Close frame (1000), as after a `disconnect` message.
    Close,
    /// Cut the TCP connection without a Close frame.
    Drop,
    /// A WebSocket ping, as Slack's server sends on its heartbeat.
    Ping,
}

/// One delivery, with the fake-clock times its deadline is measured by.
pub(crate) struct Envelope {
    pub(crate) record: EnvelopeRecord,
    delivered: Instant,
    deadline: Instant,
}

#[derive(Default)]
pub(crate) struct Sockets {
    /// Ticket -> already used.
    tickets: HashMap<String, bool>,
    /// Open connections, oldest first.
    pub(crate) live: Vec<(u64, mpsc::UnboundedSender<Outbound>)>,
    next_id: u64,
    pub(crate) hellos: usize,
    /// Pongs the clients sent back to the fake's pings.
    pub(crate) pongs: usize,
    /// Handshakes refused for a missing, unknown or reused ticket.
    pub(crate) refused: usize,
    pub(crate) envelopes: Vec<Envelope>,
    /// Events API redeliveries waiting for their time: (when, index of the timed-out one).
    retries_due: Vec<(Instant, usize)>,
    /// Acks still to lose on the way ([`crate::FakeSlack::lose_acks`]), and those lost.
    pub(crate) acks_to_lose: usize,
    pub(crate) acks_lost: usize,
}

impl Sockets {
    fn next(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub(crate) fn new_ticket(&mut self) -> String {
        use std::hash::{BuildHasher, Hasher};
        let n = self.next();
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(n);
        let ticket = format!("{:016x}{n:04}", hasher.finish());
        self.tickets.insert(ticket.clone(), false);
        ticket
    }

    /// Spends the ticket of a connection URL's query; false if it is missing, unknown or spent.
    fn spend(&mut self, query: &str) -> bool {
        let ticket = query
            .split('&')
            .find_map(|pair| pair.strip_prefix("ticket="))
            .unwrap_or("");
        match self.tickets.get_mut(ticket) {
            Some(used) if !*used => {
                *used = true;
                true
            }
            _ => {
                self.refused += 1;
                false
            }
        }
    }

    /// Sends `frame` on the newest open connection; false if there is none.
    pub(crate) fn send(&mut self, frame: &Value) -> bool {
        while let Some((_, tx)) = self.live.last() {
            if tx.send(Outbound::Text(frame.to_string())).is_ok() {
                return true;
            }
            self.live.pop();
        }
        false
    }

    pub(crate) fn envelope_id(&mut self) -> String {
        let n = self.next();
        format!(
            "{:08x}-fake-4e1b-9c2d-{n:012x}",
            n.wrapping_mul(0x9E37_79B9)
        )
    }

    /// Records a delivered envelope.
    pub(crate) fn delivered(&mut self, record: EnvelopeRecord, now: Instant, deadline: Duration) {
        self.envelopes.push(Envelope {
            record,
            delivered: now,
            deadline: now + deadline,
        });
    }
}

/// Marks envelopes whose deadline passed and sends Events API redeliveries that are due.
/// True if anything changed.
pub(crate) fn sweep(inner: &mut Inner, now: Instant, deadline: Duration) -> bool {
    let sockets = &mut inner.sockets;
    let mut changed = false;
    for (i, e) in sockets.envelopes.iter_mut().enumerate() {
        if e.record.ack.is_none() && !e.record.timed_out && e.deadline <= now {
            e.record.timed_out = true;
            changed = true;
            let attempt = usize::try_from(e.record.retry_attempt).unwrap_or(usize::MAX);
            if e.record.kind == EnvelopeKind::EventsApi {
                if let Some(delay) = EVENT_RETRY_DELAYS.get(attempt) {
                    sockets.retries_due.push((e.deadline + *delay, i));
                }
            }
        }
    }
    let (due, later): (Vec<_>, Vec<_>) = sockets
        .retries_due
        .drain(..)
        .partition(|(at, _)| *at <= now);
    sockets.retries_due = later;
    for (at, i) in due {
        let Some(original) = sockets.envelopes.get(i).map(|e| e.record.clone()) else {
            continue;
        };
        let envelope_id = sockets.envelope_id();
        let retry_attempt = original.retry_attempt + 1;
        let mut frame = original.frame.clone();
        if let Value::Object(map) = &mut frame {
            map.insert("envelope_id".into(), json!(envelope_id));
            map.insert("retry_attempt".into(), json!(retry_attempt));
            map.insert("retry_reason".into(), json!("timeout"));
        }
        if !sockets.send(&frame) {
            // No connection to redeliver on: Slack keeps it until one opens.
            sockets.retries_due.push((at, i));
            continue;
        }
        let record = EnvelopeRecord {
            envelope_id,
            kind: original.kind,
            frame,
            retry_attempt,
            ack: None,
            timed_out: false,
        };
        sockets.delivered(record, now, deadline);
        changed = true;
    }
    changed
}

/// Resolves once the fake is shutting down.
pub(crate) async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stop| *stop).await;
}

/// Runs [`sweep`] a few times a second, so deadlines pass in real time too.
pub(crate) async fn sweep_every_tick(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        tokio::select! {
            _ = tick.tick() => {
                let changed = sweep(&mut shared.read(), shared.now(), shared.cfg.ack_deadline);
                if changed {
                    shared.announce();
                }
            }
            () = stopped(&mut stop) => return,
        }
    }
}

pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                // Slack away: the connection is cut before any handshake.
                Ok(_) if shared.cuts() => {}
                Ok((stream, _)) => {
                    // Slack's edge sends envelopes at once; Nagle's algorithm would not.
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(connection(Arc::clone(&shared), stream, stop.clone()));
                }
                Err(e) => tracing::debug!("fake slack: socket accept failed: {e}"),
            },
            () = stopped(&mut stop) => return,
        }
    }
}

async fn connection(shared: Arc<Shared>, stream: TcpStream, mut stop: watch::Receiver<bool>) {
    // The error type is tungstenite's handshake callback's, not ours to shrink.
    #[allow(clippy::result_large_err)]
    let check = |request: &Request, response: Response| {
        let path_ok = request.uri().path() == "/socket";
        let query = request.uri().query().unwrap_or("");
        if path_ok && shared.lock().sockets.spend(query) {
            Ok(response)
        } else {
            let mut refusal = ErrorResponse::new(Some("invalid or used ticket".to_owned()));
            *refusal.status_mut() = StatusCode::UNAUTHORIZED;
            Err(refusal)
        }
    };
    let ws = match tokio_tungstenite::accept_hdr_async(stream, check).await {
        Ok(ws) => ws,
        Err(e) => {
            tracing::debug!("fake slack: socket handshake refused: {e}");
            return;
        }
    };
    let (mut sink, mut source) = ws.split();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (conn, hello) = {
        let mut inner = shared.lock();
        let conn = inner.sockets.next();
        inner.sockets.live.push((conn, tx));
        inner.sockets.hellos += 1;
        let hello = json!({
            "type": "hello",
            "num_connections": inner.sockets.live.len(),
            "debug_info": {
                "host": "applink-fake-1",
                "build_number": 1,
                "approximate_connection_time": 18060,
            },
            "connection_info": {"app_id": shared.cfg.app_id},
        });
        (conn, hello)
    };
    let mut close = None;
    let period = shared.cfg.heartbeat;
    let mut heartbeat = tokio::time::interval_at(Instant::now() + period, period);
    if sink.send(Message::Text(hello.to_string())).await.is_ok() {
        close = loop {
            tokio::select! {
                incoming = source.next() => match incoming {
                    Some(Ok(Message::Text(text))) => on_frame(&shared, &text),
                    Some(Ok(Message::Pong(_))) => shared.lock().sockets.pongs += 1,
                    Some(Ok(Message::Close(_))) => {
                        let _ = sink.flush().await;
                        break None;
                    }
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => break None,
                },
                out = rx.recv() => match out {
                    Some(Outbound::Text(text)) => {
                        if sink.send(Message::Text(text)).await.is_err() {
                            break None;
                        }
                    }
                    Some(Outbound::Ping) => {
                        if sink.send(Message::Ping(Vec::new())).await.is_err() {
                            break None;
                        }
                    }
                    Some(Outbound::Close) => break Some(CloseCode::Normal),
                    Some(Outbound::Drop) | None => break None,
                },
                _ = heartbeat.tick() => {
                    if sink.send(Message::Ping(Vec::new())).await.is_err() {
                        break None;
                    }
                }
                () = stopped(&mut stop) => break Some(CloseCode::Away),
            }
        };
    }
    shared.lock().sockets.live.retain(|(c, _)| *c != conn);
    if let Some(code) = close {
        let frame = CloseFrame {
            code,
            reason: "".into(),
        };
        let _ = sink.send(Message::Close(Some(frame))).await;
    }
}

/// The client's frames: acks (`{"envelope_id": ..., "payload": ...}`) and nothing else.
fn on_frame(shared: &Shared, text: &str) {
    let now = shared.now();
    let mut inner = shared.lock();
    sweep(&mut inner, now, shared.cfg.ack_deadline);
    let frame: Value = match serde_json::from_str(text) {
        Ok(frame) => frame,
        Err(_) => return inner.violation(format!("socket frame is not JSON: {text:.200}")),
    };
    let Some(id) = frame.get("envelope_id").and_then(Value::as_str) else {
        return inner.violation(format!("socket frame is not an ack: {text:.200}"));
    };
    if inner.sockets.acks_to_lose > 0 {
        inner.sockets.acks_to_lose -= 1;
        inner.sockets.acks_lost += 1;
        return;
    }
    let Some(envelope) = inner
        .sockets
        .envelopes
        .iter_mut()
        .find(|e| e.record.envelope_id == id)
    else {
        return inner.violation(format!("ack for an unknown envelope {id}"));
    };
    if envelope.record.ack.is_some() {
        return inner.violation(format!("second ack for envelope {id}"));
    }
    envelope.record.ack = Some(Ack {
        payload: frame.get("payload").cloned(),
        after: now.saturating_duration_since(envelope.delivered),
        late: envelope.record.timed_out,
    });
}

impl crate::FakeSlack {
    /// Pings every open Socket Mode connection now, as the heartbeat does every
    /// [`crate::SlackConfig::heartbeat`].
    pub fn heartbeat_now(&self) {
        for (_, tx) in &self.shared.read().sockets.live {
            let _gone = tx.send(Outbound::Ping);
        }
    }

    /// Waits until the clients have answered `n` of the fake's pings with a pong.
    pub async fn wait_pongs(&self, n: usize, timeout: Duration) -> Result<(), String> {
        self.shared
            .wait_for(timeout, &format!("{n} pongs"), |inner| {
                (inner.sockets.pongs >= n).then_some(())
            })
            .await
    }
}
