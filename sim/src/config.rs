//! Simulator configuration: which server flavor to imitate and what the cluster looks like at start.

use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::fault::FaultRule;

/// The server product and major version the simulator imitates.
///
/// Versions are the ones Kolla deployments actually ran: ES 6.8 (Queens..Stein), ES 7.10 OSS
/// (the last Apache-licensed build, used until Zed), ES 8 for comparison and OpenSearch 2.x
/// (Kolla Zed and later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    /// Elasticsearch 6.8.23.
    Es6,
    /// Elasticsearch 7.10.2 (OSS build).
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
        }
    }
}

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

    /// The names of the indices that exist at start, oldest daily index first.
    pub(crate) fn initial_index_names(&self) -> Result<Vec<String>, ConfigError> {
        let mut names = Vec::new();
        for back in (0..self.days_of_indices).rev() {
            let day = self
                .today
                .checked_sub(time::Duration::days(i64::from(back)))
                .ok_or(ConfigError::TooManyDays(self.days_of_indices))?;
            names.push(daily_index_name(day));
        }
        names.push(".kibana_1".to_owned());
        for extra in &self.extra_indices {
            if !names.contains(extra) {
                names.push(extra.clone());
            }
        }
        Ok(names)
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
    fn daily_indices_end_today_and_extras_follow() {
        let config = SimConfig {
            days_of_indices: 3,
            today: time::macros::date!(2026 - 03 - 01),
            extra_indices: vec!["audit-log".to_owned(), ".kibana_1".to_owned()],
            ..SimConfig::default()
        };
        let names = config.initial_index_names().unwrap();
        assert_eq!(
            names,
            [
                "flog-2026.02.27",
                "flog-2026.02.28",
                "flog-2026.03.01",
                ".kibana_1",
                "audit-log"
            ]
        );
    }
}
