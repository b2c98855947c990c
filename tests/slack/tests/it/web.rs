//! Tokens, scopes, token kinds and request formats, as every method shares them.

use opsbot_fake_slack::{Failure, TokenStatus, Visibility, WebMethod};
use serde_json::{Value, json};

use crate::harness::World;

#[tokio::test]
async fn auth_test_says_who_the_bot_is() {
    let w = World::start().await;
    let reply = w.call("auth.test", Some(&w.bot()), Value::Null).await;
    let body = reply.ok();
    assert_eq!(body["team_id"], "T0FAKE0001");
    assert_eq!(body["user_id"], "U0FAKEBOT1");
    assert_eq!(body["bot_id"], "B0FAKEBOT1");
    assert!(body["url"].as_str().unwrap().starts_with("https://"));
}

#[tokio::test]
async fn a_missing_token_is_not_authed_and_an_unknown_one_invalid_auth() {
    let w = World::start().await;
    assert_eq!(
        w.call("auth.test", None, Value::Null).await.error(),
        "not_authed"
    );
    let reply = w.call("auth.test", Some("xoxb-nope"), Value::Null).await;
    assert_eq!(reply.error(), "invalid_auth");
}

#[tokio::test]
async fn a_token_in_a_json_body_does_not_count() {
    let w = World::start().await;
    let reply = w.call("auth.test", None, json!({"token": w.bot()})).await;
    assert_eq!(reply.error(), "not_authed");
}

#[tokio::test]
async fn revoked_and_inactive_tokens_say_so_until_restored() {
    let w = World::start().await;
    w.fake.set_token_status(&w.bot(), TokenStatus::Revoked);
    assert_eq!(w.post(&w.ops, "x").await.error(), "token_revoked");
    w.fake.set_token_status(&w.bot(), TokenStatus::Inactive);
    assert_eq!(w.post(&w.ops, "x").await.error(), "account_inactive");
    w.fake.set_token_status(&w.bot(), TokenStatus::Active);
    w.post(&w.ops, "x").await.ok();
}

#[tokio::test]
async fn only_an_app_token_opens_a_connection_and_it_calls_nothing_else() {
    let w = World::start().await;
    let reply = w
        .call("apps.connections.open", Some(&w.bot()), Value::Null)
        .await;
    assert_eq!(reply.error(), "not_allowed_token_type");
    let url = w
        .call("apps.connections.open", Some(&w.app()), Value::Null)
        .await
        .str("url");
    assert!(
        url.starts_with("ws://127.0.0.1:") && url.contains("/socket?ticket="),
        "{url}"
    );
    let body = json!({"channel": w.ops, "text": "x"});
    let reply = w.call("chat.postMessage", Some(&w.app()), body).await;
    assert_eq!(reply.error(), "not_allowed_token_type");
}

#[tokio::test]
async fn a_method_without_its_scope_is_missing_scope_with_needed_and_provided() {
    let w = World::start().await;
    w.fake.set_scopes(&w.bot(), &["channels:read"]);
    let reply = w.post(&w.ops, "x").await;
    assert_eq!(reply.error(), "missing_scope");
    assert_eq!(reply.body["needed"], "chat:write");
    assert_eq!(reply.body["provided"], "channels:read");
    w.fake.set_scopes(&w.app(), &[]);
    let reply = w
        .call("apps.connections.open", Some(&w.app()), Value::Null)
        .await;
    assert_eq!(reply.error(), "missing_scope");
    assert_eq!(reply.body["needed"], "connections:write");
}

#[tokio::test]
async fn conversations_info_needs_the_scope_of_the_channel_kind() {
    let w = World::start().await;
    let private = w.fake.add_channel("secops", Visibility::Private, true);
    w.fake
        .set_scopes(&w.bot(), &["chat:write", "channels:read"]);
    let info = w.info(&w.ops).await;
    assert_eq!(info.ok()["channel"]["is_member"], true);
    assert_eq!(info.ok()["channel"]["is_private"], false);
    let reply = w.info(&private).await;
    assert_eq!(reply.error(), "missing_scope");
    assert_eq!(reply.body["needed"], "groups:read");
    let reply = w.info("C404").await;
    assert_eq!(reply.error(), "channel_not_found");
}

#[tokio::test]
async fn a_private_channel_without_the_bot_does_not_exist_for_it() {
    let w = World::start().await;
    let private = w.fake.add_channel("hr", Visibility::Private, false);
    let reply = w.info(&private).await;
    assert_eq!(reply.error(), "channel_not_found");
    assert_eq!(w.post(&private, "x").await.error(), "channel_not_found");
}

#[tokio::test]
async fn a_form_body_with_its_token_works_like_json() {
    let w = World::start().await;
    let body = format!("token={}&channel={}&text=a+%3C%21here%3E", w.bot(), w.ops);
    let reply = w.form("chat.postMessage", &body).await;
    let ts = reply.str("ts");
    let messages = w.fake.messages(&w.ops);
    assert_eq!(messages[0].ts, ts);
    assert_eq!(messages[0].text, "a <!here>");
}

#[tokio::test]
async fn json_without_charset_is_taken_with_a_warning_and_other_types_are_refused() {
    let w = World::start().await;
    let url = format!("{}auth.test", w.fake.base_url());
    let send = |ct: &'static str, body: &'static str| {
        w.http
            .post(&url)
            .bearer_auth(w.bot())
            .header("content-type", ct)
            .body(body)
            .send()
    };
    let body: Value = send("application/json", "{}")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["ok"], true);
    assert_eq!(body["warning"], "missing_charset");
    let body: Value = send("text/plain", "hi")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["error"], "invalid_post_type");
    let body: Value = send("application/json; charset=utf-8", "{")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["error"], "invalid_json");
}

#[tokio::test]
async fn an_unknown_method_is_a_404_naming_it() {
    let w = World::start().await;
    let reply = w
        .call("chat.postMessages", Some(&w.bot()), Value::Null)
        .await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.body["error"], "unknown_method");
    assert_eq!(reply.body["req_method"], "chat.postMessages");
}

#[tokio::test]
async fn queued_failures_answer_the_next_calls_then_stop() {
    let w = World::start().await;
    let code = Failure::Error("fatal_error".into());
    w.fake.fail_next(WebMethod::ChatPostMessage, 2, code);
    assert_eq!(w.post(&w.ops, "1").await.error(), "fatal_error");
    assert_eq!(w.post(&w.ops, "2").await.error(), "fatal_error");
    w.post(&w.ops, "3").await.ok();
    assert_eq!(w.fake.messages(&w.ops).len(), 1);
    assert_eq!(w.fake.calls(WebMethod::ChatPostMessage).len(), 3);
}

#[tokio::test]
async fn slack_away_cuts_connections_until_it_is_back() {
    let w = World::start().await;
    w.fake.set_away(true);
    let url = format!("{}auth.test", w.fake.base_url());
    assert!(w.http.post(&url).bearer_auth(w.bot()).send().await.is_err());
    w.fake.set_away(false);
    w.call("auth.test", Some(&w.bot()), Value::Null).await.ok();
}
