//! Index-level settings: which ones each server knows, how a create request's values are checked,
//! which ones the server sets itself, their defaults, and the full settings of a new index.
//!
//! Modelled on `IndexScopedSettings` and `MetadataCreateIndexService`: request settings are
//! normalized to the `index.` prefix and validated (an unknown key or a bad value is an
//! `illegal_argument_exception`), registered private settings are refused with a
//! `validation_exception`, and the server then adds `index.creation_date` (unless the request
//! gave one: that key is private but unregistered, so ES 6-8 and OpenSearch keep it),
//! `index.provided_name`, `index.uuid` (always its own), `index.version.created` and the shard
//! counts.

use std::collections::BTreeMap;

use serde_json::Value;

use super::settings::flatten;
use crate::flavor::{Flavor, Product};

/// Flat settings, values as ES stores them: strings.
pub(crate) type IndexSettings = BTreeMap<String, String>;

/// `index.hidden: true`: wildcards skip the index unless `expand_wildcards` asks for hidden ones.
pub(crate) fn is_hidden(settings: &IndexSettings) -> bool {
    settings.get(HIDDEN).is_some_and(|value| value == "true")
}

pub(crate) const HIDDEN: &str = "index.hidden";
pub(crate) const UUID: &str = "index.uuid";
pub(crate) const CREATION_DATE: &str = "index.creation_date";
pub(crate) const PROVIDED_NAME: &str = "index.provided_name";
pub(crate) const VERSION_CREATED: &str = "index.version.created";
pub(crate) const LIFECYCLE_NAME: &str = "index.lifecycle.name";
pub(crate) const ISM_POLICY_ID: &str = "index.plugins.index_state_management.policy_id";
const TIER_PREFERENCE: &str = "index.routing.allocation.include._tier_preference";

/// How a setting's value is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Text,
    Long,
    /// The simulator models one primary and one replica per index.
    One,
}

/// Which servers register a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    Every,
    /// ES 7.7+ and OpenSearch.
    Hidden,
    /// X-Pack ILM.
    Ilm,
    /// ILM's `prefer_ilm`, added with data stream lifecycles (ES 8.11).
    Es8Ilm,
    /// OpenSearch's index-management plugin.
    Ism,
}

struct Known {
    key: &'static str,
    kind: Kind,
    owner: Owner,
    /// Shown under `defaults` by `include_defaults` when not set.
    default: &'static str,
}

const fn known(key: &'static str, kind: Kind, owner: Owner, default: &'static str) -> Known {
    Known {
        key,
        kind,
        owner,
        default,
    }
}

/// The registered, settable index settings the simulator knows. Real servers register hundreds;
/// any other key is refused as the real server refuses a key it does not know.
const KNOWN: &[Known] = &[
    known("index.number_of_shards", Kind::One, Owner::Every, "1"),
    known("index.number_of_replicas", Kind::One, Owner::Every, "1"),
    known("index.refresh_interval", Kind::Text, Owner::Every, "1s"),
    known("index.codec", Kind::Text, Owner::Every, "default"),
    known(HIDDEN, Kind::Bool, Owner::Hidden, "false"),
    known(LIFECYCLE_NAME, Kind::Text, Owner::Ilm, ""),
    known("index.lifecycle.rollover_alias", Kind::Text, Owner::Ilm, ""),
    known(
        "index.lifecycle.indexing_complete",
        Kind::Bool,
        Owner::Ilm,
        "false",
    ),
    known(
        "index.lifecycle.origination_date",
        Kind::Long,
        Owner::Ilm,
        "-1",
    ),
    known(
        "index.lifecycle.parse_origination_date",
        Kind::Bool,
        Owner::Ilm,
        "false",
    ),
    known(
        "index.lifecycle.prefer_ilm",
        Kind::Bool,
        Owner::Es8Ilm,
        "true",
    ),
    known(ISM_POLICY_ID, Kind::Text, Owner::Ism, ""),
    known(
        "index.plugins.index_state_management.rollover_alias",
        Kind::Text,
        Owner::Ism,
        "",
    ),
    known(
        "index.plugins.index_state_management.rollover_skip",
        Kind::Bool,
        Owner::Ism,
        "false",
    ),
    known(
        "index.plugins.index_state_management.auto_manage",
        Kind::Bool,
        Owner::Ism,
        "true",
    ),
    known(
        "index.opendistro.index_state_management.policy_id",
        Kind::Text,
        Owner::Ism,
        "",
    ),
    known(
        "index.opendistro.index_state_management.rollover_alias",
        Kind::Text,
        Owner::Ism,
        "",
    ),
    known(
        "index.opendistro.index_state_management.auto_manage",
        Kind::Bool,
        Owner::Ism,
        "true",
    ),
];

