//! A real OpenStack Keystone 30.0.0 and Placement 16.0.0 (from PyPI) on loopback, for tests
//! that must meet the real services rather than the simulator: real fernet tokens, real
//! catalogs, real microversion and error behaviour.
//!
//! [`real_cloud`] starts both once per test binary, by running the project's own scripts in
//! `tests/openstack/`: the Python venvs are installed on first use (under a lock, so parallel
//! test binaries do not race) and cached in `<target>/openstack/venv-{keystone,placement}`;
//! each test binary's servers get free loopback ports and data under
//! `<target>/openstack/run-<pid>/`. Nothing is skipped: no Python, no PyPI or a server that
//! does not come up fails every test that asked, with the script's own words.
//!
//! The servers never outlive the test binary, although the statics that hold them are never
//! dropped: before starting anything, the binary starts `tests/watch-servers.sh` with the write end
//! of a pipe as its only tie. The kernel closes that pipe when the test process ends, however
//! it ends (even `SIGKILL`), and the watchdog then stops the servers and removes the run dir.
//! That is better than polling the pid: nothing to reuse, no delay, no lost signal. These
//! steps, shared with [`crate::matrix`]'s Synapse, are `crate::servers`'.
//!
//! Tests share the one cloud and run concurrently, so each names what it creates uniquely
//! ([`unique`]) and keeps to its own region ([`RealCloud::add_region`]), providers and users.

#![deny(clippy::unwrap_used, clippy::expect_used)] // Server answers are checked, not trusted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ChildStdin;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use reqwest::header::HeaderMap;
use reqwest::{Client, Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};
use uuid::Uuid;

mod placement;
mod start;

/// The admin user `keystone-manage bootstrap` creates, in domain Default.
pub const ADMIN_USER: &str = "admin";
/// The admin password (the scripts' default).
pub const ADMIN_PASSWORD: &str = "adminpass";
/// The project the admin user has role admin on, in domain Default.
pub const ADMIN_PROJECT: &str = "admin";
/// The bootstrap region, where Placement is registered.
pub const REGION: &str = "RegionOne";
/// The Placement microversion every helper here speaks: the one the fixtures were recorded with.
pub const PLACEMENT_MICROVERSION: &str = "placement 1.17";
/// Every interface a catalog endpoint can have.
pub const ALL_INTERFACES: &[&str] = &["public", "internal", "admin"];

/// Internal tokens are reissued well before Keystone's one-hour expiry.
const TOKEN_REUSE: Duration = Duration::from_secs(30 * 60);

static CLOUD: OnceLock<Result<RealCloud, String>> = OnceLock::new();

/// The test binary's Keystone + Placement, started on first call; every later call (from any
/// test, on any runtime) gets the same one (see `crate::servers::started_once`).
pub async fn real_cloud() -> &'static RealCloud {
    crate::servers::started_once(&CLOUD, "OpenStack (Keystone + Placement)", RealCloud::start).await
}

/// A name no other test (or earlier run) uses: `prefix-` and 12 hex digits.
pub fn unique(prefix: &str) -> String {
    let id = Uuid::new_v4().simple().to_string();
    format!("{prefix}-{}", &id[..12])
}

/// A real Keystone and Placement (`auth_strategy = keystone`) on loopback.
#[derive(Debug)]
pub struct RealCloud {
    keystone: String,
    placement: String,
    run_dir: PathBuf,
    /// Shared by tests on different runtimes, so it keeps no idle connections: a pooled
    /// connection belongs to the runtime that opened it and dies with that test.
    http: Client,
    /// The helpers' own admin token; never handed out, so no test can revoke it.
    helper_token: Mutex<Option<(String, Instant)>>,
    keystone_start: Duration,
    placement_start: Duration,
    /// The watchdog's stdin: held, never written to after start-up, never closed.
    _watchdog: ChildStdin,
}

/// A token from `POST /v3/auth/tokens`, project-scoped to [`ADMIN_PROJECT`].
#[derive(Debug, Clone)]
pub struct IssuedToken {
    /// `X-Subject-Token`.
    pub id: String,
    /// The token's catalog.
    pub catalog: Vec<CatalogService>,
    /// The whole answer body (`{"token": {...}}`).
    pub body: Value,
}

