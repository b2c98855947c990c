//! One Socket Mode connection (api.slack.com/apis/socket-mode): a single-use URL from
//! `apps.connections.open`, `hello`, then envelopes, each acknowledged once with its
//! `envelope_id` (and, for a slash command, the response as its payload) within Slack's 3 s.
//! Slack pings; the WebSocket library answers. The connection ends when Slack asks for a new
//! one (`refresh_requested`), turns Socket Mode off (`link_disabled`), or the link drops.

use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use super::web::{Web, WebError};

/// Slack's server pings every few seconds; its own client deems a link dead after 30 s
/// without one (`serverPingTimeoutMS` in `@slack/socket-mode`), and so does opsbot.
const SILENCE: Duration = Duration::from_secs(30);

/// How long connecting (TCP, TLS, the WebSocket handshake) may take.
const HANDSHAKE: Duration = Duration::from_secs(15);

/// What Slack delivered, to be acknowledged once with [`Acker`].
#[derive(Debug)]
pub(super) struct Envelope {
    pub(super) kind: Kind,
    pub(super) payload: Value,
}

/// The kinds of envelope opsbot acts on; any other is acknowledged and ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    SlashCommand,
    Interactive,
    Event,
    Other,
}

/// Acknowledges one envelope, once: it is consumed by use.
#[derive(Debug)]
pub(super) struct Acker {
    envelope_id: String,
    frames: mpsc::UnboundedSender<String>,
}

impl Acker {
    /// Acknowledges, with the response to show (a slash command's) when there is one. A
    /// connection gone meanwhile takes no ack: Slack has given up on it already.
    pub(super) fn ack(self, payload: Option<Value>) {
        let mut frame = json!({ "envelope_id": self.envelope_id });
        if let Some(payload) = payload {
            frame["payload"] = payload;
        }
        let _ = self.frames.send(frame.to_string());
    }
}

/// Why a connection ended.
#[derive(Debug, thiserror::Error)]
pub(super) enum Ended {
    /// Slack recycles connections every few hours: connect again at once.
    #[error("Slack asked for a new connection")]
    Refresh,
    /// Socket Mode was turned off for the app: reconnecting cannot help until it is back on.
    #[error(
        "Socket Mode is turned off for the app (link_disabled): turn it on in the app's settings"
    )]
    Disabled,
    #[error("the Socket Mode connection was lost: {0}")]
    Lost(String),
    #[error("cannot open a Socket Mode connection: {0}")]
    Open(#[from] WebError),
}

/// Opens a connection with the app-level token and serves it until it ends, handing each
/// envelope to `handle` (which must not block: it spawns what takes time).
pub(super) async fn serve(
    app: &Web,
    tls: Arc<rustls::ClientConfig>,
    mut handle: impl FnMut(Envelope, Acker),
) -> Ended {
    let opened = match app.call("apps.connections.open", &json!({})).await {
        Ok(opened) => opened,
        Err(error) => return Ended::Open(error),
    };
    let Some(url) = opened.get("url").and_then(Value::as_str) else {
        return Ended::Lost("apps.connections.open returned no url".to_owned());
    };
    let socket = match tokio::time::timeout(HANDSHAKE, connect(url, tls)).await {
        Ok(Ok(socket)) => socket,
        Ok(Err(error)) => return Ended::Lost(error),
        Err(_) => return Ended::Lost(format!("no handshake within {HANDSHAKE:?}")),
    };
    let (mut sink, mut stream) = socket.split();
    let (frames, mut outgoing) = mpsc::unbounded_channel::<String>();
    loop {
        tokio::select! {
            // Never closed: `frames` is held here, for the envelopes still to come.
            Some(frame) = outgoing.recv() => {
                if let Err(error) = sink.send(Message::Text(frame)).await {
                    return Ended::Lost(error.to_string());
                }
            }
            received = tokio::time::timeout(SILENCE, stream.next()) => {
                let message = match received {
                    Err(_) => return Ended::Lost(format!("Slack sent nothing for {SILENCE:?}")),
                    Ok(None) => return Ended::Lost("closed by Slack".to_owned()),
                    Ok(Some(Err(error))) => return Ended::Lost(error.to_string()),
                    Ok(Some(Ok(message))) => message,
                };
                match message {
                    Message::Text(text) => {
                        if let Some(ended) = on_text(&text, &frames, &mut handle) {
                            let _ = sink.close().await;
                            return ended;
                        }
                    }
                    Message::Close(frame) => {
                        let why = frame.map_or_else(String::new, |f| format!(" ({})", f.code));
                        return Ended::Lost(format!("closed by Slack{why}"));
                    }
                    // Pings are answered by the library as it reads; nothing else is sent.
                    _ => {}
                }
            }
        }
    }
}