/// Why a create request's settings were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `illegal_argument_exception`: an unknown key or an unparsable value.
    Illegal(String),
    /// `validation_exception`: a registered private setting set explicitly.
    Private(String),
    /// The value is valid for ES but outside what the simulator models.
    Unsupported(String),
}

impl Refusal {
    /// The exception's `reason`.
    pub(crate) fn reason(&self) -> &str {
        match self {
            Refusal::Illegal(reason) | Refusal::Private(reason) | Refusal::Unsupported(reason) => {
                reason
            }
        }
    }
}

fn owned_by(owner: Owner, product: Product) -> bool {
    match owner {
        Owner::Every => true,
        Owner::Hidden => product.has_hidden(),
        Owner::Ilm => product.has_ilm(),
        Owner::Es8Ilm => product.flavor == Flavor::Es8,
        Owner::Ism => product.has_ism(),
    }
}

fn registered(product: Product) -> impl Iterator<Item = &'static Known> {
    KNOWN
        .iter()
        .filter(move |setting| owned_by(setting.owner, product))
}

/// `Settings.Builder.normalizePrefix("index.")`: keys without the prefix get it.
fn normalize_key(key: &str) -> String {
    if key.starts_with("index.") || key.ends_with('*') {
        key.to_owned()
    } else {
        format!("index.{key}")
    }
}

/// The `settings` object of a request, flattened (nested or dotted keys alike), normalized to
/// the `index.` prefix, `null` values dropped.
pub(crate) fn from_json(
    settings: &serde_json::Map<String, Value>,
) -> Result<IndexSettings, String> {
    let mut flat: Vec<(String, Option<String>)> = Vec::new();
    flatten("", &Value::Object(settings.clone()), &mut flat).map_err(|error| error.to_string())?;
    Ok(flat
        .into_iter()
        .filter_map(|(key, value)| Some((normalize_key(&key), value?)))
        .collect())
}

fn parse_value(setting: &Known, value: &str) -> Result<(), Refusal> {
    match setting.kind {
        Kind::Text => Ok(()),
        Kind::Bool if value == "true" || value == "false" => Ok(()),
        Kind::Bool => Err(Refusal::Illegal(format!(
            "Failed to parse value [{value}] as only [true] or [false] are allowed."
        ))),
        Kind::Long if value.parse::<i64>().is_ok() => Ok(()),
        Kind::Long | Kind::One if value.parse::<i64>().is_err() => Err(Refusal::Illegal(format!(
            "Failed to parse value [{value}] for setting [{}]",
            setting.key
        ))),
        Kind::One if value == "1" => Ok(()),
        Kind::Long | Kind::One => Err(Refusal::Unsupported(format!(
            "the simulator models one primary and one replica per index; [{}] must be 1, not [{value}]",
            setting.key
        ))),
    }
}

/// Validates a create request's settings in ES's order: every key (sorted, as `Settings` keeps
/// them) known and parsable first, then registered private settings refused. The first problem
/// is reported (ES adds the others as `suppressed`, which the simulator leaves out).
pub(crate) fn validate(product: Product, settings: &IndexSettings) -> Result<(), Refusal> {
    for (key, value) in settings {
        match registered(product).find(|setting| setting.key == key) {
            Some(setting) => parse_value(setting, value)?,
            // Private keys ES does not register: accepted; the server overwrites uuid and name.
            None if [UUID, PROVIDED_NAME].contains(&key.as_str()) => {}
            None if key == CREATION_DATE => {
                if value.parse::<i64>().is_err() {
                    return Err(Refusal::Illegal(format!(
                        "Failed to parse value [{value}] for setting [{key}]"
                    )));
                }
            }
            None if key == VERSION_CREATED => {}
            None => {
                return Err(Refusal::Illegal(format!(
                    "unknown setting [{key}] please check that any required plugins are installed, or check the breaking changes documentation for removed settings"
                )));
            }
        }
    }
    if settings.contains_key(VERSION_CREATED) {
        return Err(Refusal::Private(format!(
            "Validation Failed: 1: private index setting [{VERSION_CREATED}] can not be set explicitly;"
        )));
    }
    Ok(())
}

