use std::path::Path;

use opsbot_fake_slack::{FakeSlack, SlackConfig as Fake, Visibility};

use super::*;

fn id(text: &str) -> SlackId {
    SlackId::try_from(text.to_owned()).unwrap()
}

/// `[slack]` for `fake`, serving `channels` and announcing in `announce`; tokens in `dir`.
/// The app installed from opsbot's manifest: its bot token has every scope it asks for.
fn installed() -> Fake {
    Fake {
        bot_scopes: crate::chat::slack::BOT_SCOPES.map(str::to_owned).to_vec(),
        ..Fake::default()
    }
}

fn slack(fake: &FakeSlack, dir: &Path, channels: &[&str], announce: &str) -> SlackConfig {
    let (bot, app) = (dir.join("bot"), dir.join("app"));
    std::fs::write(&bot, &fake.config().bot_token).unwrap();
    std::fs::write(&app, &fake.config().app_token).unwrap();
    SlackConfig {
        bot_token_file: Some(bot),
        app_token_file: Some(app),
        team: id(&fake.config().team_id),
        channels: channels.iter().map(|c| id(c)).collect(),
        announce_channel: Some(id(announce)),
        api_url: fake.base_url(),
        ca_file: None,
        request_timeout: Duration::from_secs(15),
        updates_per_minute: 50,
        minute: Duration::from_secs(60),
    }
}

async fn line(slack: &SlackConfig) -> String {
    check_slack(slack, Duration::from_secs(30))
        .await
        .to_string()
}

#[tokio::test]
async fn a_channel_that_does_not_exist_and_an_announcement_channel_without_the_bot() {
    let fake = FakeSlack::start(installed()).await;
    let ops = fake.add_channel("ops", Visibility::Public, true);
    let news = fake.add_channel("news", Visibility::Public, false);
    let dir = tempfile::tempdir().unwrap();
    let config = slack(&fake, dir.path(), &[&ops, "C0GONE"], &news);
    assert_eq!(
        line(&config).await,
        "FAIL  slack: workspace T0FAKE0001, bot U0FAKEBOT1, every scope opsbot uses: \
         channel C0GONE does not exist, or is private and the bot is not in it: check the \
         id in [slack], or type /invite @opsbot in the channel; the bot is not in \
         announcement channel #news (C0FAKE0002): type /invite @opsbot there; #ops can be \
         read and written; C0GONE can be neither read nor written; #news (announcements) \
         can be read, not written; the app-level token is checked when the bot connects"
    );
}

/// A scope missing for one channel is said once, for the token.
#[tokio::test]
async fn a_private_channel_without_groups_read() {
    let fake = FakeSlack::start(installed()).await;
    let ops = fake.add_channel("ops", Visibility::Public, true);
    let secret = fake.add_channel("secret", Visibility::Private, true);
    let token = fake.config().bot_token.clone();
    // Every scope but those of private channels.
    let public_only: Vec<&str> = crate::chat::slack::BOT_SCOPES
        .into_iter()
        .filter(|scope| !scope.starts_with("groups:"))
        .collect();
    fake.set_scopes(&token, &public_only);
    let dir = tempfile::tempdir().unwrap();
    let config = slack(&fake, dir.path(), &[&secret], &ops);
    assert_eq!(
        line(&config).await,
        "FAIL  slack: workspace T0FAKE0001, bot U0FAKEBOT1: the bot token lacks the scopes \
         groups:read, groups:history: add them under OAuth & Permissions and reinstall the \
         app; G0FAKE0002 \
         cannot be read, and written only if the bot is in it; #ops (announcements) can be \
         read and written; the app-level token is checked when the bot connects"
    );
}

#[tokio::test]
async fn slack_out_of_reach_and_a_token_of_the_wrong_kind() {
    let fake = FakeSlack::start(installed()).await;
    let ops = fake.add_channel("ops", Visibility::Public, true);
    let dir = tempfile::tempdir().unwrap();
    let mut config = slack(&fake, dir.path(), &[&ops], &ops);
    fake.set_away(true);
    let away = line(&config).await;
    assert!(
        away.starts_with("FAIL  slack: checking the bot token: Slack: auth.test: "),
        "{away}"
    );
    config.app_token_file = config.bot_token_file.clone();
    assert_eq!(
        line(&config).await,
        "FAIL  slack: the Slack app-level token does not start with xapp-: is it the right \
         token?"
    );
}

/// Slack did not list the token's scopes (a proxy dropped the header): not a failure.
#[test]
fn scopes_not_listed_leave_writing_open() {
    let access = ChannelAccess {
        channel: id("C1"),
        shown: "#ops".to_owned(),
        served: true,
        announce: true,
        read: true,
        write: None,
    };
    let reached = Reached {
        bot_user: "U1".to_owned(),
        channels: vec![(id("C1"), "#ops".to_owned())],
        problems: Vec::new(),
        missing_scopes: None,
        access: vec![access.clone()],
    };
    assert_eq!(
        slack_usable(&id("T1"), &reached).unwrap(),
        "workspace T1, bot U1; #ops (announcements) can be read, and written if the token \
         has chat:write; the app-level token is checked when the bot connects"
    );
    let written = Reached {
        missing_scopes: Some(Vec::new()),
        access: vec![ChannelAccess {
            write: Some(true),
            ..access
        }],
        ..reached
    };
    assert_eq!(
        slack_usable(&id("T1"), &written).unwrap(),
        "workspace T1, bot U1, every scope opsbot uses; channel #ops (announcements) answer, \
         each read and written; the app-level token is checked when the bot connects"
    );
}
