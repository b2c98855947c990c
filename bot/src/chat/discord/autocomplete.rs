//! Autocomplete: the values offered while someone types an option. Only people who may run the
//! command, in a served channel, get any (the handler checks); the listings that cost a backend
//! request (a cluster's indices, a cloud's hypervisors) come from a cache that asks each backend
//! at most once per [`TTL`], however fast people type, with the bot's own credentials.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use opsbot_commands::catalogue::OptionKind;
use opsbot_commands::name::{CloudName, ClusterName};
use opsbot_commands::parse;
use serenity::all::CommandData;
use tokio::time::Instant;

use super::handler::{leaf, value};
use super::suggest::{self, Choice};
use crate::engine::Engine;

/// Run ids offered to filter by what is typed (keys only, the unfinished first): Discord shows
/// 25 of the matches.
const SUGGESTED_RUNS: usize = 100;

/// How long a backend listing serves suggestions before it is asked again.
pub(super) const TTL: Duration = Duration::from_secs(10);

/// A listing that costs a backend request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Source {
    Indices(ClusterName),
    Hosts(CloudName),
}

type Listing = Shared<BoxFuture<'static, Arc<Vec<String>>>>;

/// The listings asked for lately, each with when it was asked.
#[derive(Default)]
pub(super) struct Listings {
    asked: Mutex<HashMap<Source, (Instant, Listing)>>,
}

impl std::fmt::Debug for Listings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listings").finish_non_exhaustive()
    }
}

impl Listings {
    /// The listing of `source`: the one asked for less than [`TTL`] ago (still under way, or
    /// answered, or failed as an empty list), else a new request made with `fetch`. A new one
    /// runs to its end even if the keystroke that asked stops waiting, so that it serves the
    /// keystrokes after it instead of a second request.
    pub(super) fn get(
        &self,
        source: Source,
        fetch: impl FnOnce() -> BoxFuture<'static, Vec<String>>,
    ) -> Listing {
        let mut asked = self.asked.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, listing)) = asked.get(&source) {
            if at.elapsed() < TTL {
                return listing.clone();
            }
        }
        let listing: Listing = fetch().map(Arc::new).boxed().shared();
        tokio::spawn(listing.clone());
        asked.insert(source, (Instant::now(), listing.clone()));
        listing
    }
}

/// Values offered for an option, by its kind in the catalogue (a parameter of an open command,
/// when the catalogue does not name it): clusters and clouds from the config, runs from the
/// store (unfinished first), nodes from the inventory, index names from the cluster,
/// hypervisors from the cloud's compute services, runbooks and their parameters' values from
/// the runbook library.
pub(super) async fn suggestions(
    engine: &Engine,
    listings: &Listings,
    data: &CommandData,
    option: &str,
    typed: &str,
) -> Vec<Choice> {
    let (sub, options) = leaf(data);
    let Some(command) = parse::command_by_path(&data.name, sub) else {
        return Vec::new();
    };
    let kind = match command.option(option) {
        Some(spec) => spec.kind,
        None if command.open => OptionKind::Param,
        None => return Vec::new(),
    };
    // The value given so far for the command's option of `kind` (its cluster, its runbook).
    let given = |kind: OptionKind| {
        let name = command.options.iter().find(|o| o.kind == kind)?.name;
        options
            .iter()
            .find(|o| o.name == name)
            .map(|o| value(&o.value))
    };
    let cluster = || {
        given(OptionKind::Cluster)
            .and_then(|n| ClusterName::parse(&n).ok())
            .filter(|name| engine.clusters().get(name).is_ok())
    };
    let cloud = || {
        given(OptionKind::Cloud)
            .and_then(|n| CloudName::parse(&n).ok())
            .filter(|name| engine.clouds().get(name).is_ok())
    };
    match kind {
        OptionKind::Cluster => {
            suggest::containing(engine.clusters().names().map(ToString::to_string), typed)
        }
        OptionKind::Cloud => {
            suggest::containing(engine.clouds().names().map(ToString::to_string), typed)
        }
        OptionKind::Host => match cloud() {
            Some(name) => {
                let engine = engine.clone();
                let hosts = listings.get(Source::Hosts(name.clone()), move || {
                    async move { hypervisors(&engine, &name).await }.boxed()
                });
                suggest::containing(hosts.await.iter().cloned(), typed)
            }
            None => Vec::new(),
        },
        OptionKind::Run => {
            let ids = engine
                .store()
                .suggested_run_ids(SUGGESTED_RUNS)
                .unwrap_or_default();
            suggest::containing(ids.iter().map(ToString::to_string), typed)
        }
        OptionKind::Node => cluster()
            .and_then(|name| engine.clusters().get(&name).ok())
            .map(|c| suggest::containing(c.inventory.iter().map(ToString::to_string), typed))
            .unwrap_or_default(),
        OptionKind::Index => match cluster() {
            Some(name) => {
                let engine = engine.clone();
                let names = listings.get(Source::Indices(name.clone()), move || {
                    async move { indices(&engine, &name).await }.boxed()
                });
                suggest::containing(names.await.iter().cloned(), typed)
            }
            None => Vec::new(),
        },
        OptionKind::Runbook => suggest::runbooks(&engine.library().runbooks, typed),
        OptionKind::Schedule => {
            suggest::containing(engine.schedules().iter().map(|s| s.name.to_string()), typed)
        }
        OptionKind::Param => {
            let library = engine.library();
            suggest::param(
                &library.runbooks,
                &library.inventory,
                given(OptionKind::Runbook).as_deref(),
                option,
                typed,
            )
        }
        OptionKind::User
        | OptionKind::Digest
        | OptionKind::Days
        | OptionKind::Page
        | OptionKind::Instance
        | OptionKind::Image
        | OptionKind::Property(_)
        | OptionKind::Topic
        | OptionKind::Date
        | OptionKind::Time
        | OptionKind::Text { .. } => Vec::new(),
    }
}

