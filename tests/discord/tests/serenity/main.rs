//! End-to-end: the real serenity 0.12.5 client (ratelimiter on) against the fake Discord.
//! Run with `RUST_LOG=debug` to see every request and gateway frame.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;
mod interactions;
mod invalid;
mod limits;
mod mentions;
mod moderation;
mod nonces;
mod permissions;
mod registration;
mod session;
