//! Invalid-request accounting with raw requests: 401, 403 and 429 count toward Discord's IP ban,
//! 404 does not; the ban itself is recorded as a violation.

use std::time::Duration;

use opsbot_fake_discord::{FakeConfig, FakeDiscord};
use serde_json::{Value, json};

use crate::harness::{init_tracing, within};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_401_403_and_429_count_and_too_many_are_a_ban() {
    within(Duration::from_secs(60), async {
        init_tracing();
        let fake = FakeDiscord::start(FakeConfig {
            edits_per_window: 2,
            invalid_request_limit: 4,
            ..FakeConfig::default()
        })
        .await;
        let cfg = fake.config().clone();
        let client = fake.reqwest_client().unwrap();
        let api = |path: &str| format!("https://discord.com/api/v10{path}");
        let bot = format!("Bot {}", cfg.token);
        let status = |r: reqwest::Response| r.status().as_u16();

        let wrong = client
            .get(api("/users/@me"))
            .header("Authorization", "Bot nope");
        assert_eq!(status(wrong.send().await.unwrap()), 401);
        let unknown = client
            .get(api("/channels/42"))
            .header("Authorization", &bot);
        assert_eq!(status(unknown.send().await.unwrap()), 404);
        assert_eq!(fake.invalid_requests(), 1);

        let hidden = cfg.channels[1];
        fake.set_bot_permissions(hidden, 0);
        let get = client
            .get(api(&format!("/channels/{hidden}")))
            .header("Authorization", &bot);
        let refused = get.send().await.unwrap();
        assert_eq!(refused.status().as_u16(), 403);
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body, json!({"code": 50001, "message": "Missing Access"}));

        let post = || {
            client
                .post(api(&format!("/channels/{}/messages", cfg.channels[0])))
                .header("Authorization", &bot)
                .json(&json!({"content": "hi"}))
        };
        let answers = [
            status(post().send().await.unwrap()),
            status(post().send().await.unwrap()),
            status(post().send().await.unwrap()),
        ];
        assert_eq!(answers, [200, 200, 429]);
        assert_eq!(fake.invalid_requests(), 3);
        assert!(fake.violations().iter().all(|v| !v.contains("ban")));

        // The fourth within 10 minutes reaches this fake's limit: Discord would ban the IP.
        assert_eq!(status(post().send().await.unwrap()), 429);
        assert_eq!(fake.invalid_requests(), 4);
        let bans: Vec<String> = fake
            .violations()
            .into_iter()
            .filter(|v| v.contains("ban"))
            .collect();
        assert_eq!(bans.len(), 1, "{bans:?}");

        fake.shutdown().await;
    })
    .await;
}
