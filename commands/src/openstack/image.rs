//! Image properties (spec 2.10): the closed set opsbot sets, each with its allowed values, so a
//! value outside the spec is refused before any request is sent.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::ids::ImageId;
use crate::echo::visible;

/// Why a property or value was refused. The `Display` text is shown in chat.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PropertyError {
    /// Shown after the option's name (`hw_disk_bus: must be ...`), so the name is not repeated.
    #[error("must be {allowed}, not `{value}`")]
    Value {
        property: PropertyKey,
        value: String,
        allowed: String,
    },
    /// Shown after the option's name, like [`Self::Value`].
    #[error(
        "`{value}` is not a known OS id; use a lower-case one of the image service's (ubuntu, \
         debian, centos, rhel, rocky, fedora, opensuse, windows, ...) or an osinfo short id \
         such as ubuntu22.04 or win2k22"
    )]
    Distro { value: String },
    #[error(
        "give at least one property: hw_scsi_model:virtio-scsi hw_disk_bus:scsi \
         os_type:linux|windows os_distro:<id>"
    )]
    Nothing,
}

/// The properties of spec 2.10.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PropertyKey {
    HwScsiModel,
    HwDiskBus,
    OsType,
    OsDistro,
}

impl PropertyKey {
    pub const ALL: [Self; 4] = [
        Self::HwScsiModel,
        Self::HwDiskBus,
        Self::OsType,
        Self::OsDistro,
    ];

    /// The values spec 2.10 allows, where it names them; `os_distro` takes an identifier.
    pub fn allowed(self) -> &'static [&'static str] {
        match self {
            Self::HwScsiModel => &["virtio-scsi"],
            Self::HwDiskBus => &["scsi"],
            Self::OsType => &["linux", "windows"],
            Self::OsDistro => &[],
        }
    }

    /// The property's name in the image service, and the option's name in chat.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::HwScsiModel => "hw_scsi_model",
            Self::HwDiskBus => "hw_disk_bus",
            Self::OsType => "os_type",
            Self::OsDistro => "os_distro",
        }
    }
}

impl fmt::Display for PropertyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `os_distro` values the image service documents ("useful image properties").
const DISTROS: [&str; 20] = [
    "arch",
    "centos",
    "debian",
    "fedora",
    "freebsd",
    "gentoo",
    "mandrake",
    "mandriva",
    "mes",
    "msdos",
    "netbsd",
    "netware",
    "openbsd",
    "opensolaris",
    "opensuse",
    "rocky",
    "rhel",
    "sled",
    "ubuntu",
    "windows",
];

/// Families of `osinfo-query os` short ids; a short id is a family and a version that starts
/// with a digit (`ubuntu22.04`, `rhel9.2`, `win2k22`, `sles15sp5`, `centos-stream9`).
const OSINFO_FAMILIES: [&str; 22] = [
    "almalinux",
    "alpinelinux",
    "centos",
    "centos-stream",
    "cirros",
    "debian",
    "fedora",
    "freebsd",
    "mageia",
    "netbsd",
    "nixos",
    "ol",
    "openbsd",
    "opensuse",
    "rhel",
    "rocky",
    "sled",
    "sles",
    "ubuntu",
    "win",
    "win2k",
    "archlinux",
];

/// Longest `os_distro` accepted; osinfo's longest short ids are about 20 characters.
const MAX_DISTRO: usize = 32;

fn is_osinfo_short_id(value: &str) -> bool {
    OSINFO_FAMILIES.iter().any(|family| {
        value.strip_prefix(family).is_some_and(|version| {
            version.starts_with(|c: char| c.is_ascii_digit())
                && version
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.')
        })
    })
}

/// One validated property value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "(PropertyKey, String)", into = "(PropertyKey, String)")]
pub struct Property {
    key: PropertyKey,
    value: String,
}

impl Property {
    /// Checks `value` against spec 2.10 for `key`.
    pub fn parse(key: PropertyKey, value: &str) -> Result<Self, PropertyError> {
        let ok = match key {
            PropertyKey::OsDistro => (value.len() <= MAX_DISTRO
                && (DISTROS.contains(&value) || is_osinfo_short_id(value)))
            .then_some(())
            .ok_or_else(|| PropertyError::Distro {
                value: visible(value, 40),
            }),
            fixed => fixed
                .allowed()
                .contains(&value)
                .then_some(())
                .ok_or_else(|| PropertyError::Value {
                    property: key,
                    value: visible(value, 40),
                    allowed: fixed
                        .allowed()
                        .iter()
                        .map(|v| format!("`{v}`"))
                        .collect::<Vec<_>>()
                        .join(" or "),
                }),
        };
        ok.map(|()| Self {
            key,
            value: value.to_owned(),
        })
    }

    pub fn key(&self) -> PropertyKey {
        self.key
    }

    pub fn value(&self) -> &str {
        &self.value
    }
}

impl TryFrom<(PropertyKey, String)> for Property {
    type Error = PropertyError;
    fn try_from((key, value): (PropertyKey, String)) -> Result<Self, Self::Error> {
        Self::parse(key, &value)
    }
}

