//! Simulator configuration: which server flavor to imitate and what the cluster looks like at start.

use std::net::Ipv4Addr;
use std::time::Duration;

use crate::fault::FaultRule;
pub(crate) use crate::flavor::{Distribution, Flavor, Product};
pub use crate::http::{Role, Security};
use crate::scenario::{DataStreamSpec, IndexSpec};
pub use crate::tls::SimTls;

/// How the simulated cluster looks when it starts.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Server flavor to imitate.
    pub flavor: Flavor,
    /// `cluster.name`; Kolla names its log cluster `kolla_logging`.
    pub cluster_name: String,
    /// Number of nodes; all are master-eligible data nodes, as in Kolla.
    pub node_count: usize,
    /// IP of the first node; the others follow consecutively. Node name == IP, as Kolla sets it.
    pub first_node_ip: Ipv4Addr,
    /// Daily `flog-YYYY.MM.DD` indices for this many days ending `today` (inclusive).
    pub days_of_indices: u32,
    /// Further indices to create (odd names for tests).
    pub extra_indices: Vec<String>,
    /// The last day that has a daily index.
    pub today: time::Date,
    /// Simulated seconds per real second.
    pub speed: f64,
    /// Fault rules active from the start.
    pub faults: Vec<FaultRule>,
    /// Elasticsearch distribution, for ES 6.8 and 7.10 (ES 8 is always the default one,
    /// OpenSearch has none): OSS as Kolla installed it, or the default distribution with ILM
    /// (`index.lifecycle.*`), the built-in `logs`/`metrics`/`synthetics` templates and (7.10)
    /// the data stream API. `GET /` reports it as `build_flavor`.
    pub distribution: Distribution,
    /// Indices with settings of their own (hidden, ILM, an ISM policy, a creation date),
    /// created at start after the daily indices and `extra_indices`.
    pub indices: Vec<IndexSpec>,
    /// Data streams running at start, each with its own template.
    pub data_streams: Vec<DataStreamSpec>,
    /// Simulated time from the master starting an index deletion to the cluster state without
    /// the indices being applied. Until then the indices are still listed, `GET
    /// _cluster/pending_tasks` shows the task and `GET _tasks` the request; a `DELETE` waits
    /// for it (or answers `acknowledged: false` after its `timeout`, 30 s by default) and the
    /// deletion goes on if the client leaves. Real clusters take tens to hundreds of
    /// milliseconds; slow it down to observe a deletion in flight
    /// ([`crate::SimHandle::set_delete_apply`] changes it while running).
    pub delete_apply: Duration,
    /// Serve HTTPS with this certificate and key instead of plain HTTP (ES 8's default).
    pub tls: Option<SimTls>,
    /// Require basic authentication as Elasticsearch security does (ES 8's default); `None`
    /// serves everyone, as Kolla's clusters do.
    pub security: Option<Security>,
    /// OpenSearch only: its ISM plugin is installed, as in the full bundle. Without it (as in
    /// `opensearch-min`) every `_plugins/_ism/` path answers 400 `no handler found`.
    pub ism: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            flavor: Flavor::default(),
            cluster_name: "kolla_logging".to_owned(),
            node_count: 5,
            first_node_ip: Ipv4Addr::new(10, 0, 0, 11),
            days_of_indices: 90,
            extra_indices: Vec::new(),
            today: time::OffsetDateTime::now_utc().date(),
            speed: 1.0,
            faults: Vec::new(),
            distribution: Distribution::default(),
            ism: true,
            indices: Vec::new(),
            data_streams: Vec::new(),
            delete_apply: DEFAULT_DELETE_APPLY,
            tls: None,
            security: None,
        }
    }
}

/// The default [`SimConfig::delete_apply`]: what a small healthy cluster takes.
pub const DEFAULT_DELETE_APPLY: Duration = Duration::from_millis(100);

/// A configuration the simulator cannot run with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// There must be at least one node.
    #[error("node_count must be at least 1")]
    NoNodes,
    /// The node IPs would run past 255.255.255.255.
    #[error("{count} nodes starting at {first} run past the end of the IPv4 address space")]
    IpOverflow {
        /// First node IP.
        first: Ipv4Addr,
        /// Requested node count.
        count: usize,
    },
    /// Time must move forward at a finite rate.
    #[error("speed must be a finite number greater than 0, got {0}")]
    BadSpeed(f64),
    /// The daily indices would start before year -9999.
    #[error("days_of_indices {0} reaches before the earliest representable date")]
    TooManyDays(u32),
    /// An [`IndexSpec`] the imitated server would refuse.
    #[error("index [{name}]: {reason}")]
    InvalidIndex {
        /// Index name.
        name: String,
        /// What the server (or the simulator) objects to.
        reason: String,
    },
    /// The TLS certificate or key cannot be used.
    #[error("TLS: {0}")]
    Tls(String),
    /// OpenSearch's security plugin answers in shapes of its own, which are not modelled.
    #[error("security is modelled for Elasticsearch only, not {0}")]
    SecurityUnmodelled(Flavor),
    /// Elasticsearch's OSS build has no security: only the default distribution does.
    #[error("security needs the default distribution of {0}; its OSS build has none")]
    SecurityNeedsDefaultDistribution(Flavor),
    /// A [`DataStreamSpec`] the imitated server would refuse.
    #[error("data stream [{name}]: {reason}")]
    InvalidDataStream {
        /// Stream name.
        name: String,
        /// What the server objects to.
        reason: String,
    },
}

