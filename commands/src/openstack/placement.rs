//! What placement says about a hypervisor: its resource provider and the allocations held
//! against it (spec 2.5, 2.6).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::ids::{ConsumerId, ProviderId};
use crate::name::HostName;

/// A resource provider (spec 2.5). A hypervisor's root provider is named after its host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provider {
    pub uuid: ProviderId,
    pub name: String,
    pub parent: Option<ProviderId>,
    pub root: ProviderId,
}

/// Amounts per resource class (`VCPU`, `MEMORY_MB`, `DISK_GB`, and any custom class).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Resources(BTreeMap<String, u64>);

impl Resources {
    pub fn new(amounts: impl IntoIterator<Item = (String, u64)>) -> Self {
        Self(amounts.into_iter().collect())
    }

    pub fn get(&self, class: &str) -> Option<u64> {
        self.0.get(class).copied()
    }
}

/// `VCPU 2 · MEMORY_MB 4096 · DISK_GB 40`, the standard classes first.
impl fmt::Display for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const FIRST: [&str; 3] = ["VCPU", "MEMORY_MB", "DISK_GB"];
        let standard = FIRST
            .iter()
            .filter_map(|class| self.0.get_key_value(*class));
        let custom = self
            .0
            .iter()
            .filter(|(class, _)| !FIRST.contains(&class.as_str()));
        let parts: Vec<String> = standard
            .chain(custom)
            .map(|(class, amount)| format!("{class} {amount}"))
            .collect();
        if parts.is_empty() {
            f.write_str("nothing")
        } else {
            f.write_str(&parts.join(" · "))
        }
    }
}

/// The allocations against one provider (spec 2.6), by consumer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderAllocations {
    pub provider: Provider,
    pub generation: u64,
    pub consumers: BTreeMap<ConsumerId, Resources>,
}

/// Why no single provider stands for a host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderLookupError {
    #[error(
        "placement has no resource provider named `{host}`; /compute services cloud:{cloud} \
         lists the hosts the compute service knows (a provider is named after its hypervisor's \
         host name exactly)"
    )]
    NoProvider { cloud: String, host: HostName },
    #[error(
        "{count} resource providers are named `{host}` ({uuids}); opsbot will not guess which \
         hypervisor is meant: remove the stale provider first"
    )]
    Several {
        host: HostName,
        count: usize,
        uuids: String,
    },
}

/// The one provider named after `host`.
pub fn provider_of(
    cloud: &str,
    host: &HostName,
    named: Vec<Provider>,
) -> Result<Provider, ProviderLookupError> {
    let mut named: Vec<Provider> = named
        .into_iter()
        .filter(|p| p.name == host.as_str())
        .collect();
    match named.len() {
        0 => Err(ProviderLookupError::NoProvider {
            cloud: cloud.to_owned(),
            host: host.clone(),
        }),
        1 => Ok(named.remove(0)),
        count => Err(ProviderLookupError::Several {
            host: host.clone(),
            count,
            uuids: named
                .iter()
                .map(|p| p.uuid.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}
