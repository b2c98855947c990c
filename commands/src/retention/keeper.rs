//! Indices that belong to someone else. Retention by name must leave them alone, as Curator
//! does: an index a lifecycle policy manages is deleted by that policy (deleting it under the
//! policy fights it), a data stream's backing index by the stream's own lifecycle, and a hidden
//! index is some component's internal state, never in Curator's listing.

use std::fmt;

use crate::cluster::CatIndexRow;
use crate::index::IndexUuid;

/// Who keeps an index, so that retention does not touch it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Keeper {
    /// It backs a data stream (`GET /_data_stream` lists it).
    DataStream { stream: String },
    /// An Elasticsearch ILM policy manages it (`index.lifecycle.name`).
    Ilm { policy: String },
    /// An OpenSearch ISM policy manages it (`GET /_plugins/_ism/explain`).
    Ism { policy: String },
    /// `index.hidden: true`.
    Hidden,
}

impl Keeper {
    /// Precedence when an index has several keepers: the smaller, the more telling.
    pub fn rank(&self) -> u8 {
        match self {
            Self::DataStream { .. } => 0,
            Self::Ilm { .. } => 1,
            Self::Ism { .. } => 2,
            Self::Hidden => 3,
        }
    }

    /// How the plan counts indices kept for this reason.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::DataStream { .. } => "backing a data stream",
            Self::Ilm { .. } => "managed by an ILM policy",
            Self::Ism { .. } => "managed by an ISM policy",
            Self::Hidden => "hidden",
        }
    }
}

impl fmt::Display for Keeper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DataStream { stream } => write!(f, "backs data stream `{stream}`"),
            Self::Ilm { policy } => write!(f, "ILM policy `{policy}`"),
            Self::Ism { policy } => write!(f, "ISM policy `{policy}`"),
            Self::Hidden => f.write_str("hidden"),
        }
    }
}

/// One index as the index planners see it: its listing row, the UUID of this incarnation, and
/// whoever else keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexInfo {
    pub row: CatIndexRow,
    pub uuid: IndexUuid,
    /// Every reason someone else keeps it; [`IndexInfo::keeper`] names the one reported.
    pub keepers: Vec<Keeper>,
    /// When the cluster created it (`index.creation_date`), if it said.
    pub created: Option<time::OffsetDateTime>,
}

impl IndexInfo {
    /// The most telling reason the index is someone else's: a data stream before its policy,
    /// a policy before the mere hidden flag that streams and policies' indices also carry.
    pub fn keeper(&self) -> Option<&Keeper> {
        self.keepers.iter().min_by_key(|k| k.rank())
    }

    pub fn name(&self) -> &str {
        &self.row.index
    }

    /// Its store size in bytes, when the listing gave one (`_cat/indices?bytes=b`).
    pub fn bytes(&self) -> Option<u64> {
        self.row.store_size.as_deref()?.parse().ok()
    }
}
