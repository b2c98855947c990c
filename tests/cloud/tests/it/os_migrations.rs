//! Nova's migration listings: `GET /os-migrations` per microversion, its filters and paging,
//! and `GET /servers/{id}/migrations` (live migrations in progress only).

use std::time::Duration;

use crate::common::{Cloud, body, compute_service, keys, start};
use opsbot_cloud_sim::{CloudSimConfig, Migration, MigrationType};
use reqwest::Method;
use serde_json::json;
use uuid::Uuid;

/// Hosts compute-01..03, servers `vm-1..4` on compute-01; `vm-1` resizing to compute-02,
/// `vm-2` live migrating to compute-03, `vm-3`'s resize confirmed, `vm-4` never moved; each
/// migration a minute after the previous one by the simulator's clock.
async fn cloud_with_migrations() -> (Cloud, Vec<Migration>) {
    let cloud = start(CloudSimConfig::default()).await;
    let source = cloud.sim.add_provider("compute-01");
    for host in ["compute-02", "compute-03"] {
        cloud.sim.add_provider(host);
    }
    for host in ["compute-01", "compute-02", "compute-03"] {
        cloud.sim.add_service(compute_service(host));
    }
    let mut migrations = Vec::new();
    for (index, (dest, kind)) in [
        ("compute-02", MigrationType::Resize),
        ("compute-03", MigrationType::LiveMigration),
        ("compute-02", MigrationType::Resize),
    ]
    .into_iter()
    .enumerate()
    {
        let vm = Uuid::new_v4();
        cloud
            .sim
            .add_server_on(vm, &format!("vm-{}", index + 1), "ACTIVE", "compute-01");
        cloud.sim.add_allocation(source, vm, &[("VCPU", 1)]);
        migrations.push(cloud.sim.start_migration(vm, dest, kind).unwrap());
        cloud.sim.advance_clock(Duration::from_secs(60));
    }
    migrations[2] = cloud.sim.confirm_migration(migrations[2].uuid).unwrap();
    (cloud, migrations)
}

