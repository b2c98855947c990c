//! Keystone v3 under `/identity/v3`: the version document, password tokens and the catalog.

use axum::http::{HeaderName, Method, StatusCode, header};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::errors::{keystone, keystone_unauthorized, with_allow};
use super::reply::{json, set};
use super::routing::{Miss, allow, segments, select};
use super::{Ctx, auth};
use crate::directory::{CatalogService, Directory, DomainRef, Named, ProjectRef};
use crate::timestamps;

enum Endpoint {
    Version,
    Tokens,
    Catalog,
}

fn route(path: &str) -> Option<(Endpoint, &'static [Method])> {
    match segments(path).as_slice() {
        [] => Some((Endpoint::Version, &[Method::GET])),
        ["auth", "tokens"] => Some((Endpoint::Tokens, &[Method::POST])),
        ["auth", "catalog"] => Some((Endpoint::Catalog, &[Method::GET])),
        _ => None,
    }
}

pub(super) fn handle(ctx: &Ctx<'_>) -> Response {
    let identity_url = ctx.identity_url();
    let mut response = match select(route(ctx.rest), &ctx.parts.method) {
        Ok(Endpoint::Version) => version(&identity_url),
        Ok(Endpoint::Tokens) => issue(ctx),
        Ok(Endpoint::Catalog) => auth::refusal(ctx).unwrap_or_else(|| {
            json(
                StatusCode::OK,
                &json!({
                    "catalog": ctx.app.directory.catalog(),
                    "links": {"self": format!("{identity_url}/auth/catalog")},
                }),
            )
        }),
        Err(Miss::NotFound) => keystone(
            &identity_url,
            StatusCode::NOT_FOUND,
            "The resource could not be found.",
        ),
        Err(Miss::Method(allowed)) => with_allow(
            keystone(
                &identity_url,
                StatusCode::METHOD_NOT_ALLOWED,
                "The method is not allowed for the requested URL.",
            ),
            &allow(allowed),
        ),
    };
    set(&mut response, header::VARY, "X-Auth-Token");
    response
}

fn version(identity_url: &str) -> Response {
    json(
        StatusCode::OK,
        &json!({"version": {
            "id": "v3.14",
            "status": "stable",
            "updated": "2020-04-07T00:00:00Z",
            "links": [{"rel": "self", "href": format!("{identity_url}/")}],
            "media-types": [{
                "base": "application/json",
                "type": "application/vnd.openstack.identity-v3+json",
            }],
        }}),
    )
}

#[derive(Deserialize)]
struct AuthRequest {
    auth: Auth,
}

#[derive(Deserialize)]
struct Auth {
    identity: Identity,
    scope: Option<Scope>,
}

#[derive(Deserialize)]
struct Identity {
    methods: Vec<String>,
    password: Option<PasswordMethod>,
}

#[derive(Deserialize)]
struct PasswordMethod {
    user: UserSpec,
}

#[derive(Deserialize)]
struct UserSpec {
    name: String,
    domain: Option<DomainSpec>,
    password: String,
}

#[derive(Deserialize)]
struct DomainSpec {
    id: Option<String>,
    name: Option<String>,
}

#[derive(Deserialize)]
struct Scope {
    project: Option<ProjectSpec>,
}

#[derive(Deserialize)]
struct ProjectSpec {
    id: Option<String>,
    name: Option<String>,
    domain: Option<DomainSpec>,
}

impl DomainSpec {
    fn reference(self) -> Option<DomainRef> {
        match (self.id, self.name) {
            (Some(id), _) => Some(DomainRef::Id(id)),
            (None, Some(name)) => Some(DomainRef::Name(name)),
            (None, None) => None,
        }
    }
}

impl ProjectSpec {
    fn reference(self) -> Option<ProjectRef> {
        match (self.id, self.name) {
            (Some(id), _) => Some(ProjectRef::Id(id)),
            (None, Some(name)) => Some(ProjectRef::Name(name, self.domain?.reference()?)),
            (None, None) => None,
        }
    }
}

