//! Compute: whether an instance exists, the service records, and deleting one.

use opsbot_commands::approval::ApprovedService;
use opsbot_commands::name::HostName;
use opsbot_commands::openstack::compute::{
    ComputeService, Instance, Migration, ServiceState, ServiceStatus,
};
use opsbot_commands::openstack::ids::{ConsumerId, ServiceId};
use reqwest::Method;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{Api, CloudClient, Deletion, wire};
use crate::backend::error::{BackendError, Fault};

/// 2.53 (Pike): service ids are UUIDs, stable across cells, which `DELETE /os-services/{id}`
/// then requires.
pub const COMPUTE_MICROVERSION: &str = "compute 2.53";

/// 2.59 (Queens) lists each migration's UUID: the placement consumer of its allocations.
const MIGRATION_UUIDS: &str = "compute 2.59";

/// Pages of `/os-migrations` read at most for one host: far more migrations than a host has.
const MIGRATION_PAGES: usize = 20;

impl CloudClient {
    /// `GET /servers/{id}`: 404 means the compute database does not know the instance.
    pub async fn instance(&self, id: ConsumerId) -> Result<Instance, BackendError> {
        let path = format!("/servers/{id}");
        let request = format!("GET {path}");
        match self
            .send(Api::Compute, Method::GET, &path, &[], None)
            .await?
        {
            (200, text) => {
                let body: wire::ServerBody = serde_json::from_str(&text).map_err(|e| {
                    self.error(Api::Compute, &request, Fault::Decode(e.to_string()))
                })?;
                Ok(Instance::Exists {
                    name: body.server.name,
                    status: body.server.status,
                })
            }
            (404, _) => Ok(Instance::Gone),
            (status, text) => Err(self.status_error(Api::Compute, &request, status, &text)),
        }
    }

    /// `GET /os-migrations?host=` at 2.59: the migrations with `host` at either end, every
    /// page of them.
    pub async fn migrations(&self, host: &HostName) -> Result<Vec<Migration>, BackendError> {
        const REQUEST: &str = "GET /os-migrations";
        let decode = |what: String| self.error(Api::Compute, REQUEST, Fault::Decode(what));
        let mut found = Vec::new();
        let mut marker: Option<String> = None;
        for _ in 0..MIGRATION_PAGES {
            let mut query = vec![("host", host.as_str())];
            if let Some(marker) = &marker {
                query.push(("marker", marker.as_str()));
            }
            let (status, text) = self
                .send_at(
                    Api::Compute,
                    Some(MIGRATION_UUIDS),
                    Method::GET,
                    "/os-migrations",
                    &query,
                    None,
                )
                .await?;
            if status != 200 {
                return Err(self.status_error(Api::Compute, REQUEST, status, &text));
            }
            let page: wire::Migrations =
                serde_json::from_str(&text).map_err(|e| decode(e.to_string()))?;
            let last = page.migrations.last().map(|m| m.uuid.clone());
            for m in page.migrations {
                let id = |text: &str| ConsumerId::parse(text).map_err(|e| decode(e.to_string()));
                found.push(Migration {
                    id: m.id,
                    uuid: id(&m.uuid)?,
                    instance: id(&m.instance_uuid)?,
                    kind: m.migration_type,
                    status: m.status,
                    source: m.source_compute,
                    dest: m.dest_compute,
                });
            }
            if !page.migrations_links.iter().any(|link| link.rel == "next") {
                return Ok(found);
            }
            marker = last;
        }
        Err(decode(format!(
            "more than {MIGRATION_PAGES} pages of migrations for {host}"
        )))
    }

    /// `GET /os-services`.
    pub async fn services(&self) -> Result<Vec<ComputeService>, BackendError> {
        const REQUEST: &str = "GET /os-services";
        let answer: wire::Services = self
            .json(Api::Compute, Method::GET, "/os-services", &[], None)
            .await?;
        let decode = |what: String| self.error(Api::Compute, REQUEST, Fault::Decode(what));
        answer
            .services
            .into_iter()
            .map(|s| {
                let id = s
                    .id
                    .as_str()
                    .and_then(|id| ServiceId::parse(id).ok())
                    .ok_or_else(|| {
                        decode(format!(
                            "service id {} is no UUID: the cloud does not offer microversion 2.53",
                            s.id
                        ))
                    })?;
                let status = match s.status.as_str() {
                    "enabled" => ServiceStatus::Enabled,
                    "disabled" => ServiceStatus::Disabled,
                    other => return Err(decode(format!("service status `{other}`"))),
                };
                let state = match s.state.as_str() {
                    "up" => ServiceState::Up,
                    "down" => ServiceState::Down,
                    other => return Err(decode(format!("service state `{other}`"))),
                };
                Ok(ComputeService {
                    id,
                    host: HostName::parse(&s.host).map_err(|e| decode(e.to_string()))?,
                    binary: s.binary,
                    zone: s.zone.unwrap_or_default(),
                    status,
                    state,
                    updated_at: s.updated_at.as_deref().and_then(nova_time),
                    disabled_reason: s.disabled_reason,
                })
            })
            .collect()
    }

    /// `DELETE /os-services/{id}`, only of the service an approval proof names; a 404 means
    /// already gone.
    pub async fn delete_service(&self, service: ApprovedService) -> Result<Deletion, BackendError> {
        let id = service.id();
        self.delete(Api::Compute, &format!("/os-services/{id}"))
            .await
    }
}

/// Nova writes `2026-11-21T03:12:44.000000` without an offset; it is UTC.
fn nova_time(text: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(text, &Rfc3339)
        .ok()
        .or_else(|| OffsetDateTime::parse(&format!("{text}Z"), &Rfc3339).ok())
}

#[cfg(test)]
mod tests {
    #[test]
    fn nova_times_are_utc_with_or_without_an_offset() {
        for text in ["2026-11-21T03:12:44.000000", "2026-11-21T03:12:44Z"] {
            let at = super::nova_time(text).map(|t| (t.hour(), t.minute(), t.offset().is_utc()));
            assert_eq!(at, Some((3, 12, true)), "{text}");
        }
        assert_eq!(super::nova_time("yesterday"), None);
    }
}
