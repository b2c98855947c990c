//! conversations.history: newest first, a page at a time, only where the bot is a member, with
//! the scope of the channel's kind, metadata only when asked for.

use opsbot_fake_slack::{Visibility, WebMethod};
use serde_json::{Value, json};

use crate::harness::{USER, World};

/// The `ts` of each message on a page, in the order given.
fn listed(page: &Value) -> Vec<String> {
    let messages = page["messages"].as_array().unwrap();
    messages
        .iter()
        .map(|m| m["ts"].as_str().unwrap().to_owned())
        .collect()
}

/// `n` messages by Alice in `channel`, oldest first.
fn chatter(w: &World, channel: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| w.fake.post_as_user(channel, USER, &format!("line {i}")))
        .collect()
}

#[tokio::test]
async fn history_lists_live_messages_newest_first() {
    let w = World::start().await;
    w.grant_history();
    let first = w.fake.post_as_user(&w.ops, USER, "disk full on db-1");
    let bot = w.post(&w.ops, "restarting db-1").await.str("ts");
    let gone = w.fake.post_as_user(&w.ops, USER, "oops");
    w.fake.delete_message(&w.ops, &gone);
    let last = w.fake.post_as_user(&w.ops, USER, "thanks");

    let reply = w.history(json!({"channel": w.ops})).await;
    let page = reply.ok();
    assert_eq!(listed(page), [last.as_str(), bot.as_str(), first.as_str()]);
    assert_eq!(page["has_more"], false);
    assert_eq!(page["pin_count"], 0);
    assert_eq!(page["response_metadata"]["next_cursor"], "");
    let theirs = &page["messages"][0];
    assert_eq!(
        (&theirs["type"], &theirs["user"], &theirs["text"]),
        (&json!("message"), &json!(USER), &json!("thanks"))
    );
    assert!(theirs.get("bot_id").is_none());
    let ours = &page["messages"][1];
    assert_eq!(ours["user"], "U0FAKEBOT1");
    assert_eq!(ours["bot_id"], "B0FAKEBOT1");
    assert_eq!(ours["text"], "restarting db-1");
    assert!(ours["blocks"].is_array());
    assert_eq!(w.fake.calls(WebMethod::ConversationsHistory).len(), 1);
}

