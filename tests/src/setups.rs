//! Setups several tests share, each named for what it makes happen.

use crate::Setup;

impl Setup {
    /// A prune whose plan is longer than a chat message: 150 old indices of their own series
    /// each, besides two days of the cluster's daily ones. Every front end sends it whole as
    /// a file.
    pub fn long_plan() -> Self {
        Setup {
            days_of_indices: 2,
            sim: |mut sim| {
                sim.extra_indices = (0..150).map(|n| format!("svc{n:03}-2020.01.01")).collect();
                sim
            },
            ..Setup::default()
        }
    }
}
