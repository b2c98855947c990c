//! The OpenStack APIs' answers, as far as opsbot reads them.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// `GET /resource_providers` (placement 1.14+ carries the tree fields).
#[derive(Debug, Deserialize)]
pub(super) struct Providers {
    pub resource_providers: Vec<Provider>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Provider {
    pub uuid: String,
    pub name: String,
    #[serde(default)]
    pub parent_provider_uuid: Option<String>,
    pub root_provider_uuid: String,
}

/// `GET /resource_providers/{uuid}/allocations`.
#[derive(Debug, Deserialize)]
pub(super) struct ProviderAllocations {
    pub allocations: BTreeMap<String, ConsumerResources>,
    pub resource_provider_generation: u64,
}

/// `GET /allocations/{consumer}`: by provider; empty when the consumer holds nothing. At 1.38
/// `consumer_type` appears too, only while the consumer holds something.
#[derive(Debug, Deserialize)]
pub(super) struct ConsumerAllocations {
    pub allocations: BTreeMap<String, Value>,
    #[serde(default)]
    pub consumer_type: Option<String>,
}

/// `GET /os-migrations` at 2.59: newest first, a page at a time (`migrations_links` names the
/// next one).
#[derive(Debug, Deserialize)]
pub(super) struct Migrations {
    pub migrations: Vec<Migration>,
    #[serde(default)]
    pub migrations_links: Vec<Link>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Migration {
    pub id: u64,
    pub uuid: String,
    pub instance_uuid: String,
    pub migration_type: String,
    pub status: String,
    #[serde(default)]
    pub source_compute: Option<String>,
    #[serde(default)]
    pub dest_compute: Option<String>,
}

/// A page link; the next page is asked for with the last migration's UUID as its marker.
#[derive(Debug, Deserialize)]
pub(super) struct Link {
    pub rel: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct ConsumerResources {
    pub resources: BTreeMap<String, u64>,
}

/// `GET /servers/{id}`.
#[derive(Debug, Deserialize)]
pub(super) struct ServerBody {
    pub server: Server,
}

#[derive(Debug, Deserialize)]
pub(super) struct Server {
    pub name: String,
    pub status: String,
}

/// `GET /os-services`.
#[derive(Debug, Deserialize)]
pub(super) struct Services {
    pub services: Vec<Service>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Service {
    /// A UUID at microversion 2.53 and later; opsbot always asks for 2.53.
    pub id: Value,
    pub binary: String,
    pub host: String,
    #[serde(default)]
    pub zone: Option<String>,
    pub status: String,
    pub state: String,
    #[serde(default)]
    pub updated_at: Option<String>,
    #[serde(default)]
    pub disabled_reason: Option<String>,
}

/// `GET /v2/images?name=`.
#[derive(Debug, Deserialize)]
pub(super) struct Images {
    pub images: Vec<BTreeMap<String, Value>>,
}

/// The short reason in an OpenStack error body: placement's `errors[0].detail`, nova's
/// `{"itemNotFound": {"message"}}`, keystone's `error.message`, or the first line of a text.
pub(super) fn error_reason(text: &str) -> String {
    const MAX: usize = 160;
    let from_json = serde_json::from_str::<Value>(text).ok().and_then(|body| {
        let placement = body["errors"][0]["detail"].as_str().map(str::to_owned);
        let keystone = body["error"]["message"].as_str().map(str::to_owned);
        let nova = body
            .as_object()
            .and_then(|o| o.values().find_map(|v| v["message"].as_str()))
            .map(str::to_owned);
        let plain = body["message"].as_str().map(str::to_owned);
        placement.or(keystone).or(nova).or(plain)
    });
    let reason = from_json.unwrap_or_else(|| {
        text.lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('<'))
            .unwrap_or_default()
            .to_owned()
    });
    let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    match reason.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &reason[..cut]),
        None => reason,
    }
}

#[cfg(test)]
mod tests {
    use super::error_reason;

    #[test]
    fn reads_the_reason_of_each_services_error_body() {
        let placement = r#"{"errors": [{"status": 404, "title": "Not Found", "detail": "The resource could not be found.\n\n No allocations for consumer 'x'  ", "request_id": "req-1"}]}"#;
        assert_eq!(
            error_reason(placement),
            "The resource could not be found. No allocations for consumer 'x'"
        );
        let nova =
            r#"{"itemNotFound": {"code": 404, "message": "Instance abc could not be found."}}"#;
        assert_eq!(error_reason(nova), "Instance abc could not be found.");
        let keystone = r#"{"error": {"code": 401, "message": "The request you have made requires authentication.", "title": "Unauthorized"}}"#;
        assert_eq!(
            error_reason(keystone),
            "The request you have made requires authentication."
        );
        assert_eq!(
            error_reason("<html><body>\n404 Not Found\n</body></html>"),
            "404 Not Found"
        );
    }
}
