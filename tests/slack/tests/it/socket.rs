//! Socket Mode: tickets, hello, envelopes and acks, redelivery, disconnects.

use std::time::Duration;

use futures::SinkExt;
use opsbot_fake_slack::{BlockAction, DisconnectReason, EnvelopeKind, SlackConfig, SlashCommand};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

use crate::harness::{T, USER, World, open};

fn restart(w: &World) -> SlashCommand {
    SlashCommand {
        user_id: USER.into(),
        channel_id: w.ops.clone(),
        command: "/cluster".into(),
        text: "restart cluster:logs".into(),
    }
}

#[tokio::test]
async fn a_connection_is_greeted_with_hello() {
    let w = World::start().await;
    let (_socket, hello) = w.connect().await;
    assert_eq!(hello["type"], "hello");
    assert_eq!(hello["num_connections"], 1);
    assert_eq!(hello["connection_info"]["app_id"], "A0FAKE0001");
    assert!(
        hello["debug_info"]["approximate_connection_time"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert_eq!(w.fake.open_sockets(), 1);
}

#[tokio::test]
async fn a_ticket_works_once_and_a_made_up_one_never() {
    let w = World::start().await;
    let url = w.socket_url().await;
    let _first = open(&url).await.unwrap();
    assert!(open(&url).await.is_err(), "a spent ticket is refused");
    let forged = url.split("ticket=").next().unwrap().to_owned() + "ticket=forged";
    assert!(open(&forged).await.is_err());
    assert_eq!(w.fake.refused_handshakes(), 2);
}

#[tokio::test]
async fn a_slash_command_arrives_as_slack_sends_it_and_its_ack_is_recorded() {
    let w = World::start().await;
    let (mut socket, _) = w.connect().await;
    let id = w.fake.slash_command(&restart(&w)).unwrap();
    let envelope = socket.next_json().await;
    assert_eq!(envelope["envelope_id"], id.as_str());
    assert_eq!(envelope["type"], "slash_commands");
    assert_eq!(envelope["accepts_response_payload"], true);
    let p = &envelope["payload"];
    assert_eq!(
        (p["command"].as_str(), p["text"].as_str()),
        (Some("/cluster"), Some("restart cluster:logs"))
    );
    assert_eq!(
        (p["user_id"].as_str(), p["channel_id"].as_str()),
        (Some(USER), Some(w.ops.as_str()))
    );
    assert!(
        p["response_url"].is_string() && p["trigger_id"].is_string() && p["team_id"].is_string()
    );
    socket
        .send(json!({"envelope_id": id, "payload": {"text": "planned"}}))
        .await;
    let ack = w.fake.wait_ack(&id, T).await.unwrap();
    assert_eq!(ack.payload, Some(json!({"text": "planned"})));
    assert!(!ack.late);
}

#[tokio::test]
async fn a_button_click_arrives_as_block_actions_for_a_real_button_only() {
    let w = World::start().await;
    let (mut socket, _) = w.connect().await;
    let blocks = json!([{"type": "actions", "block_id": "run", "elements": [{"type": "button",
        "action_id": "approve", "value": "r-42", "text": {"type": "plain_text", "text": "Approve"}}]}]);
    let body = json!({"channel": w.ops, "text": "approve?", "blocks": blocks});
    let ts = w
        .call("chat.postMessage", Some(&w.bot()), body)
        .await
        .str("ts");
    let click = |action_id: &str| BlockAction {
        user_id: USER.into(),
        channel_id: w.ops.clone(),
        message_ts: ts.clone(),
        action_id: action_id.into(),
    };
    assert!(w.fake.block_action(&click("reject")).is_err());
    let id = w.fake.block_action(&click("approve")).unwrap();
    let envelope = socket.next_json().await;
    assert_eq!(envelope["type"], "interactive");
    let p = &envelope["payload"];
    assert_eq!(p["type"], "block_actions");
    assert_eq!(
        (p["user"]["id"].as_str(), p["channel"]["id"].as_str()),
        (Some(USER), Some(w.ops.as_str()))
    );
    assert_eq!(p["message"]["ts"], ts.as_str());
    assert_eq!(p["actions"][0]["action_id"], "approve");
    assert_eq!(p["actions"][0]["value"], "r-42");
    assert_eq!(p["actions"][0]["block_id"], "run");
    socket.send(json!({"envelope_id": id})).await;
    assert_eq!(w.fake.wait_ack(&id, T).await.unwrap().payload, None);
}

#[tokio::test]
async fn an_ack_after_three_seconds_is_late_and_a_command_is_not_redelivered() {
    let w = World::start().await;
    let (mut socket, _) = w.connect().await;
    let id = w.fake.slash_command(&restart(&w)).unwrap();
    socket.next_json().await;
    w.fake.advance(Duration::from_secs(3));
    socket.send(json!({"envelope_id": id})).await;
    let ack = w.fake.wait_ack(&id, T).await.unwrap();
    assert!(ack.late && ack.after >= Duration::from_secs(3));
    let envelopes = w.fake.envelopes();
    assert_eq!(envelopes.len(), 1);
    assert!(envelopes[0].timed_out);
}

#[tokio::test]
async fn an_unacked_event_is_redelivered_with_retry_fields_on_slacks_schedule() {
    let w = World::start().await;
    let (mut socket, _) = w.connect().await;
    let first = w
        .fake
        .event(json!({"type": "app_mention", "text": "<@U0FAKEBOT1> hi"}))
        .unwrap();
    let envelope = socket.next_json().await;
    assert_eq!(
        (
            envelope["type"].as_str(),
            envelope["retry_attempt"].as_u64()
        ),
        (Some("events_api"), Some(0))
    );
    w.fake.advance(Duration::from_secs(3));
    let retry = socket.next_json().await;
    assert_ne!(retry["envelope_id"], first.as_str());
    assert_eq!(
        (
            retry["retry_attempt"].as_u64(),
            retry["retry_reason"].as_str()
        ),
        (Some(1), Some("timeout"))
    );
    assert_eq!(
        retry["payload"]["event_id"],
        envelope["payload"]["event_id"]
    );
    w.fake.advance(Duration::from_secs(3));
    w.fake.advance(Duration::from_secs(59));
    assert_eq!(
        w.fake.envelopes().len(),
        2,
        "the second retry waits a minute"
    );
    w.fake.advance(Duration::from_secs(1));
    let second = socket.next_json().await;
    assert_eq!(second["retry_attempt"], 2);
    socket
        .send(json!({"envelope_id": second["envelope_id"]}))
        .await;
    let id = second["envelope_id"].as_str().unwrap();
    assert!(!w.fake.wait_ack(id, T).await.unwrap().late);
    let kinds: Vec<EnvelopeKind> = w.fake.envelopes().iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [EnvelopeKind::EventsApi; 3]);
}

#[tokio::test]
async fn a_mention_is_an_app_mention_event_for_a_subscribed_member_app_only() {
    let w = World::start().await;
    let (mut socket, _) = w.connect().await;
    let text = "<@U0FAKEBOT1> cluster status";
    let refused = w.fake.mention(&w.ops, USER, text).unwrap_err();
    assert!(refused.contains("app_mentions:read"), "{refused}");
    let mut scopes: Vec<String> = w.fake.config().bot_scopes.clone();
    scopes.push("app_mentions:read".into());
    let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
    w.fake.set_scopes(&w.bot(), &scopes);
    let (id, ts) = w.fake.mention(&w.ops, USER, text).unwrap();
    let envelope = socket.next_json().await;
    assert_eq!(envelope["envelope_id"], id.as_str());
    let event = &envelope["payload"]["event"];
    assert_eq!(
        (
            event["type"].as_str(),
            event["user"].as_str(),
            event["channel"].as_str()
        ),
        (Some("app_mention"), Some(USER), Some(w.ops.as_str()))
    );
    assert_eq!(
        (event["text"].as_str(), event["ts"].as_str()),
        (Some(text), Some(ts.as_str()))
    );
    assert!(
        w.fake
            .messages(&w.ops)
            .iter()
            .any(|m| m.ts == ts && m.text == text)
    );
    w.fake.remove_member(&w.ops, &w.fake.config().bot_user_id);
    let outside = w.fake.mention(&w.ops, USER, text).unwrap_err();
    assert!(outside.contains("not in"), "{outside}");
}

#[tokio::test]
async fn a_lost_ack_is_not_seen_and_the_event_comes_again() {
    let w = World::start().await;
    let (mut socket, _) = w.connect().await;
    let first = w
        .fake
        .event(json!({"type": "app_mention", "text": "hi"}))
        .unwrap();
    socket.next_json().await;
    w.fake.lose_acks(1);
    socket.send(json!({"envelope_id": first})).await;
    w.fake.wait_lost_acks(1, T).await.unwrap();
    w.fake.advance(Duration::from_secs(3));
    let retry = socket.next_json().await;
    assert_eq!(retry["retry_attempt"], 1);
    assert!(w.fake.envelopes()[0].ack.is_none() && w.fake.envelopes()[0].timed_out);
    socket
        .send(json!({"envelope_id": retry["envelope_id"]}))
        .await;
    let id = retry["envelope_id"].as_str().unwrap();
    assert!(
        !w.fake.wait_ack(id, T).await.unwrap().late,
        "the next ack is not lost"
    );
}

#[tokio::test]
async fn an_envelope_with_no_connection_is_a_dispatch_failure() {
    let w = World::start().await;
    let err = w.fake.slash_command(&restart(&w)).unwrap_err();
    assert!(err.contains("dispatch_failed"), "{err}");
}

#[tokio::test]
async fn acks_for_unknown_envelopes_and_twice_are_violations() {
    let w = World::start().await;
    let (mut socket, _) = w.connect().await;
    let id = w.fake.slash_command(&restart(&w)).unwrap();
    socket.next_json().await;
    socket.send(json!({"envelope_id": "nope"})).await;
    socket.send(json!({"envelope_id": id})).await;
    socket.send(json!({"envelope_id": id})).await;
    w.fake.wait_ack(&id, T).await.unwrap();
    let v = w.fake.violations();
    assert!(
        v.iter().any(|v| v.contains("unknown envelope nope")),
        "{v:?}"
    );
    tokio::time::timeout(T, async {
        while !w.fake.violations().iter().any(|v| v.contains("second ack")) {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn refresh_requested_sends_disconnect_then_closes() {
    let w = World::start().await;
    let (mut socket, _) = w.connect().await;
    w.fake.disconnect(DisconnectReason::Warning);
    assert_eq!(socket.next_json().await["reason"], "warning");
    w.fake.disconnect(DisconnectReason::RefreshRequested);
    let frame = socket.next_json().await;
    assert_eq!(
        (frame["type"].as_str(), frame["reason"].as_str()),
        (Some("disconnect"), Some("refresh_requested"))
    );
    assert!(matches!(
        socket.next_frame().await,
        Some(Ok(Message::Close(_)))
    ));
    // apps.connections.open is Tier 1: the reconnect waits out the minute.
    w.fake.advance(Duration::from_secs(60));
    let (_again, hello) = w.connect().await;
    assert_eq!(hello["type"], "hello");
    w.fake.wait_hellos(2, T).await.unwrap();
}

#[tokio::test]
async fn link_disabled_is_sent_before_the_close() {
    let w = World::start().await;
    let (mut socket, _) = w.connect().await;
    w.fake.disconnect(DisconnectReason::LinkDisabled);
    assert_eq!(socket.next_json().await["reason"], "link_disabled");
    assert!(matches!(
        socket.next_frame().await,
        Some(Ok(Message::Close(_)))
    ));
}

#[tokio::test]
async fn a_dropped_socket_ends_without_a_close_frame() {
    let w = World::start().await;
    let (mut socket, _) = w.connect().await;
    w.fake.drop_sockets();
    match socket.next_frame().await {
        None | Some(Err(_)) => {}
        Some(Ok(frame)) => panic!("expected the connection to be cut, got {frame:?}"),
    }
}

#[tokio::test]
async fn slack_away_refuses_new_sockets() {
    let w = World::start().await;
    let url = w.socket_url().await;
    w.fake.set_away(true);
    assert!(open(&url).await.is_err());
    w.fake.set_away(false);
    assert!(open(&url).await.is_ok(), "the ticket was never spent");
}

#[tokio::test]
async fn the_server_pings_on_its_heartbeat_and_counts_the_pongs() {
    let w = World::with(SlackConfig {
        heartbeat: Duration::from_millis(1),
        ..SlackConfig::default()
    })
    .await;
    let (mut socket, _) = w.connect().await;
    let frame = socket.next_frame().await.unwrap().unwrap();
    assert!(matches!(frame, Message::Ping(_)), "{frame:?}");
    // tungstenite queues the pong as it reads the ping; a flush sends it.
    socket.0.flush().await.unwrap();
    w.fake.wait_pongs(1, T).await.unwrap();
}

#[tokio::test]
async fn a_heartbeat_asked_for_is_sent_at_once() {
    // The default period (10 s) does not come round within the test.
    let w = World::start().await;
    let (mut socket, _) = w.connect().await;
    w.fake.heartbeat_now();
    let frame = socket.next_frame().await.unwrap().unwrap();
    assert!(matches!(frame, Message::Ping(_)), "{frame:?}");
    socket.0.flush().await.unwrap();
    w.fake.wait_pongs(1, T).await.unwrap();
}

#[tokio::test]
async fn a_response_url_answers_five_times_without_a_token_then_says_used_url() {
    let w = World::start().await;
    let (mut socket, _) = w.connect().await;
    let id = w.fake.slash_command(&restart(&w)).unwrap();
    let envelope = socket.next_json().await;
    let url = envelope["payload"]["response_url"]
        .as_str()
        .unwrap()
        .to_owned();
    let answer = |body: serde_json::Value| {
        let (http, url) = (w.http.clone(), url.clone());
        async move {
            let sent = http.post(url).json(&body).send().await.unwrap();
            (sent.status().as_u16(), sent.text().await.unwrap())
        }
    };
    assert_eq!(
        answer(json!({"text": "only you"})).await,
        (200, "ok".into())
    );
    assert_eq!(
        answer(json!({"text": "everyone <!channel>", "response_type": "in_channel"})).await,
        (200, "ok".into())
    );
    assert_eq!(answer(json!({})).await, (400, "no_text".into()));
    for _ in 0..3 {
        assert_eq!(answer(json!({"text": "again"})).await.0, 200);
    }
    assert_eq!(
        answer(json!({"text": "sixth"})).await,
        (404, "used_url".into())
    );
    let told = w.fake.ephemerals();
    assert_eq!(
        (told[0].user.as_str(), told[0].text.as_str()),
        (USER, "only you")
    );
    let said = w.fake.messages(&w.ops);
    assert_eq!(said.last().unwrap().text, "everyone <!channel>");
    assert_eq!(
        w.fake.pings().len(),
        1,
        "an in-channel answer pings like a message"
    );
    assert_eq!(w.fake.responses(&id).len(), 5);
}
