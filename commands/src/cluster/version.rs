//! Which server answered and what that decides: how to flush, whether it has data streams and
//! hidden indices.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Which server family answered `GET /`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    Elasticsearch,
    OpenSearch,
}

/// The server version from `GET /`, which decides how to flush.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerVersion {
    pub distribution: Distribution,
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// An Elasticsearch build without X-Pack (`build_flavor: oss`, as Kolla shipped 7.10): no
    /// ILM, no data streams.
    #[serde(default)]
    pub oss: bool,
}

impl ServerVersion {
    /// Reads `8.11.3` (suffixes such as `-SNAPSHOT` are ignored).
    pub fn parse(distribution: Distribution, number: &str) -> Option<Self> {
        let core = number.split(['-', '+']).next()?;
        let mut parts = core.split('.').map(str::parse::<u32>);
        let major = parts.next()?.ok()?;
        let minor = parts.next().unwrap_or(Ok(0)).ok()?;
        let patch = parts.next().unwrap_or(Ok(0)).ok()?;
        Some(Self {
            distribution,
            major,
            minor,
            patch,
            oss: false,
        })
    }

    /// The version of a build that says which flavor it is (`build_flavor` of `GET /`).
    pub fn with_build_flavor(self, flavor: Option<&str>) -> Self {
        Self {
            oss: flavor == Some("oss"),
            ..self
        }
    }

    /// Synced flush where the server still has it undeprecated; a plain flush where it is gone
    /// (Elasticsearch 8: 400 "no handler"), deprecated (Elasticsearch 7.6 and later: a warning)
    /// or silently a plain flush anyway (OpenSearch).
    pub fn flush_mode(self) -> FlushMode {
        match self.distribution {
            Distribution::OpenSearch => FlushMode::Plain,
            Distribution::Elasticsearch if (self.major, self.minor) < (7, 6) => FlushMode::Synced,
            Distribution::Elasticsearch => FlushMode::Plain,
        }
    }
}

impl ServerVersion {
    /// Data streams exist from Elasticsearch 7.9 (not in its OSS builds) and in every
    /// OpenSearch.
    pub fn has_data_streams(self) -> bool {
        match self.distribution {
            Distribution::OpenSearch => true,
            Distribution::Elasticsearch => (self.major, self.minor) >= (7, 9) && !self.oss,
        }
    }

    /// Hidden indices exist from Elasticsearch 7.7 and in every OpenSearch; before, asking for
    /// them (`expand_wildcards=hidden` or `all`) is an error.
    pub fn has_hidden_indices(self) -> bool {
        match self.distribution {
            Distribution::OpenSearch => true,
            Distribution::Elasticsearch => (self.major, self.minor) >= (7, 7),
        }
    }
}

impl fmt::Display for ServerVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.distribution {
            Distribution::Elasticsearch => "Elasticsearch",
            Distribution::OpenSearch => "OpenSearch",
        };
        write!(f, "{name} {}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The flush sent before nodes stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlushMode {
    /// `POST /_flush/synced` (Elasticsearch before 7.6).
    Synced,
    /// `POST /_flush`.
    Plain,
}

impl FlushMode {
    pub fn path(self) -> &'static str {
        match self {
            Self::Synced => "/_flush/synced",
            Self::Plain => "/_flush",
        }
    }
}
