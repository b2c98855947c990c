//! World-level invariants, checked without HTTP in between.

use super::*;

fn world(nodes: u8, indices: usize) -> World {
    let ips: Vec<Ipv4Addr> = (0..nodes)
        .map(|last| Ipv4Addr::new(10, 0, 0, 11 + last))
        .collect();
    let names: Vec<String> = (0..indices)
        .map(|day| format!("flog-2026.01.{:02}", day + 1))
        .collect();
    World::plain(Flavor::Es7, &ips, &names, "flog-2026.01.01")
}

/// Counts add up, and no node ever holds both copies of an index.
fn assert_consistent(world: &World) {
    let health = world.health();
    let total = world.indices.len() * 2;
    assert_eq!(
        health.active_shards + health.initializing_shards + health.unassigned_shards,
        total
    );
    assert!(health.relocating_shards <= health.active_shards);
    for index in &world.indices {
        assert_eq!(
            index.copies.iter().filter(|copy| copy.primary).count(),
            1,
            "{}",
            index.name
        );
        for node in 0..world.nodes.len() {
            let holders = index
                .copies
                .iter()
                .filter(|copy| copy.occupies(node))
                .count();
            assert!(holders <= 1, "{} twice on node {node}", index.name);
        }
    }
}

#[test]
fn stays_consistent_through_a_rolling_restart_and_a_drain() {
    let mut world = world(5, 23);
    let mut now = 0;
    let mut step = |world: &mut World, ms: u64| {
        now += ms;
        world.advance(now);
        assert_consistent(world);
    };
    for node in 0..5 {
        let ip = world.node_ip(node);
        assert_eq!(world.stop_node(ip), Some(true));
        step(&mut world, 1_000);
        assert_eq!(world.start_node(ip), Some(true));
        for _ in 0..30 {
            step(&mut world, 1_000);
        }
    }
    assert_eq!(world.health().status, HealthStatus::Green);
    let body =
        serde_json::json!({"transient": {"cluster.routing.allocation.exclude._ip": "10.0.0.13"}});
    world.update_settings(body.as_object().unwrap()).unwrap();
    for _ in 0..300 {
        step(&mut world, 1_000);
    }
    assert_eq!(world.copies_on(2), 0);
    assert_eq!(world.health().status, HealthStatus::Green);
}

#[test]
fn the_master_stays_until_it_leaves() {
    let mut world = world(3, 1);
    assert_eq!(world.master(), Some(0));
    world.stop_node(world.node_ip(0));
    assert_eq!(world.master(), Some(1));
    world.start_node(world.node_ip(0));
    world.advance(nodes::BOOT_MS);
    assert_eq!(world.joined_nodes().count(), 3);
    assert_eq!(
        world.master(),
        Some(1),
        "a returning node does not take over"
    );
    world.stop_node(world.node_ip(1));
    world.stop_node(world.node_ip(2));
    assert_eq!(world.master(), None, "one of three is no quorum");
}
