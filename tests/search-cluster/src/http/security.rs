//! Elasticsearch security's authentication, as a cluster with `xpack.security.enabled` (ES 8's
//! default) answers: every cluster API request needs `Authorization: Basic` of a known user and
//! its password, or `Authorization: ApiKey` of a known API key, else 401 `security_exception`
//! with the realms in `WWW-Authenticate`. What an authenticated principal may do is
//! `authorization`'s; the metadata ES adds about failed API keys is not modelled.

use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

pub use super::authorization::Role;
use super::errors::{ApiError, Exception};
use crate::config::Flavor;

/// Who may use the cluster API: users and their passwords (the file or native realm), and API
/// keys.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Security {
    /// `(username, password)` pairs.
    pub users: Vec<(String, String)>,
    /// `(id, api_key)` pairs, as the create-API-key answer gives them; a client sends
    /// `ApiKey base64(id:api_key)` (the answer's `encoded`).
    pub api_keys: Vec<(String, String)>,
    /// `(username or API key id, role)`: what that principal may do. A principal without one
    /// may do everything.
    pub roles: Vec<(String, Role)>,
}

impl Security {
    /// The role of `principal`; `None` for a superuser.
    pub(crate) fn role_of(&self, principal: &Principal) -> Option<&Role> {
        self.roles
            .iter()
            .find(|(name, _)| name == principal.name())
            .map(|(_, role)| role)
    }
}

/// Who a request authenticated as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Principal {
    User(String),
    ApiKey(String),
}

impl Principal {
    /// The user name or API key id.
    fn name(&self) -> &str {
        match self {
            Self::User(name) | Self::ApiKey(name) => name,
        }
    }

    /// The user the has-privileges API reports (an API key's owner; the simulator keeps none,
    /// so the key's id stands for it).
    pub(crate) fn user(&self) -> &str {
        self.name()
    }
}

/// As ES's refusals name a principal.
impl std::fmt::Display for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::User(name) => write!(f, "user [{name}]"),
            Self::ApiKey(id) => write!(f, "API key id [{id}] of user [{id}]"),
        }
    }
}

impl std::fmt::Debug for Security {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Who, never their secrets.
        let names = |list: &[(String, String)]| -> Vec<String> {
            list.iter().map(|(name, _)| name.clone()).collect()
        };
        f.debug_struct("Security")
            .field("users", &names(&self.users))
            .field("api_keys", &names(&self.api_keys))
            .finish()
    }
}

/// The realms ES announces: ES 8 has the token service and API keys on by default.
fn challenges(flavor: Flavor) -> &'static [&'static str] {
    const BASIC: &str = "Basic realm=\"security\" charset=\"UTF-8\"";
    match flavor {
        Flavor::Es8 => &[BASIC, "Bearer realm=\"security\"", "ApiKey"],
        _ => &[BASIC],
    }
}

/// Who the request's credentials name, or ES's 401 when they name nobody known.
pub(crate) fn authenticate(
    security: &Security,
    flavor: Flavor,
    parts: &Parts,
    pretty: bool,
) -> Result<Principal, Box<Response>> {
    let uri = parts.uri.path_and_query().map_or_else(
        || parts.uri.path().to_owned(),
        |uri| uri.as_str().to_owned(),
    );
    let known = |list: &[(String, String)], (name, secret): &(String, String)| {
        list.iter().any(|(n, s)| n == name && s == secret)
    };
    let reason = match presented(parts) {
        None => format!("missing authentication credentials for REST request [{uri}]"),
        Some(Presented::Basic(pair)) if known(&security.users, &pair) => {
            return Ok(Principal::User(pair.0));
        }
        Some(Presented::ApiKey(pair)) if known(&security.api_keys, &pair) => {
            return Ok(Principal::ApiKey(pair.0));
        }
        Some(Presented::Basic((user, _))) => {
            format!("unable to authenticate user [{user}] for REST request [{uri}]")
        }
        Some(Presented::ApiKey(_)) => "unable to authenticate with provided credentials and \
                                       anonymous access is not allowed for this request"
            .to_owned(),
        // ApiKeyService's IllegalArgumentException, wrapped by the failure handler.
        Some(Presented::InvalidApiKey) => {
            let invalid = Exception::new(
                StatusCode::BAD_REQUEST,
                "illegal_argument_exception",
                "invalid ApiKey value",
            );
            return Err(Box::new(unauthenticated(
                flavor,
                refused("error attempting to authenticate request").caused_by(invalid),
                pretty,
            )));
        }
    };
    Err(Box::new(unauthenticated(flavor, refused(&reason), pretty)))
}

fn refused(reason: &str) -> Exception {
    Exception::new(StatusCode::UNAUTHORIZED, "security_exception", reason)
}

/// Credentials of a request, each `base64(name:secret)` on the wire.
enum Presented {
    Basic((String, String)),
    ApiKey((String, String)),
    /// An API key that decodes to no `id:api_key` with an id.
    InvalidApiKey,
}

/// The credentials of `Authorization`; `None` for no header, another scheme or a value that
/// does not decode (ES then finds no token to authenticate with).
fn presented(parts: &Parts) -> Option<Presented> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    let pair = decoded
        .split_once(':')
        .map(|(name, secret)| (name.to_owned(), secret.to_owned()));
    match (scheme, pair) {
        ("Basic", Some(pair)) => Some(Presented::Basic(pair)),
        ("ApiKey", Some(pair)) if !pair.0.is_empty() => Some(Presented::ApiKey(pair)),
        ("ApiKey", _) => Some(Presented::InvalidApiKey),
        _ => None,
    }
}

/// ES's 401: the challenges as headers and, in the body, under `header`.
fn unauthenticated(flavor: Flavor, refused: Exception, pretty: bool) -> Response {
    let challenges = challenges(flavor);
    let refused = refused.with_header("WWW-Authenticate", challenges);
    let mut response = ApiError::from(refused).into_response(pretty);
    for challenge in challenges {
        response.headers_mut().append(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(challenge),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_names_users_and_key_ids_but_no_secret() {
        let security = Security {
            users: vec![("elastic".into(), "changeme".into())],
            api_keys: vec![("opsbot-key".into(), "s3cr3t-api-key".into())],
            roles: Vec::new(),
        };
        let shown = format!("{security:?}");
        assert!(
            shown.contains("elastic") && shown.contains("opsbot-key"),
            "{shown}"
        );
        assert!(
            !shown.contains("changeme") && !shown.contains("s3cr3t"),
            "{shown}"
        );
    }
}
