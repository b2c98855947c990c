//! What a procedure run works on: a log cluster or a cloud. A target runs at most one
//! procedure at a time; its lock is keyed by [`Target::lock_key`].

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::name::{CloudName, ClusterName};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    Cluster(ClusterName),
    Cloud(CloudName),
}

impl Target {
    /// The store's lock key. A cluster keeps its bare name, as before clouds existed, so that
    /// stores written by earlier versions keep their locks; a cloud's is prefixed, and `:` can
    /// appear in no configured name, so the two never collide.
    pub fn lock_key(&self) -> String {
        match self {
            Self::Cluster(name) => name.to_string(),
            Self::Cloud(name) => format!("cloud:{name}"),
        }
    }

    /// The inverse of [`Self::lock_key`], for reading a stored lock back.
    pub fn from_lock_key(key: &str) -> Option<Self> {
        match key.strip_prefix("cloud:") {
            Some(cloud) => CloudName::parse(cloud).ok().map(Self::Cloud),
            None => ClusterName::parse(key).ok().map(Self::Cluster),
        }
    }
}

/// `cluster `logs`` or `cloud `prod``, as chat messages name a target.
impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cluster(name) => write!(f, "cluster `{name}`"),
            Self::Cloud(name) => write!(f, "cloud `{name}`"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_keys_read_back_and_never_collide() {
        let cluster = Target::Cluster(ClusterName::parse("prod").unwrap());
        let cloud = Target::Cloud(CloudName::parse("prod").unwrap());
        assert_ne!(cluster.lock_key(), cloud.lock_key());
        assert_eq!(cluster.lock_key(), "prod");
        for target in [cluster, cloud] {
            assert_eq!(Target::from_lock_key(&target.lock_key()), Some(target));
        }
        assert_eq!(Target::from_lock_key("cloud:Bad"), None);
    }
}