/// The cluster's index names, newest first; none when it cannot be asked.
async fn indices(engine: &Engine, cluster: &ClusterName) -> Vec<String> {
    let mut names: Vec<String> = engine
        .indices(cluster)
        .await
        .map(|rows| rows.into_iter().map(|r| r.index).collect())
        .unwrap_or_default();
    names.sort_unstable_by(|a, b| b.cmp(a));
    names
}

/// The cloud's compute hosts, once each, in order; none when it cannot be asked.
async fn hypervisors(engine: &Engine, cloud: &CloudName) -> Vec<String> {
    let Ok(config) = engine.clouds().get(cloud) else {
        return Vec::new();
    };
    let services = engine.clouds().services(config).await.unwrap_or_default();
    let mut hosts: Vec<String> = services
        .into_iter()
        .filter(|s| s.is_compute())
        .map(|s| s.host.to_string())
        .collect();
    hosts.sort_unstable();
    hosts.dedup();
    hosts
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn cluster() -> Source {
        Source::Indices(ClusterName::parse("logs").unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn keystrokes_share_one_request_per_backend_per_ttl() {
        let listings = Listings::default();
        let fetched = Arc::new(AtomicUsize::new(0));
        let fetch = || {
            let fetched = Arc::clone(&fetched);
            move || {
                async move {
                    fetched.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    vec!["flog-2026.11.21".to_owned()]
                }
                .boxed()
            }
        };
        // Ten keystrokes while the first request is still under way: one request.
        let waiting: Vec<_> = (0..10).map(|_| listings.get(cluster(), fetch())).collect();
        for listing in waiting {
            assert_eq!(*listing.await, vec!["flog-2026.11.21".to_owned()]);
        }
        assert_eq!(fetched.load(Ordering::SeqCst), 1);
        tokio::time::advance(TTL - Duration::from_secs(3)).await;
        listings.get(cluster(), fetch()).await;
        assert_eq!(fetched.load(Ordering::SeqCst), 1, "still fresh");
        tokio::time::advance(Duration::from_secs(2)).await;
        listings.get(cluster(), fetch()).await;
        assert_eq!(
            fetched.load(Ordering::SeqCst),
            2,
            "asked again after the TTL"
        );
        // Another backend has a listing of its own.
        listings
            .get(Source::Hosts(CloudName::parse("prod").unwrap()), fetch())
            .await;
        assert_eq!(fetched.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_whose_asker_gave_up_still_serves_the_next_keystroke() {
        let listings = Listings::default();
        let fetched = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&fetched);
        let slow = listings.get(cluster(), move || {
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(5)).await;
                vec!["x".to_owned()]
            }
            .boxed()
        });
        // The keystroke stops waiting after 1.5 s, as autocomplete does.
        assert!(
            tokio::time::timeout(Duration::from_millis(1500), slow)
                .await
                .is_err()
        );
        let next = listings.get(cluster(), || async { Vec::new() }.boxed());
        assert_eq!(*next.await, vec!["x".to_owned()]);
        assert_eq!(fetched.load(Ordering::SeqCst), 1);
    }
}
