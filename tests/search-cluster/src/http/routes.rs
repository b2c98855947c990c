//! The route table of the cluster API: which paths exist on which server, with which methods and
//! parameters.

use axum::http::Method;

use super::options::INDICES_OPTIONS;
use super::params::percent_decode;
use crate::config::Flavor;
use crate::flavor::Product;

/// A cluster API endpoint, with the names from the path where there are some.
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
    ClusterPendingTasks,
    Tasks,
    Flush,
    FlushSynced,
    Index(String),
    /// `GET [/{index}]/_settings[/{name}]` (and `/{index}/_setting/{name}`).
    Settings {
        index: Option<String>,
        names: Option<String>,
    },
    IndexTemplate(Option<String>),
    DataStream(Option<String>),
    Rollover(String),
    IsmPolicy(String),
    IsmAdd(Option<String>),
    IsmExplain(Option<String>),
}

/// A matched path.
#[derive(Debug, Clone)]
pub(crate) struct Route {
    pub endpoint: Endpoint,
    /// Registered methods, in the order ES lists them in 405 answers. HEAD is served wherever
    /// GET is, as ES's `RestController` does, without being listed.
    pub methods: &'static [Method],
    /// OpenSearch's `ReplacedRoute`: a legacy `_opendistro/_ism/` path still works, with a
    /// deprecation warning naming its `_plugins/_ism/` replacement; this is the path template
    /// after the prefix (`add/{index}`).
    pub replaced: Option<&'static str>,
}

const CAT: &[&str] = &["format", "h", "s", "v", "local", "master_timeout"];
const CAT_BYTES: &[&str] = &["format", "h", "s", "v", "local", "master_timeout", "bytes"];
/// ES 7+ and OpenSearch resolve `_cat/indices` through the settings API with the request's
/// `IndicesOptions` (`RestIndicesAction`); ES 6.8 hard-codes `strictExpand` and takes none.
const CAT_INDICES: &[&str] = &[
    "format",
    "h",
    "s",
    "v",
    "local",
    "master_timeout",
    "bytes",
    INDICES_OPTIONS[0],
    INDICES_OPTIONS[1],
    INDICES_OPTIONS[2],
    INDICES_OPTIONS[3],
];
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
const SETTINGS: &[&str] = &[
    "flat_settings",
    "include_defaults",
    "local",
    "master_timeout",
    INDICES_OPTIONS[0],
    INDICES_OPTIONS[1],
    INDICES_OPTIONS[2],
    INDICES_OPTIONS[3],
];
const DELETE_INDEX: &[&str] = &[
    "timeout",
    "master_timeout",
    INDICES_OPTIONS[0],
    INDICES_OPTIONS[1],
    INDICES_OPTIONS[2],
    INDICES_OPTIONS[3],
];
const TASKS: &[&str] = &[
    "actions",
    "nodes",
    "parent_task_id",
    "detailed",
    "group_by",
    "timeout",
];
const TIMEOUTS: &[&str] = &["timeout", "master_timeout"];

impl Route {
    pub(crate) fn allows(&self, method: &Method) -> bool {
        self.methods.contains(method)
            || (method == Method::HEAD && self.methods.contains(&Method::GET))
    }

    /// Query parameters the endpoint consumes (besides `pretty`, `human`, `error_trace`).
    pub(crate) fn accepted_params(
        &self,
        method: &Method,
        product: Product,
    ) -> &'static [&'static str] {
        match (&self.endpoint, method) {
            (Endpoint::Root, _) => &[],
            (Endpoint::CatHealth, _) => CAT,
            (Endpoint::CatIndices(_), _) if product.flavor != Flavor::Es6 => CAT_INDICES,
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
            (Endpoint::ClusterPendingTasks, _) => &["local", "master_timeout"],
            (Endpoint::Tasks, _) => TASKS,
            (Endpoint::Flush | Endpoint::FlushSynced, _) => &["force", "wait_if_ongoing"],
            (Endpoint::Index(_), &Method::DELETE) => DELETE_INDEX,
            (Endpoint::Index(_), &Method::GET | &Method::HEAD) => SETTINGS,
            (Endpoint::Index(_), _) => TIMEOUTS,
            (Endpoint::Settings { .. }, _) => SETTINGS,
            (Endpoint::IndexTemplate(_), &Method::GET | &Method::HEAD) => {
                &["local", "master_timeout", "flat_settings"]
            }
            (Endpoint::IndexTemplate(_), &Method::DELETE) => TIMEOUTS,
            (Endpoint::IndexTemplate(_), _) => &["create", "master_timeout", "cause"],
            (Endpoint::DataStream(_) | Endpoint::IsmAdd(_) | Endpoint::IsmPolicy(_), _) => &[],
            (Endpoint::Rollover(_), _) => &["dry_run", "timeout", "master_timeout"],
            (Endpoint::IsmExplain(_), _) => &[
                "size",
                "from",
                "sortOrder",
                "show_policy",
                "local",
                "master_timeout",
                "cluster_manager_timeout",
            ],
        }
    }
}

