//! People across surfaces, through the real bot (`opsbot run`: serenity against the loopback
//! fake Discord, and the console socket): a requester cannot approve from the other surface,
//! autocomplete answers only those who may run the command and asks a backend at most once per
//! few seconds, and no message the bot sends pings anyone.

use opsbot_tests::Setup;
use opsbot_tests::console::ConsoleClient;
use opsbot_tests::discord::{CHANNEL, DiscordScene, OTHER_CHANNEL, embed_text, user};
use serde_json::json;

const PRUNE: &str = "/indices prune cluster:logs older_than_days:30";

/// The digest the plan of a waiting run shows, from its progress message.
fn digest_of(text: &str) -> String {
    let at = text.find("digest:").expect("a digest in the plan") + "digest:".len();
    text[at..at + 12].to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_made_in_discord_cannot_be_approved_by_its_requester_at_the_console() {
    let scene = DiscordScene::start(Setup::default()).await;
    let (reply, _) = scene.slash(&user("alice"), PRUNE).await;
    assert!(reply.starts_with("r-1 waits for approval"), "{reply}");
    let plan = scene
        .progress("r-1", |text| text.contains("waiting for approval"))
        .await;
    let digest = digest_of(&embed_text(&plan));

    let mut console = ConsoleClient::connect(&scene.console).await;
    let greeting = console.line().await.unwrap();
    assert!(greeting.starts_with("opsbot: you are alice;"), "{greeting}");
    for line in [
        "/approve id:r-1".to_owned(),
        format!("/approve id:r-1 digest:{digest}"),
    ] {
        let refused = console.say(&line).await;
        assert!(
            refused.starts_with("opsbot (only you): you requested run r-1;"),
            "{line}: {refused}"
        );
    }
    // Nor by typing in Discord.
    let (typed, private) = scene
        .slash(&user("alice"), &format!("/approve id:r-1 digest:{digest}"))
        .await;
    assert!(private);
    assert!(typed.starts_with("you requested run r-1;"), "{typed}");
    assert!(scene.sim.state().deleted.is_empty());

    // bob approves with the button; the audit trail names alice's tries and where from.
    let (decided, _) = scene.press(&user("bob"), &plan, "Approve").await;
    assert!(decided.contains("r-1"), "{decided}");
    scene.progress("r-1", |text| text.starts_with("✅")).await;
    let (trail, _) = scene.slash(&user("bob"), "/audit run:r-1").await;
    let refused: Vec<&str> = trail
        .lines()
        .filter(|l| l.contains("refused /approve id:r-1"))
        .collect();
    assert_eq!(refused.len(), 3, "{trail}");
    assert!(
        refused.iter().all(|l| l.contains(" r-1 alice · ")),
        "{trail}"
    );
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_made_at_the_console_cannot_be_approved_by_its_requester_in_discord() {
    let scene = DiscordScene::start(Setup::default()).await;
    let mut console = ConsoleClient::connect(&scene.console).await;
    console.line().await.unwrap();
    let asked = console.say(PRUNE).await;
    assert!(
        asked.starts_with("opsbot: r-1 waits for approval"),
        "{asked}"
    );
    let digest = digest_of(&asked);
    let (own, private) = scene
        .slash(&user("alice"), &format!("/approve id:r-1 digest:{digest}"))
        .await;
    assert!(private);
    assert!(own.starts_with("you requested run r-1;"), "{own}");
    let (preview, private) = scene.slash(&user("alice"), "/approve id:r-1").await;
    assert!(
        private && preview.starts_with("you requested run r-1;"),
        "{preview}"
    );
    assert!(scene.sim.state().deleted.is_empty());

    // Another person approves in Discord; the console sees the run through.
    let (approved, private) = scene
        .slash(&user("bob"), &format!("/approve id:r-1 digest:{digest}"))
        .await;
    assert!(!private);
    assert_eq!(
        approved,
        format!("r-1 approved by bob (plan digest {digest})")
    );
    loop {
        let line = console.line().await.unwrap();
        if line.contains("✅ r-1 · ") {
            break;
        }
    }
    assert_eq!(scene.sim.state().deleted.len(), 60);
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn autocomplete_answers_only_operators_in_served_channels_and_asks_the_cluster_once() {
    let scene = DiscordScene::start(Setup::default()).await;
    let typing = |typed: &str| {
        json!([{"name": "delete", "type": 1, "options": [
            {"name": "cluster", "type": 3, "value": "logs"},
            {"name": "index", "type": 3, "value": typed, "focused": true}]}])
    };
    let listings = || {
        scene
            .sim
            .calls()
            .iter()
            .filter(|c| c.path.starts_with("/_cat/indices"))
            .count()
    };
    // Someone opsbot does not know, an approver who may not delete, an operator elsewhere.
    for (who, channel) in [
        ("carol", CHANNEL),
        ("dave", CHANNEL),
        ("alice", OTHER_CHANNEL),
    ] {
        let offered = scene
            .choices_in(&user(who), channel, "indices", typing("flog-"))
            .await;
        assert!(offered.is_empty(), "{who}: {offered:?}");
    }
    assert_eq!(
        listings(),
        0,
        "nobody without the right got the cluster asked"
    );
    // An operator typing fast: one listing serves every keystroke.
    for typed in ["f", "fl", "flo", "flog", "flog-", "flog-2"] {
        let offered = scene
            .choices(&user("alice"), "indices", typing(typed))
            .await;
        assert!(!offered.is_empty(), "{typed}");
    }
    assert_eq!(listings(), 1);
    // dave may approve: the runs are offered to him, from the store; carol is offered none.
    let (waiting, _) = scene.slash(&user("alice"), PRUNE).await;
    assert!(waiting.starts_with("r-1 waits for approval"), "{waiting}");
    let run_ids = json!([{"name": "id", "type": 3, "value": "", "focused": true}]);
    let runs = scene
        .choices(&user("dave"), "approve", run_ids.clone())
        .await;
    assert_eq!(
        runs.iter()
            .map(|(_, value)| value.as_str())
            .collect::<Vec<_>>(),
        ["r-1"],
        "{runs:?}"
    );
    let refused = scene.choices(&user("carol"), "approve", run_ids).await;
    assert!(refused.is_empty(), "carol: {refused:?}");
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_text_with_mentions_pings_nobody() {
    let scene = DiscordScene::start(Setup::default()).await;
    let text = "@everyone @here <@&800000000000000001> <@700000000000000002> db down";
    let announce = scene
        .fake
        .slash(
            &user("alice"),
            CHANNEL,
            "maintenance",
            json!([{"name": "announce", "type": 1, "options": [
                {"name": "text", "type": 3, "value": text}]}]),
        )
        .await;
    let (reply, private) = scene
        .fake
        .reply_text(announce, opsbot_tests::PATIENCE)
        .await
        .unwrap();
    assert!(!private);
    assert!(reply.contains(text), "{reply}");
    let posted = scene
        .fake
        .wait_message(
            opsbot_tests::discord::ANNOUNCE_CHANNEL,
            opsbot_tests::PATIENCE,
            |m| m.content.contains("db down"),
        )
        .await
        .unwrap();
    assert!(
        posted.content.contains(text),
        "shown as typed: {}",
        posted.content
    );
    // A rejection's reason is repeated to the channel as well.
    let (waiting, _) = scene.slash(&user("alice"), PRUNE).await;
    assert!(waiting.starts_with("r-1 waits"), "{waiting}");
    let reject = scene
        .fake
        .slash(
            &user("bob"),
            CHANNEL,
            "reject",
            json!([{"name": "id", "type": 3, "value": "r-1"},
                   {"name": "reason", "type": 3, "value": "not now @everyone <@700000000000000001>"}]),
        )
        .await;
    let (rejected, _) = scene
        .fake
        .reply_text(reject, opsbot_tests::PATIENCE)
        .await
        .unwrap();
    assert!(rejected.contains("@everyone"), "{rejected}");
    scene
        .progress("r-1", |t| t.contains("reason: not now"))
        .await;
    assert_eq!(
        scene.fake.pings(),
        Vec::new(),
        "a message would have pinged"
    );
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_in_discord_show_hidden_characters_escaped() {
    let scene = DiscordScene::start(Setup::default()).await;
    let (refused, private) = scene
        .slash(&user("alice"), "/cluster status cluster:lo\u{200B}gs")
        .await;
    assert!(private);
    assert_eq!(
        refused,
        "cluster: cluster name `lo\\u{200B}gs` has an invisible character \\u{200B}; use \
         lower-case letters, digits, `-` and `_`"
    );
    let (cyrillic, _) = scene
        .slash(&user("alice"), "/cluster status cluster:l\u{43E}gs")
        .await;
    assert!(
        cyrillic.contains("`о` (U+043E), a letter that is not ASCII"),
        "{cyrillic}"
    );
    scene.assert_well_behaved();
}
