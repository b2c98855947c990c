//! The value encoding: every value is a JSON envelope `{"v":1,"data":...}`, so that a newer
//! opsbot's records are recognised as such instead of being misread.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The newest envelope format this opsbot writes and reads.
pub(crate) const FORMAT: u32 = 1;

#[derive(Serialize)]
struct Out<'a, T> {
    v: u32,
    data: &'a T,
}

#[derive(Deserialize)]
struct In<T> {
    v: u32,
    data: T,
}

/// Only the version, read when the whole envelope did not decode: a newer format may have
/// changed the data's shape, and that must say "newer", not "corrupt".
#[derive(Deserialize)]
struct Version {
    v: u32,
}

/// Why a value did not decode; the store adds where it was.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum DecodeError {
    Corrupt(String),
    Newer(u32),
}

pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&Out {
        v: FORMAT,
        data: value,
    })
}

pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, DecodeError> {
    match serde_json::from_slice::<In<T>>(bytes) {
        // The version is checked even when the data happened to fit this opsbot's types.
        Ok(envelope) if envelope.v == FORMAT => Ok(envelope.data),
        Ok(envelope) => Err(unsupported(envelope.v)),
        Err(error) => match serde_json::from_slice::<Version>(bytes) {
            Ok(version) if version.v != FORMAT => Err(unsupported(version.v)),
            _ => Err(DecodeError::Corrupt(error.to_string())),
        },
    }
}

fn unsupported(v: u32) -> DecodeError {
    if v > FORMAT {
        DecodeError::Newer(v)
    } else {
        DecodeError::Corrupt(format!("format version {v} was never written by opsbot"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_in_an_envelope() {
        let bytes = encode(&vec![1_u64, 2]).unwrap();
        assert_eq!(bytes, br#"{"v":1,"data":[1,2]}"#);
        assert_eq!(decode::<Vec<u64>>(&bytes), Ok(vec![1, 2]));
    }

    #[test]
    fn a_newer_version_is_recognised_even_with_another_shape() {
        assert_eq!(
            decode::<u64>(br#"{"v":2,"data":{"moved":1}}"#),
            Err(DecodeError::Newer(2))
        );
        assert_eq!(
            decode::<u64>(br#"{"v":99,"data":7}"#),
            Err(DecodeError::Newer(99))
        );
    }

    #[test]
    fn garbage_and_wrong_shapes_are_corrupt() {
        for bad in [
            &b"\xff\x00garbage"[..],
            b"",
            br#"{"v":1}"#,
            br#"{"v":1,"data":"x"}"#,
        ] {
            assert!(
                matches!(decode::<u64>(bad), Err(DecodeError::Corrupt(_))),
                "{bad:?}"
            );
        }
        assert!(matches!(
            decode::<u64>(br#"{"v":0,"data":1}"#),
            Err(DecodeError::Corrupt(_))
        ));
    }
}
