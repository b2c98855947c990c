//! keystonemiddleware in front of placement, nova and Glance: no valid token, no service.

use axum::response::Response;

use super::Ctx;
use super::errors::unauthorized;

/// keystonemiddleware's 401 for a request without a token that is issued, unrevoked and
/// unexpired (or, accepting foreign tokens, without any token); `None` lets it through.
pub(super) fn refusal(ctx: &Ctx<'_>) -> Option<Response> {
    let valid = ctx.header("x-auth-token").is_some_and(|secret| {
        if ctx.app.accept_foreign_tokens {
            !secret.trim().is_empty()
        } else {
            ctx.app.tokens().valid(secret).is_some()
        }
    });
    (!valid).then(|| unauthorized(&ctx.identity_url()))
}
