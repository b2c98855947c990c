//! Clients of the services opsbot acts on. Each call names what it did, so that a failure reads
//! `search cluster `logs`: PUT /_cluster/settings answered 503 ...` in chat.

mod error;
mod gate;
pub mod http;
pub mod openstack;
mod retry;
pub mod search;
pub(crate) mod transport;

pub use error::{BackendError, Fault};
pub use gate::Gate;
pub use retry::{Retry, watched};
