//! Index deletion as a cluster-state task: still listed while the master applies it, visible in
//! the pending tasks and the task management API (with the request's `X-Opaque-Id`), finished
//! after its client has gone, and what a repeated DELETE of the same names gets meanwhile.
// Test helpers outside #[test] functions panic on failure too, like the tests themselves.

use std::time::Duration;

use crate::common::{Sim, config, start};
use opsbot_search_sim::{Flavor, SimConfig, WorldSnapshot};
use reqwest::{Method, StatusCode};
use serde_json::Value;

const OPAQUE: &str = "opsbot/r-12/3";

/// A cluster at 1000x whose deletions take `apply` simulated seconds to apply.
async fn slow_deletes(flavor: Flavor, apply_secs: u64) -> Sim {
    start(SimConfig {
        delete_apply: Duration::from_secs(apply_secs),
        ..config(flavor)
    })
    .await
}

fn uuid_of(state: &WorldSnapshot, name: &str) -> String {
    state
        .indices
        .iter()
        .find(|index| index.name == name)
        .map(|index| index.uuid.clone())
        .unwrap()
}

/// Sends a DELETE with `X-Opaque-Id` from a client that gives up after `patience`.
fn delete_in_background(
    sim: &Sim,
    path: &str,
    patience: Duration,
) -> tokio::task::JoinHandle<Result<(StatusCode, Value), reqwest::Error>> {
    let request = reqwest::Client::builder()
        .timeout(patience)
        .build()
        .unwrap()
        .delete(sim.url(path))
        .header("X-Opaque-Id", OPAQUE);
    tokio::spawn(async move {
        let response = request.send().await?;
        let status = response.status();
        Ok((status, response.json().await?))
    })
}