impl From<Property> for (PropertyKey, String) {
    fn from(property: Property) -> Self {
        (property.key, property.value)
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

/// The properties one request sets: at least one, each key once.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "Vec<Property>", into = "Vec<Property>")]
pub struct PropertySet(Vec<Property>);

impl PropertySet {
    pub fn new(properties: impl IntoIterator<Item = Property>) -> Result<Self, PropertyError> {
        let by_key: BTreeMap<PropertyKey, Property> =
            properties.into_iter().map(|p| (p.key, p)).collect();
        if by_key.is_empty() {
            return Err(PropertyError::Nothing);
        }
        Ok(Self(by_key.into_values().collect()))
    }

    pub fn iter(&self) -> impl Iterator<Item = &Property> {
        self.0.iter()
    }
}

impl TryFrom<Vec<Property>> for PropertySet {
    type Error = PropertyError;
    fn try_from(properties: Vec<Property>) -> Result<Self, Self::Error> {
        Self::new(properties)
    }
}

impl From<PropertySet> for Vec<Property> {
    fn from(set: PropertySet) -> Self {
        set.0
    }
}

impl fmt::Display for PropertySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|p| format!("{}:{}", p.key, p.value))
            .collect();
        f.write_str(&parts.join(" "))
    }
}

/// An image as the image service shows it: only what opsbot reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub id: ImageId,
    pub name: String,
    pub status: String,
    /// The spec 2.10 properties the image has now, whatever their values.
    pub properties: BTreeMap<PropertyKey, String>,
}

/// One JSON-patch operation on an image property: `add` when the image lacks it, `replace` when
/// it has another value (the image service refuses `replace` of a missing property).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PropertyChange {
    pub property: Property,
    /// The value before, when the image had one.
    pub before: Option<String>,
}

impl PropertyChange {
    /// What must change for an image that has `current` to have `wanted`: the properties whose
    /// value differs, each with the value it had. Planning and executing both ask this, so a
    /// value set meanwhile (or before a restart) is not patched again.
    pub fn needed<'a>(
        wanted: impl IntoIterator<Item = &'a Property>,
        current: &BTreeMap<PropertyKey, String>,
    ) -> Vec<Self> {
        wanted
            .into_iter()
            .filter_map(|property| {
                let before = current.get(&property.key).cloned();
                (before.as_deref() != Some(property.value.as_str())).then(|| Self {
                    property: property.clone(),
                    before,
                })
            })
            .collect()
    }

    /// The JSON-patch operation for this change.
    pub fn patch_op(&self) -> serde_json::Value {
        let op = if self.before.is_some() {
            "replace"
        } else {
            "add"
        };
        serde_json::json!({
            "op": op,
            "path": format!("/{}", self.property.key),
            "value": self.property.value,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_values_are_accepted() {
        for (key, value) in [
            (PropertyKey::HwScsiModel, "virtio-scsi"),
            (PropertyKey::HwDiskBus, "scsi"),
            (PropertyKey::OsType, "linux"),
            (PropertyKey::OsType, "windows"),
            (PropertyKey::OsDistro, "ubuntu"),
            (PropertyKey::OsDistro, "ubuntu22.04"),
            (PropertyKey::OsDistro, "win2k22"),
            (PropertyKey::OsDistro, "centos-stream9"),
            (PropertyKey::OsDistro, "sles15sp5"),
        ] {
            assert!(Property::parse(key, value).is_ok(), "{key}={value} refused");
        }
    }

    #[test]
    fn values_outside_the_spec_are_refused_with_what_is_allowed() {
        for (key, value) in [
            (PropertyKey::HwScsiModel, "lsilogic"),
            (PropertyKey::HwDiskBus, "virtio"),
            (PropertyKey::OsType, "Linux"),
            (PropertyKey::OsDistro, "Ubuntu"),
            (PropertyKey::OsDistro, "ubuntu-22.04"),
            (PropertyKey::OsDistro, "win"),
            (PropertyKey::OsDistro, "beos5"),
            (PropertyKey::OsDistro, ""),
        ] {
            assert!(
                Property::parse(key, value).is_err(),
                "{key}={value} accepted"
            );
        }
        let error = Property::parse(PropertyKey::HwDiskBus, "ide").unwrap_err();
        assert_eq!(error.to_string(), "must be `scsi`, not `ide`");
    }

    #[test]
    fn a_set_needs_one_property_and_keeps_the_last_of_a_key() {
        assert_eq!(PropertySet::new([]), Err(PropertyError::Nothing));
        let set = PropertySet::new([
            Property::parse(PropertyKey::OsType, "linux").unwrap(),
            Property::parse(PropertyKey::HwDiskBus, "scsi").unwrap(),
        ])
        .unwrap();
        assert_eq!(set.to_string(), "hw_disk_bus:scsi os_type:linux");
    }

    #[test]
    fn patches_add_what_is_missing_and_replace_what_differs() {
        let property = Property::parse(PropertyKey::HwScsiModel, "virtio-scsi").unwrap();
        let add = PropertyChange {
            property: property.clone(),
            before: None,
        };
        let replace = PropertyChange {
            property,
            before: Some("lsilogic".into()),
        };
        assert_eq!(add.patch_op()["op"], "add");
        assert_eq!(replace.patch_op()["op"], "replace");
        assert_eq!(replace.patch_op()["path"], "/hw_scsi_model");
    }

    #[test]
    fn stored_values_are_validated_again() {
        assert!(serde_json::from_str::<Property>(r#"["hw_disk_bus","ide"]"#).is_err());
        assert!(serde_json::from_str::<PropertySet>("[]").is_err());
    }
}
