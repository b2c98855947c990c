//! The Slack front end end to end: the real bot (its Socket Mode client and Web API calls)
//! against the loopback fake Slack, which enforces Slack's rules, and the simulated cluster.

use opsbot_tests::slack::{SlackScene, buttons, member, shown};
use opsbot_tests::{PATIENCE, Setup};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prune_is_approved_by_a_second_person_with_the_button() {
    let scene = SlackScene::start(Setup::default()).await;
    let answer = scene
        .slash("alice", "/indices prune cluster:logs older_than_days:30")
        .await;
    assert!(!answer.private, "{answer:?}");
    let plan = scene
        .progress("r-1", |text| text.contains("waiting for approval"))
        .await;
    assert!(
        shown(&plan).contains("Plan for /indices prune"),
        "{}",
        shown(&plan)
    );
    let labels: Vec<String> = buttons(&plan).into_iter().map(|(label, _)| label).collect();
    assert_eq!(labels, ["Approve", "Reject"]);

    // The requester, someone opsbot does not know, and a channel opsbot does not serve:
    // refused, privately.
    let own = scene.press("alice", &plan, "Approve").await.unwrap();
    assert!(own.contains("another approver must approve it"), "{own}");
    let nobody = scene.press("carol", &plan, "Approve").await.unwrap();
    assert!(
        nobody.contains("Slack user U0CAROL in workspace T0FAKE0001 is not one of opsbot's people"),
        "{nobody}"
    );
    let elsewhere = scene
        .slash_in("bob", &scene.other_channel.clone(), "/run list")
        .await;
    assert!(elsewhere.private);
    assert!(
        elsewhere
            .text
            .starts_with("opsbot does not serve this channel; use #ops"),
        "{elsewhere:?}"
    );
    assert!(
        scene.sim.state().deleted.is_empty(),
        "nothing deleted before the approval"
    );

    assert_eq!(scene.press("bob", &plan, "Approve").await, None);
    let done = scene.progress("r-1", |text| text.starts_with("✅")).await;
    assert!(buttons(&done).is_empty(), "decided: no buttons left");
    assert_eq!(scene.sim.state().deleted.len(), 60);
    let progress: Vec<_> = scene
        .fake
        .messages(&scene.channel)
        .into_iter()
        .filter(|m| shown(m).contains(" r-1 · "))
        .collect();
    assert_eq!(progress.len(), 1, "one message per run");
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_and_refusals_are_ephemeral_and_reach_no_backend() {
    let scene = SlackScene::start(Setup::default()).await;
    for (who, line, expected) in [
        (
            "alice",
            "/indices delete cluster:logs index:_all",
            "index: `_all` would name every index",
        ),
        (
            "alice",
            "/cluster status cluster:nope",
            "unknown cluster `nope`; configured: logs",
        ),
        (
            "carol",
            "/cluster status cluster:logs",
            "Slack user U0CAROL in workspace T0FAKE0001 is not one of opsbot's people",
        ),
        ("alice", "/approve id:r-9", "no run r-9"),
        (
            "alice",
            "/opsbot cluster status cluster:&lt;!channel&gt;",
            "cluster: ",
        ),
    ] {
        let answer = scene.slash(who, line).await;
        assert!(answer.private, "{line}: {answer:?}");
        assert!(answer.text.contains(expected), "{line}: {answer:?}");
    }
    assert!(
        scene.sim.calls().iter().all(|c| c.method == "GET"),
        "nothing changed in the cluster"
    );
    assert_eq!(member("alice"), "U0ALICE");
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nobody_approves_in_discord_what_they_asked_for_in_slack() {
    use opsbot_fake_discord::{FakeConfig, FakeDiscord};
    use opsbot_tests::discord;

    let fake_discord = FakeDiscord::start(FakeConfig {
        channels: vec![
            discord::CHANNEL,
            discord::OTHER_CHANNEL,
            discord::ANNOUNCE_CHANNEL,
        ],
        ..FakeConfig::default()
    })
    .await;
    let scene = SlackScene::start_with(Setup::default(), |_, config, dir| {
        config.discord = Some(discord::discord_config(&fake_discord, dir));
    })
    .await;
    // On Discord's gateway (an interaction reaches only a session that is ready) with the
    // commands registered.
    fake_discord.wait_ready(PATIENCE).await.unwrap();
    fake_discord.wait_commands(PATIENCE).await.unwrap();
    let asked = scene
        .slash("bob", "/indices prune cluster:logs older_than_days:30")
        .await;
    assert!(!asked.private, "{asked:?}");
    let plan = scene
        .progress("r-1", |text| text.contains("waiting for approval"))
        .await;
    let (_, approve) = buttons(&plan).remove(0);
    let digest = approve.rsplit(':').next().unwrap().to_owned();
    // bob, an approver, asked in Slack: his approval from Discord is his own.
    let options = serde_json::json!([
        {"name": "id", "type": 3, "value": "r-1"},
        {"name": "digest", "type": 3, "value": digest},
    ]);
    let id = fake_discord
        .slash(&discord::user("bob"), discord::CHANNEL, "approve", options)
        .await;
    let (refused, private) = fake_discord.reply_text(id, PATIENCE).await.unwrap();
    assert!(private, "{refused}");
    assert!(
        refused.contains("another approver must approve it"),
        "{refused}"
    );
    assert!(scene.sim.state().deleted.is_empty());
    // dave, another person, approves in Slack.
    assert_eq!(scene.press("dave", &plan, "Approve").await, None);
    scene.progress("r-1", |text| text.starts_with("✅")).await;
    assert_eq!(scene.sim.state().deleted.len(), 60);
    scene.assert_well_behaved();
}

/// A plan longer than a message is answered in the channel with its start, and shared whole as
/// a file in the command's channel, introduced by the answer's first line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_plan_is_shared_whole_as_a_file() {
    let scene = SlackScene::start(Setup::long_plan()).await;
    let answer = scene
        .slash("alice", "/indices prune cluster:logs older_than_days:30")
        .await;
    assert!(!answer.private, "{answer:?}");
    assert!(
        answer
            .text
            .ends_with("(cut to fit; /run status shows the rest)"),
        "{answer:?}"
    );
    assert!(
        !answer.text.contains("```"),
        "no excerpt inline: {answer:?}"
    );
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let files = loop {
        let files = scene.fake.files(&scene.channel);
        if !files.is_empty() || tokio::time::Instant::now() > deadline {
            break files;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    };
    assert_eq!(files.len(), 1, "{files:?}");
    let file = &files[0];
    assert_eq!(
        (file.name.as_str(), file.title.as_str()),
        ("r-1-plan.txt", "r-1-plan.txt")
    );
    assert_eq!(file.initial_comment.as_deref(), answer.text.lines().next());
    assert!(
        file.content
            .starts_with("Plan for /indices prune cluster:logs"),
        "{}",
        file.content
    );
    for n in [0, 75, 149] {
        let index = format!("svc{n:03}-2020.01.01");
        assert!(file.content.contains(&index), "{}", file.content);
    }

    // Without files:write, the start of the file follows the answer instead.
    let token = scene.fake.config().bot_token.clone();
    let scopes: Vec<&str> = opsbot::chat::slack::BOT_SCOPES
        .into_iter()
        .filter(|s| *s != "files:write")
        .collect();
    scene.fake.set_scopes(&token, &scopes);
    let cancelled = scene.slash("alice", "/run cancel id:r-1").await;
    assert!(!cancelled.private, "{cancelled:?}");
    let again = scene
        .slash("bob", "/indices prune cluster:logs older_than_days:30")
        .await;
    assert!(!again.private && again.text.contains("r-2"), "{again:?}");
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let excerpt = loop {
        let envelope = scene.fake.envelopes().last().unwrap().envelope_id.clone();
        let answers = scene.fake.responses(&envelope);
        if answers.len() > 1 || tokio::time::Instant::now() > deadline {
            break answers.get(1).cloned().unwrap_or_default();
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    };
    assert_eq!(excerpt["response_type"], "in_channel", "{excerpt}");
    let text = excerpt["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("```Plan for /indices prune") && text.ends_with("… (cut here)```"),
        "{text}"
    );
    assert_eq!(scene.fake.files(&scene.channel).len(), 1);
    scene.assert_well_behaved();
}