#[tokio::test]
async fn a_slow_delete_stays_listed_and_shows_as_a_task_until_applied_even_after_its_client_left() {
    let sim = slow_deletes(Flavor::Es7, 1_800).await;
    let before = sim.handle.state();
    let (first, second) = ("flog-2026.03.01", "flog-2026.03.02");
    // The request waits for the deletion (its ack timeout is longer than the apply); its
    // client does not.
    let client = delete_in_background(
        &sim,
        &format!("/{first},{second}?timeout=1h"),
        Duration::from_millis(300),
    );
    let state = sim
        .wait_until("the deletion to run", |state| {
            state.pending_deletions.iter().any(|task| task.executing)
        })
        .await;
    let pending = &state.pending_deletions[0];
    assert_eq!(pending.opaque_id.as_deref(), Some(OPAQUE));
    let mut names = pending.indices.clone();
    names.sort();
    assert_eq!(names, [first, second]);

    // Not gone until applied: every listing still has them.
    let (status, rows) = sim
        .get(&format!(
            "/_cat/indices/{first},{second}?format=json&h=index"
        ))
        .await;
    assert_eq!(
        (status, rows.as_array().map(Vec::len)),
        (StatusCode::OK, Some(2))
    );
    let (_, settings) = sim.get(&format!("/{first}/_settings/index.uuid")).await;
    assert_eq!(
        settings[first]["settings"]["index"]["uuid"],
        uuid_of(&before, first).as_str()
    );

    // The master's queue names each index with the uuid it was bound to on receipt.
    let (_, pending_tasks) = sim.get("/_cluster/pending_tasks").await;
    let task = &pending_tasks["tasks"][0];
    assert_eq!(pending_tasks["tasks"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        (task["priority"].as_str(), task["executing"].as_bool()),
        (Some("URGENT"), Some(true))
    );
    let source = task["source"].as_str().unwrap();
    assert!(source.starts_with("delete-index [["), "{source}");
    for name in [first, second] {
        let named = format!("[{name}/{}]", uuid_of(&before, name));
        assert!(source.contains(&named), "{source} names {named}");
    }
    assert!(task["time_in_queue_millis"].as_u64().is_some());
    assert!(task["time_in_queue"].as_str().is_some());
    let (_, health) = sim.get("/_cluster/health").await;
    assert_eq!(health["number_of_pending_tasks"], 1);

    // The transport task carries the request's X-Opaque-Id; before ES 9 its description names
    // no index.
    let (_, tasks) = sim
        .get("/_tasks?actions=indices:admin/delete&detailed=true")
        .await;
    let nodes = tasks["nodes"].as_object().unwrap();
    assert_eq!(
        nodes.len(),
        1,
        "the node haproxy chose is the master: {tasks}"
    );
    let node = nodes.values().next().unwrap();
    assert_eq!(node["name"], "10.0.0.11");
    assert_eq!(node["transport_address"], "10.0.0.11:9300");
    let (id, delete) = node["tasks"].as_object().unwrap().iter().next().unwrap();
    assert_eq!(
        id,
        &format!("{}:{}", delete["node"].as_str().unwrap(), delete["id"])
    );
    assert_eq!(delete["action"], "indices:admin/delete");
    assert_eq!(delete["type"], "transport");
    assert_eq!(delete["description"], "");
    assert_eq!(delete["cancellable"], false);
    assert!(
        delete.get("cancelled").is_none(),
        "only cancellable tasks say (ES 7.14+)"
    );
    assert_eq!(
        delete["headers"],
        serde_json::json!({"X-Opaque-Id": OPAQUE})
    );
    let (_, brief) = sim.get("/_tasks?actions=indices:admin/delete*").await;
    let brief_task = brief["nodes"].as_object().unwrap().values().next().unwrap()["tasks"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .clone();
    assert!(
        brief_task.get("description").is_none(),
        "only with detailed"
    );

    // The client gives up; the deletion goes on and is applied.
    let gave_up = client.await.unwrap().unwrap_err();
    assert!(gave_up.is_timeout(), "{gave_up}");
    let state = sim
        .wait_until("the deletion to be applied", |state| {
            state.pending_deletions.is_empty()
        })
        .await;
    assert_eq!(state.deleted, [first, second]);
    assert!(state.indices.iter().all(|index| index.name != first));
    let call = sim
        .handle
        .calls()
        .into_iter()
        .find(|call| call.method == "DELETE")
        .unwrap();
    assert_eq!(
        (call.opaque_id.as_deref(), call.hung_up, call.status),
        (Some(OPAQUE), true, 0),
        "logged with its X-Opaque-Id, and the client hung up"
    );
    let (_, tasks) = sim.get("/_tasks?actions=indices:admin/delete*").await;
    assert_eq!(tasks, serde_json::json!({"nodes": {}}));
    let (_, pending_tasks) = sim.get("/_cluster/pending_tasks").await;
    assert_eq!(pending_tasks, serde_json::json!({"tasks": []}));
    // Now the names are unknown at receipt: the whole request fails before any task.
    let (status, body) = sim.json(Method::DELETE, &format!("/{first}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["resource.type"], "index_or_alias");
}

#[tokio::test]
async fn a_second_delete_of_names_still_being_deleted_is_queued_and_fails_when_it_runs() {
    // Applying takes 1200 simulated seconds: longer than the 30 s ack and master timeouts.
    let sim = slow_deletes(Flavor::Os2, 1_200).await;
    let name = "flog-2026.03.05";
    let uuid = uuid_of(&sim.handle.state(), name);
    let path = format!("/{name}");

    // The first request is answered `acknowledged: false` after its ack timeout.
    let (status, body) = sim.json(Method::DELETE, &path, None).await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, serde_json::json!({"acknowledged": false}))
    );
    let state = sim.handle.state();
    assert!(
        state.indices.iter().any(|index| index.name == name),
        "still being applied"
    );
    assert!(state.pending_deletions[0].executing);

    // A second one finds the name (the applied state still has it) and queues behind the
    // first; with the default master_timeout it times out in the queue and never runs.
    let (status, body) = sim.json(Method::DELETE, &path, None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        body["error"]["type"],
        "process_cluster_event_timeout_exception"
    );
    let reason = body["error"]["reason"].as_str().unwrap();
    assert_eq!(
        reason,
        format!("failed to process cluster event (delete-index [[{name}/{uuid}]]) within 30s")
    );

    // A patient one runs after the first has been applied, and `getIndexSafe` no longer finds
    // the index it bound: 404 carrying that uuid, without resource.* keys.
    let (status, body) = sim
        .json(
            Method::DELETE,
            &format!("{path}?master_timeout=1h&timeout=1h"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        body["error"]["root_cause"][0],
        serde_json::json!({
            "type": "index_not_found_exception",
            "reason": format!("no such index [{name}]"),
            "index_uuid": uuid,
            "index": name,
        })
    );
    assert_eq!(sim.handle.state().deleted, [name], "deleted exactly once");
}

#[tokio::test]
async fn pending_task_counts_show_in_health_while_deletions_queue() {
    let sim = slow_deletes(Flavor::Es8, 1_200).await;
    let first = delete_in_background(&sim, "/flog-2026.03.01", Duration::from_secs(20));
    sim.wait_until("the first deletion to run", |state| {
        state.pending_deletions.iter().any(|task| task.executing)
    })
    .await;
    let second = delete_in_background(
        &sim,
        "/flog-2026.03.02?master_timeout=1h&timeout=1h",
        Duration::from_secs(20),
    );
    sim.wait_until("the second to queue", |state| {
        state.pending_deletions.len() == 2
    })
    .await;
    let (_, health) = sim
        .get("/_cat/health?format=json&h=pending_tasks,max_task_wait_time")
        .await;
    assert_eq!(health[0]["pending_tasks"], "2");
    assert_ne!(health[0]["max_task_wait_time"], "-");
    let (_, pending) = sim.get("/_cluster/pending_tasks").await;
    let executing: Vec<bool> = pending["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["executing"].as_bool().unwrap())
        .collect();
    assert_eq!(executing, [true, false]);
    let orders: Vec<u64> = pending["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["insert_order"].as_u64().unwrap())
        .collect();
    assert!(orders[0] < orders[1]);
    assert_eq!(first.await.unwrap().unwrap().1["acknowledged"], false);
    let (status, body) = second.await.unwrap().unwrap();
    assert_eq!(
        (status, body["acknowledged"].as_bool()),
        (StatusCode::OK, Some(true))
    );
}

#[tokio::test]
async fn the_task_api_lists_itself_and_groups_by_parent_or_not_at_all() {
    let sim = start(config(Flavor::Os2)).await;
    let response = sim
        .client
        .get(sim.url("/_tasks?detailed"))
        .header("X-Opaque-Id", OPAQUE)
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-opaque-id"], OPAQUE, "echoed back");
    let tasks: Value = response.json().await.unwrap();
    let nodes = tasks["nodes"].as_object().unwrap();
    assert_eq!(nodes.len(), 5, "a per-node child on every node");
    let all: Vec<&Value> = nodes
        .values()
        .flat_map(|node| node["tasks"].as_object().unwrap().values())
        .collect();
    let actions: Vec<&str> = all
        .iter()
        .map(|task| task["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions
            .iter()
            .filter(|a| **a == "cluster:monitor/tasks/lists")
            .count(),
        1
    );
    assert_eq!(
        actions
            .iter()
            .filter(|a| **a == "cluster:monitor/tasks/lists[n]")
            .count(),
        5
    );
    assert!(
        all.iter().all(|task| task["cancelled"] == false),
        "OpenSearch 2 always says"
    );
    assert!(
        all.iter()
            .all(|task| task["headers"]["X-Opaque-Id"] == OPAQUE)
    );
    let roles = &nodes.values().next().unwrap()["roles"];
    assert_eq!(
        roles,
        &serde_json::json!(["cluster_manager", "data", "ingest", "remote_cluster_client"])
    );

    let (_, by_parent) = sim.get("/_tasks?group_by=parents").await;
    let roots = by_parent["tasks"].as_object().unwrap();
    assert_eq!(roots.len(), 1);
    let root = roots.values().next().unwrap();
    assert_eq!(root["children"].as_array().map(Vec::len), Some(5));
    let (_, flat) = sim.get("/_tasks?group_by=none&nodes=_master").await;
    assert_eq!(flat["tasks"].as_array().map(Vec::len), Some(2), "{flat}");
    let (status, body) = sim.get("/_tasks?group_by=everything").await;
    assert_eq!(
        (status, body["error"]["type"].as_str()),
        (StatusCode::BAD_REQUEST, Some("illegal_argument_exception"))
    );
    let (status, _) = sim.get("/_tasks?wait_for_completion=true").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "not simulated, refused");
}

#[tokio::test]
async fn a_delete_forwarded_to_another_master_runs_as_a_child_task_there() {
    let sim = slow_deletes(Flavor::Es6, 600).await;
    // The master steps down: 10.0.0.12 is elected, while haproxy still hands requests to .11.
    sim.stop(11);
    sim.start(11);
    sim.wait_until("the old master back", |state| {
        state.nodes[0].state == opsbot_search_sim::NodeStatus::Up
    })
    .await;
    assert_eq!(sim.handle.state().master, Some(crate::common::ip(12)));
    let client = delete_in_background(&sim, "/flog-2026.03.03", Duration::from_secs(20));
    sim.wait_until("the deletion to run", |state| {
        !state.pending_deletions.is_empty()
    })
    .await;
    let (_, tasks) = sim
        .get("/_tasks?actions=indices:admin/delete&group_by=none")
        .await;
    let tasks = tasks["tasks"].as_array().unwrap().clone();
    assert_eq!(tasks.len(), 2, "{tasks:?}");
    let parent = format!("{}:{}", tasks[0]["node"].as_str().unwrap(), tasks[0]["id"]);
    assert_eq!(tasks[1]["parent_task_id"], parent.as_str());
    assert!(
        tasks
            .iter()
            .all(|task| task["headers"]["X-Opaque-Id"] == OPAQUE)
    );
    assert_eq!(client.await.unwrap().unwrap().1["acknowledged"], false);
}

#[tokio::test]
async fn deleting_an_index_a_snapshot_copies_fails_the_whole_request() {
    let sim = start(config(Flavor::Os2)).await;
    let (copied, other) = ("flog-2026.03.01", "flog-2026.03.02");
    sim.handle.set_snapshotting(&[copied]);
    let uuid = uuid_of(&sim.handle.state(), copied);
    let (status, body) = sim
        .json(Method::DELETE, &format!("/{other},{copied}"), None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["type"], "snapshot_in_progress_exception");
    assert_eq!(
        body["error"]["reason"],
        format!(
            "Cannot delete indices that are being snapshotted: [[{copied}/{uuid}]]. Try again after snapshot finishes or cancel the currently running snapshot."
        )
    );
    assert!(sim.handle.state().deleted.is_empty(), "nothing deleted");

    sim.handle.set_snapshotting(&[]);
    let (status, _) = sim
        .json(Method::DELETE, &format!("/{other},{copied}"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(sim.handle.state().deleted.len(), 2);
}

/// ES handles a request only once it is whole: a DELETE whose chunked body never ends (its
/// client went away first, as opsbot does when it may no longer act) deletes nothing and is
/// not a request the cluster received; the same DELETE sent whole then is.
#[tokio::test]
async fn a_delete_cut_off_before_its_last_chunk_is_never_received() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let sim = start(config(Flavor::Es7)).await;
    let name = sim.handle.index_names()[0].clone();
    let head = format!(
        "DELETE /{name} HTTP/1.1\r\nhost: {}\r\ntransfer-encoding: chunked\r\n\r\n",
        sim.handle.addr()
    );
    let mut cut = tokio::net::TcpStream::connect(sim.handle.addr())
        .await
        .unwrap();
    cut.write_all(head.as_bytes()).await.unwrap();
    cut.shutdown().await.unwrap();
    let mut answer = Vec::new();
    cut.read_to_end(&mut answer).await.unwrap();
    assert!(sim.handle.calls().is_empty(), "{:?}", sim.handle.calls());
    assert!(sim.handle.index_names().contains(&name));

    let mut whole = tokio::net::TcpStream::connect(sim.handle.addr())
        .await
        .unwrap();
    whole.write_all(head.as_bytes()).await.unwrap();
    whole.write_all(b"0\r\n\r\n").await.unwrap();
    let mut answer = [0u8; 12];
    whole.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");
    let calls = sim.handle.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].path, format!("/{name}"));
}
