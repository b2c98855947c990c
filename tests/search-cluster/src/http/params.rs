//! Query-string parameters, parsed and validated as ES's `RestRequest` does: booleans are strict,
//! time values need a unit, and a parameter no handler consumes is an error.

use super::errors::ApiError;
use crate::units::parse_millis;

/// Parameters every endpoint accepts.
const GLOBAL: [&str; 3] = ["pretty", "human", "error_trace"];

/// Decoded `key=value` pairs in request order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Params(Vec<(String, String)>);

/// `%XX` and `+` decoding; invalid escapes are kept literally.
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut position = 0;
    while position < bytes.len() {
        let hex = bytes
            .get(position + 1..position + 3)
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[position], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                position += 3;
            }
            (byte, _) => {
                out.push(byte);
                position += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A comma-separated list, blanks and empty items dropped (`Strings.splitStringByCommaToArray`).
pub(crate) fn comma_list(value: Option<&str>) -> Vec<String> {
    value
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

impl Params {
    pub(crate) fn parse(query: &str) -> Self {
        Params(
            query
                .split('&')
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    (
                        percent_decode(&key.replace('+', " ")),
                        percent_decode(&value.replace('+', " ")),
                    )
                })
                .collect(),
        )
    }

    /// The last value given for `key` (ES keeps the last one too).
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }

    /// `?v`, `?v=true` → true; `?v=false` → false; absent → false; anything else is refused.
    pub(crate) fn flag(&self, key: &str) -> Result<bool, ApiError> {
        match self.get(key) {
            None | Some("false") => Ok(false),
            Some("" | "true") => Ok(true),
            Some(other) => Err(ApiError::illegal_argument(format!(
                "Failed to parse value [{other}] as only [true] or [false] are allowed."
            ))),
        }
    }

    /// `?pretty` for error bodies, where a malformed value must not hide the real error.
    pub(crate) fn pretty(&self) -> bool {
        self.flag("pretty").unwrap_or(false)
    }

    /// A time parameter in milliseconds.
    pub(crate) fn millis(&self, key: &str, default_ms: u64) -> Result<u64, ApiError> {
        self.get(key).map_or(Ok(default_ms), |value| {
            parse_millis(value).map_err(|_| {
                ApiError::parse(format!(
                    "failed to parse setting [{key}] with value [{value}] as a time value: unit is missing or unrecognized"
                ))
            })
        })
    }

    /// Refuses parameters the endpoint does not consume, with ES's message.
    pub(crate) fn check_known(&self, path: &str, accepted: &[&str]) -> Result<(), ApiError> {
        let mut unknown: Vec<&str> = Vec::new();
        for (key, _) in &self.0 {
            if !GLOBAL.contains(&key.as_str())
                && !accepted.contains(&key.as_str())
                && !unknown.contains(&key.as_str())
            {
                unknown.push(key);
            }
        }
        match unknown.as_slice() {
            [] => Ok(()),
            [single] => Err(ApiError::illegal_argument(format!(
                "request [{path}] contains unrecognized parameter: [{single}]"
            ))),
            several => {
                let list: Vec<String> = several.iter().map(|key| format!("[{key}]")).collect();
                Err(ApiError::illegal_argument(format!(
                    "request [{path}] contains unrecognized parameters: {}",
                    list.join(", ")
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_flags_and_values() {
        let params = Params::parse("v&h=index,health&s=index%3Adesc&pretty=false");
        assert!(params.flag("v").unwrap());
        assert!(!params.flag("pretty").unwrap());
        assert_eq!(params.get("s"), Some("index:desc"));
        assert!(Params::parse("v=yes").flag("v").is_err());
    }

    #[test]
    fn unknown_parameters_are_refused() {
        let params = Params::parse("v&bogus=1&pretty");
        assert!(params.check_known("/_cat/health", &["v"]).is_err());
        assert!(params.check_known("/_cat/health", &["v", "bogus"]).is_ok());
    }

    #[test]
    fn time_parameters_need_units() {
        let params = Params::parse("timeout=30&master_timeout=1s");
        assert!(params.millis("timeout", 0).is_err());
        assert_eq!(params.millis("master_timeout", 0).unwrap(), 1_000);
        assert_eq!(params.millis("other", 7).unwrap(), 7);
    }
}
