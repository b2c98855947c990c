//! Shared test setup: a simulated cloud on a free port, a client, and a token.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // Not every test file uses every helper.

use opsbot_cloud_sim::{CloudSimConfig, CloudSimHandle, spawn};
use reqwest::{Client, RequestBuilder, Response};
use serde_json::{Value, json};

pub struct Cloud {
    pub sim: CloudSimHandle,
    pub http: Client,
}

pub async fn start(config: CloudSimConfig) -> Cloud {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let sim = spawn(config, listener).await.unwrap();
    Cloud {
        sim,
        http: Client::new(),
    }
}

/// The v3 password body of fixture `keystone/01-token-admin-project.json`.
pub fn password_body(user: &str, password: &str, project: &str) -> Value {
    json!({"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": user, "domain": {"name": "Default"}, "password": password,
        }}},
        "scope": {"project": {"name": project, "domain": {"name": "Default"}}},
    }})
}

impl Cloud {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.sim.base_url())
    }

    pub async fn token(&self) -> String {
        let response = self
            .http
            .post(format!("{}/auth/tokens", self.sim.identity_url()))
            .json(&password_body("admin", "adminpass", "admin"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        response.headers()["x-subject-token"]
            .to_str()
            .unwrap()
            .to_owned()
    }

    /// A request with a fresh token.
    pub async fn authed(&self, method: reqwest::Method, path: &str) -> RequestBuilder {
        let token = self.token().await;
        self.http
            .request(method, self.url(path))
            .header("X-Auth-Token", token)
    }

    /// A request to the simulator's own `/_sim` API (`path` includes `/_sim`), which takes no
    /// token; `json` is sent as its body.
    pub async fn admin(
        &self,
        method: reqwest::Method,
        path: &str,
        json: Option<Value>,
    ) -> Response {
        let mut request = self.http.request(method, self.url(path));
        if let Some(json) = json {
            request = request.json(&json);
        }
        request.send().await.unwrap()
    }

    pub async fn get(&self, path: &str) -> Response {
        self.authed(reqwest::Method::GET, path)
            .await
            .send()
            .await
            .unwrap()
    }
}

pub async fn body(response: Response) -> Value {
    response.json().await.unwrap()
}

pub fn header<'r>(response: &'r Response, name: &str) -> Option<&'r str> {
    response
        .headers()
        .get(name)
        .map(|value| value.to_str().unwrap())
}

/// The sorted keys of a JSON object.
pub fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

/// An enabled `nova-compute` on `host` that has been reporting since a minute ago.
pub fn compute_service(host: &str) -> opsbot_cloud_sim::ComputeServiceSeed {
    opsbot_cloud_sim::ComputeServiceSeed::nova_compute(
        host,
        time::OffsetDateTime::now_utc() - time::Duration::minutes(1),
    )
}

impl Cloud {
    /// A request with a fresh token at a microversion, e.g. `("compute", "2.59")`.
    pub async fn at(
        &self,
        method: reqwest::Method,
        path: &str,
        (service, version): (&str, &str),
    ) -> Response {
        self.authed(method, path)
            .await
            .header("OpenStack-API-Version", format!("{service} {version}"))
            .send()
            .await
            .unwrap()
    }

    /// A `GET` at a microversion, as JSON.
    pub async fn get_at(&self, path: &str, microversion: (&str, &str)) -> Value {
        let response = self.at(reqwest::Method::GET, path, microversion).await;
        assert_eq!(response.status(), 200, "GET {path}");
        body(response).await
    }
}
