//! The route table of the cluster API: which paths exist, with which methods and parameters.

use axum::http::Method;

use super::params::percent_decode;
use crate::config::Flavor;

/// A cluster API endpoint, with the index expression from the path where there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Root,
    CatHealth,
    CatNodes,
    CatIndices(Option<String>),
    CatRecovery(Option<String>),
    CatAllocation,
    ClusterHealth,
    ClusterSettings,
    Flush,
    FlushSynced,
    Index(String),
}

/// A matched path.
#[derive(Debug, Clone)]
pub(crate) struct Route {
    pub endpoint: Endpoint,
    /// Registered methods, in the order ES lists them in 405 answers. HEAD is served wherever
    /// GET is, as ES's `RestController` does, without being listed.
    pub methods: &'static [Method],
}

impl Route {
    pub(crate) fn allows(&self, method: &Method) -> bool {
        self.methods.contains(method)
            || (method == Method::HEAD && self.methods.contains(&Method::GET))
    }

    /// Query parameters the endpoint consumes (besides `pretty`, `human`, `error_trace`).
    pub(crate) fn accepted_params(&self, method: &Method) -> &'static [&'static str] {
        const CAT: &[&str] = &["format", "h", "s", "v", "local", "master_timeout"];
        const CAT_BYTES: &[&str] = &["format", "h", "s", "v", "local", "master_timeout", "bytes"];
        const CAT_RECOVERY: &[&str] = &[
            "format",
            "h",
            "s",
            "v",
            "local",
            "master_timeout",
            "bytes",
            "active_only",
        ];
        match (&self.endpoint, method) {
            (Endpoint::Root, _) => &[],
            (Endpoint::CatHealth, _) => CAT,
            (Endpoint::CatNodes | Endpoint::CatIndices(_) | Endpoint::CatAllocation, _) => {
                CAT_BYTES
            }
            (Endpoint::CatRecovery(_), _) => CAT_RECOVERY,
            (Endpoint::ClusterHealth, _) => &[
                "wait_for_status",
                "wait_for_nodes",
                "wait_for_no_relocating_shards",
                "wait_for_no_initializing_shards",
                "timeout",
                "master_timeout",
                "local",
            ],
            (Endpoint::ClusterSettings, _) => {
                &["flat_settings", "master_timeout", "timeout", "local"]
            }
            (Endpoint::Flush | Endpoint::FlushSynced, _) => &["force", "wait_if_ongoing"],
            (Endpoint::Index(_), &Method::DELETE) => {
                &["ignore_unavailable", "timeout", "master_timeout"]
            }
            (Endpoint::Index(_), _) => &["timeout", "master_timeout"],
        }
    }
}

const GET: &[Method] = &[Method::GET];
const GET_PUT: &[Method] = &[Method::GET, Method::PUT];
const GET_POST: &[Method] = &[Method::GET, Method::POST];
const PUT_DELETE: &[Method] = &[Method::PUT, Method::DELETE];

/// Matches a request path. ES 8 removed the synced flush route entirely.
pub(crate) fn route(path: &str, flavor: Flavor) -> Option<Route> {
    let segments: Vec<String> = path
        .strip_prefix('/')?
        .split('/')
        .map(percent_decode)
        .collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let (endpoint, methods) = match segments.as_slice() {
        [""] => (Endpoint::Root, GET),
        ["_cat", "health"] => (Endpoint::CatHealth, GET),
        ["_cat", "nodes"] => (Endpoint::CatNodes, GET),
        ["_cat", "indices"] => (Endpoint::CatIndices(None), GET),
        ["_cat", "indices", index] => (Endpoint::CatIndices(Some((*index).to_owned())), GET),
        ["_cat", "recovery"] => (Endpoint::CatRecovery(None), GET),
        ["_cat", "recovery", index] => (Endpoint::CatRecovery(Some((*index).to_owned())), GET),
        // `/_cat/allocation/{nodes}` (a node filter) is not simulated: it answers 400 no handler.
        ["_cat", "allocation"] => (Endpoint::CatAllocation, GET),
        ["_cluster", "health"] => (Endpoint::ClusterHealth, GET),
        ["_cluster", "settings"] => (Endpoint::ClusterSettings, GET_PUT),
        ["_flush"] => (Endpoint::Flush, GET_POST),
        ["_flush", "synced"] if flavor != Flavor::Es8 => (Endpoint::FlushSynced, GET_POST),
        // Like ES's `/{index}` route this also takes `_all` and other `_` names; the handlers
        // then resolve or refuse them as ES does.
        [index] if !index.is_empty() => (Endpoint::Index((*index).to_owned()), PUT_DELETE),
        _ => return None,
    };
    Some(Route { endpoint, methods })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_paths_and_decodes_index_names() {
        let route = route("/_cat/indices/flog-%2A", Flavor::Es7).unwrap();
        assert_eq!(route.endpoint, Endpoint::CatIndices(Some("flog-*".into())));
        assert!(route.allows(&Method::HEAD));
        assert!(!route.allows(&Method::POST));
        assert_eq!(
            super::route("/", Flavor::Os2).unwrap().endpoint,
            Endpoint::Root
        );
        assert!(super::route("/_cat/nope", Flavor::Es7).is_none());
        assert!(super::route("/_cat/nope", Flavor::Es8).is_none());
        assert_eq!(
            super::route("/_all", Flavor::Es7).unwrap().endpoint,
            Endpoint::Index("_all".into())
        );
    }

    #[test]
    fn es8_has_no_synced_flush() {
        assert!(route("/_flush/synced", Flavor::Es8).is_none());
        assert_eq!(
            route("/_flush/synced", Flavor::Es7).unwrap().endpoint,
            Endpoint::FlushSynced
        );
    }
}