const GET: &[Method] = &[Method::GET];
const POST: &[Method] = &[Method::POST];
const PUT: &[Method] = &[Method::PUT];
const GET_PUT: &[Method] = &[Method::GET, Method::PUT];
const GET_POST: &[Method] = &[Method::GET, Method::POST];
const GET_PUT_DELETE: &[Method] = &[Method::GET, Method::PUT, Method::DELETE];
const TEMPLATE: &[Method] = &[Method::GET, Method::PUT, Method::POST, Method::DELETE];

/// OpenSearch ISM paths (after `_plugins/_ism/` or the legacy `_opendistro/_ism/`), with
/// their path templates.
fn ism(rest: &[&str]) -> Option<(Endpoint, &'static [Method], &'static str)> {
    let owned = |name: &&str| Some((*name).to_owned());
    Some(match rest {
        ["policies", id] => (
            Endpoint::IsmPolicy((*id).to_owned()),
            PUT,
            "policies/{policyID}",
        ),
        ["add"] => (Endpoint::IsmAdd(None), POST, "add"),
        ["add", index] => (Endpoint::IsmAdd(owned(index)), POST, "add/{index}"),
        ["explain"] => (Endpoint::IsmExplain(None), GET, "explain"),
        ["explain", index] => (Endpoint::IsmExplain(owned(index)), GET, "explain/{index}"),
        _ => return None,
    })
}

/// Matches a request path. Endpoints a server does not have answer `no handler`: ES 8 has no
/// synced flush, ES 6.8 no composable templates, the OSS builds no data stream API and only
/// OpenSearch has the ISM plugin's `_plugins` paths.
pub(crate) fn route(path: &str, product: Product) -> Option<Route> {
    let segments: Vec<String> = path
        .strip_prefix('/')?
        .split('/')
        .map(percent_decode)
        .collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let owned = |name: &&str| Some((*name).to_owned());
    let mut replaced = None;
    let (endpoint, methods) = match segments.as_slice() {
        [""] => (Endpoint::Root, GET),
        ["_cat", "health"] => (Endpoint::CatHealth, GET),
        ["_cat", "nodes"] => (Endpoint::CatNodes, GET),
        ["_cat", "indices"] => (Endpoint::CatIndices(None), GET),
        ["_cat", "indices", index] => (Endpoint::CatIndices(owned(index)), GET),
        ["_cat", "recovery"] => (Endpoint::CatRecovery(None), GET),
        ["_cat", "recovery", index] => (Endpoint::CatRecovery(owned(index)), GET),
        // `/_cat/allocation/{nodes}` (a node filter) is not simulated: it answers 400 no handler.
        ["_cat", "allocation"] => (Endpoint::CatAllocation, GET),
        ["_cluster", "health"] => (Endpoint::ClusterHealth, GET),
        ["_cluster", "settings"] => (Endpoint::ClusterSettings, GET_PUT),
        ["_cluster", "pending_tasks"] => (Endpoint::ClusterPendingTasks, GET),
        // `/_tasks/{task_id}` is not simulated.
        ["_tasks"] => (Endpoint::Tasks, GET),
        ["_flush"] => (Endpoint::Flush, GET_POST),
        ["_flush", "synced"] if product.flavor != Flavor::Es8 => (Endpoint::FlushSynced, GET_POST),
        ["_settings"] => settings(None, None),
        ["_settings", names] => settings(None, owned(names)),
        [index, "_settings"] => settings(owned(index), None),
        [index, "_settings" | "_setting", names] => settings(owned(index), owned(names)),
        ["_index_template"] if product.has_index_templates() => {
            (Endpoint::IndexTemplate(None), GET)
        }
        ["_index_template", name] if product.has_index_templates() => {
            (Endpoint::IndexTemplate(owned(name)), TEMPLATE)
        }
        ["_data_stream"] if product.has_data_streams() => (Endpoint::DataStream(None), GET),
        ["_data_stream", name] if product.has_data_streams() => {
            (Endpoint::DataStream(owned(name)), GET_PUT_DELETE)
        }
        [target, "_rollover"] if !target.is_empty() => {
            (Endpoint::Rollover((*target).to_owned()), POST)
        }
        ["_plugins", "_ism", rest @ ..] if product.has_ism() => {
            let (endpoint, methods, _) = ism(rest)?;
            (endpoint, methods)
        }
        ["_opendistro", "_ism", rest @ ..] if product.has_ism() => {
            let (endpoint, methods, template) = ism(rest)?;
            replaced = Some(template);
            (endpoint, methods)
        }
        // Like ES's `/{index}` route this also takes `_all` and other `_` names; the handlers
        // then resolve or refuse them as ES does.
        // `GET /_data_stream` on a server without the data stream API lands here too, and gets
        // the get-index API's 404 for an index named `_data_stream`.
        [index] if !index.is_empty() => (Endpoint::Index((*index).to_owned()), GET_PUT_DELETE),
        _ => return None,
    };
    Some(Route {
        endpoint,
        methods,
        replaced,
    })
}

