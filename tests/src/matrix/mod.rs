//! A real Matrix homeserver, Synapse 1.163.2 (from PyPI), on loopback, for tests that must meet
//! a real server rather than a fake: real access tokens, real `/sync`, real power levels, real
//! `M_FORBIDDEN` and real rate limits (429 `M_LIMIT_EXCEEDED` with `retry_after_ms`).
//!
//! [`real_synapse`] starts two once per test binary by running the project's own script,
//! `tests/matrix/start-synapse.sh`: its venv is installed on first use (under a lock, so
//! parallel test binaries do not race) and cached in `<target>/matrix/venv-synapse`; each
//! server gets a free loopback port and data under `<target>/matrix/run-<pid>/synapse-<n>/`.
//! Nothing is skipped: no Python, no PyPI or a server that does not come up fails every test
//! that asked, with the script's own words.
//!
//! The server never outlives the test binary, although the static that holds it is never
//! dropped: before starting it, the binary starts `tests/watch-servers.sh` with the write end of a
//! pipe as its only tie, as the real OpenStack's does: the steps they share are
//! `crate::servers`'.
//!
//! Tests share the one server and run concurrently, so every user [`Synapse::register`] makes
//! has a name of its own, and so do the rooms they create. Rate limiting is on, as in
//! production, at [`MESSAGES_PER_SECOND`] per user (bursts of [`MESSAGE_BURST`]): fresh users per
//! test never reach it by setting up, a test that wants a 429 sets a user's own limit
//! ([`Synapse::override_ratelimit`]).

#![deny(clippy::unwrap_used, clippy::expect_used)] // Server answers are checked, not trusted.

use std::path::{Path, PathBuf};
use std::process::ChildStdin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

mod client;
pub mod scene;
mod start;

pub use crate::openstack::unique;
pub use client::{MatrixUser, On429};

/// The homeserver's `server_name`: user ids are `@name:localhost`.
pub const SERVER_NAME: &str = "localhost";
/// `rc_message.per_second` of the test binary's server: each user's sustained rate of sending
/// events (messages, reactions, redactions, state) and creating rooms. Synapse's default is 0.2,
/// which a test sending a handful of messages and edits would wait on; this is faster, but a
/// real limit all the same.
pub const MESSAGES_PER_SECOND: f64 = 20.0;
/// `rc_message.burst_count`: how many of those a user may send at once (Synapse's default: 10).
pub const MESSAGE_BURST: u32 = 30;

/// How many homeservers a test binary starts. Synapse serves from one Python thread: the
/// Matrix tests side by side kept one at 100 % of a core (their runs waiting on it, the
/// slowest past 30 s), so there is one per core of the machine this suite is made for.
const HOMESERVERS: usize = 2;

static SYNAPSES: OnceLock<Result<[Synapse; HOMESERVERS], String>> = OnceLock::new();
static TURN: AtomicUsize = AtomicUsize::new(0);

/// One of the test binary's homeservers, each call the next in turn; they are started together
/// on the first call (see `crate::servers::started_once`). A test keeps the one it was given:
/// its users and rooms live there.
pub async fn real_synapse() -> &'static Synapse {
    let all = crate::servers::started_once(&SYNAPSES, "Synapse", Synapse::start_all).await;
    &all[TURN.fetch_add(1, Ordering::Relaxed) % HOMESERVERS]
}

/// An error answer of the homeserver (its `errcode` and `error`, and `retry_after_ms` with a
/// 429), or a request that got no answer at all (`status` `None`).
#[derive(Debug, Clone)]
pub struct MatrixError {
    /// The request, e.g. `PUT /_matrix/client/v3/rooms/!r:localhost/send/m.room.message/t1`.
    pub request: String,
    pub status: Option<StatusCode>,
    /// `M_FORBIDDEN`, `M_LIMIT_EXCEEDED`, ...; empty if the answer had none.
    pub errcode: String,
    /// The homeserver's words, or the transport's.
    pub error: String,
    pub retry_after_ms: Option<u64>,
    /// The whole answer body (`null` if there was none).
    pub body: Value,
}

