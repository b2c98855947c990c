//! `GET [/{index}]/_settings[/{name}]`: index settings, nested or flat, filtered by name
//! patterns, with `include_defaults`; and `GET /{index}`, the get-index API built on them.
//!
//! From `RestGetSettingsAction` (`IndicesOptions.fromRequest(request, strictExpandOpen())`: a
//! missing concrete index is a 404 unless `ignore_unavailable`, wildcards skip hidden indices
//! unless `expand_wildcards` includes them; `{name}` is a comma list of `Regex.simpleMatch`
//! patterns, `_all` meaning none), `TransportGetSettingsAction` (`?human` adds the
//! `*_string` settings before the name filter) and `GetSettingsResponse.toXContent` (an index
//! whose filtered settings are empty is left out, unless defaults were asked for).
//! `GetIndexResponse` lists `aliases`, `mappings` (neither modelled: empty), `settings`,
//! `defaults` with `include_defaults`, and (ES 7.9+) a backing index's `data_stream`.

use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;

use super::errors::ApiError;
use super::json::{Ordered, reply};
use super::options;
use super::params::{Params, comma_list};
use super::tree::{Tree, render_settings};
use crate::app::App;
use crate::flavor::Product;
use crate::world::index_settings::{defaults, with_human};
use crate::world::{IndexSettings, IndicesOptions, Targets, World, glob_match};

#[derive(Debug, Serialize)]
struct IndexEntry {
    settings: Tree,
    /// No setting matched the name filter.
    #[serde(skip)]
    empty: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    defaults: Option<Tree>,
}

/// `paramAsStringArrayOrEmptyIfAll("name")`: no filter for none or `_all`.
fn name_patterns(names: Option<&str>) -> Vec<String> {
    let patterns = comma_list(names);
    if patterns.iter().any(|pattern| pattern == "_all") {
        Vec::new()
    } else {
        patterns
    }
}

fn filtered(settings: IndexSettings, patterns: &[String]) -> IndexSettings {
    if patterns.is_empty() {
        return settings;
    }
    settings
        .into_iter()
        .filter(|(key, _)| patterns.iter().any(|pattern| glob_match(pattern, key)))
        .collect()
}

/// How the settings of each index are rendered.
struct Rendering {
    options: IndicesOptions,
    flat: bool,
    include_defaults: bool,
    human: bool,
}

impl Rendering {
    fn from_params(params: &Params, product: Product) -> Result<Self, ApiError> {
        Ok(Rendering {
            options: options::from_params(params, IndicesOptions::STRICT_EXPAND_OPEN, product)?,
            flat: params.flag("flat_settings")?,
            include_defaults: params.flag("include_defaults")?,
            // `humanReadable(request.hasParam("human"))`: present is enough, whatever its value.
            human: params.get("human").is_some(),
        })
    }

    /// Every index an expression names, with its settings and (asked for) defaults, filtered
    /// by the name patterns.
    fn entries(
        &self,
        world: &World,
        expression: &str,
        patterns: &[String],
    ) -> Result<Vec<(String, IndexEntry)>, ApiError> {
        let product = world.product();
        let resolution = world
            .resolve(expression, &self.options, Targets::IndicesAndStreams)
            .map_err(options::unresolved)?;
        let mut entries = Vec::new();
        for index in resolution
            .indices
            .iter()
            .filter_map(|&position| world.indices().get(position))
        {
            let explicit = if self.human {
                with_human(product, &index.settings)
            } else {
                index.settings.clone()
            };
            let settings = filtered(explicit, patterns);
            let defaults = self
                .include_defaults
                .then(|| filtered(defaults(product, &index.settings), patterns));
            entries.push((
                index.name.clone(),
                IndexEntry {
                    settings: render_settings(&settings, self.flat),
                    empty: settings.is_empty(),
                    defaults: defaults.map(|defaults| render_settings(&defaults, self.flat)),
                },
            ));
        }
        Ok(entries)
    }
}

/// `GET /_settings`, `GET /{index}/_settings[/{name}]`.
pub(crate) fn get(
    app: &App,
    params: &Params,
    index: Option<&str>,
    names: Option<&str>,
) -> Result<Response, ApiError> {
    let rendering = Rendering::from_params(params, app.product)?;
    let patterns = name_patterns(names);
    let mut entries =
        app.with_world(|world| rendering.entries(world, index.unwrap_or("_all"), &patterns))?;
    entries.retain(|(_, entry)| !entry.empty || entry.defaults.is_some());
    Ok(reply(StatusCode::OK, &Ordered(entries), params.pretty()))
}

#[derive(Debug, Serialize)]
struct GetIndexEntry<'a> {
    aliases: Ordered<()>,
    mappings: Ordered<()>,
    settings: &'a Tree,
    #[serde(skip_serializing_if = "Option::is_none")]
    defaults: Option<&'a Tree>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data_stream: Option<String>,
}

/// `GET /{index}` (and `HEAD`, which hyper answers without the body).
pub(crate) fn get_index(
    app: &App,
    params: &Params,
    expression: &str,
) -> Result<Response, ApiError> {
    let rendering = Rendering::from_params(params, app.product)?;
    app.with_world(|world| {
        let entries = rendering.entries(world, expression, &[])?;
        let body: Vec<(String, GetIndexEntry)> = entries
            .iter()
            .map(|(name, entry)| {
                let stream = world
                    .data_streams()
                    .iter()
                    .find(|stream| stream.indices.contains(name))
                    .map(|stream| stream.name.clone());
                let index = GetIndexEntry {
                    aliases: Ordered::default(),
                    mappings: Ordered::default(),
                    settings: &entry.settings,
                    defaults: entry.defaults.as_ref(),
                    data_stream: stream,
                };
                (name.clone(), index)
            })
            .collect();
        Ok(reply(StatusCode::OK, &Ordered(body), params.pretty()))
    })
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_patterns_and_all_means_every_setting() {
        let settings = IndexSettings::from([
            ("index.uuid".to_owned(), "u".to_owned()),
            ("index.hidden".to_owned(), "true".to_owned()),
            ("index.lifecycle.name".to_owned(), "logs".to_owned()),
        ]);
        let uuid_and_ilm = filtered(
            settings.clone(),
            &name_patterns(Some("index.uuid,index.lifecycle.*")),
        );
        assert_eq!(
            uuid_and_ilm.keys().collect::<Vec<_>>(),
            ["index.lifecycle.name", "index.uuid"]
        );
        assert_eq!(
            filtered(settings.clone(), &name_patterns(Some("_all"))),
            settings
        );
        assert_eq!(filtered(settings.clone(), &name_patterns(None)), settings);
    }
}
