//! What a scenario adds to the cluster at start, beyond the daily indices: indices with settings
//! of their own and data streams, and the world built from the whole configuration.

use std::collections::{BTreeMap, HashMap};

use serde_json::json;

use crate::config::{ConfigError, SimConfig};
use crate::flavor::Product;
use crate::hash::in_range;
use crate::world::index_settings::{self, HIDDEN};
use crate::world::{IndexSeed, IndexSettings, Template, World};

const HOUR_MS: i64 = 3_600_000;

/// An index that exists at start with settings of its own, as `PUT /{index}` with
/// `{"settings": {...}}` would have created it (the settings are validated the same way).
///
/// ```
/// # use opsbot_search_sim::IndexSpec;
/// let kept = IndexSpec::new("audit-2026.01.01")
///     .setting("index.hidden", "true")
///     .created(time::macros::datetime!(2026-01-01 00:00 UTC));
/// # assert_eq!(kept.name, "audit-2026.01.01");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSpec {
    /// Index name.
    pub name: String,
    /// Index settings, flat keys (`index.hidden`, `index.lifecycle.name`,
    /// `index.plugins.index_state_management.policy_id`, ...), values as strings. Refused like
    /// the imitated server refuses them (`index.hidden` needs ES 7.7+ or OpenSearch, ILM the
    /// default distribution, ...).
    pub settings: BTreeMap<String, String>,
    /// Its `index.creation_date`; by default some hours into `today`.
    pub created: Option<time::OffsetDateTime>,
    /// OpenSearch: an ISM policy the index is attached to, as `POST _plugins/_ism/add/{index}`
    /// would have done (the policy is stored first if missing).
    pub ism_policy: Option<String>,
}

impl IndexSpec {
    /// An index with no settings of its own.
    pub fn new(name: impl Into<String>) -> Self {
        IndexSpec {
            name: name.into(),
            settings: BTreeMap::new(),
            created: None,
            ism_policy: None,
        }
    }

    /// Adds a setting.
    pub fn setting(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.insert(key.into(), value.into());
        self
    }

    /// Sets the creation date.
    pub fn created(mut self, at: time::OffsetDateTime) -> Self {
        self.created = Some(at);
        self
    }

    /// Attaches the index to an ISM policy (OpenSearch only).
    pub fn ism_policy(mut self, policy: impl Into<String>) -> Self {
        self.ism_policy = Some(policy.into());
        self
    }
}

/// A data stream running at start (ES 7.10 default distribution, ES 8, OpenSearch). It gets an
/// index template of its own, named after it, matching exactly its name at priority 200.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataStreamSpec {
    /// Stream name.
    pub name: String,
    /// Backing indices (generations); the last one is the write index. At least 1.
    pub generations: u64,
    /// The template's `template.settings` (for instance `index.lifecycle.name`), flat.
    pub settings: BTreeMap<String, String>,
}

impl DataStreamSpec {
    /// A stream with `generations` backing indices and no template settings.
    pub fn new(name: impl Into<String>, generations: u64) -> Self {
        DataStreamSpec {
            name: name.into(),
            generations,
            settings: BTreeMap::new(),
        }
    }
}

fn midnight_ms(day: time::Date) -> i64 {
    day.midnight().assume_utc().unix_timestamp() * 1_000
}

fn invalid_index(name: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::InvalidIndex {
        name: name.to_owned(),
        reason: reason.into(),
    }
}

/// The indices at start: daily ones (each created just after its midnight), the dashboards'
/// index (created the day before the oldest), the extras, then the specs.
fn seeds(config: &SimConfig, product: Product) -> Result<Vec<IndexSeed>, ConfigError> {
    let daily = config.daily_indices()?;
    let first_day = daily.first().map_or(config.today, |(_, day)| *day);
    let mut seeds: Vec<IndexSeed> = daily
        .into_iter()
        .map(|(name, day)| IndexSeed {
            creation_ms: midnight_ms(day) + in_range("created", &name, 200, 3_000) as i64,
            name,
            settings: IndexSettings::new(),
        })
        .collect();
    let (dashboards, hidden) = product.dashboards_index();
    let mut settings = IndexSettings::new();
    if hidden {
        settings.insert(HIDDEN.to_owned(), "true".to_owned());
    }
    seeds.push(IndexSeed {
        name: dashboards.to_owned(),
        settings,
        creation_ms: midnight_ms(first_day) - 15 * HOUR_MS,
    });
    let later_today =
        |name: &str| midnight_ms(config.today) + in_range("created", name, 1, 10) as i64 * HOUR_MS;
    for extra in &config.extra_indices {
        if !seeds.iter().any(|seed| seed.name == *extra) {
            seeds.push(IndexSeed {
                name: extra.clone(),
                settings: IndexSettings::new(),
                creation_ms: later_today(extra),
            });
        }
    }
    for spec in &config.indices {
        if seeds.iter().any(|seed| seed.name == spec.name) {
            return Err(invalid_index(&spec.name, "already exists"));
        }
        let settings: IndexSettings = spec.settings.clone();
        index_settings::validate(product, &settings)
            .map_err(|refusal| invalid_index(&spec.name, refusal.reason()))?;
        seeds.push(IndexSeed {
            name: spec.name.clone(),
            settings,
            creation_ms: spec.created.map_or_else(
                || later_today(&spec.name),
                |at| (at.unix_timestamp_nanos() / 1_000_000) as i64,
            ),
        });
    }
    Ok(seeds)
}