#[tokio::test]
async fn limit_and_cursor_walk_the_whole_history_in_pages() {
    let w = World::start().await;
    w.grant_history();
    let mut posted = chatter(&w, &w.ops, 5);
    posted.reverse();

    let mut seen = Vec::new();
    let mut cursor = String::new();
    let mut pages = 0;
    loop {
        let mut args = json!({"channel": w.ops, "limit": 2});
        if !cursor.is_empty() {
            args["cursor"] = json!(cursor);
        }
        let reply = w.history(args).await;
        let page = reply.ok();
        pages += 1;
        seen.extend(listed(page));
        cursor = page["response_metadata"]["next_cursor"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(page["has_more"], !cursor.is_empty(), "{page}");
        if cursor.is_empty() {
            break;
        }
    }
    assert_eq!(seen, posted);
    assert_eq!(pages, 3);

    // A form body's `limit` is text; the cursor in it works the same.
    let body = format!("token={}&channel={}&limit=4", w.bot(), w.ops);
    let reply = w.form("conversations.history", &body).await;
    assert_eq!(listed(reply.ok()).len(), 4);
    let cursor = reply.body["response_metadata"]["next_cursor"]
        .as_str()
        .unwrap();
    let body = format!("{body}&cursor={}", cursor.replace('=', "%3D"));
    let reply = w.form("conversations.history", &body).await;
    assert_eq!(listed(reply.ok()), [posted[4].as_str()]);
}

#[tokio::test]
async fn limit_defaults_to_a_hundred_and_is_capped_at_999() {
    let w = World::start().await;
    w.grant_history();
    chatter(&w, &w.ops, 1_001);
    let page = w.history(json!({"channel": w.ops})).await;
    assert_eq!(listed(page.ok()).len(), 100);
    assert_eq!(page.body["has_more"], true);
    let zero = w.history(json!({"channel": w.ops, "limit": 0})).await;
    assert_eq!(listed(zero.ok()).len(), 100, "0 is the default");
    let big = w.history(json!({"channel": w.ops, "limit": 5_000})).await;
    assert_eq!(listed(big.ok()).len(), 999);
    assert_eq!(big.body["has_more"], true);
    let text = w.history(json!({"channel": w.ops, "limit": "7"})).await;
    assert_eq!(listed(text.ok()).len(), 7);
    let bad = w.history(json!({"channel": w.ops, "limit": "many"})).await;
    assert_eq!(bad.error(), "invalid_arguments");
}

#[tokio::test]
async fn oldest_and_latest_bound_the_page_inclusive_or_not() {
    let w = World::start().await;
    w.grant_history();
    let ts = chatter(&w, &w.ops, 5);
    let between = |extra: Value| {
        let mut args = json!({"channel": w.ops, "oldest": ts[1], "latest": ts[3]});
        if let (Value::Object(args), Value::Object(extra)) = (&mut args, extra) {
            args.extend(extra);
        }
        w.history(args)
    };
    assert_eq!(listed(between(json!({})).await.ok()), [ts[2].as_str()]);
    let inclusive = between(json!({"inclusive": true})).await;
    assert_eq!(
        listed(inclusive.ok()),
        [ts[3].as_str(), ts[2].as_str(), ts[1].as_str()]
    );
    let form = between(json!({"inclusive": "1"})).await;
    assert_eq!(listed(form.ok()).len(), 3, "\"1\" is true too");

    let after = w.history(json!({"channel": w.ops, "oldest": ts[2]})).await;
    assert_eq!(listed(after.ok()), [ts[4].as_str(), ts[3].as_str()]);
    let before = w.history(json!({"channel": w.ops, "latest": ts[2]})).await;
    assert_eq!(listed(before.ok()), [ts[1].as_str(), ts[0].as_str()]);
    // Whole seconds and a JSON number are timestamps too.
    let all = w.history(json!({"channel": w.ops, "oldest": 0})).await;
    assert_eq!(listed(all.ok()).len(), 5);
    let secs = ts[0].split('.').next().unwrap();
    let from_second = w.history(json!({"channel": w.ops, "oldest": secs})).await;
    assert_eq!(listed(from_second.ok()).len(), 5);

    let bad = w
        .history(json!({"channel": w.ops, "oldest": "yesterday"}))
        .await;
    assert_eq!(bad.error(), "invalid_ts_oldest");
    let bad = w.history(json!({"channel": w.ops, "latest": "-1"})).await;
    assert_eq!(bad.error(), "invalid_ts_latest");
}

#[tokio::test]
async fn a_cursor_slack_did_not_hand_out_is_invalid() {
    let w = World::start().await;
    w.grant_history();
    chatter(&w, &w.ops, 3);
    for cursor in ["nonsense", "dXNlcjpVMDYxTkZUVDI="] {
        let reply = w.history(json!({"channel": w.ops, "cursor": cursor})).await;
        assert_eq!(reply.error(), "invalid_cursor", "{cursor}");
    }
}

#[tokio::test]
async fn each_channel_kind_needs_its_own_history_scope() {
    let w = World::start().await;
    let private = w.fake.add_channel("secops", Visibility::Private, true);
    let reply = w.history(json!({"channel": w.ops})).await;
    assert_eq!(reply.error(), "missing_scope", "not in the default scopes");
    assert_eq!(reply.body["needed"], "channels:history");
    assert_eq!(
        reply.body["provided"],
        "channels:read,chat:write,commands,groups:read"
    );

    w.fake.set_scopes(&w.bot(), &["channels:history"]);
    w.history(json!({"channel": w.ops})).await.ok();
    let reply = w.history(json!({"channel": private})).await;
    assert_eq!(reply.error(), "missing_scope");
    assert_eq!(reply.body["needed"], "groups:history");
    assert_eq!(reply.body["provided"], "channels:history");

    w.fake.set_scopes(&w.bot(), &["groups:history"]);
    w.history(json!({"channel": private})).await.ok();
    let reply = w.history(json!({"channel": w.ops})).await;
    assert_eq!(reply.body["needed"], "channels:history");
}

#[tokio::test]
async fn the_bot_reads_only_channels_it_is_in() {
    let w = World::start().await;
    w.grant_history();
    let general = w.fake.add_channel("general", Visibility::Public, false);
    w.fake.post_as_user(&general, USER, "hello");
    let reply = w.history(json!({"channel": general})).await;
    assert_eq!(reply.error(), "not_in_channel");
    w.fake.add_member(&general, "U0FAKEBOT1");
    assert_eq!(
        listed(w.history(json!({"channel": general})).await.ok()).len(),
        1
    );

    let hr = w.fake.add_channel("hr", Visibility::Private, false);
    let reply = w.history(json!({"channel": hr})).await;
    assert_eq!(reply.error(), "channel_not_found");
    let reply = w.history(json!({"channel": "C404"})).await;
    assert_eq!(reply.error(), "channel_not_found");
    assert_eq!(w.history(json!({})).await.error(), "channel_not_found");
}

#[tokio::test]
async fn metadata_shows_only_with_include_all_metadata() {
    let w = World::start().await;
    w.grant_history();
    let metadata = json!({"event_type": "run_started", "event_payload": {"run": "r-7"}});
    let post = json!({"channel": w.ops, "text": "r-7 running", "metadata": metadata});
    w.call("chat.postMessage", Some(&w.bot()), post).await.ok();
    w.fake.post_as_user(&w.ops, USER, "no metadata here");

    let plain = w.history(json!({"channel": w.ops})).await;
    let messages = plain.ok()["messages"].as_array().unwrap();
    assert!(messages.iter().all(|m| m.get("metadata").is_none()));

    let full = w
        .history(json!({"channel": w.ops, "include_all_metadata": true}))
        .await;
    let messages = full.ok()["messages"].as_array().unwrap();
    assert!(messages[0].get("metadata").is_none(), "Alice's has none");
    assert_eq!(messages[1]["metadata"], metadata);
}

#[tokio::test]
async fn a_warning_sits_beside_the_cursor() {
    let w = World::start().await;
    w.grant_history();
    chatter(&w, &w.ops, 2);
    let body: Value = w
        .http
        .post(format!("{}conversations.history", w.fake.base_url()))
        .bearer_auth(w.bot())
        .header("content-type", "application/json")
        .body(json!({"channel": w.ops, "limit": 1}).to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["warning"], "missing_charset");
    let meta = &body["response_metadata"];
    assert_eq!(meta["warnings"], json!(["missing_charset"]));
    assert!(!meta["next_cursor"].as_str().unwrap().is_empty(), "{body}");
}
