//! Rate limits on the fake's clock: 429 with `Retry-After`, per method, token and channel.

use std::time::Duration;

use opsbot_fake_slack::{Failure, Visibility, WebMethod};
use serde_json::{Value, json};

use crate::harness::World;

#[tokio::test]
async fn post_message_allows_a_short_burst_per_channel_then_429s() {
    let w = World::start().await;
    for i in 0..3 {
        w.post(&w.ops, &format!("{i}")).await.ok();
    }
    let refused = w.post(&w.ops, "3").await;
    assert_eq!(refused.status, 429);
    assert_eq!(refused.retry_after.as_deref(), Some("3"));
    assert_eq!(refused.body["error"], "ratelimited");
    let other = w.fake.add_channel("alerts", Visibility::Public, true);
    w.post(&other, "elsewhere").await.ok();
    w.fake.advance(Duration::from_secs(3));
    w.post(&w.ops, "3").await.ok();
    assert_eq!(w.fake.messages(&w.ops).len(), 4);
    assert_eq!(w.fake.rate_limited(), 1);
}

#[tokio::test]
async fn chat_update_is_tier_3_fifty_a_minute() {
    let w = World::start().await;
    let ts = w.post(&w.ops, "x").await.str("ts");
    let body = json!({"channel": w.ops, "ts": ts, "text": "y"});
    for _ in 0..50 {
        w.call("chat.update", Some(&w.bot()), body.clone())
            .await
            .ok();
        w.fake.advance(Duration::from_millis(100));
    }
    let refused = w.call("chat.update", Some(&w.bot()), body.clone()).await;
    assert_eq!(refused.status, 429);
    assert_eq!(refused.retry_after.as_deref(), Some("55"));
    w.fake.reset_rate_limits();
    w.call("chat.update", Some(&w.bot()), body).await.ok();
}

#[tokio::test]
async fn apps_connections_open_is_tier_1_one_a_minute() {
    let w = World::start().await;
    w.call("apps.connections.open", Some(&w.app()), Value::Null)
        .await
        .ok();
    let refused = w
        .call("apps.connections.open", Some(&w.app()), Value::Null)
        .await;
    assert_eq!(
        (refused.status, refused.retry_after.as_deref()),
        (429, Some("60"))
    );
    w.fake.advance(Duration::from_secs(60));
    w.call("apps.connections.open", Some(&w.app()), Value::Null)
        .await
        .ok();
}

#[tokio::test]
async fn auth_test_is_tier_4_a_hundred_a_minute() {
    let w = World::start().await;
    for _ in 0..100 {
        w.call("auth.test", Some(&w.bot()), Value::Null).await.ok();
    }
    assert_eq!(
        w.call("auth.test", Some(&w.bot()), Value::Null)
            .await
            .status,
        429
    );
}

#[tokio::test]
async fn a_queued_429_carries_the_retry_after_asked_for() {
    let w = World::start().await;
    let failure = Failure::RateLimited {
        retry_after_secs: 30,
    };
    w.fake.fail_next(WebMethod::ConversationsInfo, 1, failure);
    let body = json!({"channel": w.ops});
    let refused = w
        .call("conversations.info", Some(&w.bot()), body.clone())
        .await;
    assert_eq!(
        (refused.status, refused.retry_after.as_deref()),
        (429, Some("30"))
    );
    w.call("conversations.info", Some(&w.bot()), body)
        .await
        .ok();
}

#[tokio::test]
async fn conversations_history_is_tier_3_fifty_a_minute() {
    let w = World::start().await;
    w.grant_history();
    let body = json!({"channel": w.ops});
    for _ in 0..50 {
        w.history(body.clone()).await.ok();
    }
    let refused = w.history(body.clone()).await;
    assert_eq!(
        (refused.status, refused.retry_after.as_deref()),
        (429, Some("60"))
    );
    assert_eq!(refused.body["error"], "ratelimited");
    w.fake.advance(Duration::from_secs(60));
    w.history(body).await.ok();
}
