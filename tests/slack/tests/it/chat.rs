//! chat.* as the bot uses them: posting, editing, ephemeral messages, deletion, mentions.

use opsbot_fake_slack::{Mention, SlackConfig, Visibility};
use serde_json::json;

use crate::harness::{USER, World};

fn button(action_id: &str) -> serde_json::Value {
    json!([{"type": "actions", "elements": [{"type": "button", "action_id": action_id,
        "value": "r-1", "text": {"type": "plain_text", "text": "Approve"}}]}])
}

#[tokio::test]
async fn a_posted_message_is_kept_verbatim_with_its_ts_and_poster() {
    let w = World::start().await;
    let body =
        json!({"channel": w.ops, "text": "&lt;!channel&gt; ok", "blocks": button("approve")});
    let reply = w.call("chat.postMessage", Some(&w.bot()), body).await;
    let ts = reply.str("ts");
    assert_eq!(reply.str("channel"), w.ops);
    let m = &w.fake.messages(&w.ops)[0];
    assert_eq!(
        (m.ts.as_str(), m.text.as_str()),
        (ts.as_str(), "&lt;!channel&gt; ok")
    );
    assert_eq!(m.user, "U0FAKEBOT1");
    assert_eq!(m.blocks, button("approve").as_array().unwrap().clone());
    assert!(w.fake.pings().is_empty(), "escaped mentions do not ping");
}

#[tokio::test]
async fn every_post_error_slack_documents() {
    let w = World::start().await;
    let outside = w.fake.add_channel("general", Visibility::Public, false);
    let bot = w.bot();
    // Each call past the per-channel burst: errors count toward the limit too.
    let post = |body: serde_json::Value| {
        w.fake.advance(std::time::Duration::from_secs(3));
        w.call("chat.postMessage", Some(&bot), body)
    };
    assert_eq!(
        post(json!({"channel": "C404", "text": "x"})).await.error(),
        "channel_not_found"
    );
    assert_eq!(
        post(json!({"text": "x"})).await.error(),
        "channel_not_found"
    );
    assert_eq!(
        post(json!({"channel": outside, "text": "x"})).await.error(),
        "not_in_channel"
    );
    assert_eq!(post(json!({"channel": w.ops})).await.error(), "no_text");
    assert_eq!(
        post(json!({"channel": w.ops, "text": ""})).await.error(),
        "no_text"
    );
    let long = "x".repeat(40_001);
    assert_eq!(
        post(json!({"channel": w.ops, "text": long})).await.error(),
        "msg_too_long"
    );
    post(json!({"channel": w.ops, "text": "x".repeat(40_000)}))
        .await
        .ok();
    let bad = json!([{"type": "section"}]);
    assert_eq!(
        post(json!({"channel": w.ops, "blocks": bad})).await.error(),
        "invalid_blocks"
    );
    let unparsable = json!({"channel": w.ops, "blocks": "[not json"});
    assert_eq!(post(unparsable).await.error(), "invalid_blocks_format");
}

#[tokio::test]
async fn chat_write_public_posts_in_a_public_channel_without_joining() {
    let w = World::start().await;
    let outside = w.fake.add_channel("general", Visibility::Public, false);
    w.fake
        .set_scopes(&w.bot(), &["chat:write", "chat:write.public"]);
    w.post(&outside, "hello").await.ok();
    assert_eq!(w.fake.messages(&outside).len(), 1);
}

#[tokio::test]
async fn an_update_edits_the_bots_message_and_keeps_its_history() {
    let w = World::start().await;
    let ts = w.post(&w.ops, "nodes 1/5").await.str("ts");
    let body = json!({"channel": w.ops, "ts": ts, "text": "nodes 5/5"});
    let reply = w.call("chat.update", Some(&w.bot()), body).await;
    assert_eq!(reply.str("ts"), ts);
    let m = &w.fake.messages(&w.ops)[0];
    assert_eq!(m.text, "nodes 5/5");
    let texts: Vec<&str> = m.history.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(texts, ["nodes 1/5", "nodes 5/5"]);
}

#[tokio::test]
async fn update_refuses_unknown_deleted_and_foreign_messages() {
    let w = World::start().await;
    let bot = w.bot();
    let update = |ts: &str| {
        w.call(
            "chat.update",
            Some(&bot),
            json!({"channel": w.ops, "ts": ts, "text": "y"}),
        )
    };
    assert_eq!(update("1.000001").await.error(), "message_not_found");
    let ts = w.post(&w.ops, "x").await.str("ts");
    let delete = json!({"channel": w.ops, "ts": ts});
    w.call("chat.delete", Some(&bot), delete.clone()).await.ok();
    assert!(w.fake.messages(&w.ops)[0].deleted);
    assert_eq!(update(&ts).await.error(), "message_not_found");
    assert_eq!(
        w.call("chat.delete", Some(&bot), delete).await.error(),
        "message_not_found"
    );
    let theirs = w.fake.post_as_user(&w.ops, USER, "mine");
    assert_eq!(update(&theirs).await.error(), "cant_update_message");
    let delete = json!({"channel": w.ops, "ts": theirs});
    assert_eq!(
        w.call("chat.delete", Some(&bot), delete).await.error(),
        "cant_delete_message"
    );
}

