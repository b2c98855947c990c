//! The OpenStack clients of one cloud: placement, compute and image, behind one Keystone
//! session. Every request carries the session's token; a 401 renews it once.

mod compute;
mod identity;
mod image;
mod placement;
mod wire;

use std::time::Duration;

use opsbot_commands::name::CloudName;
use reqwest::Method;
use reqwest::header::{HeaderName, HeaderValue};
use secrecy::ExposeSecret;
use serde::de::DeserializeOwned;

pub use compute::COMPUTE_MICROVERSION;
pub use identity::Credentials;
pub use placement::PLACEMENT_MICROVERSION;

use crate::backend::error::{BackendError, Fault};
use crate::backend::{http, transport};
use crate::clock::Clock;
use crate::config::Tls;
use crate::metrics::BackendErrors;
use identity::Session;

/// What a deletion found: the thing was there and is gone now, or it was already gone (after
/// a restart, the delete that was under way when the bot died may have happened).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletion {
    Deleted,
    AlreadyGone,
}

/// The APIs opsbot calls, each found in the catalog by its service type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Placement,
    Compute,
    Image,
}

impl Api {
    fn service_type(self) -> &'static str {
        match self {
            Self::Placement => "placement",
            Self::Compute => "compute",
            Self::Image => "image",
        }
    }

    /// The microversion header, where the API has microversions. Only `OpenStack-API-Version`
    /// is honoured by placement: any other spelling is silently ignored and the request runs
    /// at 1.0 (recorded from a real server).
    fn microversion(self) -> Option<&'static str> {
        match self {
            Self::Placement => Some(PLACEMENT_MICROVERSION),
            Self::Compute => Some(COMPUTE_MICROVERSION),
            Self::Image => None,
        }
    }
}

const API_VERSION: HeaderName = HeaderName::from_static("openstack-api-version");
const AUTH_TOKEN: HeaderName = HeaderName::from_static("x-auth-token");

/// A body and its content type (the image API wants its own for JSON patches).
#[derive(Debug)]
struct Body {
    content_type: &'static str,
    json: serde_json::Value,
}

/// One cloud.
#[derive(Debug)]
pub struct CloudClient {
    http: reqwest::Client,
    session: Session,
    cloud: CloudName,
    errors: BackendErrors,
}

impl CloudClient {
    /// One client, trusting `tls`, for Keystone and every endpoint of the catalog alike.
    pub fn new(
        cloud: &CloudName,
        credentials: Credentials,
        tls: &Tls,
        timeout: Duration,
        errors: &BackendErrors,
        clock: Clock,
    ) -> anyhow::Result<Self> {
        let http = http::client(tls, timeout)?;
        Ok(Self {
            session: Session::new(
                http.clone(),
                credentials,
                cloud.as_str(),
                errors.clone(),
                clock,
            ),
            http,
            cloud: cloud.clone(),
            errors: errors.clone(),
        })
    }

    /// Issues a token (or keeps a fresh one) with its catalog: Keystone and the password work.
    pub async fn authenticate(&self) -> Result<(), BackendError> {
        self.session.token().await.map(drop)
    }

    fn error(&self, api: Api, request: &str, fault: Fault) -> BackendError {
        self.errors
            .count(self.cloud.as_str(), api.service_type(), fault.kind());
        BackendError::once(
            format!("{} of cloud `{}`", api.service_type(), self.cloud),
            request,
            fault,
        )
    }

    /// One request with the session's token; any status comes back, for the caller to judge
    /// (a 404 is an answer for deletions and lookups). A 401 means the token was revoked or
    /// expired early: it is renewed and the request sent once more.
    async fn send(
        &self,
        api: Api,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&Body>,
    ) -> Result<(u16, String), BackendError> {
        self.send_at(api, api.microversion(), method, path, query, body)
            .await
    }

