//! Placement: providers by name, their allocations, and deleting a consumer's allocations.

use opsbot_commands::approval::ApprovedConsumer;
use opsbot_commands::name::HostName;
use opsbot_commands::openstack::ids::{ConsumerId, ProviderId};
use opsbot_commands::openstack::placement::{Provider, ProviderAllocations, Resources};
use reqwest::Method;

use super::{Api, CloudClient, Deletion, wire};

/// What placement says of one consumer (see [`CloudClient::consumer`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerState {
    /// It holds allocations on some provider.
    pub holds: bool,
    /// Its `consumer_type`; `None` from a placement before 1.38 or when it holds nothing.
    pub kind: Option<String>,
}
use crate::backend::error::{BackendError, Fault};

/// Every placement request asks for 1.17: the level of the spec's workflow, and the first that
/// reports the provider tree fields and the allocation shapes opsbot reads.
pub const PLACEMENT_MICROVERSION: &str = "placement 1.17";

/// 1.38 (Xena) reports a consumer's `consumer_type`; an older placement answers 406.
const CONSUMER_TYPES: &str = "placement 1.38";

impl CloudClient {
    /// `GET /resource_providers?name=`: the providers named exactly after `host`.
    pub async fn providers_named(&self, host: &HostName) -> Result<Vec<Provider>, BackendError> {
        let path = "/resource_providers";
        let answer: wire::Providers = self
            .json(
                Api::Placement,
                Method::GET,
                path,
                &[("name", host.as_str())],
                None,
            )
            .await?;
        answer
            .resource_providers
            .into_iter()
            .map(|raw| self.provider_from("GET /resource_providers", raw))
            .collect()
    }

    /// `GET /resource_providers/{uuid}`; `None` when placement does not know it.
    pub async fn provider(&self, id: ProviderId) -> Result<Option<Provider>, BackendError> {
        let path = format!("/resource_providers/{id}");
        let request = format!("GET {path}");
        match self
            .send(Api::Placement, Method::GET, &path, &[], None)
            .await?
        {
            (200, text) => {
                let raw: wire::Provider = serde_json::from_str(&text).map_err(|e| {
                    self.error(Api::Placement, &request, Fault::Decode(e.to_string()))
                })?;
                self.provider_from(&request, raw).map(Some)
            }
            (404, _) => Ok(None),
            (status, text) => Err(self.status_error(Api::Placement, &request, status, &text)),
        }
    }

    fn provider_from(&self, request: &str, raw: wire::Provider) -> Result<Provider, BackendError> {
        let id = |text: &str| {
            ProviderId::parse(text)
                .map_err(|e| self.error(Api::Placement, request, Fault::Decode(e.to_string())))
        };
        Ok(Provider {
            uuid: id(&raw.uuid)?,
            parent: raw.parent_provider_uuid.as_deref().map(id).transpose()?,
            root: id(&raw.root_provider_uuid)?,
            name: raw.name,
        })
    }

    /// `GET /resource_providers/{uuid}/allocations`.
    pub async fn allocations(
        &self,
        provider: &Provider,
    ) -> Result<ProviderAllocations, BackendError> {
        let path = format!("/resource_providers/{}/allocations", provider.uuid);
        let answer: wire::ProviderAllocations = self
            .json(Api::Placement, Method::GET, &path, &[], None)
            .await?;
        let mut consumers = std::collections::BTreeMap::new();
        for (consumer, held) in answer.allocations {
            let consumer = ConsumerId::parse(&consumer).map_err(|e| {
                self.error(
                    Api::Placement,
                    "GET /resource_providers/{uuid}/allocations",
                    Fault::Decode(e.to_string()),
                )
            })?;
            consumers.insert(consumer, Resources::new(held.resources));
        }
        Ok(ProviderAllocations {
            provider: provider.clone(),
            generation: answer.resource_provider_generation,
            consumers,
        })
    }

    /// `GET /allocations/{consumer}`, at 1.38 where placement has it (Xena and later; an older
    /// one answers 406 "Unacceptable version header" and is asked again at 1.17): whether the
    /// consumer holds anything, on any provider (placement answers an empty object, not 404,
    /// for a consumer it does not know), and its type (`INSTANCE`, `MIGRATION`, `unknown`,
    /// ...), which placement shows only while the consumer holds something.
    pub async fn consumer(&self, consumer: ConsumerId) -> Result<ConsumerState, BackendError> {
        let path = format!("/allocations/{consumer}");
        let request = format!("GET {path}");
        let typed = Some(CONSUMER_TYPES);
        let (status, text) = match self
            .send_at(Api::Placement, typed, Method::GET, &path, &[], None)
            .await?
        {
            (406, _) => {
                self.send(Api::Placement, Method::GET, &path, &[], None)
                    .await?
            }
            answer => answer,
        };
        if !(200..300).contains(&status) {
            return Err(self.status_error(Api::Placement, &request, status, &text));
        }
        let answer: wire::ConsumerAllocations = serde_json::from_str(&text)
            .map_err(|e| self.error(Api::Placement, &request, Fault::Decode(e.to_string())))?;
        Ok(ConsumerState {
            holds: !answer.allocations.is_empty(),
            kind: answer.consumer_type,
        })
    }

    /// `DELETE /allocations/{consumer}`: every allocation of the consumer, on every provider.
    /// Only of the consumer an approval proof names; a 404 means it is already gone.
    pub async fn delete_allocation(
        &self,
        consumer: ApprovedConsumer,
    ) -> Result<Deletion, BackendError> {
        let consumer = consumer.id();
        self.delete(Api::Placement, &format!("/allocations/{consumer}"))
            .await
    }
}