#[tokio::test]
async fn an_edit_window_closes_on_the_fakes_clock() {
    let config = SlackConfig {
        edit_window: Some(std::time::Duration::from_secs(60)),
        ..SlackConfig::default()
    };
    let w = World::with(config).await;
    let ts = w.post(&w.ops, "x").await.str("ts");
    let body = json!({"channel": w.ops, "ts": ts, "text": "y"});
    w.call("chat.update", Some(&w.bot()), body.clone())
        .await
        .ok();
    w.fake.advance(std::time::Duration::from_secs(61));
    assert_eq!(
        w.call("chat.update", Some(&w.bot()), body).await.error(),
        "edit_window_closed"
    );
}

#[tokio::test]
async fn an_ephemeral_message_reaches_only_a_member() {
    let w = World::start().await;
    let body = json!({"channel": w.ops, "user": USER, "text": "only you"});
    let reply = w.call("chat.postEphemeral", Some(&w.bot()), body).await;
    let ts = reply.str("message_ts");
    let seen = w.fake.ephemerals();
    assert_eq!(
        (seen[0].user.as_str(), seen[0].text.as_str()),
        (USER, "only you")
    );
    assert_eq!(seen[0].message_ts, ts);
    assert!(w.fake.messages(&w.ops).is_empty());
    let body = json!({"channel": w.ops, "user": "U0STRANGER", "text": "x"});
    let reply = w.call("chat.postEphemeral", Some(&w.bot()), body).await;
    assert_eq!(reply.error(), "user_not_in_channel");
}

#[tokio::test]
async fn mentions_that_would_ping_are_recorded_with_their_message() {
    let w = World::start().await;
    let ts = w
        .post(
            &w.ops,
            "<!here> <@U0ALICE001> <!subteam^S0OPS|@ops> &lt;!everyone&gt;",
        )
        .await
        .str("ts");
    let mentions: Vec<Mention> = w.fake.pings().into_iter().map(|p| p.mention).collect();
    assert_eq!(
        mentions,
        [
            Mention::Here,
            Mention::User(USER.into()),
            Mention::Subteam("S0OPS".into())
        ]
    );
    assert!(w.fake.pings().iter().all(|p| p.ts == ts && !p.edit));
    let body = json!({"channel": w.ops, "ts": ts, "text": "<!channel>"});
    w.call("chat.update", Some(&w.bot()), body).await.ok();
    let last = w.fake.pings().pop().unwrap();
    assert_eq!((last.mention, last.edit), (Mention::Channel, true));
}

#[tokio::test]
async fn link_names_turns_bare_at_channel_into_a_ping() {
    let w = World::start().await;
    let body = json!({"channel": w.ops, "text": "@channel restart", "link_names": true});
    w.call("chat.postMessage", Some(&w.bot()), body).await.ok();
    assert_eq!(w.fake.pings()[0].mention, Mention::Channel);
    w.post(&w.ops, "@everyone restart").await.ok();
    assert_eq!(
        w.fake.pings().len(),
        1,
        "without link_names it is plain text"
    );
}

#[tokio::test]
async fn metadata_is_kept_with_the_message_and_echoed() {
    let w = World::start().await;
    let metadata = json!({"event_type": "run_started", "event_payload": {"run": "r-7", "n": 3}});
    let body = json!({"channel": w.ops, "text": "r-7 running", "metadata": metadata});
    let reply = w.call("chat.postMessage", Some(&w.bot()), body).await;
    assert_eq!(reply.ok()["message"]["metadata"], metadata);
    assert!(reply.body.get("warning").is_none());
    let ts = reply.str("ts");
    assert_eq!(w.fake.messages(&w.ops)[0].metadata, Some(metadata.clone()));

    // An update without metadata keeps it; one with metadata replaces it.
    let body = json!({"channel": w.ops, "ts": ts, "text": "r-7 halfway"});
    let reply = w.call("chat.update", Some(&w.bot()), body).await;
    assert_eq!(reply.ok()["message"]["metadata"], metadata);
    assert_eq!(w.fake.messages(&w.ops)[0].metadata, Some(metadata));
    let done = json!({"event_type": "run_finished", "event_payload": {"run": "r-7"}});
    let body = json!({"channel": w.ops, "ts": ts, "text": "r-7 done", "metadata": done});
    w.call("chat.update", Some(&w.bot()), body).await.ok();
    let m = &w.fake.messages(&w.ops)[0];
    assert_eq!(
        (m.text.as_str(), m.metadata.as_ref()),
        ("r-7 done", Some(&done))
    );
}

