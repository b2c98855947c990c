//! The gateway: HELLO, IDENTIFY -> READY, heartbeats, RESUME -> RESUMED, dispatches, and the
//! close codes Discord uses. One session (a single shard), JSON text frames, no compression.

use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::payloads;
use crate::state::{Outbound, Shared, random_token};

pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    tracing::debug!(%peer, "fake discord: gateway connection");
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(connection(Arc::clone(&shared), stream, stop.clone()));
                }
                Err(e) => tracing::debug!("fake discord: gateway accept failed: {e}"),
            },
            () = stopped(&mut stop) => return,
        }
    }
}

/// Resolves once the fake is shutting down.
pub(crate) async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stop| *stop).await;
}

/// What a frame from the client asks of the connection.
enum Flow {
    Continue,
    Close(u16, &'static str),
}

async fn connection(shared: Arc<Shared>, stream: TcpStream, mut stop: watch::Receiver<bool>) {
    let ws = match tokio_tungstenite::accept_async(stream).await {
        Ok(ws) => ws,
        Err(e) => {
            tracing::debug!("fake discord: websocket handshake failed: {e}");
            return;
        }
    };
    let (mut sink, mut source) = ws.split();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let conn = {
        let mut inner = shared.lock();
        inner.gateway.next_connection += 1;
        inner.gateway.next_connection
    };
    let interval = u64::try_from(shared.cfg.heartbeat_interval.as_millis()).unwrap_or(41_250);
    let hello = json!({"op": 10, "d": {"heartbeat_interval": interval}, "s": null, "t": null});
    if sink.send(Message::Text(hello.to_string())).await.is_err() {
        return;
    }
    let mut identified = false;
    let close = loop {
        tokio::select! {
            incoming = source.next() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    if let Flow::Close(code, reason) = on_frame(&shared, conn, &tx, &text, &mut identified) {
                        break Some((code, reason));
                    }
                }
                Some(Ok(Message::Binary(bytes))) => {
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    if let Flow::Close(code, reason) = on_frame(&shared, conn, &tx, &text, &mut identified) {
                        break Some((code, reason));
                    }
                }
                Some(Ok(Message::Close(frame))) => {
                    tracing::debug!(?frame, "fake discord: client closed the gateway connection");
                    let code = frame.as_ref().map_or(1005, |f| u16::from(f.code));
                    let unanswered = {
                        let mut inner = shared.lock();
                        inner.gateway.client_closes.push(code);
                        inner.gateway.closes_unanswered
                    };
                    if unanswered {
                        stopped(&mut stop).await;
                        break None;
                    }
                    // tungstenite has queued the reply; flushing sends it.
                    let _ = sink.flush().await;
                    break None;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::debug!("fake discord: gateway read failed: {e}");
                    break None;
                }
                None => break None,
            },
            out = rx.recv() => match out {
                Some(Outbound::Text(text)) => {
                    if sink.send(Message::Text(text)).await.is_err() {
                        break None;
                    }
                }
                Some(Outbound::Close(code, reason)) => break Some((code, reason)),
                None => break None,
            },
            () = stopped(&mut stop) => break Some((1001, "Going away.")),
        }
    };
    {
        let mut inner = shared.lock();
        if inner
            .gateway
            .current
            .as_ref()
            .is_some_and(|(c, _)| *c == conn)
        {
            inner.gateway.current = None;
            inner.gateway.ready = false;
        }
        if let Some((code, _)) = close {
            inner.gateway.closes.push(code);
        }
    }
    if let Some((code, reason)) = close {
        tracing::debug!(code, reason, "fake discord: closing the gateway connection");
        let frame = CloseFrame {
            code: CloseCode::from(code),
            reason: reason.into(),
        };
        if sink.send(Message::Close(Some(frame))).await.is_ok() {
            // Complete the close handshake: wait for the client's Close (bounded).
            let _ = tokio::time::timeout(Duration::from_secs(2), async {
                while let Some(Ok(message)) = source.next().await {
                    if message.is_close() {
                        break;
                    }
                }
            })
            .await;
        }
    }
}

fn token_ok(shared: &Shared, d: &Value) -> bool {
    let token = d.get("token").and_then(Value::as_str).unwrap_or("");
    let token = token.strip_prefix("Bot ").unwrap_or(token);
    token == shared.cfg.token
}

fn send(tx: &mpsc::UnboundedSender<Outbound>, frame: &Value) {
    let _gone = tx.send(Outbound::Text(frame.to_string()));
}

