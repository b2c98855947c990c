//! Dynamic cluster settings: the persistent and transient stores, validation, and the values that
//! steer allocation.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use serde_json::Value;

use super::resolve::glob_match;

/// `cluster.routing.allocation.enable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Allocation {
    All,
    Primaries,
    NewPrimaries,
    None,
}

impl Allocation {
    /// ES parses the value case-insensitively (`Allocation.valueOf(value.toUpperCase())`).
    fn parse(value: &str) -> Option<Self> {
        match value.to_ascii_lowercase().as_str() {
            "all" => Some(Allocation::All),
            "primaries" => Some(Allocation::Primaries),
            "new_primaries" => Some(Allocation::NewPrimaries),
            "none" => Some(Allocation::None),
            _ => None,
        }
    }
}

pub(crate) const ENABLE: &str = "cluster.routing.allocation.enable";
const EXCLUDE_IP: &str = "cluster.routing.allocation.exclude._ip";
/// Node name and host equal the IP in Kolla, so these filters match the same nodes as `_ip`.
const EXCLUDE_NAME: &str = "cluster.routing.allocation.exclude._name";
const EXCLUDE_HOST: &str = "cluster.routing.allocation.exclude._host";
const DESTRUCTIVE_REQUIRES_NAME: &str = "action.destructive_requires_name";

/// Checks a value; the error is the ES reason.
type Validator = fn(&str) -> Result<(), String>;

/// The settings the simulator knows; anything else is refused as real ES refuses unknown keys.
const KNOWN: [(&str, Validator); 5] = [
    (ENABLE, validate_enable),
    (EXCLUDE_IP, validate_ips),
    (EXCLUDE_NAME, accept_any),
    (EXCLUDE_HOST, accept_any),
    (DESTRUCTIVE_REQUIRES_NAME, validate_bool),
];

fn validate_enable(value: &str) -> Result<(), String> {
    Allocation::parse(value)
        .map(|_| ())
        .ok_or_else(|| format!("Illegal allocation.enable value [{value}]"))
}

/// ES checks every comma-separated entry of an `_ip` filter (wildcards allowed).
fn validate_ips(value: &str) -> Result<(), String> {
    split_list(value)
        .find(|entry| !entry.contains('*') && entry.parse::<Ipv4Addr>().is_err())
        .map_or(Ok(()), |entry| {
            Err(format!("invalid IP address [{entry}] for [_ip]"))
        })
}

fn accept_any(_: &str) -> Result<(), String> {
    Ok(())
}

fn validate_bool(value: &str) -> Result<(), String> {
    match value {
        "true" | "false" => Ok(()),
        _ => Err(format!(
            "Failed to parse value [{value}] as only [true] or [false] are allowed."
        )),
    }
}

fn split_list(value: &str) -> impl Iterator<Item = &str> {
    value
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
}

/// Persistent or transient.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Persistent,
    Transient,
}

impl Scope {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Scope::Persistent => "persistent",
            Scope::Transient => "transient",
        }
    }
}

/// Why a settings update was refused; the text is the ES `reason`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SettingsError {
    /// A top-level key other than `persistent`/`transient` (ES: `x_content_parse_exception`).
    #[error("[cluster_update_settings_request] unknown field [{0}]")]
    UnknownField(String),
    /// Not a setting the cluster knows.
    #[error("{} setting [{key}], not recognized", .scope.as_str())]
    Unknown { scope: Scope, key: String },
    /// A known setting with an invalid value.
    #[error("{0}")]
    Invalid(String),
}

/// The two setting stores; effective value = transient, else persistent, else the default.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Settings {
    pub persistent: BTreeMap<String, String>,
    pub transient: BTreeMap<String, String>,
}

/// What an update set, per scope, for the response echo (reset keys are not echoed).
#[derive(Debug, Default)]
pub(crate) struct Applied {
    pub persistent: BTreeMap<String, String>,
    pub transient: BTreeMap<String, String>,
}

impl Settings {
    fn effective(&self, key: &str) -> Option<&str> {
        self.transient
            .get(key)
            .or_else(|| self.persistent.get(key))
            .map(String::as_str)
    }

    pub(crate) fn allocation_enable(&self) -> Allocation {
        self.effective(ENABLE)
            .and_then(Allocation::parse)
            .unwrap_or(Allocation::All)
    }

    /// Whether allocation filters push shards off a node (name and host equal the IP here).
    pub(crate) fn is_excluded(&self, ip: Ipv4Addr) -> bool {
        let ip = ip.to_string();
        [EXCLUDE_IP, EXCLUDE_NAME, EXCLUDE_HOST]
            .into_iter()
            .filter_map(|key| self.effective(key))
            .flat_map(split_list)
            .any(|pattern| glob_match(pattern, &ip))
    }

    /// ES 8 flipped the default of `action.destructive_requires_name` to true.
    pub(crate) fn destructive_requires_name(&self, default: bool) -> bool {
        self.effective(DESTRUCTIVE_REQUIRES_NAME)
            .map_or(default, |value| value == "true")
    }

