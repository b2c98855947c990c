//! The steps of a cloud's plan.

use serde::{Deserialize, Serialize};

use crate::name::HostName;
use crate::openstack::ids::{ConsumerId, ImageId, ProviderId, ServiceId};
use crate::openstack::image::PropertyChange;
use crate::openstack::placement::Resources;

/// Side effects on a cloud that need no approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CloudSafe {
    /// List the provider's allocations again and check that none the plan deleted remains.
    VerifyReleased { provider: ProviderId },
    /// Restart the compute container on a hypervisor, so that it chooses its RPC version cap
    /// again (host control).
    RestartCompute { host: HostName },
    /// Set image properties with one JSON patch; setting a value again changes nothing.
    SetImageProperties {
        image: ImageId,
        name: String,
        changes: Vec<PropertyChange>,
    },
}

/// Conditions a cloud's run waits for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CloudWait {
    /// The host's `nova-compute` reports up, with an `updated_at` after the restart step before
    /// this wait (a report from before the restart does not count).
    ComputeUp { host: HostName },
}

/// Destructive side effects on a cloud: each runs only with an `Approved` proof for the run's
/// digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CloudDestructive {
    /// `DELETE /allocations/{consumer}` of an instance the compute API does not know. Right
    /// before, the instance is looked up again: one that exists is never deleted.
    DeleteAllocation {
        consumer: ConsumerId,
        provider: ProviderId,
        resources: Resources,
    },
    /// `DELETE /os-services/{id}` of a disabled compute service that is down. Right before, the
    /// services are listed again: one that came back up or was enabled is kept.
    DeleteComputeService { id: ServiceId, host: HostName },
}