fn settings(index: Option<String>, names: Option<String>) -> (Endpoint, &'static [Method]) {
    (Endpoint::Settings { index, names }, GET)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flavor::Distribution;

    fn product(flavor: Flavor) -> Product {
        Product::new(flavor, Distribution::Oss)
    }

    fn endpoint(path: &str, flavor: Flavor) -> Option<Endpoint> {
        route(path, product(flavor)).map(|route| route.endpoint)
    }

    #[test]
    fn matches_paths_and_decodes_index_names() {
        let route = route("/_cat/indices/flog-%2A", product(Flavor::Es7)).unwrap();
        assert_eq!(route.endpoint, Endpoint::CatIndices(Some("flog-*".into())));
        assert!(route.allows(&Method::HEAD));
        assert!(!route.allows(&Method::POST));
        assert_eq!(endpoint("/", Flavor::Os2), Some(Endpoint::Root));
        assert!(endpoint("/_cat/nope", Flavor::Es7).is_none());
        assert!(endpoint("/_cat/nope", Flavor::Es8).is_none());
        assert_eq!(
            endpoint("/_all", Flavor::Es7),
            Some(Endpoint::Index("_all".into()))
        );
        assert_eq!(
            endpoint("/a,b/_settings/index.uuid", Flavor::Es6),
            Some(Endpoint::Settings {
                index: Some("a,b".into()),
                names: Some("index.uuid".into())
            })
        );
    }

    #[test]
    fn each_server_has_its_own_endpoints() {
        assert!(endpoint("/_flush/synced", Flavor::Es8).is_none());
        assert_eq!(
            endpoint("/_flush/synced", Flavor::Es7),
            Some(Endpoint::FlushSynced)
        );
        assert!(
            endpoint("/_data_stream/logs", Flavor::Es7).is_none(),
            "OSS 7.10"
        );
        assert_ne!(
            endpoint("/_data_stream", Flavor::Es7),
            Some(Endpoint::DataStream(None))
        );
        assert!(
            route(
                "/_data_stream",
                Product::new(Flavor::Es7, Distribution::Default)
            )
            .is_some()
        );
        assert!(endpoint("/_index_template/t", Flavor::Es6).is_none());
        assert!(endpoint("/_plugins/_ism/explain", Flavor::Es8).is_none());
        let minimal = product(Flavor::Os2).without_ism();
        assert!(route("/_plugins/_ism/explain/x", minimal).is_none());
        assert!(route("/_opendistro/_ism/explain/x", minimal).is_none());
        let legacy = route("/_opendistro/_ism/add/x", product(Flavor::Os2)).unwrap();
        assert_eq!(legacy.endpoint, Endpoint::IsmAdd(Some("x".into())));
        assert_eq!(legacy.replaced, Some("add/{index}"));
    }
}