/// A service in a token's catalog.
#[derive(Debug, Clone, Deserialize)]
pub struct CatalogService {
    #[serde(rename = "type")]
    pub service_type: String,
    #[serde(default)]
    pub name: String,
    pub endpoints: Vec<CatalogEndpoint>,
}

/// An endpoint in a token's catalog.
#[derive(Debug, Clone, Deserialize)]
pub struct CatalogEndpoint {
    pub interface: String,
    pub region_id: String,
    pub url: String,
}

impl IssuedToken {
    /// The URL of `service_type`'s `interface` endpoint in `region`, if the catalog has one.
    pub fn endpoint(&self, service_type: &str, interface: &str, region: &str) -> Option<&str> {
        self.catalog
            .iter()
            .filter(|s| s.service_type == service_type)
            .flat_map(|s| &s.endpoints)
            .find(|e| e.interface == interface && e.region_id == region)
            .map(|e| e.url.as_str())
    }

    /// Every `(service type, interface, url)` the catalog has in `region`.
    pub fn endpoints_in(&self, region: &str) -> Vec<(String, String, String)> {
        self.catalog
            .iter()
            .flat_map(|s| s.endpoints.iter().map(move |e| (s, e)))
            .filter(|(_, e)| e.region_id == region)
            .map(|(s, e)| (s.service_type.clone(), e.interface.clone(), e.url.clone()))
            .collect()
    }
}

/// An HTTP answer, its body parsed as JSON if it is JSON (else a string; `null` if empty).
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Answer {
    fn require(self, what: &str, ok: &[u16]) -> anyhow::Result<Self> {
        if ok.contains(&self.status.as_u16()) {
            Ok(self)
        } else {
            bail!("{what}: answered {} {}", self.status, self.body)
        }
    }
}

/// Unwraps a helper's result; set-up that cannot be done stops the test, saying what failed.
fn or_panic<T>(result: anyhow::Result<T>) -> T {
    result.unwrap_or_else(|e| panic!("real OpenStack: {e:#}"))
}

impl RealCloud {
    /// Keystone's identity API, `http://127.0.0.1:PORT/v3`.
    pub fn keystone_url(&self) -> String {
        format!("{}/v3", self.keystone)
    }

    /// Placement's root, `http://127.0.0.1:PORT` (no trailing slash), as in the catalog.
    pub fn placement_url(&self) -> &str {
        &self.placement
    }

