use opsbot_fake_slack::{Failure, FakeSlack, SlackConfig, Visibility, WebMethod};
use reqwest::header::HeaderValue;
use serde_json::json;

use super::*;

async fn fake() -> FakeSlack {
    FakeSlack::start(SlackConfig::default()).await
}

fn web(fake: &FakeSlack, token: &str) -> Web {
    Web::new(
        reqwest::Client::new(),
        &fake.base_url(),
        SecretString::from(token),
    )
}

fn bot(fake: &FakeSlack) -> Web {
    web(fake, &fake.config().bot_token)
}

#[tokio::test]
async fn an_ok_call_gives_the_whole_body_by_form_or_json() {
    let fake = fake().await;
    let slack = bot(&fake);
    let who = slack.call("auth.test", &json!({})).await.unwrap();
    assert_eq!(who["user_id"], fake.config().bot_user_id.as_str());
    let ops = fake.add_channel("ops", Visibility::Public, true);
    let blocks = json!([{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}]);
    let args = json!({"channel": ops, "text": "hi", "blocks": blocks});
    let posted = slack.call("chat.postMessage", &args).await.unwrap();
    assert!(posted["ts"].is_string());
    assert_eq!(posted.get("warning"), None, "the charset is named");
    let info = json!({"channel": ops});
    let channel = slack.call("conversations.info", &info).await.unwrap();
    assert_eq!(channel["channel"]["id"], ops.as_str());
}

#[tokio::test]
async fn the_token_s_scopes_come_with_an_answer_when_slack_lists_them() {
    let fake = fake().await;
    fake.set_scopes(&fake.config().bot_token, &["commands", "chat:write"]);
    let (_, granted) = bot(&fake)
        .call_with_scopes("auth.test", &json!({}))
        .await
        .unwrap();
    assert_eq!(granted.unwrap(), ["chat:write", "commands"]);
    let listed = |value: Option<&'static str>| {
        let mut headers = HeaderMap::new();
        if let Some(value) = value {
            headers.insert("x-oauth-scopes", HeaderValue::from_static(value));
        }
        scopes(&headers)
    };
    assert_eq!(listed(None), None, "unknown, not none");
    assert_eq!(listed(Some("")), Some(vec![]));
    assert_eq!(listed(Some(" a, b ,")).unwrap(), ["a", "b"]);
}

#[tokio::test]
async fn a_refused_token_is_said_once_and_then_nothing_is_sent() {
    let fake = fake().await;
    let slack = web(&fake, "xoxb-not-a-token");
    let refused = slack.call("auth.test", &json!({})).await.unwrap_err();
    assert_eq!(refused.to_string(), "Slack: auth.test: invalid_auth");
    assert!(refused.refuses_token());
    let never = slack.call("auth.test", &json!({})).await.unwrap_err();
    assert!(matches!(never, WebError::NotSent { .. }), "{never:?}");
    assert!(!format!("{never} {never:?} {slack:?}").contains("xoxb-not"));
}

#[tokio::test]
async fn missing_scope_names_the_scope_needed() {
    let fake = fake().await;
    let ops = fake.add_channel("ops", Visibility::Public, true);
    fake.set_scopes(&fake.config().bot_token, &["channels:read"]);
    let args = json!({"channel": ops, "text": "hi"});
    let error = bot(&fake)
        .call("chat.postMessage", &args)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Slack: chat.postMessage: missing_scope (needs chat:write)"
    );
    assert!(!error.refuses_token());
}

/// On tokio's paused clock, which the fake's clock follows: the wait is skipped, not spent.
#[tokio::test(start_paused = true)]
async fn a_429_holds_its_method_back_until_retry_after_for_every_caller() {
    let fake = fake().await;
    let slack = bot(&fake);
    let failure = Failure::RateLimited {
        retry_after_secs: 30,
    };
    fake.fail_next(WebMethod::AuthTest, 1, failure);
    let asked = Instant::now();
    let limited = slack.call("auth.test", &json!({})).await.unwrap_err();
    let thirty = Duration::from_secs(30);
    assert_eq!(
        limited,
        WebError::RateLimited {
            method: "auth.test",
            retry_after: thirty
        }
    );
    let none = json!({});
    let (first, second) = tokio::join!(
        slack.call("auth.test", &none),
        slack.call("auth.test", &none)
    );
    assert!(first.is_ok() && second.is_ok());
    assert!(
        asked.elapsed() >= thirty,
        "sent after {:?}",
        asked.elapsed()
    );
    assert_eq!(fake.calls(WebMethod::AuthTest).len(), 3);
    let other = Instant::now();
    let ops = fake.add_channel("ops", Visibility::Public, true);
    let args = json!({"channel": ops});
    slack.call("conversations.info", &args).await.unwrap();
    assert!(other.elapsed() < thirty, "another method is not held back");
}

#[test]
fn retry_after_is_whole_seconds_within_reason() {
    let wait = |value: Option<&'static str>| {
        let mut headers = HeaderMap::new();
        if let Some(value) = value {
            headers.insert(RETRY_AFTER, HeaderValue::from_static(value));
        }
        retry_after(&headers)
    };
    assert_eq!(wait(Some("7")), Duration::from_secs(7));
    assert_eq!(wait(None), RETRY_AFTER_DEFAULT);
    assert_eq!(wait(Some("soon")), RETRY_AFTER_DEFAULT);
    assert_eq!(wait(Some("0")), RETRY_AFTER_DEFAULT);
    assert_eq!(wait(Some("86400")), RETRY_AFTER_MAX);
}

#[tokio::test]
async fn slack_out_of_reach_is_said_without_the_token() {
    let fake = fake().await;
    fake.set_away(true);
    let error = bot(&fake).call("auth.test", &json!({})).await.unwrap_err();
    assert!(matches!(error, WebError::Unreachable { .. }), "{error:?}");
    assert!(
        error.to_string().starts_with("Slack: auth.test: "),
        "{error}"
    );
    assert!(!error.to_string().contains("xoxb"), "{error}");
    let closed = Web::new(
        reqwest::Client::new(),
        "http://127.0.0.1:1/api/",
        SecretString::from("xoxb-1"),
    );
    let refused = closed.call("auth.test", &json!({})).await.unwrap_err();
    assert!(
        refused.to_string().contains("connection refused"),
        "{refused}"
    );
}