/// Acts on one frame from Slack; `Some` when the connection is to end.
fn on_text(
    text: &str,
    frames: &mpsc::UnboundedSender<String>,
    handle: &mut impl FnMut(Envelope, Acker),
) -> Option<Ended> {
    let Ok(mut frame) = serde_json::from_str::<Value>(text) else {
        tracing::warn!(frame = %text.chars().take(200).collect::<String>(), "Slack sent a frame that is not JSON");
        return None;
    };
    let kind = frame
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match kind {
        "hello" => {
            tracing::info!("connected to Slack (Socket Mode)");
            None
        }
        "disconnect" => match frame.get("reason").and_then(Value::as_str) {
            Some("warning") => None,
            Some("link_disabled") => Some(Ended::Disabled),
            _ => Some(Ended::Refresh),
        },
        _ => {
            let Some(envelope_id) = frame.get("envelope_id").and_then(Value::as_str) else {
                tracing::warn!(kind, "Slack sent a frame with no envelope_id");
                return None;
            };
            let acker = Acker {
                envelope_id: envelope_id.to_owned(),
                frames: frames.clone(),
            };
            let kind = match kind {
                "slash_commands" => Kind::SlashCommand,
                "interactive" => Kind::Interactive,
                "events_api" => Kind::Event,
                _ => Kind::Other,
            };
            let payload = frame
                .get_mut("payload")
                .map(Value::take)
                .unwrap_or_default();
            handle(Envelope { kind, payload }, acker);
            None
        }
    }
}

type Socket = tokio_tungstenite::WebSocketStream<Box<dyn Link>>;

/// The link under the WebSocket: TLS for `wss://` (Slack's), plain TCP for `ws://` (a
/// loopback test double only).
trait Link: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Link for T {}

async fn connect(url: &str, tls: Arc<rustls::ClientConfig>) -> Result<Socket, String> {
    let request = url
        .into_client_request()
        .map_err(|e| format!("Slack's Socket Mode URL is unusable: {e}"))?;
    let uri = request.uri();
    let host = uri.host().unwrap_or_default().to_owned();
    let secure = uri.scheme_str() == Some("wss");
    let port = uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
    let tcp = TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| format!("cannot reach {host}:{port}: {e}"))?;
    // Acks are small frames that must leave at once, not wait for the peer's delayed ACK
    // (Nagle's algorithm would hold each for up to 40 ms).
    tcp.set_nodelay(true)
        .map_err(|e| format!("cannot set up the connection to {host}:{port}: {e}"))?;
    let link: Box<dyn Link> = if secure {
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|e| format!("`{host}` is not a server name: {e}"))?;
        let tls = tokio_rustls::TlsConnector::from(tls)
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS with {host}: {e}"))?;
        Box::new(tls)
    } else {
        Box::new(tcp)
    };
    let (socket, _) = tokio_tungstenite::client_async(request, link)
        .await
        .map_err(|e| format!("the WebSocket handshake with {host} failed: {e}"))?;
    Ok(socket)
}