/// What the server stores for a new index: the request's settings plus its own.
pub(crate) fn complete(
    product: Product,
    name: &str,
    uuid: &str,
    creation_ms: i64,
    requested: &IndexSettings,
) -> IndexSettings {
    let mut settings = requested.clone();
    settings
        .entry(CREATION_DATE.to_owned())
        .or_insert_with(|| creation_ms.to_string());
    settings.insert(PROVIDED_NAME.to_owned(), name.to_owned());
    settings.insert(UUID.to_owned(), uuid.to_owned());
    settings.insert(
        VERSION_CREATED.to_owned(),
        product.index_version_created().to_owned(),
    );
    for key in ["index.number_of_shards", "index.number_of_replicas"] {
        settings.insert(key.to_owned(), "1".to_owned());
    }
    match product.flavor {
        // ES 8 puts every new index on a tier: data streams' backing indices on hot, others on content.
        Flavor::Es8 => {
            let tier = if is_hidden(&settings) && name.starts_with(".ds-") {
                "data_hot"
            } else {
                "data_content"
            };
            settings
                .entry(TIER_PREFERENCE.to_owned())
                .or_insert_with(|| tier.to_owned());
        }
        // OpenSearch 2.x records the replication type (segment replication is opt-in).
        Flavor::Os2 => {
            settings
                .entry("index.replication.type".to_owned())
                .or_insert_with(|| "DOCUMENT".to_owned());
        }
        Flavor::Es6 | Flavor::Es7 => {}
    }
    settings
}

/// `include_defaults`: the known registered settings an index does not set, with their defaults.
/// Real servers list every registered setting here; the simulator lists the ones it knows.
pub(crate) fn defaults(product: Product, explicit: &IndexSettings) -> IndexSettings {
    registered(product)
        .filter(|setting| !explicit.contains_key(setting.key))
        .map(|setting| (setting.key.to_owned(), setting.default.to_owned()))
        .collect()
}

/// `?human` adds readable forms of the creation date and version (`IndexMetadata.addHumanReadableSettings`).
pub(crate) fn with_human(product: Product, settings: &IndexSettings) -> IndexSettings {
    let mut out = settings.clone();
    if let Some(millis) = settings
        .get(CREATION_DATE)
        .and_then(|value| value.parse::<i64>().ok())
    {
        out.insert(
            format!("{CREATION_DATE}_string"),
            crate::units::format_date_millis(millis),
        );
    }
    out.insert(
        format!("{VERSION_CREATED}_string"),
        product.version_number().to_owned(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flavor::Distribution;
    use serde_json::json;

    fn flat(value: Value) -> IndexSettings {
        from_json(value.as_object().unwrap()).unwrap()
    }

    #[test]
    fn nested_dotted_and_unprefixed_keys_are_one_setting() {
        let expected = IndexSettings::from([(HIDDEN.to_owned(), "true".to_owned())]);
        assert_eq!(flat(json!({"index": {"hidden": true}})), expected);
        assert_eq!(flat(json!({"index.hidden": true})), expected);
        assert_eq!(flat(json!({"hidden": "true"})), expected);
    }

    #[test]
    fn each_server_knows_its_own_settings() {
        let es6 = Product::new(Flavor::Es6, Distribution::Oss);
        let es7 = Product::new(Flavor::Es7, Distribution::Oss);
        let es8 = Product::new(Flavor::Es8, Distribution::Oss);
        let os2 = Product::new(Flavor::Os2, Distribution::Oss);
        let hidden = flat(json!({"index.hidden": true}));
        assert!(
            matches!(validate(es6, &hidden), Err(Refusal::Illegal(reason)) if reason.starts_with("unknown setting [index.hidden]"))
        );
        assert_eq!(validate(es7, &hidden), Ok(()));
        let ilm = flat(json!({"index.lifecycle.name": "logs"}));
        assert!(validate(es7, &ilm).is_err(), "no ILM in the OSS build");
        assert_eq!(validate(es8, &ilm), Ok(()));
        assert!(validate(os2, &ilm).is_err());
        let ism = flat(json!({"index.plugins.index_state_management.policy_id": "p"}));
        assert_eq!(validate(os2, &ism), Ok(()));
        assert!(validate(es8, &ism).is_err());
    }

    #[test]
    fn values_and_private_settings_are_checked() {
        let es7 = Product::new(Flavor::Es7, Distribution::Oss);
        assert!(validate(es7, &flat(json!({"index.hidden": "yes"}))).is_err());
        assert!(matches!(
            validate(es7, &flat(json!({"index.number_of_shards": 3}))),
            Err(Refusal::Unsupported(_))
        ));
        assert!(matches!(
            validate(es7, &flat(json!({"index.version.created": 1}))),
            Err(Refusal::Private(_))
        ));
        let backdated =
            flat(json!({"index.creation_date": 1_500_000_000_000_i64, "index.uuid": "mine"}));
        assert_eq!(validate(es7, &backdated), Ok(()));
        let stored = complete(es7, "x", "server-uuid", 7, &backdated);
        assert_eq!(stored[CREATION_DATE], "1500000000000");
        assert_eq!(stored[UUID], "server-uuid");
        assert_eq!(stored[VERSION_CREATED], "7100299");
    }
}
