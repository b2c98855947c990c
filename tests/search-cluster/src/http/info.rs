//! `GET /`: the node banner with each flavor's version block.

use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;

use super::json::reply;
use super::params::Params;
use crate::app::App;
use crate::config::Flavor;
use crate::hash::uuid;

/// The `version` object. ES lists `build_flavor` first after the number; OpenSearch dropped it
/// and put `distribution` before the number.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Version {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distribution: Option<&'static str>,
    pub number: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_flavor: Option<&'static str>,
    pub build_type: &'static str,
    pub build_hash: &'static str,
    pub build_date: &'static str,
    pub build_snapshot: bool,
    pub lucene_version: &'static str,
    pub minimum_wire_compatibility_version: &'static str,
    pub minimum_index_compatibility_version: &'static str,
}

/// Release data of the imitated builds (Kolla ships the OSS/docker images of ES).
pub(crate) fn version(flavor: Flavor) -> Version {
    let es = |number, build_flavor, build_hash, build_date, lucene_version, wire, index| Version {
        distribution: None,
        number,
        build_flavor: Some(build_flavor),
        build_type: "docker",
        build_hash,
        build_date,
        build_snapshot: false,
        lucene_version,
        minimum_wire_compatibility_version: wire,
        minimum_index_compatibility_version: index,
    };
    match flavor {
        Flavor::Es6 => es(
            "6.8.23",
            "oss",
            "4f67856",
            "2022-01-06T22:56:41.305719Z",
            "7.7.3",
            "5.6.0",
            "5.0.0",
        ),
        Flavor::Es7 => es(
            "7.10.2",
            "oss",
            "747e1cc71def077253878a59143c1f785afa92b9",
            "2021-01-13T00:42:12.435326Z",
            "8.7.0",
            "6.8.0",
            "6.0.0-beta1",
        ),
        Flavor::Es8 => es(
            "8.11.3",
            "default",
            "64cf052f3b56b1fd4449f5454cb88aca7e739d9a",
            "2023-12-08T11:33:53.634979452Z",
            "9.8.0",
            "7.17.0",
            "7.0.0",
        ),
        Flavor::Os2 => Version {
            distribution: Some("opensearch"),
            number: "2.11.1",
            build_flavor: None,
            build_type: "tar",
            build_hash: "6b1986e964d440be9137eba1413015c31c5a7752",
            build_date: "2023-11-29T21:43:10.135035992Z",
            build_snapshot: false,
            lucene_version: "9.7.0",
            minimum_wire_compatibility_version: "7.10.0",
            minimum_index_compatibility_version: "7.0.0",
        },
    }
}

#[derive(Debug, Serialize)]
struct Banner {
    name: String,
    cluster_name: String,
    cluster_uuid: String,
    version: Version,
    tagline: &'static str,
}

/// `GET /`: answered by whichever node haproxy picks (the first one up), with or without a master.
pub(crate) fn root(app: &App, params: &Params) -> Response {
    let banner = app.with_world(|world| Banner {
        name: world
            .joined_nodes()
            .map(|(_, node)| node.name.clone())
            .next()
            .unwrap_or_default(),
        cluster_name: world.cluster_name().to_owned(),
        cluster_uuid: uuid(world.cluster_name()),
        version: Version {
            build_flavor: world.product().build_flavor(),
            ..version(world.flavor())
        },
        tagline: if world.flavor().is_opensearch() {
            "The OpenSearch Project: https://opensearch.org/"
        } else {
            "You Know, for Search"
        },
    });
    reply(StatusCode::OK, &banner, params.pretty())
}
