//! The fake Slack driven as a client would drive it: plain HTTP (reqwest) and a WebSocket
//! (tokio-tungstenite). Time never passes by sleeping: tests move the fake's clock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod chat;
mod files;
mod harness;
mod history;
mod limits;
mod socket;
mod web;