/// Kolla's daily log index for a day: `flog-YYYY.MM.DD`.
pub(crate) fn daily_index_name(day: time::Date) -> String {
    format!(
        "flog-{:04}.{:02}.{:02}",
        day.year(),
        u8::from(day.month()),
        day.day()
    )
}

impl SimConfig {
    /// The index the log shippers are writing to.
    pub(crate) fn written_index(&self) -> String {
        daily_index_name(self.today)
    }

    /// Checks the configuration and returns the node IPs in order.
    pub(crate) fn node_ips(&self) -> Result<Vec<Ipv4Addr>, ConfigError> {
        if self.node_count == 0 {
            return Err(ConfigError::NoNodes);
        }
        if self.security.is_some() && self.flavor.is_opensearch() {
            return Err(ConfigError::SecurityUnmodelled(self.flavor));
        }
        // Security is X-Pack's: the OSS build Kolla installed has none.
        if self.security.is_some() && !Product::new(self.flavor, self.distribution).has_security() {
            return Err(ConfigError::SecurityNeedsDefaultDistribution(self.flavor));
        }
        if !(self.speed.is_finite() && self.speed > 0.0) {
            return Err(ConfigError::BadSpeed(self.speed));
        }
        let overflow = ConfigError::IpOverflow {
            first: self.first_node_ip,
            count: self.node_count,
        };
        let first = u32::from(self.first_node_ip);
        (0..self.node_count)
            .map(|offset| {
                u32::try_from(offset)
                    .ok()
                    .and_then(|offset| first.checked_add(offset))
                    .map(Ipv4Addr::from)
                    .ok_or_else(|| overflow.clone())
            })
            .collect()
    }

    /// The daily indices that exist at start, oldest first, with their days.
    pub(crate) fn daily_indices(&self) -> Result<Vec<(String, time::Date)>, ConfigError> {
        let mut days = Vec::new();
        for back in (0..self.days_of_indices).rev() {
            let day = self
                .today
                .checked_sub(time::Duration::days(i64::from(back)))
                .ok_or(ConfigError::TooManyDays(self.days_of_indices))?;
            days.push((daily_index_name(day), day));
        }
        Ok(days)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ips_are_consecutive() {
        let config = SimConfig {
            node_count: 3,
            ..SimConfig::default()
        };
        let ips = config.node_ips().unwrap();
        assert_eq!(ips.last(), Some(&Ipv4Addr::new(10, 0, 0, 13)));
        let broken = SimConfig {
            first_node_ip: Ipv4Addr::new(255, 255, 255, 255),
            ..config
        };
        assert!(matches!(
            broken.node_ips(),
            Err(ConfigError::IpOverflow { .. })
        ));
    }

    #[test]
    fn security_is_modelled_for_elasticsearch_only() {
        let secured = |flavor| SimConfig {
            flavor,
            security: Some(Security::default()),
            ..SimConfig::default()
        };
        assert!(secured(Flavor::Es8).node_ips().is_ok());
        assert_eq!(
            secured(Flavor::Os2).node_ips(),
            Err(ConfigError::SecurityUnmodelled(Flavor::Os2))
        );
        // ES 6 and 7 have security in their default distribution only, not in the OSS build.
        assert_eq!(
            secured(Flavor::Es7).node_ips(),
            Err(ConfigError::SecurityNeedsDefaultDistribution(Flavor::Es7))
        );
        let default_es6 = SimConfig {
            distribution: Distribution::Default,
            ..secured(Flavor::Es6)
        };
        assert!(default_es6.node_ips().is_ok());
    }

    #[test]
    fn daily_indices_end_today() {
        let config = SimConfig {
            days_of_indices: 3,
            today: time::macros::date!(2026 - 03 - 01),
            ..SimConfig::default()
        };
        let names: Vec<String> = config
            .daily_indices()
            .unwrap()
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(
            names,
            ["flog-2026.02.27", "flog-2026.02.28", "flog-2026.03.01"]
        );
    }
}
