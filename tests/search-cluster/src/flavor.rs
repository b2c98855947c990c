//! The imitated server: product, version and distribution, and the features each one has.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The server product and major version the simulator imitates.
///
/// Versions are the ones Kolla deployments actually ran: ES 6.8 (Queens..Stein), ES 7.10 OSS
/// (the last Apache-licensed build, used until Zed), ES 8 for comparison and OpenSearch 2.x
/// (Kolla Zed and later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    /// Elasticsearch 6.8.23 (OSS build, or the default one: [`crate::SimConfig::distribution`]).
    Es6,
    /// Elasticsearch 7.10.2 (OSS build, or the default one: [`crate::SimConfig::distribution`]).
    #[default]
    Es7,
    /// Elasticsearch 8.11.3.
    Es8,
    /// OpenSearch 2.11.1.
    Os2,
}

impl Flavor {
    /// Every flavor, in release order.
    pub const ALL: [Flavor; 4] = [Flavor::Es6, Flavor::Es7, Flavor::Es8, Flavor::Os2];

    /// The lowercase name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Flavor::Es6 => "es6",
            Flavor::Es7 => "es7",
            Flavor::Es8 => "es8",
            Flavor::Os2 => "os2",
        }
    }

    /// OpenSearch renamed "master" to "cluster manager" in field names and error types.
    pub(crate) fn is_opensearch(self) -> bool {
        self == Flavor::Os2
    }
}

impl fmt::Display for Flavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error for a flavor name that is not one of `es6`, `es7`, `es8`, `os2`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown flavor [{0}]: expected one of es6, es7, es8, os2")]
pub struct ParseFlavorError(String);

impl FromStr for Flavor {
    type Err = ParseFlavorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Flavor::ALL
            .into_iter()
            .find(|flavor| flavor.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| ParseFlavorError(s.to_owned()))
    }
}

/// Which Elasticsearch distribution runs. Only ES 6.8 and 7.10 came in both: ES 8 is always the
/// default distribution and OpenSearch has no such choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    /// `elasticsearch-oss`, what Kolla installed: no X-Pack, so no ILM and (7.9+) no data
    /// stream API, whose REST actions moved to X-Pack in 7.9 (elastic/elasticsearch#59628).
    #[default]
    Oss,
    /// The default distribution with X-Pack's free features: ILM (6.6+), data streams (7.9+).
    Default,
}

/// The server as its clients see it: flavor plus the distribution that really applies to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Product {
    pub flavor: Flavor,
    distribution: Distribution,
    /// OpenSearch's ISM plugin is installed (the full bundle), not `opensearch-min`.
    ism: bool,
}

impl Product {
    /// ES 8 is always the default distribution; OpenSearch has none (counted as OSS here).
    pub(crate) fn new(flavor: Flavor, distribution: Distribution) -> Self {
        let distribution = match flavor {
            Flavor::Es6 | Flavor::Es7 => distribution,
            Flavor::Es8 => Distribution::Default,
            Flavor::Os2 => Distribution::Oss,
        };
        Product {
            flavor,
            distribution,
            ism: true,
        }
    }

    /// The same server without OpenSearch's ISM plugin, as `opensearch-min` is.
    pub(crate) fn without_ism(self) -> Self {
        Product { ism: false, ..self }
    }

    /// `version.build_flavor` of `GET /`; OpenSearch dropped the field.
    pub(crate) fn build_flavor(self) -> Option<&'static str> {
        match (self.flavor, self.distribution) {
            (Flavor::Os2, _) => None,
            (_, Distribution::Oss) => Some("oss"),
            (_, Distribution::Default) => Some("default"),
        }
    }

    /// `index.hidden` and `expand_wildcards=hidden` arrived in ES 7.7; OpenSearch forked 7.10.
    pub(crate) fn has_hidden(self) -> bool {
        self.flavor != Flavor::Es6
    }

    /// Security (authentication, roles, `_security/user/_has_privileges` since 6.7) is X-Pack:
    /// the default distribution only.
    pub(crate) fn has_security(self) -> bool {
        self.distribution == Distribution::Default
    }

    /// ILM (`index.lifecycle.*`) is X-Pack: the default distribution of ES 6.6+ only.
    pub(crate) fn has_ilm(self) -> bool {
        self.distribution == Distribution::Default
    }

    /// Composable index templates (`PUT _index_template`, ES 7.8+) live in the server itself.
    pub(crate) fn has_index_templates(self) -> bool {
        self.flavor != Flavor::Es6
    }

    /// The data stream API: X-Pack in ES 7.9+, restored to the server by OpenSearch 1.0.
    pub(crate) fn has_data_streams(self) -> bool {
        match self.flavor {
            Flavor::Es6 => false,
            Flavor::Es7 => self.distribution == Distribution::Default,
            Flavor::Es8 | Flavor::Os2 => true,
        }
    }

    /// ISM, OpenSearch's index-management plugin (bundled with the distribution).
    pub(crate) fn has_ism(self) -> bool {
        self.flavor == Flavor::Os2 && self.ism
    }

    /// `index.version.created` of a new index: `Version.id` (OpenSearch XORs its ids with
    /// `1 << 27` to tell them from ES ids; ES 8.10+ counts index versions on their own,
    /// 8.11 creates `8_500_003`).
    pub(crate) fn index_version_created(self) -> &'static str {
        match self.flavor {
            Flavor::Es6 => "6082399",
            Flavor::Es7 => "7100299",
            Flavor::Es8 => "8500003",
            Flavor::Os2 => "136327927",
        }
    }

    /// The version string behind `index.version.created_string` (`?human`).
    pub(crate) fn version_number(self) -> &'static str {
        match self.flavor {
            Flavor::Es6 => "6.8.23",
            Flavor::Es7 => "7.10.2",
            Flavor::Es8 => "8.11.3",
            Flavor::Os2 => "2.11.1",
        }
    }

    /// Kibana's (or OpenSearch Dashboards') saved-objects index and whether it is hidden.
    /// Kibana 6.5-7.10 and Dashboards migrate into `.kibana_1`; Kibana 8 names the index after
    /// its version and creates it hidden, as a system index, so plain listings skip it.
    pub(crate) fn dashboards_index(self) -> (&'static str, bool) {
        match self.flavor {
            Flavor::Es8 => (".kibana_8.11.3_001", true),
            Flavor::Es6 | Flavor::Es7 | Flavor::Os2 => (".kibana_1", false),
        }
    }
}