#[tokio::test]
async fn a_form_body_sends_metadata_as_json_text() {
    let w = World::start().await;
    let body = format!(
        "token={}&channel={}&text=x&metadata=%7B%22event_type%22%3A%22run_started%22%2C%22event_payload%22%3A%7B%22run%22%3A%22r-1%22%7D%7D",
        w.bot(),
        w.ops
    );
    w.form("chat.postMessage", &body).await.ok();
    let expected = json!({"event_type": "run_started", "event_payload": {"run": "r-1"}});
    assert_eq!(w.fake.messages(&w.ops)[0].metadata, Some(expected));
}

#[tokio::test]
async fn metadata_that_is_no_object_is_refused_and_nothing_posted() {
    let w = World::start().await;
    for bad in [
        json!("{not json"),
        json!([1, 2]),
        json!("\"run_started\""),
        json!(7),
    ] {
        let body = json!({"channel": w.ops, "text": "x", "metadata": bad});
        let reply = w.call("chat.postMessage", Some(&w.bot()), body).await;
        assert_eq!(reply.error(), "invalid_metadata_format", "{bad}");
        w.fake.advance(std::time::Duration::from_secs(3));
    }
    assert!(w.fake.messages(&w.ops).is_empty());
    let ts = w.post(&w.ops, "x").await.str("ts");
    let body = json!({"channel": w.ops, "ts": ts, "text": "y", "metadata": "nope"});
    let reply = w.call("chat.update", Some(&w.bot()), body).await;
    assert_eq!(reply.error(), "invalid_metadata_format");
    assert_eq!(w.fake.messages(&w.ops)[0].text, "x", "not updated");
}

#[tokio::test]
async fn metadata_of_the_wrong_shape_is_dropped_with_a_warning() {
    let w = World::start().await;
    let wrong = [
        json!({"event_type": "run.started", "event_payload": {}}),
        json!({"event_type": "x".repeat(256), "event_payload": {}}),
        json!({"event_payload": {"run": "r-1"}}),
        json!({"event_type": "run_started", "event_payload": "r-1"}),
    ];
    for metadata in wrong {
        let body = json!({"channel": w.ops, "text": "posted anyway", "metadata": metadata});
        let reply = w.call("chat.postMessage", Some(&w.bot()), body).await;
        assert_eq!(
            reply.ok()["warning"],
            "invalid_metadata_schema",
            "{metadata}"
        );
        let warnings = &reply.body["response_metadata"]["warnings"];
        assert_eq!(warnings, &json!(["invalid_metadata_schema"]));
        assert!(reply.body["message"].get("metadata").is_none());
        w.fake.advance(std::time::Duration::from_secs(3));
    }
    let messages = w.fake.messages(&w.ops);
    assert_eq!(messages.len(), 4);
    assert!(messages.iter().all(|m| m.metadata.is_none()));

    // Hyphens are allowed ("letters, numbers, underscores, and hyphens").
    let good = json!({"event_type": "procurement-task", "event_payload": {"id": "1"}});
    let body = json!({"channel": w.ops, "text": "x", "metadata": good});
    let ts = w
        .call("chat.postMessage", Some(&w.bot()), body)
        .await
        .str("ts");
    // An update whose metadata Slack ignores keeps the message's.
    let wrong = json!({"event_type": "a b", "event_payload": {}});
    let body = json!({"channel": w.ops, "ts": ts, "text": "y", "metadata": wrong});
    let reply = w.call("chat.update", Some(&w.bot()), body).await;
    assert_eq!(reply.ok()["warning"], "invalid_metadata_schema");
    assert_eq!(w.fake.messages(&w.ops)[4].metadata, Some(good));
}

#[tokio::test]
async fn a_button_click_carries_the_messages_metadata() {
    let w = World::start().await;
    let (mut socket, _) = w.connect().await;
    let metadata = json!({"event_type": "approval_requested", "event_payload": {"id": "r-1"}});
    let body = json!({"channel": w.ops, "text": "approve?", "blocks": button("approve"),
        "metadata": metadata});
    let ts = w
        .call("chat.postMessage", Some(&w.bot()), body)
        .await
        .str("ts");
    let click = opsbot_fake_slack::BlockAction {
        user_id: USER.into(),
        channel_id: w.ops.clone(),
        message_ts: ts,
        action_id: "approve".into(),
    };
    w.fake.block_action(&click).unwrap();
    let frame = socket.next_json().await;
    assert_eq!(frame["payload"]["message"]["metadata"], metadata);
}