    /// [`Self::send`] at another microversion than the API's usual one (`version`, e.g.
    /// `placement 1.38` for consumer types), for the few reads that need a newer one.
    async fn send_at(
        &self,
        api: Api,
        version: Option<&str>,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&Body>,
    ) -> Result<(u16, String), BackendError> {
        let request = format!("{method} {path}");
        let mut renewed = false;
        loop {
            let token = self.session.token().await?;
            let base = self.session.endpoint(&token, api.service_type())?;
            let mut secret = HeaderValue::from_str(token.value.expose_secret())
                .map_err(|_| self.error(api, &request, Fault::Decode("unusable token".into())))?;
            secret.set_sensitive(true);
            let mut builder = self
                .http
                .request(method.clone(), format!("{base}{path}"))
                .query(query)
                .header(reqwest::header::ACCEPT, "application/json")
                .header(AUTH_TOKEN, secret);
            if let Some(version) = version {
                builder = builder.header(API_VERSION, version);
            }
            if let Some(body) = body {
                builder = builder
                    .header(reqwest::header::CONTENT_TYPE, body.content_type)
                    .body(body.json.to_string());
            }
            let response = builder
                .send()
                .await
                .map_err(|e| self.error(api, &request, transport::fault(&e)))?;
            let status = response.status().as_u16();
            let text = http::body(response)
                .await
                .map_err(|fault| self.error(api, &request, fault))?;
            if status == 401 && !renewed {
                tracing::info!(cloud = %self.cloud, %request, "token refused; issuing a new one");
                self.session.forget(&token).await;
                renewed = true;
                continue;
            }
            return Ok((status, text));
        }
    }

    /// One request whose answer must be a 2xx JSON body.
    async fn json<T: DeserializeOwned>(
        &self,
        api: Api,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&Body>,
    ) -> Result<T, BackendError> {
        let request = format!("{method} {path}");
        let (status, text) = self.send(api, method, path, query, body).await?;
        if !(200..300).contains(&status) {
            return Err(self.status_error(api, &request, status, &text));
        }
        serde_json::from_str(&text)
            .map_err(|e| self.error(api, &request, Fault::Decode(e.to_string())))
    }

    /// A DELETE whose 404 means "already gone".
    async fn delete(&self, api: Api, path: &str) -> Result<Deletion, BackendError> {
        let request = format!("DELETE {path}");
        match self.send(api, Method::DELETE, path, &[], None).await? {
            (200..=299, _) => Ok(Deletion::Deleted),
            (404, _) => Ok(Deletion::AlreadyGone),
            (status, text) => Err(self.status_error(api, &request, status, &text)),
        }
    }

    fn status_error(&self, api: Api, request: &str, status: u16, text: &str) -> BackendError {
        let reason = match status {
            401 => "the token was refused twice; check the user's role on the project".to_owned(),
            403 => format!(
                "{}; the cloud user needs the admin role",
                wire::error_reason(text).trim_end_matches('.')
            ),
            _ => wire::error_reason(text),
        };
        self.error(api, request, Fault::Status { status, reason })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Interface;

    #[test]
    fn a_403_keeps_the_policy_the_service_names() {
        let credentials = Credentials {
            auth_url: "https://keystone.invalid/v3".into(),
            username: "opsbot".into(),
            user_domain: "Default".into(),
            project: "admin".into(),
            project_domain: "Default".into(),
            password: secrecy::SecretString::from("unused"),
            region: "RegionOne".into(),
            interface: Interface::Internal,
        };
        let cloud = CloudName::parse("prod").expect("name");
        let client = CloudClient::new(
            &cloud,
            credentials,
            &Tls::default(),
            Duration::from_secs(1),
            &BackendErrors::default(),
            Clock::system(),
        )
        .expect("client");
        let nova = r#"{"forbidden": {"code": 403, "message": "Policy doesn't allow os_compute_api:os-services:list to be performed."}}"#;
        assert_eq!(
            client
                .status_error(Api::Compute, "GET /os-services", 403, nova)
                .to_string(),
            "compute of cloud `prod`: GET /os-services answered 403 (Policy doesn't allow \
             os_compute_api:os-services:list to be performed; the cloud user needs the admin role)"
        );
    }
}