impl Product {
    /// Every node's roles (all nodes are master-eligible data nodes), as node listings name
    /// them, sorted as `DiscoveryNode.getRoles()` returns them.
    pub(crate) fn node_roles(self) -> &'static [&'static str] {
        const DEFAULT_7: &[&str] = &[
            "data",
            "data_cold",
            "data_content",
            "data_hot",
            "data_warm",
            "ingest",
            "master",
            "ml",
            "remote_cluster_client",
            "transform",
        ];
        match (self.flavor, self.distribution) {
            (Flavor::Es6, _) => &["master", "data", "ingest"],
            (Flavor::Es7, Distribution::Oss) => {
                &["data", "ingest", "master", "remote_cluster_client"]
            }
            (Flavor::Es7, Distribution::Default) => DEFAULT_7,
            (Flavor::Es8, _) => &[
                "data",
                "data_cold",
                "data_content",
                "data_frozen",
                "data_hot",
                "data_warm",
                "ingest",
                "master",
                "ml",
                "remote_cluster_client",
                "transform",
            ],
            (Flavor::Os2, _) => &["cluster_manager", "data", "ingest", "remote_cluster_client"],
        }
    }

    /// `_cat/nodes` `node.role`: one letter per role.
    pub(crate) fn node_role_letters(self) -> &'static str {
        match (self.flavor, self.distribution) {
            (Flavor::Es6, _) => "mdi",
            (Flavor::Es7, Distribution::Oss) | (Flavor::Os2, _) => "dimr",
            (Flavor::Es7, Distribution::Default) => "cdhilmrstw",
            (Flavor::Es8, _) => "cdfhilmrstw",
        }
    }

    /// Node attributes the distribution sets by itself (X-Pack's, OpenSearch's indexing
    /// pressure flag); the OSS builds set none.
    pub(crate) fn node_attributes(self) -> &'static [(&'static str, &'static str)] {
        match (self.flavor, self.distribution) {
            (Flavor::Es6 | Flavor::Es7, Distribution::Oss) => &[],
            (Flavor::Es6, Distribution::Default) => &[
                ("ml.machine_memory", "16656986112"),
                ("xpack.installed", "true"),
                ("ml.max_open_jobs", "20"),
            ],
            (Flavor::Es7, Distribution::Default) => &[
                ("ml.machine_memory", "16656986112"),
                ("xpack.installed", "true"),
                ("transform.node", "true"),
                ("ml.max_open_jobs", "20"),
            ],
            (Flavor::Es8, _) => &[
                ("ml.allocated_processors", "4"),
                ("ml.allocated_processors_double", "4.0"),
                ("ml.machine_memory", "16656986112"),
                ("ml.config_version", "11.0.0"),
                ("ml.max_jvm_size", "8329887744"),
                ("transform.config_version", "10.0.0"),
                ("xpack.installed", "true"),
            ],
            (Flavor::Os2, _) => &[("shard_indexing_pressure_enabled", "true")],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flavor_round_trips_through_its_name() {
        for flavor in Flavor::ALL {
            assert_eq!(flavor.to_string().parse::<Flavor>(), Ok(flavor));
        }
        assert!("es9".parse::<Flavor>().is_err());
    }

    #[test]
    fn features_follow_flavor_and_distribution() {
        let oss7 = Product::new(Flavor::Es7, Distribution::Oss);
        let default7 = Product::new(Flavor::Es7, Distribution::Default);
        assert!(oss7.has_hidden() && !oss7.has_ilm() && !oss7.has_data_streams());
        assert!(default7.has_ilm() && default7.has_data_streams());
        assert_eq!(default7.build_flavor(), Some("default"));
        let es8 = Product::new(Flavor::Es8, Distribution::Oss);
        assert!(es8.has_ilm(), "ES 8 has no OSS build");
        let os2 = Product::new(Flavor::Os2, Distribution::Default);
        assert!(os2.has_ism() && !os2.has_ilm() && os2.has_data_streams());
        assert_eq!(os2.build_flavor(), None);
        assert!(!Product::new(Flavor::Es6, Distribution::Default).has_hidden());
    }
}
