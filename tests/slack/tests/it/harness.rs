//! Starting the fake, calling its Web API, and opening Socket Mode connections.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use opsbot_fake_slack::{FakeSlack, SlackConfig, Visibility};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

/// How long any single wait may take before the test fails (real time, never waited out).
pub const T: Duration = Duration::from_secs(10);

pub const USER: &str = "U0ALICE001";

/// A fake with `#ops` (public, bot in it, Alice in it).
pub struct World {
    pub fake: FakeSlack,
    pub ops: String,
    pub http: reqwest::Client,
}

impl World {
    pub async fn start() -> Self {
        Self::with(SlackConfig::default()).await
    }

    pub async fn with(config: SlackConfig) -> Self {
        let fake = FakeSlack::start(config).await;
        let ops = fake.add_channel("ops", Visibility::Public, true);
        fake.add_member(&ops, USER);
        Self {
            fake,
            ops,
            http: reqwest::Client::new(),
        }
    }

    pub fn bot(&self) -> String {
        self.fake.config().bot_token.clone()
    }

    pub fn app(&self) -> String {
        self.fake.config().app_token.clone()
    }

    /// A JSON call as Slack's SDKs make it; returns HTTP status, `Retry-After`, body.
    /// `Value::Null` sends an empty object.
    pub async fn call(&self, method: &str, token: Option<&str>, body: Value) -> Reply {
        let body = if body.is_null() {
            serde_json::json!({})
        } else {
            body
        };
        let mut request = self
            .http
            .post(format!("{}{method}", self.fake.base_url()))
            .header("content-type", "application/json; charset=utf-8")
            .body(body.to_string());
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        Reply::of(request.send().await.unwrap()).await
    }

    /// A form-encoded call, token in the body.
    pub async fn form(&self, method: &str, body: &str) -> Reply {
        let response = self
            .http
            .post(format!("{}{method}", self.fake.base_url()))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.to_owned())
            .send()
            .await
            .unwrap();
        Reply::of(response).await
    }

    pub async fn post(&self, channel: &str, text: &str) -> Reply {
        let body = serde_json::json!({"channel": channel, "text": text});
        self.call("chat.postMessage", Some(&self.bot()), body).await
    }

    /// `conversations.info` of `channel`, asked with the bot token.
    pub async fn info(&self, channel: &str) -> Reply {
        let body = serde_json::json!({"channel": channel});
        self.call("conversations.info", Some(&self.bot()), body)
            .await
    }

    /// `conversations.history` asked with the bot token; `args` names the channel and the rest.
    pub async fn history(&self, args: Value) -> Reply {
        self.call("conversations.history", Some(&self.bot()), args)
            .await
    }

    /// The bot's default scopes and the two `conversations.history` needs.
    pub fn grant_history(&self) {
        let mut scopes: Vec<&str> = self
            .fake
            .config()
            .bot_scopes
            .iter()
            .map(String::as_str)
            .collect();
        scopes.extend(["channels:history", "groups:history"]);
        self.fake.set_scopes(&self.bot(), &scopes);
    }

    /// A Socket Mode URL from `apps.connections.open`, its ticket unspent.
    pub async fn socket_url(&self) -> String {
        self.call("apps.connections.open", Some(&self.app()), Value::Null)
            .await
            .str("url")
    }

    /// `apps.connections.open`'s URL, then a connection to it, past the `hello`.
    pub async fn connect(&self) -> (Socket, Value) {
        let url = self.socket_url().await;
        let mut socket = open(&url).await.unwrap();
        let hello = socket.next_json().await;
        (socket, hello)
    }
}

pub struct Reply {
    pub status: u16,
    pub retry_after: Option<String>,
    pub body: Value,
}

impl Reply {
    async fn of(response: reqwest::Response) -> Self {
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        let body = response.json().await.unwrap();
        Self {
            status,
            retry_after,
            body,
        }
    }

    /// The `error` of an `ok: false` answer with HTTP 200.
    pub fn error(&self) -> &str {
        assert_eq!(self.status, 200, "{}", self.body);
        assert_eq!(self.body["ok"], false, "{}", self.body);
        self.body["error"].as_str().unwrap()
    }

    pub fn ok(&self) -> &Value {
        assert_eq!(self.status, 200, "{}", self.body);
        assert_eq!(self.body["ok"], true, "{}", self.body);
        &self.body
    }

    pub fn str(&self, key: &str) -> String {
        self.ok()[key].as_str().unwrap().to_owned()
    }
}

pub struct Socket(pub WebSocketStream<TcpStream>);

/// Connects to a `ws://` URL; `Err` carries the handshake's refusal.
pub async fn open(url: &str) -> Result<Socket, tokio_tungstenite::tungstenite::Error> {
    let host = url.trim_start_matches("ws://").split('/').next().unwrap();
    let tcp = TcpStream::connect(host).await.unwrap();
    let (ws, _) = tokio_tungstenite::client_async(url, tcp).await?;
    Ok(Socket(ws))
}

impl Socket {
    /// The next text frame, as JSON.
    pub async fn next_json(&mut self) -> Value {
        loop {
            let frame = tokio::time::timeout(T, self.0.next()).await.unwrap();
            match frame.unwrap().unwrap() {
                Message::Text(text) => return serde_json::from_str(&text).unwrap(),
                Message::Ping(_) | Message::Pong(_) => {}
                other => panic!("expected a text frame, got {other:?}"),
            }
        }
    }

    /// The next frame of any kind (`None`: the connection ended).
    pub async fn next_frame(
        &mut self,
    ) -> Option<Result<Message, tokio_tungstenite::tungstenite::Error>> {
        tokio::time::timeout(T, self.0.next()).await.unwrap()
    }

    pub async fn send(&mut self, frame: Value) {
        self.0.send(Message::Text(frame.to_string())).await.unwrap();
    }
}
