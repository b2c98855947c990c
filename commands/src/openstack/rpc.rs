//! The compute RPC version cap (spec 7): reading an `RPCVersionCapError` log line and saying why
//! it happened.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::echo::visible;

/// A compute RPC message version, `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RpcVersion {
    pub major: u32,
    pub minor: u32,
}

impl RpcVersion {
    /// Spec 9: the major must match the cap and the minor must not exceed the cap's.
    pub fn fits_under(self, cap: RpcVersion) -> bool {
        self.major == cap.major && self.minor <= cap.minor
    }

    /// `5.0` at the start of `text`, after any spaces or commas.
    fn leading(text: &str) -> Option<Self> {
        let text = text.trim_start_matches([' ', ',', ':']);
        let end = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        let (major, minor) = text[..end].trim_end_matches('.').split_once('.')?;
        Some(Self {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
        })
    }
}

impl fmt::Display for RpcVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// What an `RPCVersionCapError` line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct VersionCapError {
    pub requested: RpcVersion,
    pub cap: RpcVersion,
}

/// Why a log line could not be read as an `RPCVersionCapError`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RpcLineError {
    #[error(
        "`{line}` is not an RPCVersionCapError line; paste the line that says \"Requested message \
         version, X.Y is incompatible ... version cap A.B\""
    )]
    NotCapError { line: String },
    #[error(
        "requested {requested} fits under the cap {cap}, so that line is not why messages fail; \
         look for a line where the requested version is above the cap"
    )]
    Compatible {
        requested: RpcVersion,
        cap: RpcVersion,
    },
}

impl VersionCapError {
    /// Reads oslo.messaging's text (`Requested message version, 5.0 is incompatible.  It needs
    /// to be equal in major version and less than or equal in minor version as the specified
    /// version cap 4.17.`), wherever it sits in a log line, in either case.
    pub fn parse(line: &str) -> Result<Self, RpcLineError> {
        let lower = line.to_ascii_lowercase();
        let after = |marker: &str| {
            lower
                .find(marker)
                .and_then(|at| RpcVersion::leading(&lower[at + marker.len()..]))
        };
        let (Some(requested), Some(cap)) =
            (after("requested message version"), after("version cap"))
        else {
            return Err(RpcLineError::NotCapError {
                line: visible(line.trim(), 60),
            });
        };
        if requested.fits_under(cap) {
            return Err(RpcLineError::Compatible { requested, cap });
        }
        Ok(Self { requested, cap })
    }

    /// Why the message was refused, and what keeps the cap where it is (spec 7).
    pub fn explanation(&self) -> String {
        let Self { requested, cap } = *self;
        let why = if requested.major > cap.major {
            format!(
                "a service of a newer release sends {requested}, but every compute service is \
                 capped at {cap}: major {} cannot be understood under a {} cap",
                requested.major, cap.major
            )
        } else if requested.major < cap.major {
            format!(
                "a service still speaks major {} while the cap is {cap}: it is more than one \
                 release behind the others, which the compute services do not support; upgrade it",
                requested.major
            )
        } else {
            format!(
                "{requested} is newer than the cap {cap} within major {}: the sender was \
                 upgraded, the cap was not raised",
                cap.major
            )
        };
        format!(
            "RPCVersionCapError: requested {requested}, cap {cap}. {why}. The cap is the version of \
             the oldest registered compute service, and disabled services still count: an old \
             disabled record keeps the cap down"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "2026-11-21 03:12:44.120 7 ERROR oslo_messaging.rpc.server \
        oslo_messaging.rpc.client.RPCVersionCapError: Requested message version, 5.0 is \
        incompatible.  It needs to be equal in major version and less than or equal in minor \
        version as the specified version cap 4.17.";

    #[test]
    fn reads_the_versions_of_an_oslo_messaging_line() {
        let error = VersionCapError::parse(LOG).unwrap();
        assert_eq!(error.requested, RpcVersion { major: 5, minor: 0 });
        assert_eq!(
            error.cap,
            RpcVersion {
                major: 4,
                minor: 17
            }
        );
        let text = error.explanation();
        assert!(text.contains("requested 5.0, cap 4.17"), "{text}");
        assert!(text.contains("disabled services still count"), "{text}");
    }

    #[test]
    fn reads_the_specs_wording() {
        let line = "requested message version 4.22 is incompatible, it needs to be equal in \
                    major version and less than or equal in minor version as the specified \
                    version cap 4.17";
        let error = VersionCapError::parse(line).unwrap();
        assert_eq!(error.requested.to_string(), "4.22");
        assert!(error.explanation().contains("within major 4"));
    }

    #[test]
    fn other_lines_are_refused_with_what_to_paste() {
        for line in [
            "",
            "nova-compute is down",
            "version cap 4.17",
            "requested message version x",
        ] {
            assert!(
                matches!(
                    VersionCapError::parse(line),
                    Err(RpcLineError::NotCapError { .. })
                ),
                "{line:?}"
            );
        }
        let fits = "Requested message version, 4.11 is incompatible ... version cap 4.17";
        assert!(matches!(
            VersionCapError::parse(fits),
            Err(RpcLineError::Compatible { .. })
        ));
    }

    #[test]
    fn the_spec_rule_on_versions() {
        let v = |major, minor| RpcVersion { major, minor };
        assert!(v(4, 17).fits_under(v(4, 17)));
        assert!(v(4, 3).fits_under(v(4, 17)));
        assert!(!v(4, 18).fits_under(v(4, 17)));
        assert!(!v(5, 0).fits_under(v(4, 17)));
        assert!(!v(3, 9).fits_under(v(4, 17)));
    }
}
