//! One active bot among several on a shared PostgreSQL store. The active one holds the store's
//! lease, renews it, and is the only one that connects to Discord, drives runs and fires
//! schedules; the others stand by, asking for the lease until it is free.
//!
//! Fencing has two halves. The store refuses every write made under an epoch older than the
//! lease's (see `opsbot_state`), so a former active bot cannot record anything once a
//! standby took over. And the bot refuses to start a side effect once its own tenure may have
//! lapsed: [`Tenure::check`] compares the monotonic clock with the moment the last renewal
//! was *sent* plus the lease's length, less a margin, which is always before the database's
//! own expiry. A bot that was paused (a stopped VM, `SIGSTOP`) wakes up past that moment and
//! does nothing until it knows where it stands; then it steps down.

use opsbot_state::{LeaseStatus, Store, StoreError};
use tokio::time::Instant;

use crate::store_writes::off_thread;
use crate::tenure::{Role, Tenure, Timing};

#[cfg(test)]
mod tests;

/// Asks for the lease, as `holder`: when it is taken, the store is fenced at its epoch and the
/// tenure is active; `None` while another instance holds it.
///
/// A tenure counts from the moment the ask was sent: an answer that comes later than the tenure
/// it gives (the database was slow, say behind a lock a paused instance still holds) is asked
/// again at once, which the store answers with the same epoch and a new expiry, rather than
/// taken as a tenure already lapsed.
async fn ask(
    store: &Store,
    holder: &str,
    timing: Timing,
    tenure: &Tenure,
) -> Result<Option<Role>, StoreError> {
    loop {
        let sent = Instant::now();
        let name = holder.to_owned();
        let acquired =
            off_thread(store, move |store| store.acquire_lease(&name, timing.ttl)).await?;
        let Some(epoch) = acquired else {
            return Ok(None);
        };
        let role = Role::active(holder, epoch, sent, timing);
        if !role.lapsed() {
            store.fence(epoch)?;
            tenure.set(role.clone());
            tracing::info!(holder, epoch, "took the lease: this instance is active");
            return Ok(Some(role));
        }
        tracing::warn!(
            epoch,
            answered_after = ?sent.elapsed(),
            "the store gave the lease too late to act under it; asking again"
        );
    }
}

/// The lease as the store has it now, if it can be read.
async fn lease_now(store: &Store) -> Option<LeaseStatus> {
    off_thread(store, Store::lease).await.ok().flatten()
}

/// Waits until this bot holds the lease, as `holder`, standing by meanwhile.
pub async fn take(store: &Store, holder: &str, timing: Timing, tenure: &Tenure) -> Role {
    tenure.set(Role::Standby { active: None });
    let mut told = None;
    loop {
        match ask(store, holder, timing, tenure).await {
            Ok(Some(role)) => return role,
            Ok(None) => {
                let active = lease_now(store).await;
                // Said once per active instance, not at every ask.
                let epoch = active.as_ref().map(|lease| lease.epoch);
                if told != Some(epoch) {
                    let active = active.as_ref().map(|lease| lease.holder.as_str());
                    tracing::info!(?active, ?epoch, "standing by");
                    told = Some(epoch);
                }
                tenure.set(Role::Standby { active });
            }
            Err(error) => {
                tracing::warn!(%error, "standing by: cannot ask the store for the lease");
            }
        }
        tokio::time::sleep(timing.ask_every).await;
    }
}

/// Renews the lease while it can; resolves, having stepped down, when it cannot: another
/// instance holds a newer epoch, or no renewal got through before the tenure ran out.
pub async fn keep(store: Store, holder: String, timing: Timing, tenure: Tenure) -> String {
    let Role::Active { epoch, .. } = tenure.role() else {
        return "keep() called without the lease".to_owned();
    };
    let why = loop {
        tokio::time::sleep(timing.renew_every).await;
        let sent = Instant::now();
        let name = holder.clone();
        let renewed = off_thread(&store, move |store| {
            store.renew_lease(&name, epoch, timing.ttl)
        });
        match renewed.await {
            Ok(true) => tenure.set(Role::active(&holder, epoch, sent, timing)),
            Ok(false) => {
                break match lease_now(&store).await {
                    Some(lease) => format!("{} took over at epoch {}", lease.holder, lease.epoch),
                    None => "the lease is gone from the store".to_owned(),
                };
            }
            Err(error) => {
                if tenure.check().is_err() {
                    break format!("the store could not be reached to renew the lease: {error}");
                }
                tracing::warn!(%error, epoch, "cannot renew the lease; trying again");
            }
        }
    };
    tracing::error!(epoch, %why, "stepping down: this instance is no longer active");
    tenure.set(Role::SteppedDown {
        epoch,
        why: why.clone(),
    });
    why
}

/// The lease, held by a process that acts without standing by (the terminal console): taken
/// at once or not at all, renewed in the background until [`Held::release`].
#[derive(Debug)]
pub struct Held {
    store: Store,
    holder: String,
    tenure: Tenure,
    renewing: tokio::task::JoinHandle<String>,
}

impl Held {
    /// Takes the lease if no one holds it; otherwise says who does.
    pub async fn take_now(store: &Store, timing: Timing, tenure: &Tenure) -> anyhow::Result<Held> {
        let holder = holder();
        if ask(store, &holder, timing, tenure).await?.is_none() {
            anyhow::bail!(
                "{} is active on this store; ask it through its [console] socket",
                lease_now(store)
                    .await
                    .map_or_else(|| "another instance".to_owned(), |lease| lease.holder)
            );
        }
        let renewing = tokio::spawn(keep(store.clone(), holder.clone(), timing, tenure.clone()));
        Ok(Held {
            store: store.clone(),
            holder,
            tenure: tenure.clone(),
            renewing,
        })
    }

    pub async fn release(self) {
        self.renewing.abort();
        release(&self.store, &self.holder, &self.tenure).await;
    }
}

/// Gives the lease up (a clean stop), so that a standby takes over at once.
pub async fn release(store: &Store, holder: &str, tenure: &Tenure) {
    let Role::Active { epoch, .. } = tenure.role() else {
        return;
    };
    tenure.set(Role::SteppedDown {
        epoch,
        why: "stopped".to_owned(),
    });
    let holder = holder.to_owned();
    match off_thread(store, move |store| store.release_lease(&holder, epoch)).await {
        Ok(true) => tracing::info!(epoch, "gave the lease up"),
        Ok(false) => tracing::info!(epoch, "the lease was no longer ours to give up"),
        Err(error) => tracing::warn!(%error, "could not give the lease up; it expires by itself"),
    }
}

/// This instance's name in the lease: the host and the process.
pub fn holder() -> String {
    let host = nix::unistd::gethostname()
        .ok()
        .and_then(|name| name.into_string().ok())
        .unwrap_or_else(|| "unknown-host".to_owned());
    format!("{host}/{}", std::process::id())
}
