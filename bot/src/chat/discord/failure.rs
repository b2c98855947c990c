//! Discord's answers sorted by what the bot may do next, in one place. The JSON error codes are
//! Discord's (`topics/opcodes-and-status-codes.mdx`); 401, 403 and 429 count towards the limit
//! of 10,000 invalid requests in 10 minutes after which Discord bans the bot's IP.

use serenity::http::HttpError;

/// What a failed Discord request means for the bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Failure {
    /// 10008 Unknown Message, 10003 Unknown Channel: what the request was about is gone.
    Gone,
    /// 401: Discord refused the bot token. Every request would be refused the same way, so
    /// nothing more is sent until the token is fixed.
    TokenRefused,
    /// Any 403 (50013 Missing Permissions, 50001 Missing Access, or another code): the bot may
    /// not do this there, and asking again only adds to Discord's count.
    Forbidden,
    /// Any other 4xx: the same request will be refused again.
    Refused,
    /// 429 that serenity gave up on, 5xx, a timeout or the network: it may pass.
    Transient,
}

pub(super) const UNKNOWN_CHANNEL: isize = 10003;
pub(super) const UNKNOWN_GUILD: isize = 10004;
const UNKNOWN_MESSAGE: isize = 10008;
pub(super) const MISSING_ACCESS: isize = 50001;
const MISSING_PERMISSIONS: isize = 50013;

pub(super) fn classify(error: &serenity::Error) -> Failure {
    match error {
        serenity::Error::Http(HttpError::UnsuccessfulRequest(response)) => {
            answer(response.status_code.as_u16(), response.error.code)
        }
        _ => Failure::Transient,
    }
}

/// An HTTP status and Discord's JSON error code, sorted.
fn answer(status: u16, code: isize) -> Failure {
    match (status, code) {
        (_, UNKNOWN_CHANNEL | UNKNOWN_MESSAGE) => Failure::Gone,
        (401, _) => Failure::TokenRefused,
        (403, _) | (_, MISSING_ACCESS | MISSING_PERMISSIONS) => Failure::Forbidden,
        (429, _) => Failure::Transient,
        (400..=499, _) => Failure::Refused,
        _ => Failure::Transient,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discord_answers_are_sorted_by_what_the_bot_may_do_next() {
        let cases = [
            (404, 10008, Failure::Gone),
            (404, 10003, Failure::Gone),
            (403, 50013, Failure::Forbidden),
            (403, 50001, Failure::Forbidden),
            (403, 20001, Failure::Forbidden),
            (403, 0, Failure::Forbidden),
            (401, 0, Failure::TokenRefused),
            (400, 50035, Failure::Refused),
            (404, 0, Failure::Refused),
            (429, 0, Failure::Transient),
            (502, 0, Failure::Transient),
            (503, 0, Failure::Transient),
        ];
        for (status, code, want) in cases {
            assert_eq!(answer(status, code), want, "{status} {code}");
        }
    }

    /// A request timed out as serenity reports it: reqwest's own error, from a server that
    /// takes the connection and never answers.
    #[tokio::test]
    async fn a_request_that_times_out_may_pass() {
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_millis(50))
            .build()
            .unwrap();
        let url = format!("http://{}/", silent.local_addr().unwrap());
        let timed_out = client.get(url).send().await.unwrap_err();
        assert!(timed_out.is_timeout(), "{timed_out:?}");
        let error = serenity::Error::Http(HttpError::Request(timed_out));
        assert_eq!(classify(&error), Failure::Transient);
    }
}
