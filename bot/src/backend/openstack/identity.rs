//! Keystone v3 password authentication: one token per cloud, cached, renewed before it expires
//! and once when a service refuses it, and the catalog that comes with it (spec 4.2, 5).

use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde_json::json;
use time::OffsetDateTime;
use tokio::sync::Mutex;

use super::wire::error_reason;
use crate::backend::error::{BackendError, Fault};
use crate::backend::{http, transport};
use crate::clock::Clock;
use crate::config::Interface;
use crate::metrics::BackendErrors;

/// Who opsbot is in a cloud. The password is a secret: it is never logged, shown or stored.
#[derive(Debug)]
pub struct Credentials {
    pub auth_url: String,
    pub username: String,
    pub user_domain: String,
    pub project: String,
    pub project_domain: String,
    pub password: SecretString,
    pub region: String,
    pub interface: Interface,
}

/// A token and the catalog it came with.
#[derive(Debug, Clone)]
pub struct Token {
    pub value: SecretString,
    /// Local time after which the token is renewed before use: `expires_at` as the server sees
    /// it, moved onto the local clock (the engine's monotonic reading, so clock skew does not
    /// matter and a test moves it) and brought forward by a margin.
    renew_at: tokio::time::Instant,
    catalog: Vec<CatalogService>,
}

#[derive(Debug, Clone, Deserialize)]
struct CatalogService {
    #[serde(rename = "type")]
    kind: String,
    endpoints: Vec<CatalogEndpoint>,
}

#[derive(Debug, Clone, Deserialize)]
struct CatalogEndpoint {
    interface: String,
    #[serde(default)]
    region_id: Option<String>,
    #[serde(default)]
    region: Option<String>,
    url: String,
}

#[derive(Debug, Deserialize)]
struct TokenBody {
    token: TokenRecord,
}

#[derive(Debug, Deserialize)]
struct TokenRecord {
    #[serde(with = "time::serde::rfc3339")]
    expires_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    issued_at: OffsetDateTime,
    #[serde(default)]
    catalog: Vec<CatalogService>,
}

/// The longest a token is used before its expiry: Keystone's tokens last an hour by default.
const RENEW_MARGIN: Duration = Duration::from_secs(5 * 60);

/// One cloud's authenticated session.
#[derive(Debug)]
pub struct Session {
    http: reqwest::Client,
    credentials: Credentials,
    service: String,
    cloud: String,
    errors: BackendErrors,
    clock: Clock,
    token: Mutex<Option<Token>>,
}

impl Session {
    pub fn new(
        http: reqwest::Client,
        credentials: Credentials,
        cloud: &str,
        errors: BackendErrors,
        clock: Clock,
    ) -> Self {
        Self {
            http,
            credentials,
            service: format!("identity of cloud `{cloud}`"),
            cloud: cloud.to_owned(),
            errors,
            clock,
            token: Mutex::new(None),
        }
    }

    /// A token that is not about to expire, issuing one when needed. Concurrent callers wait
    /// for one issue rather than each asking Keystone.
    pub async fn token(&self) -> Result<Token, BackendError> {
        let mut cached = self.token.lock().await;
        if let Some(token) = cached.as_ref() {
            if self.clock.instant() < token.renew_at {
                return Ok(token.clone());
            }
        }
        let token = self.issue().await?;
        *cached = Some(token.clone());
        Ok(token)
    }

    /// Forgets `refused` (a service answered 401 to it), so that the next [`Self::token`]
    /// issues a new one; a token issued meanwhile by another caller is kept.
    pub async fn forget(&self, refused: &Token) {
        let mut cached = self.token.lock().await;
        if cached
            .as_ref()
            .is_some_and(|t| t.value.expose_secret() == refused.value.expose_secret())
        {
            *cached = None;
        }
    }

    /// The URL of `service_type` in the configured region and interface.
    pub fn endpoint(&self, token: &Token, service_type: &str) -> Result<String, BackendError> {
        let Credentials {
            region, interface, ..
        } = &self.credentials;
        // Keystone allows several services of one type (each region's endpoints may hang off
        // a different one), so the endpoints of every entry of the type count, as keystoneauth
        // counts them.
        let in_region = |e: &&CatalogEndpoint| {
            e.region_id.as_deref().or(e.region.as_deref()) == Some(region.as_str())
        };
        let there = || {
            token
                .catalog
                .iter()
                .filter(|s| s.kind == service_type)
                .flat_map(|s| &s.endpoints)
                .filter(in_region)
        };
        match there().find(|e| e.interface == interface.as_str()) {
            Some(endpoint) => Ok(endpoint.url.trim_end_matches('/').to_owned()),
            None => {
                let offered: Vec<String> = there().map(|e| e.interface.clone()).collect();
                let offered = if offered.is_empty() {
                    "none".to_owned()
                } else {
                    offered.join(", ")
                };
                Err(self.error(
                    "catalog",
                    Fault::Catalog(format!(
                        "no {} {service_type} endpoint in region {region} (there: {offered}); \
                         register one, or set interface = in the cloud's config",
                        interface.as_str()
                    )),
                ))
            }
        }
    }