impl std::fmt::Display for MatrixError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.status {
            Some(status) => write!(
                f,
                "{}: {status} {} {:?}",
                self.request, self.errcode, self.error
            )?,
            None => write!(f, "{}: no answer: {}", self.request, self.error)?,
        }
        if let Some(ms) = self.retry_after_ms {
            write!(f, " (retry after {ms} ms)")?;
        }
        Ok(())
    }
}

impl std::error::Error for MatrixError {}

impl MatrixError {
    /// A request that got no answer (`status` `None`): the transport's, or the client's, words.
    fn no_answer(request: String, error: String) -> Self {
        Self {
            request,
            status: None,
            errcode: String::new(),
            error,
            retry_after_ms: None,
            body: Value::Null,
        }
    }
}

/// A real Synapse on loopback; see the module's doc.
#[derive(Debug)]
pub struct Synapse {
    base_url: String,
    data_dir: PathBuf,
    /// `registration_shared_secret`, new for every test binary.
    secret: String,
    /// Shared by tests on different runtimes, so it keeps no idle connections: a pooled
    /// connection belongs to the runtime that opened it and dies with that test.
    http: Client,
    /// An admin's access token, for the admin API; made at the first need.
    admin_token: Mutex<Option<String>>,
    /// The watchdog's stdin, shared by the binary's homeservers: held, never written to after
    /// start-up, never closed.
    _watchdog: Arc<ChildStdin>,
}

impl Synapse {
    /// `http://127.0.0.1:PORT`, no trailing slash: the client API is under
    /// `/_matrix/client/v3`, the admin API under `/_synapse/admin`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The server's data dir: `homeserver.yaml`, `homeserver.log`, the SQLite database.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// A new user `@<prefix>-<12 hex>:localhost` (the prefix lowercased) with a random password,
    /// logged in with it: the server is shared, so every call makes a user of its own.
    pub async fn register(&self, prefix: &str) -> MatrixUser {
        or_panic(self.try_register(prefix, false).await)
    }

    /// [`Self::register`], a server admin (for tests of what admins may do).
    pub async fn register_admin(&self, prefix: &str) -> MatrixUser {
        or_panic(self.try_register(prefix, true).await)
    }

    /// Gives `user_id` a rate limit of its own for sending events: `per_second` (whole
    /// numbers only, as the admin API takes them; 0 with a `burst_count` of 0 means none at
    /// all) and bursts of `burst_count`. Other users keep the server's.
    pub async fn override_ratelimit(&self, user_id: &str, per_second: u32, burst_count: u32) {
        or_panic(
            self.admin(
                Method::POST,
                &[
                    "_synapse",
                    "admin",
                    "v1",
                    "users",
                    user_id,
                    "override_ratelimit",
                ],
                json!({"messages_per_second": per_second, "burst_count": burst_count}),
            )
            .await
            .map(drop),
        )
    }

    /// Deletes a device of `user_id` (an admin ending its sessions: every access token of it
    /// stops working at once).
    pub async fn delete_device(&self, user_id: &str, device: &str) {
        let path = [
            "_synapse", "admin", "v2", "users", user_id, "devices", device,
        ];
        or_panic(self.admin(Method::DELETE, &path, json!({})).await.map(drop))
    }

