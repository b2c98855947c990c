//! The simulated worlds the crash and failover tests act on, and what each must look like
//! after its run: one source for both, so that a failover is held to the crash tests' bar.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::time::Duration;

use opsbot_cloud_sim::{CloudSimConfig, CloudSimHandle};
use opsbot_search_sim::{FaultRule, NodeStatus, SimHandle};
use uuid::Uuid;

/// The engine timing and the 5-node cluster `logs` at `url`, as TOML: the body of a test's
/// config (its store and people are the caller's).
pub fn cluster_toml(url: &str, node_control: &str, poll: Duration) -> String {
    format!(
        r#"
[engine]
poll_interval = "{poll}ms"
node_timeout = "30s"
formation_timeout = "60s"
request_timeout = "5s"

[engine.retry]
attempts = 5
base_delay = "50ms"
max_delay = "500ms"

[[clusters]]
name = "logs"
url = "{url}"
nodes = ["10.0.0.11", "10.0.0.12", "10.0.0.13", "10.0.0.14", "10.0.0.15"]

[clusters.node_control]
{node_control}

"#,
        poll = poll.as_millis(),
    )
}

/// A simulated cloud whose compute-03 holds the allocations of three stale consumers and of
/// one running instance (`db-1`); every DELETE takes `delete_latency` to be answered.
pub struct StaleCloud {
    pub cloud: CloudSimHandle,
    pub provider: Uuid,
    pub stale: [Uuid; 3],
    pub running: Uuid,
}

impl StaleCloud {
    pub async fn start(delete_latency: Duration) -> StaleCloud {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let cloud = opsbot_cloud_sim::spawn(CloudSimConfig::default(), listener)
            .await
            .unwrap();
        let provider = cloud.add_provider("compute-03");
        let stale = [Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4()];
        let running = Uuid::new_v4();
        for consumer in stale.iter().chain([&running]) {
            cloud.add_allocation(provider, *consumer, &[("VCPU", 1), ("MEMORY_MB", 2048)]);
        }
        cloud.add_server(running, "db-1", "ACTIVE");
        let latency = format!("latency={}ms,method=DELETE", delete_latency.as_millis());
        cloud.set_faults(vec![latency.parse::<FaultRule>().unwrap()]);
        StaleCloud {
            cloud,
            provider,
            stale,
            running,
        }
    }

    /// Each stale consumer's allocations deleted once (one answered DELETE each; a DELETE cut
    /// off before the cloud answered, status 0, did nothing), the running instance's kept, no
    /// other DELETE.
    pub fn check(&self, what: &str) {
        let left: Vec<Uuid> = self.cloud.allocations(self.provider).into_keys().collect();
        assert_eq!(left, vec![self.running], "{what}: the allocations left");
        let deletes: Vec<_> = self
            .cloud
            .calls()
            .into_iter()
            .filter(|c| c.method == "DELETE")
            .collect();
        let expected: BTreeSet<String> = self
            .stale
            .iter()
            .map(|c| format!("/placement/allocations/{c}"))
            .collect();
        for call in &deletes {
            assert!(
                expected.contains(&call.path),
                "{what}: an unexpected DELETE: {call:?}"
            );
        }
        let mut answered: Vec<String> = deletes
            .iter()
            .filter(|c| c.status != 0)
            .map(|c| c.path.clone())
            .collect();
        answered.sort();
        assert_eq!(
            answered,
            expected.into_iter().collect::<Vec<_>>(),
            "{what}: each stale consumer deleted once; all the DELETEs: {deletes:?}"
        );
    }

    /// Whether a DELETE has reached the cloud.
    pub fn delete_arrived(&self) -> bool {
        self.cloud.calls().iter().any(|c| c.method == "DELETE")
    }
}

/// After a node removal on `sim`: `removed` held no shard copy when it stopped, and stopped
/// once; no other node stopped; the exclusion is cleared; no index was deleted.
pub fn check_removed(sim: &SimHandle, removed: Ipv4Addr, what: &str) {
    let world = sim.state();
    for node in &world.nodes {
        if node.ip == removed {
            assert_eq!(node.state, NodeStatus::Stopped, "{what}");
            assert_eq!(node.stops, 1, "{what}: the node stopped once");
            assert_eq!(
                node.shards_at_stop, 0,
                "{what}: it still held shard copies when it stopped"
            );
        } else {
            assert_eq!(node.stops, 0, "{what}: {} was stopped", node.ip);
        }
    }
    let exclusion = world
        .settings
        .transient
        .get("cluster.routing.allocation.exclude._ip")
        .cloned()
        .unwrap_or_default();
    assert_eq!(exclusion, "", "{what}: the exclusion outlived the run");
    assert!(world.deleted.is_empty(), "{what}: {:?}", world.deleted);
}
