//! Microversion negotiation, as placement and nova each do it.
//!
//! Only the `OpenStack-API-Version: <service> X.Y` header selects a placement version (any
//! other spelling is ignored and gives 1.0, as recorded from Placement 16); nova also honours
//! its legacy `X-OpenStack-Nova-API-Version: X.Y`. Placement's maximum is the configured one
//! ([`crate::CloudSimConfig::placement_max_version`]), as an older placement's `VERSIONS`
//! list ends earlier.

use std::fmt;

use axum::http::{HeaderMap, HeaderName, header};
use axum::response::Response;

use super::reply::set;

/// An API microversion, `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// The part before the dot.
    pub major: u32,
    /// The part after the dot.
    pub minor: u32,
}

impl Version {
    /// `major.minor`.
    pub const fn new(major: u32, minor: u32) -> Self {
        Version { major, minor }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Placement's first microversion.
pub(crate) const PLACEMENT_MIN: Version = Version::new(1, 0);
/// Placement 16's maximum, the newest the simulator implements and its default.
pub(crate) const PLACEMENT_MAX: Version = Version::new(1, 39);
/// Nova 2024.x's range.
pub(crate) const NOVA_MIN: Version = Version::new(2, 1);
pub(crate) const NOVA_MAX: Version = Version::new(2, 96);

/// Why a requested version cannot be served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum VersionError {
    /// Not a version at all (400); carries the service's explanation.
    Invalid(String),
    /// A version outside the served range (406); carries the service's explanation.
    Unacceptable(String),
}

/// The version the `OpenStack-API-Version` header asks of `service`, if any entry names it.
fn requested(headers: &HeaderMap, service: &str) -> Option<String> {
    headers
        .get_all("openstack-api-version")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .find_map(|entry| {
            let mut words = entry.split_whitespace();
            let named = words.next()?;
            let version = words.next()?;
            (named.eq_ignore_ascii_case(service) && words.next().is_none())
                .then(|| version.to_owned())
        })
}

/// Python's `int()` on a version part, with its error text.
fn python_int(part: &str) -> Result<i64, String> {
    part.trim()
        .parse()
        .map_err(|_| format!("invalid literal for int() with base 10: '{part}'"))
}

/// `microversion_parse` as placement uses it, for a placement whose versions run from 1.0 to
/// `max`.
pub(crate) fn placement(headers: &HeaderMap, max: Version) -> Result<Version, VersionError> {
    let Some(raw) = requested(headers, "placement") else {
        return Ok(PLACEMENT_MIN);
    };
    if raw == "latest" {
        return Ok(max);
    }
    let invalid = |reason: String| {
        VersionError::Invalid(format!(
            "Invalid microversion: invalid version string: {raw}; {reason}"
        ))
    };
    let (major, minor) = raw
        .split_once('.')
        .ok_or_else(|| invalid("not enough values to unpack (expected 2, got 1)".into()))?;
    let (major, minor) = (
        python_int(major).map_err(invalid)?,
        python_int(minor).map_err(invalid)?,
    );
    u32::try_from(major)
        .ok()
        .zip(u32::try_from(minor).ok())
        .map(|(major, minor)| Version::new(major, minor))
        .filter(|version| (PLACEMENT_MIN..=max).contains(version))
        .ok_or_else(|| {
            VersionError::Unacceptable(format!(
                "Invalid microversion: Unacceptable version header: {raw}"
            ))
        })
}

/// Nova's `APIVersionRequest`: `^([1-9]\d*)\.([1-9]\d*|0)$`.
fn nova_parse(raw: &str) -> Option<Version> {
    let (major, minor) = raw.split_once('.')?;
    let number = |part: &str, zero_ok: bool| {
        let digits = !part.is_empty() && part.bytes().all(|byte| byte.is_ascii_digit());
        let leading_zero = part.starts_with('0') && !(zero_ok && part == "0");
        if digits && !leading_zero {
            part.parse::<u32>().ok()
        } else {
            None
        }
    };
    Some(Version::new(number(major, false)?, number(minor, true)?))
}

/// Nova's negotiation, new header first, then the legacy one.
pub(crate) fn nova(headers: &HeaderMap) -> Result<Version, VersionError> {
    let legacy = || {
        headers
            .get("x-openstack-nova-api-version")
            .and_then(|value| value.to_str().ok())
            .map(|value| value.trim().to_owned())
    };
    let Some(raw) = requested(headers, "compute").or_else(legacy) else {
        return Ok(NOVA_MIN);
    };
    if raw == "latest" {
        return Ok(NOVA_MAX);
    }
    let version = nova_parse(&raw).ok_or_else(|| {
        VersionError::Invalid(format!(
            "API Version String {raw} is of invalid format. Must be of format MajorNum.MinorNum."
        ))
    })?;
    if (NOVA_MIN..=NOVA_MAX).contains(&version) {
        Ok(version)
    } else {
        Err(VersionError::Unacceptable(format!(
            "Version {raw} is not supported by the API. Minimum is {NOVA_MIN} and maximum is {NOVA_MAX}."
        )))
    }
}

const OPENSTACK_API_VERSION: HeaderName = HeaderName::from_static("openstack-api-version");

/// Marks a placement response with the version it was served at, as placement does.
pub(crate) fn stamp_placement(response: &mut Response, version: Version) {
    set(
        response,
        OPENSTACK_API_VERSION,
        &format!("placement {version}"),
    );
    set(response, header::VARY, "openstack-api-version");
}

/// Marks a nova response with the version it was served at, in both of nova's headers.
pub(crate) fn stamp_nova(response: &mut Response, version: Version) {
    set(
        response,
        OPENSTACK_API_VERSION,
        &format!("compute {version}"),
    );
    set(
        response,
        HeaderName::from_static("x-openstack-nova-api-version"),
        &version.to_string(),
    );
    set(
        response,
        header::VARY,
        "OpenStack-API-Version, X-OpenStack-Nova-API-Version",
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn placement_follows_the_recordings() {
        let v = |pairs| placement(&headers(pairs), PLACEMENT_MAX);
        assert_eq!(v(&[]), Ok(PLACEMENT_MIN));
        assert_eq!(
            v(&[("cloud-api-version", "placement 1.17")]),
            Ok(PLACEMENT_MIN)
        );
        assert_eq!(
            v(&[("x-openstack-placement-api-version", "1.17")]),
            Ok(PLACEMENT_MIN)
        );
        assert_eq!(v(&[("openstack-api-version", "1.17")]), Ok(PLACEMENT_MIN));
        assert_eq!(
            v(&[("openstack-api-version", "compute 2.1")]),
            Ok(PLACEMENT_MIN)
        );
        assert_eq!(
            v(&[("openstack-api-version", "compute 2.1, placement 1.17")]),
            Ok(Version::new(1, 17))
        );
        assert_eq!(
            v(&[("openstack-api-version", "placement latest")]),
            Ok(PLACEMENT_MAX)
        );
        assert_eq!(
            v(&[("openstack-api-version", "placement 1.abc")]),
            Err(VersionError::Invalid(
                "Invalid microversion: invalid version string: 1.abc; invalid literal for int() with base 10: 'abc'".into()
            ))
        );
        assert_eq!(
            v(&[("openstack-api-version", "placement 9.99")]),
            Err(VersionError::Unacceptable(
                "Invalid microversion: Unacceptable version header: 9.99".into()
            ))
        );
        assert!(matches!(
            v(&[("openstack-api-version", "placement 1.40")]),
            Err(VersionError::Unacceptable(_))
        ));
    }

    #[test]
    fn nova_accepts_both_headers_and_checks_the_format() {
        let v = |pairs| nova(&headers(pairs));
        assert_eq!(v(&[]), Ok(NOVA_MIN));
        assert_eq!(
            v(&[("openstack-api-version", "compute 2.53")]),
            Ok(Version::new(2, 53))
        );
        assert_eq!(
            v(&[("x-openstack-nova-api-version", "2.60")]),
            Ok(Version::new(2, 60))
        );
        assert_eq!(
            v(&[("openstack-api-version", "compute latest")]),
            Ok(NOVA_MAX)
        );
        assert!(matches!(
            v(&[("openstack-api-version", "compute 2.05")]),
            Err(VersionError::Invalid(_))
        ));
        assert!(matches!(
            v(&[("openstack-api-version", "compute 3.0")]),
            Err(VersionError::Unacceptable(_))
        ));
    }
}
