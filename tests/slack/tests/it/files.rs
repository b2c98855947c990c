//! Uploads: `files.getUploadURLExternal`, the bytes to the URL, `files.completeUploadExternal`.

use opsbot_fake_slack::{SlackConfig, Visibility};
use serde_json::{Value, json};

use crate::harness::{Reply, World};

/// The default scopes and `files:write`.
async fn world() -> World {
    let mut config = SlackConfig::default();
    config.bot_scopes.push("files:write".to_owned());
    World::with(config).await
}

impl World {
    async fn upload_url(&self, args: Value) -> Reply {
        self.call("files.getUploadURLExternal", Some(&self.bot()), args)
            .await
    }

    async fn complete(&self, args: Value) -> Reply {
        self.call("files.completeUploadExternal", Some(&self.bot()), args)
            .await
    }

    /// POSTs `bytes` to an upload URL, with no token; the status and the text answered.
    async fn send_bytes(&self, url: &str, bytes: &str) -> (u16, String) {
        let response = self
            .http
            .post(url)
            .body(bytes.to_owned())
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    /// A file id whose `content` has arrived, under `name`.
    async fn uploaded(&self, name: &str, content: &str) -> String {
        let args = json!({"filename": name, "length": content.len()});
        let reply = self.upload_url(args).await;
        let (url, id) = (reply.str("upload_url"), reply.str("file_id"));
        let answer = self.send_bytes(&url, content).await;
        assert_eq!(answer, (200, format!("OK - {}", content.len())));
        id
    }
}

#[tokio::test]
async fn a_file_uploaded_in_three_steps_is_shared_in_the_channel() {
    let w = world().await;
    let content = "line one\nline two — with a dash\n";
    let id = w.uploaded("r-5.log", content).await;
    assert!(id.starts_with('F'), "{id}");
    let files = json!([{"id": id, "title": "r-5.log"}]);
    let args = json!({"files": files, "channel_id": w.ops, "initial_comment": "the log"});
    let body = w.complete(args).await.ok().clone();
    assert_eq!(body["files"][0]["id"], id.as_str());
    let shared = w.fake.files(&w.ops);
    assert_eq!(shared.len(), 1);
    let file = &shared[0];
    assert_eq!(
        (file.id.as_str(), file.title.as_str()),
        (id.as_str(), "r-5.log")
    );
    assert_eq!(
        (file.name.as_str(), file.content.as_str()),
        ("r-5.log", content)
    );
    assert_eq!(file.initial_comment.as_deref(), Some("the log"));

    // Completed once: the id is spent.
    let again = json!({"files": [{"id": id}], "channel_id": w.ops});
    assert_eq!(w.complete(again).await.error(), "file_not_found");
    assert_eq!(w.fake.files(&w.ops).len(), 1);
}

#[tokio::test]
async fn a_form_call_takes_files_as_json_text() {
    let w = world().await;
    let id = w.uploaded("plan.txt", "the plan").await;
    let files = format!("[{{\"id\":\"{id}\",\"title\":\"plan\"}}]");
    let body = format!(
        "token={}&channel_id={}&files={}",
        w.bot(),
        w.ops,
        files
            .replace('"', "%22")
            .replace('{', "%7B")
            .replace('}', "%7D")
    );
    w.form("files.completeUploadExternal", &body).await.ok();
    assert_eq!(w.fake.files(&w.ops)[0].content, "the plan");
}

#[tokio::test]
async fn arguments_missing_or_wrong_are_refused() {
    let w = world().await;
    let no_length = w.upload_url(json!({"filename": "a.txt"})).await;
    assert_eq!(no_length.error(), "invalid_arguments");
    let no_name = w.upload_url(json!({"length": 3})).await;
    assert_eq!(no_name.error(), "invalid_arguments");
    let empty = w
        .upload_url(json!({"filename": "a.txt", "length": 0}))
        .await;
    assert_eq!(empty.error(), "missing_argument");

    let unknown = json!({"files": [{"id": "F0NOPE"}], "channel_id": w.ops});
    assert_eq!(w.complete(unknown).await.error(), "file_not_found");
    let no_files = json!({"channel_id": w.ops});
    assert_eq!(w.complete(no_files).await.error(), "invalid_arguments");

    // Bytes other than announced, or none at all, leave the upload incomplete.
    let reply = w
        .upload_url(json!({"filename": "a.txt", "length": 5}))
        .await;
    let id = reply.str("file_id");
    let complete = json!({"files": [{"id": id}], "channel_id": w.ops});
    assert_eq!(
        w.complete(complete.clone()).await.error(),
        "upload_incomplete"
    );
    let (status, said) = w.send_bytes(&reply.str("upload_url"), "abc").await;
    assert_eq!((status, said.as_str()), (200, "OK - 3"));
    assert_eq!(w.complete(complete).await.error(), "upload_incomplete");
    assert!(w.fake.files(&w.ops).is_empty());

    // An upload URL the fake never gave.
    let url = w
        .upload_url(json!({"filename": "b.txt", "length": 1}))
        .await
        .str("upload_url");
    let wrong = format!("{}X", url);
    assert_eq!(w.send_bytes(&wrong, "x").await.0, 404);
}

#[tokio::test]
async fn a_channel_the_bot_is_not_in_or_cannot_see_is_refused() {
    let w = world().await;
    let elsewhere = w.fake.add_channel("elsewhere", Visibility::Public, false);
    let secret = w.fake.add_channel("secret", Visibility::Private, false);
    for (channel, code) in [
        (elsewhere.as_str(), "not_in_channel"),
        (secret.as_str(), "channel_not_found"),
        ("C0NOPE", "channel_not_found"),
    ] {
        let id = w.uploaded("a.txt", "abc").await;
        let args = json!({"files": [{"id": id}], "channel_id": channel});
        assert_eq!(w.complete(args).await.error(), code, "{channel}");
        // Refused, the upload can still be shared where the bot is.
        let args = json!({"files": [{"id": id}], "channel_id": w.ops});
        w.complete(args).await.ok();
    }
    assert!(w.fake.files(&elsewhere).is_empty());
    assert_eq!(w.fake.files(&w.ops).len(), 3);
}

#[tokio::test]
async fn both_steps_need_files_write() {
    let w = World::start().await;
    let reply = w
        .upload_url(json!({"filename": "a.txt", "length": 3}))
        .await;
    assert_eq!(reply.error(), "missing_scope");
    assert_eq!(reply.body["needed"], "files:write");
    let args = json!({"files": [{"id": "F0FAKE00001"}], "channel_id": w.ops});
    let reply = w.complete(args).await;
    assert_eq!(reply.error(), "missing_scope");
    assert_eq!(reply.body["needed"], "files:write");
}