    /// Validates and applies a `PUT _cluster/settings` body. All or nothing, like ES.
    pub(crate) fn update(
        &mut self,
        body: &serde_json::Map<String, Value>,
    ) -> Result<Applied, SettingsError> {
        let mut next = self.clone();
        let mut applied = Applied::default();
        for (field, value) in body {
            let (scope, store, echo) = match field.as_str() {
                "persistent" => (
                    Scope::Persistent,
                    &mut next.persistent,
                    &mut applied.persistent,
                ),
                "transient" => (
                    Scope::Transient,
                    &mut next.transient,
                    &mut applied.transient,
                ),
                _ => return Err(SettingsError::UnknownField(field.clone())),
            };
            let mut flat = Vec::new();
            flatten("", value, &mut flat)?;
            for (key, value) in flat {
                match value {
                    Some(value) => {
                        validate(scope, &key, &value)?;
                        store.insert(key.clone(), value.clone());
                        echo.insert(key, value);
                    }
                    None if key.contains('*') => {
                        store.retain(|existing, _| !glob_match(&key, existing))
                    }
                    None => {
                        validate_key(scope, &key)?;
                        store.remove(&key);
                    }
                }
            }
        }
        *self = next;
        Ok(applied)
    }
}

fn validate_key(scope: Scope, key: &str) -> Result<Validator, SettingsError> {
    KNOWN
        .iter()
        .find(|(known, _)| *known == key)
        .map(|(_, validator)| *validator)
        .ok_or_else(|| SettingsError::Unknown {
            scope,
            key: key.to_owned(),
        })
}

fn validate(scope: Scope, key: &str, value: &str) -> Result<(), SettingsError> {
    validate_key(scope, key)?(value).map_err(SettingsError::Invalid)
}

/// Flattens nested objects into dotted keys; `null` means reset. ES stores every value as a
/// string, so booleans and numbers are echoed back as strings.
pub(crate) fn flatten(
    prefix: &str,
    value: &Value,
    out: &mut Vec<(String, Option<String>)>,
) -> Result<(), SettingsError> {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                let key = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&key, value, out)?;
            }
        }
        Value::Null => out.push((prefix.to_owned(), None)),
        Value::String(text) => out.push((prefix.to_owned(), Some(text.clone()))),
        Value::Bool(_) | Value::Number(_) => out.push((prefix.to_owned(), Some(value.to_string()))),
        Value::Array(_) => {
            return Err(SettingsError::Invalid(format!(
                "array values are not supported by the simulator for setting [{prefix}]"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn update(settings: &mut Settings, body: Value) -> Result<Applied, SettingsError> {
        settings.update(body.as_object().unwrap())
    }

    #[test]
    fn nested_and_flat_keys_are_the_same_setting() {
        let mut settings = Settings::default();
        update(
            &mut settings,
            json!({"persistent": {"cluster": {"routing": {"allocation": {"enable": "NONE"}}}}}),
        )
        .unwrap();
        assert_eq!(settings.allocation_enable(), Allocation::None);
        update(
            &mut settings,
            json!({"transient": {"cluster.routing.allocation.enable": "primaries"}}),
        )
        .unwrap();
        assert_eq!(settings.allocation_enable(), Allocation::Primaries);
        let applied = update(
            &mut settings,
            json!({"transient": {"cluster.routing.allocation.enable": null}}),
        )
        .unwrap();
        assert!(applied.transient.is_empty());
        assert_eq!(settings.allocation_enable(), Allocation::None);
    }

    #[test]
    fn invalid_updates_change_nothing() {
        let mut settings = Settings::default();
        let error = update(
            &mut settings,
            json!({"persistent": {"action.destructive_requires_name": true, "cluster.routing.allocation.enable": "BOGUS"}}),
        )
        .unwrap_err();
        assert_eq!(error.to_string(), "Illegal allocation.enable value [BOGUS]");
        assert!(settings.persistent.is_empty());
        let error = update(
            &mut settings,
            json!({"persistent": {"cluster.routing.allocation.enabled": "all"}}),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "persistent setting [cluster.routing.allocation.enabled], not recognized"
        );
    }

    #[test]
    fn exclusions_accept_lists_and_clear_with_empty_string() {
        let mut settings = Settings::default();
        update(&mut settings, json!({"transient": {"cluster.routing.allocation.exclude._ip": "10.0.0.12, 10.0.0.13"}}))
            .unwrap();
        assert!(settings.is_excluded(Ipv4Addr::new(10, 0, 0, 13)));
        assert!(!settings.is_excluded(Ipv4Addr::new(10, 0, 0, 11)));
        update(
            &mut settings,
            json!({"transient": {"cluster.routing.allocation.exclude._ip": ""}}),
        )
        .unwrap();
        assert!(!settings.is_excluded(Ipv4Addr::new(10, 0, 0, 13)));
        assert!(
            update(
                &mut settings,
                json!({"transient": {"cluster.routing.allocation.exclude._ip": "node-1"}})
            )
            .is_err()
        );
    }
}