/// Attaches the specs' indices to their ISM policies, storing a one-state policy first where
/// missing. One add per policy, the positions looked up once: a scenario may manage more than
/// 10,000 indices.
fn attach_ism(world: &mut World, specs: &[IndexSpec]) -> Result<(), ConfigError> {
    let mut by_policy: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for spec in specs {
        if let Some(policy) = &spec.ism_policy {
            by_policy.entry(policy).or_default().push(&spec.name);
        }
    }
    let first = by_policy.values().flatten().next();
    if let Some(name) = first.filter(|_| !world.product().has_ism()) {
        return Err(invalid_index(name, "ISM exists on OpenSearch only"));
    }
    let position: HashMap<&str, usize> = world
        .indices()
        .iter()
        .enumerate()
        .map(|(position, index)| (index.name.as_str(), position))
        .collect();
    let attached: Vec<(&str, &[&str], Vec<usize>)> = by_policy
        .iter()
        .map(|(&policy, names)| {
            let positions = names.iter().filter_map(|name| position.get(name).copied());
            (policy, names.as_slice(), positions.collect())
        })
        .collect();
    for (policy, names, positions) in attached {
        if world.policy(policy).is_none() {
            let body = json!({
                "description": format!("policy {policy} of the simulated scenario"),
                "default_state": "hot",
                "states": [{"name": "hot", "actions": [], "transitions": []}],
            });
            if let Some(body) = body.as_object() {
                let _ = world.put_policy(policy, body.clone());
            }
        }
        world.ism_add(&positions, policy).map_err(|_| {
            let name = names.first().copied().unwrap_or_default();
            invalid_index(name, format!("cannot attach ISM policy [{policy}]"))
        })?;
    }
    Ok(())
}

/// Creates a data stream spec's template and stream.
fn seed_stream(
    world: &mut World,
    spec: &DataStreamSpec,
    creation_ms: i64,
) -> Result<(), ConfigError> {
    let invalid = |reason: String| ConfigError::InvalidDataStream {
        name: spec.name.clone(),
        reason,
    };
    if !world.product().has_data_streams() {
        return Err(invalid("this server has no data streams".to_owned()));
    }
    let settings: IndexSettings = spec.settings.clone();
    index_settings::validate(world.product(), &settings)
        .map_err(|refusal| invalid(refusal.reason().to_owned()))?;
    world
        .put_template(Template {
            name: spec.name.clone(),
            index_patterns: vec![spec.name.clone()],
            priority: 200,
            body: json!({"index_patterns": [spec.name], "priority": 200, "data_stream": {}, "template": {"settings": settings}}),
            settings,
            data_stream: Some("@timestamp".to_owned()),
        })
        .map_err(invalid)?;
    world
        .seed_data_stream(&spec.name, spec.generations.max(1), creation_ms)
        .map_err(|error| invalid(error.reason()))
}

/// The world a configuration describes, its clock starting at `wall_origin_ms`.
pub(crate) fn build_world(config: &SimConfig, wall_origin_ms: i64) -> Result<World, ConfigError> {
    let product = Product::new(config.flavor, config.distribution);
    let product = if config.ism {
        product
    } else {
        product.without_ism()
    };
    let ips = config.node_ips()?;
    let seeds = seeds(config, product)?;
    let mut world = World::new(
        product,
        &config.cluster_name,
        &ips,
        &seeds,
        &config.written_index(),
        wall_origin_ms,
    );
    world.set_delete_apply(u64::try_from(config.delete_apply.as_millis()).unwrap_or(u64::MAX));
    attach_ism(&mut world, &config.indices)?;
    for spec in &config.data_streams {
        seed_stream(&mut world, spec, midnight_ms(config.today))?;
    }
    Ok(world)
}
