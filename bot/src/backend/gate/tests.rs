//! What a cluster receives of a change, the gate open and closed: a raw socket stands in for
//! the cluster, so that every byte the client wrote is seen.

use std::time::Duration;

use opsbot_commands::cluster::FlushMode;
use opsbot_commands::name::ClusterName;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::Gate;
use crate::backend::Fault;
use crate::backend::search::SearchClient;
use crate::config::Tls;
use crate::metrics::BackendErrors;

/// The end of a chunked body: what makes a request whole.
const LAST_CHUNK: &[u8] = b"\r\n0\r\n\r\n";
const FLUSHED: &str = r#"{"_shards":{"total":2,"successful":2,"failed":0}}"#;
const HEALTH: &str = r#"{"cluster_name":"logs","status":"green","number_of_nodes":3,"number_of_data_nodes":3,"active_shards":10,"relocating_shards":0,"initializing_shards":0,"unassigned_shards":0}"#;

/// A cluster on loopback that answers one request with `answer` once it is whole (a GET at
/// its head's end, anything else at its last chunk), and gives back every byte it received.
async fn cluster(answer: &'static str) -> (String, JoinHandle<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let served = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut received = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = socket.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                return received;
            }
            received.extend_from_slice(&buf[..n]);
            let whole = if received.starts_with(b"GET ") {
                received.ends_with(b"\r\n\r\n")
            } else {
                received.ends_with(LAST_CHUNK)
            };
            if whole {
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                     \r\n{answer}",
                    answer.len()
                );
                socket.write_all(reply.as_bytes()).await.unwrap();
                return received;
            }
        }
    });
    (url, served)
}

fn client(url: &str, gate: Gate) -> SearchClient {
    let name = ClusterName::parse("logs").unwrap();
    let timeout = Duration::from_secs(10);
    SearchClient::new(
        &name,
        url,
        &Tls::default(),
        None,
        timeout,
        BackendErrors::default(),
        gate,
    )
    .unwrap()
}

fn stepped_down() -> Gate {
    Gate::new(|| Err("another instance took over at epoch 2".to_owned()))
}

#[tokio::test]
async fn an_open_gate_lets_a_change_through_whole() {
    let (url, served) = cluster(FLUSHED).await;
    let report = client(&url, Gate::new(|| Ok(())))
        .flush(FlushMode::Plain)
        .await;
    assert_eq!(report.map(|r| r.successful), Ok(2));
    let received = String::from_utf8(served.await.unwrap()).unwrap();
    assert!(received.starts_with("POST /_flush HTTP/1.1"), "{received}");
    assert!(
        received.contains("transfer-encoding: chunked"),
        "the end is a chunk of its own: {received}"
    );
}

#[tokio::test]
async fn a_closed_gate_keeps_a_change_from_ever_being_whole() {
    let (url, served) = cluster(FLUSHED).await;
    let error = client(&url, stepped_down())
        .flush(FlushMode::Plain)
        .await
        .unwrap_err();
    assert_eq!(
        error.fault,
        Fault::NotActing("another instance took over at epoch 2".to_owned())
    );
    let received = served.await.unwrap();
    assert!(
        !received.ends_with(LAST_CHUNK),
        "the cluster got a whole request: {}",
        String::from_utf8_lossy(&received)
    );
}

#[tokio::test]
async fn reads_are_never_held_back() {
    let (url, served) = cluster(HEALTH).await;
    let health = client(&url, stepped_down()).health().await;
    assert_eq!(health.map(|h| h.number_of_nodes), Ok(3));
    let received = String::from_utf8(served.await.unwrap()).unwrap();
    assert!(!received.contains("transfer-encoding"), "{received}");
}