fn on_frame(
    shared: &Shared,
    conn: u64,
    tx: &mpsc::UnboundedSender<Outbound>,
    text: &str,
    identified: &mut bool,
) -> Flow {
    let Ok(frame) = serde_json::from_str::<Value>(text) else {
        return Flow::Close(4002, "Error while decoding payload.");
    };
    let d = frame.get("d").cloned().unwrap_or(Value::Null);
    let op = frame.get("op").and_then(Value::as_u64);
    tracing::debug!(?op, "fake discord: gateway frame");
    match op {
        Some(1) => {
            shared.lock().gateway.heartbeats += 1;
            send(tx, &json!({"op": 11, "d": null, "s": null, "t": null}));
            Flow::Continue
        }
        Some(2) => {
            if *identified {
                return Flow::Close(4005, "Already authenticated.");
            }
            if !token_ok(shared, &d) {
                shared
                    .lock()
                    .violation("gateway IDENTIFY with a wrong token".into());
                return Flow::Close(4004, "Authentication failed.");
            }
            *identified = true;
            identify(shared, conn, tx, &d);
            Flow::Continue
        }
        Some(6) => {
            if !token_ok(shared, &d) {
                shared
                    .lock()
                    .violation("gateway RESUME with a wrong token".into());
                return Flow::Close(4004, "Authentication failed.");
            }
            if resume(shared, conn, tx, &d) {
                *identified = true;
            } else {
                // Not resumable: the client must identify anew.
                send(tx, &json!({"op": 9, "d": false, "s": null, "t": null}));
            }
            Flow::Continue
        }
        Some(3 | 4 | 8 | 31) if *identified => Flow::Continue,
        Some(3 | 4 | 8 | 31) => Flow::Close(4003, "Not authenticated."),
        _ => Flow::Close(4001, "Unknown opcode."),
    }
}

fn identify(shared: &Shared, conn: u64, tx: &mpsc::UnboundedSender<Outbound>, d: &Value) {
    let cfg = &shared.cfg;
    let session_id = random_token(32);
    let ready = json!({
        "v": 10,
        "user": payloads::bot_user(cfg),
        "guilds": [{"id": cfg.guild_id.to_string(), "unavailable": true}],
        "session_id": session_id,
        "resume_gateway_url": shared.gateway_url,
        "shard": d.get("shard").cloned().unwrap_or_else(|| json!([0, 1])),
        "application": {"id": cfg.application_id.to_string(), "flags": 0},
        "private_channels": [],
        "presences": [],
        "relationships": [],
        "guild_join_requests": [],
        "user_settings": {},
        "session_type": "normal",
        "auth": {},
        "_trace": ["[\"fake-discord\"]"],
    });
    let mut inner = shared.lock();
    let bits: Vec<(u64, u64)> = cfg
        .channels
        .iter()
        .map(|c| (*c, inner.bot_permissions(cfg, *c)))
        .collect();
    let intents = d.get("intents").and_then(Value::as_u64).unwrap_or(0);
    let g = &mut inner.gateway;
    g.session_id = Some(session_id);
    g.intents = intents;
    g.seq = 0;
    g.events.clear();
    g.current = Some((conn, tx.clone()));
    g.identifies += 1;
    g.dispatch("READY", ready);
    // With the GUILDS intent, Discord follows READY with each guild's GUILD_CREATE.
    if intents & 1 != 0 {
        let of = |c: u64| bits.iter().find(|(id, _)| *id == c).map_or(0, |(_, b)| *b);
        g.dispatch("GUILD_CREATE", payloads::guild_create(cfg, of));
    }
    g.ready = true;
}

/// Replays what the session missed and answers RESUMED; false if the session is not resumable.
fn resume(shared: &Shared, conn: u64, tx: &mpsc::UnboundedSender<Outbound>, d: &Value) -> bool {
    let session = d.get("session_id").and_then(Value::as_str);
    let seq = d.get("seq").and_then(Value::as_u64).unwrap_or(0);
    let mut inner = shared.lock();
    let g = &mut inner.gateway;
    if session.is_none() || g.session_id.as_deref() != session || seq > g.seq {
        return false;
    }
    for (s, frame) in &g.events {
        if *s > seq {
            let _gone = tx.send(Outbound::Text(frame.clone()));
        }
    }
    g.current = Some((conn, tx.clone()));
    g.resumes += 1;
    g.dispatch("RESUMED", json!({"_trace": ["fake-discord"]}));
    g.ready = true;
    true
}
