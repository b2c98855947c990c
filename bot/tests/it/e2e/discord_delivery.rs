//! Discord delivery that gives up properly, end to end against the fake Discord: a progress
//! message a moderator deleted, channels the bot may not post in, a request Discord never
//! answers, and the start-up check. Each bounds the requests the bot makes.

use std::time::Duration;

use opsbot::chat::discord::Discord;
use opsbot_fake_discord::permissions::{EMBED_LINKS, MEMBER, SEND_MESSAGES, VIEW_CHANNEL};
use opsbot_fake_discord::{FakeConfig, FakeDiscord};
use opsbot_tests::console::ConsoleClient;
use opsbot_tests::discord::{
    ANNOUNCE_CHANNEL, CHANNEL, DiscordScene, OTHER_CHANNEL, discord_config, embed_text, user,
};
use opsbot_tests::{PATIENCE, Setup};

/// A maintenance run slow enough to be edited several times while it goes on.
fn slow_restart() -> Setup {
    Setup {
        days_of_indices: 10,
        sim_speed: 5.0,
        ..Setup::default()
    }
}

/// Waits for the announcement that the maintenance of run r-1 is over.
async fn maintenance_over(scene: &DiscordScene) {
    scene
        .fake
        .wait_message(ANNOUNCE_CHANNEL, PATIENCE, |m| {
            m.content.starts_with("✅ maintenance over")
        })
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_progress_message_is_posted_again_once_and_shows_the_final_state() {
    let scene = DiscordScene::start(slow_restart()).await;
    let (reply, _) = scene
        .slash(&user("alice"), "/cluster restart cluster:logs")
        .await;
    scene.confirm(&user("alice"), &reply).await;
    let first = scene.progress("r-1", |text| text.starts_with("⏳")).await;
    let on_first = || {
        scene
            .fake
            .requests_under(&format!("channels/{CHANNEL}/messages/{}", first.id))
    };
    // The plan was posted waiting for the confirmation, then edited to running.
    let before = on_first();
    scene.fake.delete_message(CHANNEL, first.id);

    let done = scene.progress("r-1", |text| text.starts_with("✅")).await;
    assert_ne!(done.id, first.id, "the final state is on a new message");
    let shown: Vec<_> = scene
        .fake
        .messages(CHANNEL)
        .into_iter()
        .filter(|m| embed_text(m).contains(" r-1 · "))
        .collect();
    assert_eq!(shown.len(), 1, "one message shows the run");
    assert_eq!(
        on_first() - before,
        1,
        "one edit found it gone, then no more"
    );
    assert!(
        done.history.len() >= 2,
        "edits continued on the new message: {} versions",
        done.history.len()
    );
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn announcements_refused_by_permissions_stop_and_the_run_channel_is_told_what_to_grant() {
    let scene = DiscordScene::start(slow_restart()).await;
    scene
        .fake
        .set_bot_permissions(ANNOUNCE_CHANNEL, MEMBER & !SEND_MESSAGES);
    let (reply, _) = scene
        .slash(&user("alice"), "/cluster restart cluster:logs")
        .await;
    scene.confirm(&user("alice"), &reply).await;
    let told = scene.told(CHANNEL).await;
    assert_eq!(
        told.content,
        format!(
            "⚠️ maintenance announcements stopped: the bot lacks Send Messages in channel \
             {ANNOUNCE_CHANNEL}; grant it and restart opsbot"
        )
    );
    scene.progress("r-1", |text| text.starts_with("✅")).await;
    let posts = scene.message_requests(ANNOUNCE_CHANNEL);
    assert_eq!(posts, 1, "the start was tried once, the end not at all");
    assert!(scene.fake.messages(ANNOUNCE_CHANNEL).is_empty());
    assert_eq!(scene.fake.invalid_requests(), 1, "one 403 in the whole run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_who_announces_is_told_in_their_channel_when_announcements_are_refused() {
    let scene = DiscordScene::start(Setup::default()).await;
    scene
        .fake
        .set_bot_permissions(ANNOUNCE_CHANNEL, MEMBER & !SEND_MESSAGES);
    let (reply, _) = scene
        .slash(&user("alice"), "/maintenance announce text:upgrade")
        .await;
    assert!(reply.starts_with("announced"), "{reply}");
    let told = scene.told(CHANNEL).await;
    assert!(
        told.content.contains(&format!(
            "lacks Send Messages in channel {ANNOUNCE_CHANNEL}"
        )),
        "{}",
        told.content
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consoles_show_an_announcement_once_while_discord_is_tried_again() {
    let scene = DiscordScene::start_with(Setup::default(), |_, config| {
        if let Some(discord) = &mut config.discord {
            discord.request_timeout = Duration::from_millis(500);
        }
    })
    .await;
    let mut console = ConsoleClient::connect(&scene.console).await;
    let greeting = console.line().await.unwrap();
    assert!(
        greeting.starts_with("opsbot: you are"),
        "listening: {greeting}"
    );
    scene.fake.hang_next_message_requests(1);
    scene
        .slash(&user("alice"), "/maintenance announce text:upgrade")
        .await;
    scene
        .fake
        .wait_message(ANNOUNCE_CHANNEL, PATIENCE, |m| m.content.starts_with("📣"))
        .await
        .unwrap();
    assert_eq!(scene.fake.hung(), 1, "the first attempt timed out");
    // The end is announced after the start: every console line of the start comes before it.
    scene.slash(&user("alice"), "/maintenance end").await;
    let mut shown = 0;
    loop {
        let line = console.line().await.expect("the console hung up");
        if line.starts_with("announcement: 📣") {
            shown += 1;
        } else if line.starts_with("announcement: ") {
            break;
        }
    }
    assert_eq!(shown, 1, "the consoles saw the announcement once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_from_the_console_is_told_at_the_console_when_announcements_are_refused() {
    let scene = DiscordScene::start(slow_restart()).await;
    scene
        .fake
        .set_bot_permissions(ANNOUNCE_CHANNEL, MEMBER & !SEND_MESSAGES);
    let mut console = ConsoleClient::connect(&scene.console).await;
    console.line().await.unwrap();
    let started = console.say("/cluster restart cluster:logs").await;
    assert!(started.contains("r-1"), "{started}");
    let confirmed = console.say("yes").await;
    assert!(confirmed.contains("r-1 confirmed by alice"), "{confirmed}");
    let told = loop {
        let line = console.line().await.expect("the console hung up");
        if line.starts_with("opsbot: ⚠️") {
            break line;
        }
    };
    assert!(
        told.contains(&format!(
            "lacks Send Messages in channel {ANNOUNCE_CHANNEL}"
        )),
        "{told}"
    );
    assert!(
        scene.fake.messages(CHANNEL).is_empty(),
        "nothing said in Discord"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_in_a_channel_the_bot_may_not_embed_in_stops_after_one_request() {
    let scene = DiscordScene::start(slow_restart()).await;
    scene
        .fake
        .set_bot_permissions(CHANNEL, MEMBER & !EMBED_LINKS);
    let (reply, _) = scene
        .slash(&user("alice"), "/cluster restart cluster:logs")
        .await;
    assert!(reply.contains("r-1"), "commands still work there: {reply}");
    scene.confirm(&user("alice"), &reply).await;
    // The announcement lane is another channel's: it still delivers, so it marks the end.
    maintenance_over(&scene).await;
    let progress = scene.message_requests(CHANNEL);
    assert_eq!(progress, 1, "one refused post, then nothing");
    assert_eq!(scene.fake.invalid_requests(), 1, "one 403 in the whole run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_up_names_the_missing_permission_and_posts_nothing_where_it_lacks() {
    let scene = DiscordScene::start_with(slow_restart(), |fake, _| {
        fake.set_bot_permissions(ANNOUNCE_CHANNEL, MEMBER & !EMBED_LINKS & !SEND_MESSAGES);
    })
    .await;
    // What the start-up check found, as the bot logs it.
    let dir = tempfile::tempdir().unwrap();
    let checked = Discord::connect(&discord_config(&scene.fake, dir.path()))
        .await
        .unwrap();
    let forbidden: Vec<String> = checked
        .forbidden_channels()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        forbidden,
        [format!(
            "the bot lacks Send Messages, Embed Links in channel {ANNOUNCE_CHANNEL}"
        )]
    );
    let (reply, _) = scene
        .slash(&user("alice"), "/cluster restart cluster:logs")
        .await;
    scene.confirm(&user("alice"), &reply).await;
    let told = scene.told(CHANNEL).await;
    assert!(
        told.content.contains("Send Messages, Embed Links"),
        "{}",
        told.content
    );
    scene.progress("r-1", |text| text.starts_with("✅")).await;
    let posts = scene.message_requests(ANNOUNCE_CHANNEL);
    assert_eq!(posts, 0, "known at start-up: not even tried");
    assert_eq!(scene.fake.invalid_requests(), 0);

    // A channel the bot cannot even see lacks View Channel, whatever else it would have.
    scene
        .fake
        .set_bot_permissions(CHANNEL, MEMBER & !VIEW_CHANNEL);
    let checked = Discord::connect(&discord_config(&scene.fake, dir.path()))
        .await
        .unwrap();
    let mut forbidden: Vec<String> = checked
        .forbidden_channels()
        .map(ToString::to_string)
        .collect();
    forbidden.sort();
    assert_eq!(
        forbidden,
        [
            format!("the bot lacks Send Messages, Embed Links in channel {ANNOUNCE_CHANNEL}"),
            format!("the bot lacks View Channel in channel {CHANNEL}"),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_up_looks_up_the_guild_and_the_bot_once_and_each_channel_once() {
    let fake = FakeDiscord::start(FakeConfig {
        channels: vec![CHANNEL, OTHER_CHANNEL, ANNOUNCE_CHANNEL],
        ..FakeConfig::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = discord_config(&fake, dir.path());
    config.channels = vec![CHANNEL, OTHER_CHANNEL];
    Discord::connect(&config).await.unwrap();
    let guild = fake.config().guild_id;
    assert_eq!(
        fake.requests_under(&format!("guilds/{guild}")),
        2,
        "the guild and the bot's member in it, once"
    );
    assert_eq!(
        fake.requests_under("channels/"),
        3,
        "each configured channel once"
    );
    assert_eq!(
        fake.requests_under(""),
        7,
        "with the application and the bot's user"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_discord_never_answers_times_out_and_progress_goes_on() {
    let scene = DiscordScene::start_with(slow_restart(), |fake, config| {
        if let Some(discord) = &mut config.discord {
            discord.request_timeout = Duration::from_millis(500);
        }
        fake.hang_next_message_requests(1);
    })
    .await;
    let (reply, _) = scene
        .slash(&user("alice"), "/cluster restart cluster:logs")
        .await;
    scene.confirm(&user("alice"), &reply).await;
    scene.progress("r-1", |text| text.starts_with("✅")).await;
    maintenance_over(&scene).await;
    assert_eq!(scene.fake.hung(), 1, "one request was held open");
    scene.assert_well_behaved();
}
