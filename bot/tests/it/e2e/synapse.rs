//! The real Synapse harness itself (`opsbot_tests::matrix`), against the real server it starts
//! (a failure to start fails these tests, it never skips them): what the bot's Matrix tests
//! will lean on — users, rooms, messages, reactions, redactions, kicks, power levels, rate
//! limits and encryption state — must be what a real homeserver does.

use std::time::{Duration, Instant};

use opsbot_tests::matrix::{MatrixUser, real_synapse};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

/// alice's new room, with bob invited and joined.
async fn room_of_two(name: &str) -> (MatrixUser, MatrixUser, String) {
    let synapse = real_synapse().await;
    let alice = synapse.register("alice").await;
    let bob = synapse.register("bob").await;
    let room = alice.create_room(name, false).await;
    alice.invite(&room, bob.user_id()).await;
    assert_eq!(bob.join(&room).await, room);
    (alice, bob, room)
}

fn event_id(event: &Value) -> &str {
    event["event_id"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_message_and_its_reaction_reach_the_other_side() {
    let (alice, bob, room) = room_of_two("reactions").await;
    assert!(
        alice.user_id().starts_with("@alice-"),
        "{}",
        alice.user_id()
    );
    assert!(
        alice.user_id().ends_with(":localhost"),
        "{}",
        alice.user_id()
    );
    assert_ne!(alice.user_id(), bob.user_id());

    let sent = alice.send_text(&room, "restart logs?").await;
    let seen = bob.wait_for(&room, |e| event_id(e) == sent, WAIT).await;
    assert_eq!(seen["type"], "m.room.message");
    assert_eq!(seen["sender"], alice.user_id());
    assert_eq!(
        seen["content"],
        json!({"msgtype": "m.text", "body": "restart logs?"})
    );

    let reaction = bob.react(&room, &sent, "👍").await;
    let seen = alice
        .wait_for(&room, |e| event_id(e) == reaction, WAIT)
        .await;
    assert_eq!(seen["type"], "m.reaction");
    assert_eq!(seen["sender"], bob.user_id());
    assert_eq!(
        seen["content"]["m.relates_to"],
        json!({"rel_type": "m.annotation", "event_id": sent, "key": "👍"})
    );
}

#[tokio::test]
async fn a_redacted_message_shows_as_redacted() {
    let (alice, bob, room) = room_of_two("redactions").await;
    let sent = alice.send_text(&room, "secret token: hunter2").await;
    let redaction = alice.redact(&room, &sent).await;

    let seen = bob
        .wait_for(&room, |e| event_id(e) == redaction, WAIT)
        .await;
    assert_eq!(seen["type"], "m.room.redaction");
    assert_eq!(seen["redacts"], sent);
    let history = bob.messages(&room, 10).await;
    assert_eq!(
        event_id(&history[0]),
        redaction,
        "newest first: {history:?}"
    );
    let original = history.iter().find(|e| event_id(e) == sent).unwrap();
    assert_eq!(original["content"], json!({}), "{original}");
    assert_eq!(
        original["unsigned"]["redacted_because"]["event_id"], redaction,
        "{original}"
    );
}

#[tokio::test]
async fn a_kicked_user_may_not_speak() {
    let (alice, bob, room) = room_of_two("kicks").await;
    bob.send_text(&room, "still here").await;
    alice.kick(&room, bob.user_id(), "rotation ended").await;

    // bob sees his own leave, with its reason
    let leave = bob
        .wait_for(
            &room,
            |e| {
                e["type"] == "m.room.member"
                    && e["state_key"] == bob.user_id()
                    && e["content"]["membership"] == "leave"
            },
            WAIT,
        )
        .await;
    assert_eq!(leave["content"]["membership"], "leave", "{leave}");
    assert_eq!(leave["content"]["reason"], "rotation ended", "{leave}");
    assert_eq!(leave["sender"], alice.user_id());

    let refused = bob
        .try_send_text(&room, "let me back in")
        .await
        .unwrap_err();
    assert_eq!(refused.status.map(|s| s.as_u16()), Some(403), "{refused}");
    assert_eq!(refused.errcode, "M_FORBIDDEN", "{refused}");
    assert!(!refused.error.is_empty(), "{refused}");
}

#[tokio::test]
async fn power_levels_decide_who_may_speak() {
    let (alice, bob, room) = room_of_two("power").await;
    alice.set_events_default(&room, 50).await;
    let refused = bob.try_send_text(&room, "may I?").await.unwrap_err();
    assert_eq!(refused.errcode, "M_FORBIDDEN", "{refused}");

    alice.set_power_level(&room, bob.user_id(), 50).await;
    let sent = bob.send_text(&room, "now I may").await;
    let seen = alice.wait_for(&room, |e| event_id(e) == sent, WAIT).await;
    assert_eq!(seen["content"]["body"], "now I may");
    let state = alice.state(&room).await;
    let of_type = |t: &str| state.iter().find(|e| e["type"] == t).unwrap();
    let levels = &of_type("m.room.power_levels")["content"];
    assert_eq!(levels["events_default"], 50);
    assert_eq!(levels["users"][bob.user_id()], 50);
    // Synapse's default room version is 12, where the creator's power is above any level and
    // is not listed (a power-levels event that listed it would be refused).
    assert_eq!(of_type("m.room.create")["content"]["room_version"], "12");
    assert_eq!(levels["users"].get(alice.user_id()), None, "{levels}");
}

/// A user of its own with a tight limit (1 event a second, no burst): a second message at once
/// is refused with 429 `M_LIMIT_EXCEEDED` and how long to wait, and the client that waits that
/// long gets it through.
#[tokio::test]
async fn a_tight_rate_limit_answers_429_with_retry_after() {
    let synapse = real_synapse().await;
    let carol = synapse.register("carol").await;
    let room = carol.create_room("rate limits", false).await;
    synapse.override_ratelimit(carol.user_id(), 1, 1).await;

    // (waits out what creating the room counted, if the new limit finds it not yet spent)
    carol.send_text(&room, "one").await;
    let limited = carol.send_text_once(&room, "two").await.unwrap_err();
    assert_eq!(limited.status.map(|s| s.as_u16()), Some(429), "{limited}");
    assert_eq!(limited.errcode, "M_LIMIT_EXCEEDED", "{limited}");
    let retry_after = limited.retry_after_ms.expect("retry_after_ms");
    assert!((1..=1000).contains(&retry_after), "{limited}");

    let began = Instant::now();
    let sent = carol.try_send_text(&room, "two, later").await.unwrap();
    assert!(began.elapsed() >= Duration::from_millis(retry_after / 2));
    let history = carol.messages(&room, 1).await;
    assert_eq!(event_id(&history[0]), sent);
}

#[tokio::test]
async fn an_encrypted_room_is_created_with_megolm() {
    let synapse = real_synapse().await;
    let alice = synapse.register("alice").await;
    let encrypted = alice.create_room("ops-secure", true).await;
    let plain = alice.create_room("ops-plain", false).await;

    let state = alice.state(&encrypted).await;
    let of_type = |t: &str| state.iter().find(|e| e["type"] == t).cloned();
    let encryption = of_type("m.room.encryption").expect("m.room.encryption");
    assert_eq!(encryption["content"]["algorithm"], "m.megolm.v1.aes-sha2");
    assert_eq!(
        of_type("m.room.name").unwrap()["content"]["name"],
        "ops-secure"
    );
    assert_eq!(
        of_type("m.room.join_rules").unwrap()["content"]["join_rule"],
        "invite"
    );

    let plain_state = alice.state(&plain).await;
    assert!(
        !plain_state.iter().any(|e| e["type"] == "m.room.encryption"),
        "{plain_state:?}"
    );
}

/// The password the harness hands out is the user's real one: a bot logging in by password
/// gets a device of its own.
#[tokio::test]
async fn the_password_logs_in() {
    let synapse = real_synapse().await;
    let dave = synapse.register("dave").await;
    let login = json!({"type": "m.login.password", "password": dave.password(),
        "identifier": {"type": "m.id.user", "user": dave.user_id()}});
    let url = format!("{}/_matrix/client/v3/login", synapse.base_url());
    let answer = reqwest::Client::new()
        .post(&url)
        .json(&login)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["user_id"], dave.user_id());
    assert_ne!(body["device_id"], dave.device_id());
    assert_ne!(body["access_token"], dave.access_token());

    let wrong = json!({"type": "m.login.password", "password": "not it",
        "identifier": {"type": "m.id.user", "user": dave.user_id()}});
    let answer = reqwest::Client::new()
        .post(&url)
        .json(&wrong)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 403);
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["errcode"], "M_FORBIDDEN");
}