fn uuids(listing: &serde_json::Value, key: &str) -> Vec<String> {
    listing["migrations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|migration| migration[key].to_string().trim_matches('"').to_owned())
        .collect()
}

#[tokio::test]
async fn the_listing_grows_fields_with_the_microversion() {
    let (cloud, migrations) = cloud_with_migrations().await;
    let path = "/compute/v2.1/os-migrations";
    let base = [
        "created_at",
        "dest_compute",
        "dest_host",
        "dest_node",
        "id",
        "instance_uuid",
        "new_instance_type_id",
        "old_instance_type_id",
        "source_compute",
        "source_node",
        "status",
        "updated_at",
    ];
    let oldest = body(cloud.get(path).await).await;
    // Creation order before 2.59.
    assert_eq!(uuids(&oldest, "id"), ["1", "2", "3"]);
    for migration in oldest["migrations"].as_array().unwrap() {
        assert_eq!(keys(migration), base);
    }
    let first = &oldest["migrations"][0];
    assert_eq!(
        (&first["status"], &first["source_node"], &first["dest_node"]),
        (
            &json!("migrating"),
            &json!("compute-01"),
            &json!("compute-02")
        )
    );
    assert_eq!(
        (
            &first["old_instance_type_id"],
            &first["new_instance_type_id"]
        ),
        (&json!(2), &json!(3))
    );
    assert!(
        first["created_at"].as_str().unwrap().len() == 26,
        "nova's spelling: {first}"
    );

    let v223 = cloud.get_at(path, ("compute", "2.23")).await;
    let live = &v223["migrations"][1];
    assert_eq!(live["migration_type"], "live-migration");
    // Links only on a live migration in progress.
    let instance = migrations[1].instance_uuid;
    assert_eq!(
        live["links"][0]["href"],
        cloud.url(&format!("/compute/v2.1/servers/{instance}/migrations/2"))
    );
    assert_eq!(live["links"][1]["rel"], "bookmark");
    assert!(v223["migrations"][0].get("links").is_none());
    assert_eq!(v223["migrations"][2]["migration_type"], "resize");

    // 2.59: the uuid (the placement consumer), newest first.
    let v259 = cloud.get_at(path, ("compute", "2.59")).await;
    let expected: Vec<String> = migrations
        .iter()
        .rev()
        .map(|m| m.uuid.to_string())
        .collect();
    assert_eq!(uuids(&v259, "uuid"), expected);
    assert!(v259["migrations"][0].get("user_id").is_none());
    assert!(v259.get("migrations_links").is_none());

    let v280 = cloud.get_at(path, ("compute", "2.80")).await;
    let newest = &v280["migrations"][0];
    assert_eq!(newest["user_id"].as_str().unwrap().len(), 32);
    assert_eq!(newest["project_id"], json!(migrations[2].project_id));
}

#[tokio::test]
async fn filters_pick_the_migrations_in_progress() {
    let (cloud, migrations) = cloud_with_migrations().await;
    let listed = |query: &'static str, version: &'static str| {
        let cloud = &cloud;
        async move {
            let path = format!("/compute/v2.1/os-migrations?{query}");
            uuids(&cloud.get_at(&path, ("compute", version)).await, "id")
        }
    };
    assert_eq!(listed("status=migrating", "2.1").await, ["1"]);
    assert_eq!(listed("status=confirmed", "2.59").await, ["3"]);
    assert_eq!(listed("migration_type=live-migration", "2.23").await, ["2"]);
    assert_eq!(listed("host=compute-02", "2.1").await, ["1", "3"]);
    assert_eq!(listed("source_compute=compute-02", "2.1").await, [""; 0]);
    assert_eq!(
        listed("host=compute-03&source_compute=compute-02", "2.1").await,
        ["2"]
    );
    let instance = migrations[0].instance_uuid;
    let path = format!("/compute/v2.1/os-migrations?instance_uuid={instance}");
    assert_eq!(uuids(&body(cloud.get(&path).await).await, "id"), ["1"]);
    // A repeated parameter counts with its last value; unknown ones are ignored before 2.59
    // (refused from 2.59: see `the_query_schema_names_what_each_version_takes`).
    assert_eq!(
        listed("status=running&status=migrating&colour=red", "2.58").await,
        ["1"]
    );
    assert_eq!(
        listed("status=running&status=migrating", "2.59").await,
        ["1"]
    );
    // changes-since filters on updated_at from 2.59 and is ignored before.
    let since = migrations[1]
        .updated_at
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let since = since.replace('+', "%2B");
    let newer = format!("/compute/v2.1/os-migrations?changes-since={since}");
    assert_eq!(
        uuids(&cloud.get_at(&newer, ("compute", "2.59")).await, "id"),
        ["3", "2"]
    );
    assert_eq!(
        uuids(&cloud.get_at(&newer, ("compute", "2.58")).await, "id"),
        ["1", "2", "3"]
    );
    let until = format!("/compute/v2.1/os-migrations?changes-before={since}");
    assert_eq!(
        uuids(&cloud.get_at(&until, ("compute", "2.66")).await, "id"),
        ["2", "1"]
    );
    // Before 2.59 Nova strips it (from 2.59 to 2.65 it is refused).
    assert_eq!(
        uuids(&cloud.get_at(&until, ("compute", "2.58")).await, "id"),
        ["1", "2", "3"]
    );
    // The user and project filters from 2.80; stripped before 2.59 (refused in between).
    assert_eq!(listed("user_id=nobody", "2.80").await, [""; 0]);
    assert_eq!(listed("project_id=nobody", "2.80").await, [""; 0]);
    let owner = format!("user_id={}", migrations[0].user_id);
    let path = format!("/compute/v2.1/os-migrations?{owner}");
    assert_eq!(
        uuids(&cloud.get_at(&path, ("compute", "2.80")).await, "id"),
        ["3", "2", "1"]
    );
    assert_eq!(listed("user_id=nobody", "2.58").await.len(), 3);

    let bad = cloud
        .at(
            Method::GET,
            "/compute/v2.1/os-migrations?changes-since=yesterday",
            ("compute", "2.59"),
        )
        .await;
    assert_eq!(bad.status(), 400);
    assert_eq!(
        body(bad).await["badRequest"]["message"],
        "Invalid input for query parameters changes-since. Value: yesterday. 'yesterday' is not a 'date-time'"
    );
}

/// Nova's query schemas for `GET /os-migrations` (`nova/api/openstack/compute/schemas/
/// migrations.py`): from 2.59 `additionalProperties` is `False`, so a parameter the version's
/// schema does not name is a 400, not ignored; `limit`, `marker` and the times take one value.
#[tokio::test]
async fn the_query_schema_names_what_each_version_takes() {
    let (cloud, _) = cloud_with_migrations().await;
    let refused = |query: &'static str, version: &'static str| {
        let cloud = &cloud;
        async move {
            let response = cloud
                .at(
                    Method::GET,
                    &format!("/compute/v2.1/os-migrations?{query}"),
                    ("compute", version),
                )
                .await;
            assert_eq!(response.status(), 400, "{query} at {version}");
            body(response).await["badRequest"]["message"]
                .as_str()
                .unwrap()
                .to_owned()
        }
    };
    let unexpected = |names: &str| format!("Additional properties are not allowed ({names})");
    assert_eq!(
        refused("colour=red", "2.59").await,
        unexpected("'colour' was unexpected")
    );
    // Sorted, each once, whatever the request's order.
    assert_eq!(
        refused("size=1&host=compute-01&colour=red&size=2", "2.96").await,
        unexpected("'colour', 'size' were unexpected")
    );
    // A later version's parameter is unexpected before it.
    assert_eq!(
        refused("changes-before=2026-01-01T00:00:00", "2.65").await,
        unexpected("'changes-before' was unexpected")
    );
    for version in ["2.59", "2.79"] {
        assert_eq!(
            refused("user_id=nobody&project_id=nobody", version).await,
            unexpected("'project_id', 'user_id' were unexpected")
        );
    }
    // The named parameters are checked first.
    assert_eq!(
        refused("colour=red&limit=x", "2.59").await,
        "Invalid input for query parameters limit. Value: x. 'x' does not match '^[0-9]*$'"
    );
    assert_eq!(
        refused("limit=", "2.59").await,
        "Invalid input for query parameters limit. Value: . '' should be non-empty"
    );
    assert_eq!(
        refused("limit=1&limit=2", "2.59").await,
        "Invalid input for query parameters limit. Value: ['1', '2']. ['1', '2'] is too long"
    );
    assert_eq!(
        refused("user_id=a&user_id=b", "2.80").await,
        "Invalid input for query parameters user_id. Value: ['a', 'b']. ['a', 'b'] is too long"
    );
    assert_eq!(
        refused(
            "changes-since=2026-01-01T00:00:00&changes-since=soon",
            "2.59"
        )
        .await,
        "Invalid input for query parameters changes-since. Value: soon. 'soon' is not a 'date-time'"
    );

    // What a version names is taken, repeated if the schema allows; before 2.59 anything is.
    let listed = |query: &'static str, version: &'static str| {
        let cloud = &cloud;
        async move {
            let path = format!("/compute/v2.1/os-migrations?{query}");
            cloud.get_at(&path, ("compute", version)).await["migrations"]
                .as_array()
                .unwrap()
                .len()
        }
    };
    assert_eq!(listed("host=a&host=compute-01", "2.59").await, 3);
    assert_eq!(
        listed(
            "colour=red&limit=x&limit=y&changes-since=soon&user_id=nobody",
            "2.58"
        )
        .await,
        3
    );
}

#[tokio::test]
async fn paging_follows_the_next_link() {
    let (cloud, migrations) = cloud_with_migrations().await;
    let page = cloud
        .get_at("/compute/v2.1/os-migrations?limit=2", ("compute", "2.59"))
        .await;
    assert_eq!(uuids(&page, "id"), ["3", "2"]);
    let next = page["migrations_links"][0].clone();
    assert_eq!(next["rel"], "next");
    let marker = migrations[1].uuid;
    assert_eq!(
        next["href"],
        cloud.url(&format!(
            "/compute/v2.1/os-migrations?limit=2&marker={marker}"
        ))
    );
    let href = next["href"].as_str().unwrap();
    let rest = cloud
        .get_at(
            href.trim_start_matches(&cloud.sim.base_url()),
            ("compute", "2.59"),
        )
        .await;
    assert_eq!(uuids(&rest, "id"), ["1"]);
    assert!(rest.get("migrations_links").is_none());
    let none = cloud
        .get_at("/compute/v2.1/os-migrations?limit=0", ("compute", "2.59"))
        .await;
    assert_eq!(none, json!({"migrations": []}));
    for (query, message) in [
        (
            "limit=two".to_owned(),
            "Invalid input for query parameters limit. Value: two. 'two' does not match '^[0-9]*$'"
                .to_owned(),
        ),
        (
            format!("marker={}", Uuid::nil()),
            format!("Marker {} could not be found.", Uuid::nil()),
        ),
    ] {
        let refused = cloud
            .at(
                Method::GET,
                &format!("/compute/v2.1/os-migrations?{query}"),
                ("compute", "2.59"),
            )
            .await;
        assert_eq!(refused.status(), 400, "{query}");
        assert_eq!(
            body(refused).await["badRequest"]["message"],
            message.as_str()
        );
    }
}

#[tokio::test]
async fn server_migrations_list_live_migrations_in_progress_only() {
    let (cloud, migrations) = cloud_with_migrations().await;
    let live = &migrations[1];
    let path = format!("/compute/v2.1/servers/{}/migrations", live.instance_uuid);
    let old = cloud.at(Method::GET, &path, ("compute", "2.22")).await;
    assert_eq!(old.status(), 404);
    let listed = cloud.get_at(&path, ("compute", "2.80")).await;
    let entry = &listed["migrations"][0];
    assert_eq!(
        keys(entry),
        [
            "created_at",
            "dest_compute",
            "dest_host",
            "dest_node",
            "disk_processed_bytes",
            "disk_remaining_bytes",
            "disk_total_bytes",
            "id",
            "memory_processed_bytes",
            "memory_remaining_bytes",
            "memory_total_bytes",
            "project_id",
            "server_uuid",
            "source_compute",
            "source_node",
            "status",
            "updated_at",
            "user_id",
            "uuid"
        ]
    );
    assert_eq!(entry["uuid"], live.uuid.to_string());
    let shown = cloud
        .get_at(&format!("{path}/2"), ("compute", "2.23"))
        .await;
    assert_eq!(shown["migration"]["status"], "running");
    assert!(shown["migration"].get("uuid").is_none());

    // A resize in progress is not listed there, nor shown.
    let resizing = format!(
        "/compute/v2.1/servers/{}/migrations",
        migrations[0].instance_uuid
    );
    assert_eq!(
        cloud.get_at(&resizing, ("compute", "2.23")).await,
        json!({"migrations": []})
    );
    let not_live = cloud
        .at(Method::GET, &format!("{resizing}/1"), ("compute", "2.23"))
        .await;
    assert_eq!(
        body(not_live).await["itemNotFound"]["message"],
        format!(
            "Migration 1 for server {} is not live-migration.",
            migrations[0].instance_uuid
        )
    );

    cloud.sim.confirm_migration(live.uuid).unwrap();
    assert_eq!(
        cloud.get_at(&path, ("compute", "2.23")).await,
        json!({"migrations": []})
    );
    let over = cloud
        .at(Method::GET, &format!("{path}/2"), ("compute", "2.23"))
        .await;
    assert_eq!(
        body(over).await["itemNotFound"]["message"],
        format!(
            "Live migration 2 for server {} is not in progress.",
            live.instance_uuid
        )
    );
    let stranger = cloud
        .at(
            Method::GET,
            &format!("/compute/v2.1/servers/{}/migrations", Uuid::nil()),
            ("compute", "2.23"),
        )
        .await;
    assert_eq!(stranger.status(), 404);
}
