//! Routing a matched request to its endpoint's handler.

use axum::body::Bytes;
use axum::http::Method;
use axum::response::Response;

use super::errors::ApiError;
use super::params::Params;
use super::routes::Endpoint;
use super::{
    RequestContext, cat, cluster, create, delete, indices, info, ism, options, settings_api,
    streams, table, tasks,
};
use crate::app::App;
use crate::world::{IndicesOptions, Targets, World};

/// Resolves the optional index pattern of a `_cat` path (`strictExpand`: a missing concrete name
/// is a 404, wildcards skip hidden indices).
fn cat_resolve(
    world: &World,
    pattern: Option<&str>,
    options: &IndicesOptions,
) -> Result<Vec<usize>, ApiError> {
    world
        .resolve(
            pattern.unwrap_or("_all"),
            options,
            Targets::IndicesAndStreams,
        )
        .map(|resolution| resolution.indices)
        .map_err(options::unresolved)
}

pub(super) async fn handle(
    app: &App,
    endpoint: &Endpoint,
    method: &Method,
    params: &Params,
    body: &Bytes,
    context: &RequestContext,
) -> Result<Response, ApiError> {
    let table = match endpoint {
        Endpoint::Root => return Ok(info::root(app, params)),
        Endpoint::ClusterHealth => return cluster::health(app, params).await,
        Endpoint::ClusterSettings if *method == Method::PUT => {
            return cluster::put_settings(app, params, body);
        }
        Endpoint::ClusterSettings => return cluster::get_settings(app, params),
        Endpoint::ClusterPendingTasks => return Ok(tasks::pending(app, params)),
        Endpoint::Tasks => return tasks::list(app, params, context),
        Endpoint::Flush => return Ok(indices::flush(app, params)),
        Endpoint::FlushSynced => return Ok(indices::flush_synced(app, params)),
        Endpoint::Index(name) if *method == Method::PUT => {
            return create::create(app, params, name, body).await;
        }
        Endpoint::Index(name) if *method == Method::DELETE => {
            return delete::delete(app, params, name, context).await;
        }
        Endpoint::Index(name) => return settings_api::get_index(app, params, name),
        Endpoint::Settings { index, names } => {
            return settings_api::get(app, params, index.as_deref(), names.as_deref());
        }
        Endpoint::IndexTemplate(name) => {
            return streams::template(app, method, params, name.as_deref(), body);
        }
        Endpoint::DataStream(name) => {
            return streams::data_stream(app, method, params, name.as_deref()).await;
        }
        Endpoint::Rollover(target) => return streams::rollover(app, params, target).await,
        Endpoint::IsmPolicy(id) => return ism::put_policy(app, params, id, body),
        Endpoint::IsmAdd(index) => return ism::add(app, params, index.as_deref(), body),
        Endpoint::IsmExplain(index) => return ism::explain(app, params, index.as_deref()),
        Endpoint::CatHealth => {
            app.with_world(|world| cat::health(world, app.clock.wall_time(world.now_ms())))
        }
        Endpoint::CatNodes => app.with_world(|world| cat::nodes(world)),
        Endpoint::CatAllocation => app.with_world(|world| cat::allocation(world)),
        Endpoint::CatIndices(pattern) => {
            let options =
                options::from_params(params, IndicesOptions::STRICT_EXPAND_OPEN, app.product)?;
            app.with_world(|world| {
                cat_resolve(world, pattern.as_deref(), &options)
                    .map(|positions| cat::indices(world, &positions))
            })?
        }
        Endpoint::CatRecovery(pattern) => {
            let active_only = params.flag("active_only")?;
            app.with_world(|world| {
                cat_resolve(
                    world,
                    pattern.as_deref(),
                    &IndicesOptions::STRICT_EXPAND_OPEN,
                )
                .map(|positions| cat::recovery(world, &positions, active_only))
            })?
        }
    };
    table::render(table, params)
}