    /// `POST /v3/auth/tokens` with the password, scoped to the project.
    async fn issue(&self) -> Result<Token, BackendError> {
        const REQUEST: &str = "POST /v3/auth/tokens";
        let c = &self.credentials;
        let body = json!({"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": c.username,
                "domain": {"name": c.user_domain},
                "password": c.password.expose_secret(),
            }}},
            "scope": {"project": {"name": c.project, "domain": {"name": c.project_domain}}},
        }});
        let url = format!("{}/auth/tokens", c.auth_url.trim_end_matches('/'));
        let asked = self.clock.instant();
        let response = self
            .http
            .post(url)
            .json(&body)
            .send()
            .await
            .map_err(|e| self.error(REQUEST, transport::fault(&e)))?;
        let status = response.status().as_u16();
        let subject = response
            .headers()
            .get("x-subject-token")
            .and_then(|v| v.to_str().ok())
            .map(|v| SecretString::from(v.to_owned()));
        let text = http::body(response)
            .await
            .map_err(|fault| self.error(REQUEST, fault))?;
        if status == 401 {
            return Err(self.error(
                REQUEST,
                Fault::Status {
                    status,
                    reason: format!(
                        "user `{}` of domain `{}` could not authenticate for project `{}`; \
                         check the password source and the names in the cloud's config",
                        c.username, c.user_domain, c.project
                    ),
                },
            ));
        }
        if !(200..300).contains(&status) {
            return Err(self.error(
                REQUEST,
                Fault::Status {
                    status,
                    reason: error_reason(&text),
                },
            ));
        }
        let Some(value) = subject else {
            return Err(self.error(REQUEST, Fault::Decode("no X-Subject-Token header".into())));
        };
        let record: TokenBody = serde_json::from_str(&text)
            .map_err(|e| self.error(REQUEST, Fault::Decode(e.to_string())))?;
        let lifetime = (record.token.expires_at - record.token.issued_at)
            .try_into()
            .unwrap_or(Duration::ZERO);
        // A fifth of a short lifetime, so that a token lasting a minute is still used.
        let margin = RENEW_MARGIN.min(lifetime / 5);
        tracing::info!(
            cloud = %self.service,
            lifetime_s = lifetime.as_secs(),
            "issued a token"
        );
        Ok(Token {
            value,
            renew_at: asked + lifetime.saturating_sub(margin),
            catalog: record.token.catalog,
        })
    }

    fn error(&self, request: &str, fault: Fault) -> BackendError {
        self.errors.count(&self.cloud, "identity", fault.kind());
        BackendError::once(self.service.clone(), request, fault)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(region: &str) -> Session {
        let credentials = Credentials {
            auth_url: "http://keystone.invalid/v3".into(),
            username: "opsbot".into(),
            user_domain: "Default".into(),
            project: "admin".into(),
            project_domain: "Default".into(),
            password: SecretString::from("unused"),
            region: region.into(),
            interface: Interface::Internal,
        };
        Session::new(
            reqwest::Client::new(),
            credentials,
            "prod",
            BackendErrors::default(),
            Clock::system(),
        )
    }

    /// Two `compute` services, as Keystone allows: each region's endpoints on one of them.
    fn token() -> Token {
        let catalog = serde_json::json!([
            {"type": "compute", "endpoints": [
                {"interface": "internal", "region_id": "east", "url": "http://east/compute/"}]},
            {"type": "compute", "endpoints": [
                {"interface": "public", "region_id": "west", "url": "http://west-public"},
                {"interface": "internal", "region": "west", "url": "http://west/compute"}]},
        ]);
        Token {
            value: SecretString::from("t"),
            renew_at: tokio::time::Instant::now(),
            catalog: serde_json::from_value(catalog).expect("catalog"),
        }
    }

    #[test]
    fn every_service_entry_of_a_type_is_searched() {
        let token = token();
        assert_eq!(
            session("east").endpoint(&token, "compute").ok().as_deref(),
            Some("http://east/compute")
        );
        assert_eq!(
            session("west").endpoint(&token, "compute").ok().as_deref(),
            Some("http://west/compute")
        );
        let missing = session("north")
            .endpoint(&token, "compute")
            .expect_err("no endpoint in north")
            .to_string();
        assert!(
            missing.contains("no internal compute endpoint in region north (there: none)"),
            "{missing}"
        );
    }
}
