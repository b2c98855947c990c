//! The cloud side: identifiers, placement's providers and allocations, compute services and the
//! RPC version cap, and image properties. Pure data and rules; the bot crate talks to the APIs.

pub mod compute;
pub mod ids;
pub mod image;
pub mod placement;
pub mod rpc;
