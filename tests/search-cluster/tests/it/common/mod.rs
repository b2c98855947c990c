//! Shared helpers for the integration tests: a simulator on 127.0.0.1:0 and a reqwest client.

use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use opsbot_search_sim::{Flavor, SimConfig, SimHandle, WorldSnapshot, spawn};
use reqwest::{Method, StatusCode};
use serde_json::Value;

/// Reads a fixture from the workspace's recorded payloads.
#[macro_export]
macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/search/",
            $name
        ))
    };
}

pub struct Sim {
    pub handle: SimHandle,
    pub client: reqwest::Client,
}

/// A small, fast cluster: 5 nodes, 10 daily indices + `.kibana_1`, 1000x time.
pub fn config(flavor: Flavor) -> SimConfig {
    SimConfig {
        flavor,
        days_of_indices: 10,
        today: time::macros::date!(2026 - 03 - 10),
        speed: 1000.0,
        ..SimConfig::default()
    }
}

pub fn ip(last: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, last)
}

pub async fn start(config: SimConfig) -> Sim {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let handle = spawn(config, listener).await.unwrap();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    Sim { handle, client }
}

pub async fn start_flavor(flavor: Flavor) -> Sim {
    start(config(flavor)).await
}

impl Sim {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.handle.base_url(), path)
    }

    /// Sends a request; a body is sent as `application/json`.
    pub async fn send(&self, method: Method, path: &str, body: Option<&str>) -> reqwest::Response {
        let mut request = self.client.request(method, self.url(path));
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_owned());
        }
        request.send().await.unwrap()
    }

    /// Status and body text.
    pub async fn text(
        &self,
        method: Method,
        path: &str,
        body: Option<&str>,
    ) -> (StatusCode, String) {
        let response = self.send(method, path, body).await;
        (response.status(), response.text().await.unwrap())
    }

    /// Status and parsed JSON body.
    pub async fn json(
        &self,
        method: Method,
        path: &str,
        body: Option<&str>,
    ) -> (StatusCode, Value) {
        let (status, text) = self.text(method, path, body).await;
        let value =
            serde_json::from_str(&text).unwrap_or_else(|error| panic!("{path}: {error}: {text}"));
        (status, value)
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.json(Method::GET, path, None).await
    }

    /// Sets the transient `cluster.routing.allocation.exclude._ip` ("" clears it); must succeed.
    pub async fn exclude(&self, value: &str) {
        let body =
            serde_json::json!({"transient": {"cluster.routing.allocation.exclude._ip": value}})
                .to_string();
        let (status, answer) = self
            .json(Method::PUT, "/_cluster/settings", Some(&body))
            .await;
        assert_eq!(status, StatusCode::OK, "{answer}");
    }

    pub async fn admin(&self, method: Method, path: &str) -> (StatusCode, Value) {
        self.json(method, &format!("/_sim{path}"), None).await
    }

    pub fn stop(&self, last: u8) {
        assert!(self.handle.stop_node(ip(last)).unwrap().changed);
    }

    pub fn start(&self, last: u8) {
        assert!(self.handle.start_node(ip(last)).unwrap().changed);
    }

    /// Polls the world until `done` holds (or fails the test after 10 real seconds).
    pub async fn wait_until(
        &self,
        what: &str,
        done: impl Fn(&WorldSnapshot) -> bool,
    ) -> WorldSnapshot {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let state = self.handle.state();
            if done(&state) {
                return state;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}: {:#?}",
                state.health
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// The shape of a JSON document: key order and value kinds, without the values.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Object(Vec<(String, Shape)>),
    /// Shape of the first element (rows of `_cat` JSON all look alike).
    Array(Option<Box<Shape>>),
    String,
    Number,
    Bool,
    Null,
}

struct ShapeVisitor;

impl<'de> serde::de::Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Bool)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Number)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Number)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Number)
    }
    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::String)
    }
    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        let first = seq.next_element::<Shape>()?;
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Shape::Array(first.map(Box::new)))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            entries.push((key, map.next_value::<Shape>()?));
        }
        Ok(Shape::Object(entries))
    }
}

impl<'de> serde::Deserialize<'de> for Shape {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

pub fn shape(text: &str) -> Shape {
    serde_json::from_str(text).unwrap_or_else(|error| panic!("{error}: {text}"))
}

/// Top-level keys in document order.
pub fn keys(text: &str) -> Vec<String> {
    match shape(text) {
        Shape::Object(entries) => entries.into_iter().map(|(key, _)| key).collect(),
        Shape::Array(Some(first)) => match *first {
            Shape::Object(entries) => entries.into_iter().map(|(key, _)| key).collect(),
            other => panic!("not rows of objects: {other:?}"),
        },
        other => panic!("not an object: {other:?}"),
    }
}

/// Column names of a `?v` text table (its first line).
pub fn header(text: &str) -> Vec<String> {
    text.lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}
