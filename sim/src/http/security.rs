//! Elasticsearch security's authentication, as a cluster with `xpack.security.enabled` (ES 8's
//! default) answers: every cluster API request needs `Authorization: Basic` of a known user and
//! its password, else 401 `security_exception` with the realms in `WWW-Authenticate`.
//! Authorization is not modelled: a user who authenticates may do everything (a superuser).

use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Serialize;
use serde_json::{Value, json};

use super::json::reply;
use crate::config::Flavor;

/// Who may use the cluster API: users and their passwords (the file or native realm).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Security {
    /// `(username, password)` pairs.
    pub users: Vec<(String, String)>,
}

/// The realms ES announces: ES 8 has the token service and API keys on by default.
fn challenges(flavor: Flavor) -> &'static [&'static str] {
    const BASIC: &str = "Basic realm=\"security\" charset=\"UTF-8\"";
    match flavor {
        Flavor::Es8 => &[BASIC, "Bearer realm=\"security\"", "ApiKey"],
        _ => &[BASIC],
    }
}

/// ES's 401, unless the request carries the credentials of a known user.
pub(crate) fn refusal(security: &Security, flavor: Flavor, parts: &Parts) -> Option<Response> {
    let uri = parts.uri.path_and_query().map_or_else(
        || parts.uri.path().to_owned(),
        |uri| uri.as_str().to_owned(),
    );
    let reason = match basic_credentials(parts) {
        None => format!("missing authentication credentials for REST request [{uri}]"),
        Some((user, password)) => {
            if security
                .users
                .iter()
                .any(|(u, p)| *u == user && *p == password)
            {
                return None;
            }
            format!("unable to authenticate user [{user}] for REST request [{uri}]")
        }
    };
    Some(unauthenticated(flavor, &reason))
}

/// The user and password of `Authorization: Basic`; `None` for no header or another scheme
/// (ES then finds no token to authenticate with).
fn basic_credentials(parts: &Parts) -> Option<(String, String)> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let encoded = value.strip_prefix("Basic ")?;
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    let (user, password) = decoded.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

/// ES's 401: the challenges as headers and, in the body, under `header` (a string for one, a
/// list for several, as `ElasticsearchException` renders its headers).
fn unauthenticated(flavor: Flavor, reason: &str) -> Response {
    let challenges = challenges(flavor);
    let listed = match challenges {
        [one] => json!(one),
        many => json!(many),
    };
    let cause = Cause {
        kind: "security_exception",
        reason,
        header: Header {
            www_authenticate: listed,
        },
    };
    let body = Body {
        error: Error {
            root_cause: [&cause],
            cause: &cause,
        },
        status: 401,
    };
    let mut response = reply(StatusCode::UNAUTHORIZED, &body, false);
    for challenge in challenges {
        response.headers_mut().append(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(challenge),
        );
    }
    response
}

#[derive(Serialize)]
struct Body<'a> {
    error: Error<'a>,
    status: u16,
}

#[derive(Serialize)]
struct Error<'a> {
    root_cause: [&'a Cause<'a>; 1],
    #[serde(flatten)]
    cause: &'a Cause<'a>,
}

#[derive(Serialize)]
struct Cause<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    reason: &'a str,
    header: Header,
}

#[derive(Serialize)]
struct Header {
    #[serde(rename = "WWW-Authenticate")]
    www_authenticate: Value,
}
