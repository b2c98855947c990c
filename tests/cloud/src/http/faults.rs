//! What a firing fault rule sends, in the shape of the service it fires in front of.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::errors::{
    explanation, keystone, nova, placement, placement_detail, unauthorized, webob,
};
use super::reply::JSON;
use super::{Api, Ctx};

/// A status fault: the error body the service itself sends for that status (a 401 is
/// Keystone's or keystonemiddleware's, as for a rejected token).
pub(super) fn status(ctx: &Ctx<'_>, api: Api, status: StatusCode) -> Response {
    let identity_url = ctx.identity_url();
    let message = explanation(status);
    match (api, status) {
        (Api::Identity, _) => keystone(&identity_url, status, message),
        (_, StatusCode::UNAUTHORIZED) => unauthorized(&identity_url),
        (Api::Placement, _) => placement(
            status,
            placement_detail(status, ""),
            None,
            ctx.app.placement_max,
        ),
        (Api::Compute, _) => nova(status, message, None),
        (Api::Image, _) => webob(status, message, ctx.header("accept")),
    }
}

/// A 200 `application/json` answer cut short, as a proxy losing its backend mid-body sends.
pub(super) fn malformed(api: Api) -> Response {
    let cut = match api {
        Api::Identity => r#"{"token": {"methods": ["passw"#,
        Api::Placement => r#"{"resource_providers": [{"uuid": "2215"#,
        Api::Compute => r#"{"server": {"id": "9a7d"#,
        Api::Image => r#"{"images": [{"hw_disk_bus": "sc"#,
    };
    (StatusCode::OK, [(header::CONTENT_TYPE, JSON)], cut).into_response()
}

/// A change answered as done and not kept: `204 No Content`, what the cloud's deletions
/// (allocations, compute services) answer once done.
pub(super) fn lost() -> Response {
    StatusCode::NO_CONTENT.into_response()
}