    pub fn admin_user(&self) -> &'static str {
        ADMIN_USER
    }

    pub fn admin_password(&self) -> &'static str {
        ADMIN_PASSWORD
    }

    pub fn admin_project(&self) -> &'static str {
        ADMIN_PROJECT
    }

    pub fn region(&self) -> &'static str {
        REGION
    }

    /// This binary's data dir: `<target>/openstack/run-<pid>` (server logs are in its
    /// `keystone*/` and `placement*/`; removed when the binary ends).
    pub fn run_dir(&self) -> &Path {
        &self.run_dir
    }

    /// How long starting Keystone (db_sync, keys, bootstrap, gunicorn, Placement's
    /// registration) and then Placement took, installs included.
    pub fn start_times(&self) -> (Duration, Duration) {
        (self.keystone_start, self.placement_start)
    }

    /// A fresh admin token (password auth, scoped to project admin), the caller's to use or
    /// revoke.
    pub async fn admin_token(&self) -> String {
        or_panic(self.issue_token(ADMIN_USER, ADMIN_PASSWORD).await).id
    }

    /// Password auth as `user` (domain Default), scoped to project admin. An error (with
    /// Keystone's status and body) if Keystone does not issue one, e.g. after a password change.
    pub async fn issue_token(&self, user: &str, password: &str) -> anyhow::Result<IssuedToken> {
        let body = json!({"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": user, "domain": {"name": "Default"}, "password": password}}},
            "scope": {"project": {"name": ADMIN_PROJECT, "domain": {"name": "Default"}}}}});
        let answer = self
            .send(
                self.http
                    .post(format!("{}/auth/tokens", self.keystone_url()))
                    .json(&body),
            )
            .await?
            .require(&format!("token for {user}"), &[201])?;
        let id = answer
            .headers
            .get("x-subject-token")
            .and_then(|v| v.to_str().ok())
            .context("Keystone issued a token without X-Subject-Token")?
            .to_owned();
        let catalog = Vec::<CatalogService>::deserialize(&answer.body["token"]["catalog"])
            .with_context(|| format!("token catalog: {}", answer.body))?;
        Ok(IssuedToken {
            id,
            catalog,
            body: answer.body,
        })
    }

    /// Revokes `token` (`DELETE /v3/auth/tokens`); placement refuses it from then on.
    pub async fn revoke_token(&self, token: &str) {
        or_panic(self.try_revoke_token(token).await)
    }

    async fn try_revoke_token(&self, token: &str) -> anyhow::Result<()> {
        let admin = self.helper_token().await?;
        self.keystone(Method::DELETE, "/auth/tokens", &admin, None, |r| {
            r.header("x-subject-token", token)
        })
        .await?
        .require("revoke token", &[204])?;
        Ok(())
    }

    /// A Keystone region of its own for one test: creates region `region` and, for each
    /// `(service type, service name, url)`, the service if Keystone has none of that type, and
    /// its public, internal and admin endpoints there; the real Placement is registered in the
    /// region too (all three interfaces). Other tests' regions are not touched.
    pub async fn add_region(&self, region: &str, endpoints: &[(&str, &str, &str)]) {
        self.add_region_with(region, endpoints, ALL_INTERFACES)
            .await
    }

    /// [`Self::add_region`], with the real Placement registered only for `placement_interfaces`
    /// (none, or e.g. only `["public"]` to see what a client does without an internal one).
    pub async fn add_region_with(
        &self,
        region: &str,
        endpoints: &[(&str, &str, &str)],
        placement_interfaces: &[&str],
    ) {
        or_panic(
            self.try_add_region(region, endpoints, placement_interfaces)
                .await
                .with_context(|| format!("add region {region}")),
        )
    }

    async fn try_add_region(
        &self,
        region: &str,
        endpoints: &[(&str, &str, &str)],
        placement_interfaces: &[&str],
    ) -> anyhow::Result<()> {
        let token = self.helper_token().await?;
        self.keystone(
            Method::POST,
            "/regions",
            &token,
            Some(json!({"region": {"id": region, "description": "a test's own region"}})),
            |r| r,
        )
        .await?
        .require("create region", &[201])?;
        let placement = self.placement.clone();
        let wanted = endpoints
            .iter()
            .map(|&(kind, name, url)| (kind, name, url, ALL_INTERFACES))
            .chain(std::iter::once((
                "placement",
                "placement",
                placement.as_str(),
                placement_interfaces,
            )));
        for (kind, name, url, interfaces) in wanted {
            if interfaces.is_empty() {
                continue;
            }
            let service = self.service_id(&token, kind, name).await?;
            for interface in interfaces {
                let endpoint = json!({"endpoint": {"service_id": service, "interface": interface,
                    "url": url, "region_id": region, "enabled": true}});
                self.keystone(Method::POST, "/endpoints", &token, Some(endpoint), |r| r)
                    .await?
                    .require(&format!("create {interface} endpoint for {kind}"), &[201])?;
            }
        }
        Ok(())
    }

    /// The id of the service of type `kind`, created (named `name`) if there is none. Two tests
    /// creating the same new type at once may create two; Keystone allows that, and each
    /// region's endpoints then hang off one of them, which catalogs show just the same.
    async fn service_id(&self, token: &str, kind: &str, name: &str) -> anyhow::Result<String> {
        let found = self
            .keystone(
                Method::GET,
                &format!("/services?type={kind}"),
                token,
                None,
                |r| r,
            )
            .await?
            .require("list services", &[200])?;
        if let Some(id) = found.body["services"][0]["id"].as_str() {
            return Ok(id.to_owned());
        }
        let service = json!({"service": {"type": kind, "name": name, "enabled": true}});
        let created = self
            .keystone(Method::POST, "/services", token, Some(service), |r| r)
            .await?
            .require(&format!("create service {kind}"), &[201])?;
        created.body["service"]["id"]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("created service without an id: {}", created.body))
    }

    /// Creates user `name` in domain Default with role admin on project admin, so a test can
    /// issue tokens as it and then change its password or disable it.
    pub async fn create_user(&self, name: &str, password: &str) {
        or_panic(
            self.try_create_user(name, password)
                .await
                .with_context(|| format!("create user {name}")),
        )
    }

    async fn try_create_user(&self, name: &str, password: &str) -> anyhow::Result<()> {
        let token = self.helper_token().await?;
        let user = json!({"user": {"name": name, "password": password, "domain_id": "default",
            "enabled": true}});
        let created = self
            .keystone(Method::POST, "/users", &token, Some(user), |r| r)
            .await?
            .require("create", &[201])?;
        let user = created.body["user"]["id"]
            .as_str()
            .with_context(|| format!("created user without an id: {}", created.body))?;
        let project = self
            .first_id(
                &token,
                "projects",
                &format!("name={ADMIN_PROJECT}&domain_id=default"),
            )
            .await?;
        let role = self.first_id(&token, "roles", "name=admin").await?;
        self.keystone(
            Method::PUT,
            &format!("/projects/{project}/users/{user}/roles/{role}"),
            &token,
            None,
            |r| r,
        )
        .await?
        .require("grant admin on project admin", &[204])?;
        Ok(())
    }

    /// Changes user `name`'s password, as an admin would. Keystone then revokes the user's
    /// tokens, and returns only once a token issued afterwards is valid (see
    /// [`Self::update_user`]).
    pub async fn set_user_password(&self, name: &str, password: &str) {
        or_panic(
            self.update_user(name, json!({"password": password}))
                .await
                .with_context(|| format!("set password of user {name}")),
        )
    }

    /// Enables or disables user `name` (disabling revokes its tokens; returns only once a
    /// token issued afterwards would be valid, see [`Self::update_user`]).
    pub async fn set_user_enabled(&self, name: &str, enabled: bool) {
        or_panic(
            self.update_user(name, json!({"enabled": enabled}))
                .await
                .with_context(|| format!("enable={enabled} user {name}")),
        )
    }

    /// Changes user `name`. Keystone's revocation event ("every token of this user issued
    /// before now") is compared with fernet tokens' issue times, which have whole seconds: a
    /// token issued in the same second as the change is issued (201) but then refused (401)
    /// everywhere. Waiting for the next second here keeps tests that re-authenticate at once
    /// from failing nine times out of ten.
    async fn update_user(&self, name: &str, change: Value) -> anyhow::Result<()> {
        let token = self.helper_token().await?;
        let user = self
            .first_id(&token, "users", &format!("name={name}&domain_id=default"))
            .await?;
        self.keystone(
            Method::PATCH,
            &format!("/users/{user}"),
            &token,
            Some(json!({"user": change})),
            |r| r,
        )
        .await?
        .require("update", &[200])?;
        let into_second = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .subsec_nanos();
        let rest = Duration::from_secs(1) - Duration::from_nanos(u64::from(into_second));
        tokio::time::sleep(rest + Duration::from_millis(50)).await;
        Ok(())
    }

    /// The id of the first `collection` member matching `query` (e.g. `name=admin`).
    async fn first_id(&self, token: &str, collection: &str, query: &str) -> anyhow::Result<String> {
        let found = self
            .keystone(
                Method::GET,
                &format!("/{collection}?{query}"),
                token,
                None,
                |r| r,
            )
            .await?
            .require(&format!("list {collection}"), &[200])?;
        found.body[collection][0]["id"]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("no {collection} with {query}"))
    }

    async fn keystone(
        &self,
        method: Method,
        path: &str,
        token: &str,
        body: Option<Value>,
        extra: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    ) -> anyhow::Result<Answer> {
        let what = format!("Keystone {method} {path}");
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.keystone_url()))
            .header("accept", "application/json")
            .header("x-auth-token", token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        self.send(extra(request)).await.context(what)
    }

    /// The helpers' admin token, reissued after [`TOKEN_REUSE`].
    async fn helper_token(&self) -> anyhow::Result<String> {
        let held = match self.helper_token.lock() {
            Ok(held) => held.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        if let Some((token, issued)) = held {
            if issued.elapsed() < TOKEN_REUSE {
                return Ok(token);
            }
        }
        let token = self.issue_token(ADMIN_USER, ADMIN_PASSWORD).await?.id;
        let mut held = match self.helper_token.lock() {
            Ok(held) => held,
            Err(poisoned) => poisoned.into_inner(),
        };
        *held = Some((token.clone(), Instant::now()));
        Ok(token)
    }
}