/// Keystone's `ValidationError` text.
fn expecting(attribute: &str, target: &str) -> String {
    format!(
        "Expecting to find {attribute} in {target}. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error."
    )
}

/// A request Keystone answers with 400 or 401 before issuing anything.
enum Refusal {
    BadRequest(String),
    Unauthorized,
}

/// Checks a v3 password request and finds the account it authenticates as.
fn authenticate(directory: &Directory, body: &[u8]) -> Result<usize, Refusal> {
    let request: AuthRequest = serde_json::from_slice(body)
        .map_err(|error| Refusal::BadRequest(format!("Invalid input for request body: {error}")))?;
    let identity = request.auth.identity;
    if !identity.methods.iter().any(|method| method == "password") {
        return Err(Refusal::Unauthorized);
    }
    let user = identity
        .password
        .ok_or_else(|| Refusal::BadRequest(expecting("password", "identity")))?
        .user;
    let domain = user
        .domain
        .and_then(DomainSpec::reference)
        .ok_or_else(|| Refusal::BadRequest(expecting("domain", "user")))?;
    let project = request
        .auth
        .scope
        .and_then(|scope| scope.project)
        .and_then(ProjectSpec::reference)
        .ok_or_else(|| {
            // Keystone would issue an unscoped token; every simulated service needs a project.
            Refusal::BadRequest(expecting("project", "scope"))
        })?;
    let account = directory
        .authenticate(&user.name, &domain, &user.password)
        .ok_or(Refusal::Unauthorized)?;
    let scoped = directory
        .account(account)
        .is_some_and(|found| Directory::scope_matches(found, &project));
    if scoped {
        Ok(account)
    } else {
        Err(Refusal::Unauthorized)
    }
}

#[derive(Serialize)]
struct TokenBody<'a> {
    token: TokenView<'a>,
}

#[derive(Serialize)]
struct TokenView<'a> {
    methods: [&'static str; 1],
    user: UserView<'a>,
    audit_ids: [&'a str; 1],
    expires_at: String,
    issued_at: String,
    project: ProjectView<'a>,
    is_domain: bool,
    roles: &'a [Named],
    catalog: &'a [CatalogService],
}

#[derive(Serialize)]
struct UserView<'a> {
    domain: &'a Named,
    id: &'a str,
    name: &'a str,
    password_expires_at: Option<String>,
}

#[derive(Serialize)]
struct ProjectView<'a> {
    domain: &'a Named,
    id: &'a str,
    name: &'a str,
}

/// `POST /auth/tokens`: 201 with `X-Subject-Token` and the token with its catalog.
fn issue(ctx: &Ctx<'_>) -> Response {
    let directory = &ctx.app.directory;
    let identity_url = ctx.identity_url();
    let index = match authenticate(directory, ctx.body) {
        Ok(index) => index,
        Err(Refusal::BadRequest(message)) => {
            return keystone(&identity_url, StatusCode::BAD_REQUEST, &message);
        }
        Err(Refusal::Unauthorized) => return keystone_unauthorized(&identity_url),
    };
    let Some(account) = directory.account(index) else {
        return keystone_unauthorized(&identity_url);
    };
    let (secret, token) = ctx.app.tokens().issue();
    let body = TokenBody {
        token: TokenView {
            methods: ["password"],
            user: UserView {
                domain: &account.domain,
                id: &account.user.id,
                name: &account.user.name,
                password_expires_at: None,
            },
            audit_ids: [&token.audit_id],
            expires_at: timestamps::keystone(token.expires_at),
            issued_at: timestamps::keystone(token.issued_at),
            project: ProjectView {
                domain: &account.domain,
                id: &account.project.id,
                name: &account.project.name,
            },
            is_domain: false,
            roles: &account.roles,
            catalog: directory.catalog(),
        },
    };
    let mut response = json(StatusCode::CREATED, &body);
    set(
        &mut response,
        HeaderName::from_static("x-subject-token"),
        &secret,
    );
    response
}
