//! What a procedure run works on: a log cluster, a cloud, or the hosts a runbook runs on. A
//! target runs at most one procedure at a time; its locks are keyed by [`Target::lock_keys`].

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::name::{CloudName, ClusterName, HostName};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    Cluster(ClusterName),
    Cloud(CloudName),
    /// The inventory hosts a runbook's steps run on: two runbooks never work on one host at once.
    Hosts(BTreeSet<HostName>),
}

impl Target {
    /// The store's lock keys: one for a cluster or a cloud, one per host for a runbook. A
    /// cluster keeps its bare name, as before clouds existed, so that stores written by earlier
    /// versions keep their locks; the others are prefixed, and `:` can appear in no configured
    /// name or host name, so no two kinds collide.
    pub fn lock_keys(&self) -> Vec<String> {
        match self {
            Self::Cluster(name) => vec![name.to_string()],
            Self::Cloud(name) => vec![format!("cloud:{name}")],
            Self::Hosts(hosts) => hosts.iter().map(|h| format!("host:{h}")).collect(),
        }
    }
}

/// `cluster `logs`` or `cloud `prod``, as chat messages name a target.
impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cluster(name) => write!(f, "cluster `{name}`"),
            Self::Cloud(name) => write!(f, "cloud `{name}`"),
            Self::Hosts(hosts) => {
                let names: Vec<String> = hosts.iter().map(|h| format!("`{h}`")).collect();
                match names.as_slice() {
                    [one] => write!(f, "host {one}"),
                    _ => write!(f, "hosts {}", names.join(", ")),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_keys_never_collide() {
        let cluster = Target::Cluster(ClusterName::parse("prod").unwrap());
        let cloud = Target::Cloud(CloudName::parse("prod").unwrap());
        let hosts = Target::Hosts(BTreeSet::from([
            HostName::parse("prod").unwrap(),
            HostName::parse("cloud").unwrap(),
        ]));
        assert_eq!(cluster.lock_keys(), ["prod"]);
        assert_eq!(cloud.lock_keys(), ["cloud:prod"]);
        assert_eq!(hosts.lock_keys(), ["host:cloud", "host:prod"]);
        assert_eq!(hosts.to_string(), "hosts `cloud`, `prod`");
    }
}