    /// Shared-secret registration (`/_synapse/admin/v1/register`: a nonce, then the user with
    /// an HMAC-SHA1 of nonce, name, password and admin flag under the secret), then a password
    /// login, as a client of the user would.
    async fn try_register(&self, prefix: &str, admin: bool) -> Result<MatrixUser, MatrixError> {
        let localpart = unique(&prefix.to_lowercase());
        let password = Uuid::new_v4().simple().to_string();
        let path = ["_synapse", "admin", "v1", "register"];
        let nonce = send(
            &self.http,
            &self.base_url,
            Method::GET,
            &path,
            &[],
            None,
            None,
        )
        .await?;
        let nonce = nonce["nonce"].as_str().unwrap_or_default();
        let mac = {
            let key = ring::hmac::Key::new(
                ring::hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY,
                self.secret.as_bytes(),
            );
            let flag = if admin { "admin" } else { "notadmin" };
            let message = [nonce, &localpart, &password, flag].join("\0");
            let tag = ring::hmac::sign(&key, message.as_bytes());
            tag.as_ref()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        let body = json!({"nonce": nonce, "username": localpart, "password": password,
            "admin": admin, "mac": mac});
        let path = ["_synapse", "admin", "v1", "register"];
        send(
            &self.http,
            &self.base_url,
            Method::POST,
            &path,
            &[],
            None,
            Some(body),
        )
        .await?;
        MatrixUser::login(&self.base_url, &localpart, &password).await
    }

    /// An admin API call with the helpers' own admin (registered at the first call).
    async fn admin(&self, method: Method, path: &[&str], body: Value) -> anyhow::Result<Value> {
        let held = match self.admin_token.lock() {
            Ok(held) => held.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        let token = match held {
            Some(token) => token,
            None => {
                let admin = self.try_register("harness-admin", true).await?;
                let token = admin.access_token().to_owned();
                match self.admin_token.lock() {
                    Ok(mut held) => *held = Some(token.clone()),
                    Err(poisoned) => *poisoned.into_inner() = Some(token.clone()),
                }
                token
            }
        };
        let answer = send(
            &self.http,
            &self.base_url,
            method,
            path,
            &[],
            Some(&token),
            Some(body),
        )
        .await?;
        Ok(answer)
    }
}

/// Unwraps a helper's result; set-up that cannot be done stops the test, saying what failed.
fn or_panic<T, E: Into<anyhow::Error>>(result: Result<T, E>) -> T {
    result.unwrap_or_else(|e| panic!("real Synapse: {:#}", e.into()))
}

/// One request to the homeserver at `base` (path segments, percent-encoded here; query pairs),
/// as `token` if given: the answer's JSON body if it is a success, else the homeserver's error.
/// A 429 is an error like any other here; [`MatrixUser`] retries it.
async fn send(
    http: &Client,
    base: &str,
    method: Method,
    path: &[&str],
    query: &[(&str, &str)],
    token: Option<&str>,
    body: Option<Value>,
) -> Result<Value, MatrixError> {
    let mut url = reqwest::Url::parse(base)
        .map_err(|e| MatrixError::no_answer(base.to_owned(), e.to_string()))?;
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.pop_if_empty().extend(path);
    }
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    let request = format!("{method} {}", url.path());
    let failed = |status, error: String, body| MatrixError {
        status,
        body,
        ..MatrixError::no_answer(request.clone(), error)
    };
    let mut builder = http.request(method.clone(), url.clone());
    if let Some(token) = token {
        builder = builder.bearer_auth(token);
    }
    if let Some(body) = body {
        builder = builder.json(&body);
    } else if method != Method::GET {
        builder = builder.json(&json!({}));
    }
    let answer = builder
        .send()
        .await
        .map_err(|e| failed(None, format!("{e:#}"), Value::Null))?;
    let status = answer.status();
    let text = answer
        .text()
        .await
        .map_err(|e| failed(Some(status), format!("{e:#}"), Value::Null))?;
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    if status.is_success() {
        return Ok(body);
    }
    let errcode = body["errcode"].as_str().unwrap_or_default().to_owned();
    let error = body["error"].as_str().unwrap_or_default().to_owned();
    Err(MatrixError {
        errcode,
        error,
        retry_after_ms: body["retry_after_ms"].as_u64(),
        ..failed(Some(status), String::new(), body)
    })
}
