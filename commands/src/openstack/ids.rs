//! Identifiers of cloud resources: UUIDs in their canonical form, and image references.

use std::fmt;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::echo::visible;
use crate::name::NameError;

/// Parses the canonical hyphenated form only (`8-4-4-4-12` hex digits, either case): what the
/// APIs print and operators copy from logs. Braced, URN and bare-hex forms are refused so that a
/// value means one thing wherever it appears.
fn canonical(value: &str) -> Result<Uuid, NameError> {
    let bad = || NameError::NotUuid {
        value: visible(value, 40),
    };
    if value.len() != 36 {
        return Err(bad());
    }
    Uuid::try_parse(value).map_err(|_| bad())
}

/// A UUID-typed identifier: parsed from its canonical form, shown in lower case, serialized as a
/// string and validated again when read back.
macro_rules! uuid_id {
    ($(#[$doc:meta])* $ty:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $ty(Uuid);

        impl $ty {
            pub fn parse(value: &str) -> Result<Self, NameError> {
                canonical(value).map(Self)
            }

            pub fn uuid(self) -> Uuid {
                self.0
            }
        }

        impl From<Uuid> for $ty {
            fn from(uuid: Uuid) -> Self {
                Self(uuid)
            }
        }

        impl TryFrom<String> for $ty {
            type Error = NameError;
            fn try_from(value: String) -> Result<Self, Self::Error> {
                Self::parse(&value)
            }
        }

        impl From<$ty> for String {
            fn from(id: $ty) -> Self {
                id.to_string()
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.hyphenated().fmt(f)
            }
        }

        impl std::str::FromStr for $ty {
            type Err = NameError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::parse(s)
            }
        }
    };
}

uuid_id!(
    /// A placement consumer: for the allocations opsbot cleans up, an instance (server) id.
    ConsumerId
);
uuid_id!(
    /// A placement resource provider (a hypervisor, or a nested provider under one).
    ProviderId
);
uuid_id!(
    /// An image in the image service.
    ImageId
);

uuid_id!(
    /// A compute service record. A UUID from compute API microversion 2.53, which opsbot always
    /// asks for (Pike and later); older ids were row numbers that differ between cells.
    ServiceId
);

/// An image as operators name it: by id when the value is a UUID, else by its name, which the
/// image service matches exactly (no wildcards there).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageRef {
    Id(ImageId),
    Name(String),
}

impl ImageRef {
    /// The image service's limit on a name.
    pub const MAX_LEN: usize = 255;

    pub fn parse(value: &str) -> Result<Self, NameError> {
        let value = value.trim();
        if let Ok(id) = ImageId::parse(value) {
            return Ok(Self::Id(id));
        }
        if value.is_empty() {
            return Err(NameError::Empty { what: "image" });
        }
        let len = value.chars().count();
        if len > Self::MAX_LEN {
            return Err(NameError::TooLong {
                what: "image name",
                value: visible(value, 40),
                len,
                max: Self::MAX_LEN,
            });
        }
        if let Some(ch) = value
            .chars()
            .find(|&c| c != '`' && crate::echo::is_hidden(c))
        {
            return Err(NameError::BadChar {
                what: "image name",
                value: visible(value, 40),
                ch: crate::echo::describe(ch),
                allowed: "visible text",
            });
        }
        Ok(Self::Name(value.to_owned()))
    }
}

impl fmt::Display for ImageRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Id(id) => id.fmt(f),
            Self::Name(name) => f.write_str(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consumer_ids_are_canonical_uuids() {
        let id = ConsumerId::parse("6F1A0C3E-2B7D-4C1E-9A55-0D3F4B2A8C11").unwrap();
        assert_eq!(id.to_string(), "6f1a0c3e-2b7d-4c1e-9a55-0d3f4b2a8c11");
        for bad in [
            "",
            "6f1a0c3e2b7d4c1e9a550d3f4b2a8c11",
            "{6f1a0c3e-2b7d-4c1e-9a55-0d3f4b2a8c11}",
            "urn:uuid:6f1a0c3e-2b7d-4c1e-9a55-0d3f4b2a8c11",
            "6f1a0c3e-2b7d-4c1e-9a55-0d3f4b2a8c1g",
            "6f1a0c3e-2b7d-4c1e-9a55-0d3f4b2a8c1",
            "*",
        ] {
            assert!(
                matches!(ConsumerId::parse(bad), Err(NameError::NotUuid { .. })),
                "{bad:?} was accepted"
            );
        }
    }

    #[test]
    fn ids_are_validated_when_read_back() {
        assert!(serde_json::from_str::<ConsumerId>("\"not-a-uuid\"").is_err());
        let id: ConsumerId =
            serde_json::from_str("\"6f1a0c3e-2b7d-4c1e-9a55-0d3f4b2a8c11\"").unwrap();
        assert_eq!(
            serde_json::to_string(&id).unwrap(),
            "\"6f1a0c3e-2b7d-4c1e-9a55-0d3f4b2a8c11\""
        );
    }

    #[test]
    fn an_image_is_named_by_id_or_by_name() {
        assert!(matches!(
            ImageRef::parse("6f1a0c3e-2b7d-4c1e-9a55-0d3f4b2a8c11"),
            Ok(ImageRef::Id(_))
        ));
        assert_eq!(
            ImageRef::parse(" ubuntu-22.04 "),
            Ok(ImageRef::Name("ubuntu-22.04".into()))
        );
        assert!(ImageRef::parse("").is_err());
        assert!(ImageRef::parse("a\u{7}b").is_err());
        assert!(ImageRef::parse(&"x".repeat(256)).is_err());
    }
}
