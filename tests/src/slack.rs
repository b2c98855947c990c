//! The Slack scene: the real bot (its Socket Mode client and Web API calls) against the
//! loopback fake Slack and the simulated cluster. Tests type slash commands and press buttons
//! as Slack members, and read what the channel shows.

use std::path::Path;
use std::time::Duration;

use opsbot::config::{Config, ProgressConfig, SlackConfig as BotSlackConfig, SlackId};
use opsbot_fake_slack::{
    BlockAction, FakeSlack, SlackConfig, SlackMessage, SlashCommand, Visibility, WebMethod,
};
use opsbot_search_sim::SimHandle;
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::{PATIENCE, Setup, world};

/// The fake's minute, and the bot's: Slack's limits counted ten times as fast, so that tests
/// take seconds while every limit keeps its proportions.
pub const MINUTE: Duration = Duration::from_secs(6);

/// What an answer that takes longer than the acknowledgement says meanwhile.
const WORKING: &str = "⏳ working on it…";

/// The fake Slack as the tests use it: the app installed from opsbot's manifest (its bot
/// token has exactly [`opsbot::chat::slack::BOT_SCOPES`]), counting in [`MINUTE`].
pub fn fake_config() -> SlackConfig {
    SlackConfig {
        minute: MINUTE,
        bot_scopes: opsbot::chat::slack::BOT_SCOPES.map(str::to_owned).to_vec(),
        ..SlackConfig::default()
    }
}

/// alice operates; bob operates and approves; dave only approves (as [`crate::people`] says);
/// carol is a member opsbot does not know.
pub fn member(name: &str) -> String {
    format!("U0{}", name.to_uppercase())
}

/// The bot, the fake Slack and the simulated cluster, torn down on drop.
pub struct SlackScene {
    pub fake: FakeSlack,
    pub sim: SimHandle,
    /// The served channel, one it does not serve, and the announcement channel.
    pub channel: String,
    pub other_channel: String,
    pub announce_channel: String,
    _others: Vec<SimHandle>,
    bot: JoinHandle<anyhow::Result<()>>,
    _dir: tempfile::TempDir,
}

impl std::fmt::Debug for SlackScene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlackScene").finish_non_exhaustive()
    }
}

impl Drop for SlackScene {
    fn drop(&mut self) {
        self.bot.abort();
    }
}

/// The answer to a slash command: its text, and whether only its author sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub text: String,
    pub private: bool,
}

impl SlackScene {
    pub async fn start(setup: Setup) -> Self {
        Self::start_with(setup, |_, _, _| {}).await
    }

    /// [`Self::start`], with `prepare` changing the fake and the bot's config (in `dir`)
    /// before the bot starts.
    pub async fn start_with(
        setup: Setup,
        prepare: impl FnOnce(&FakeSlack, &mut Config, &Path),
    ) -> Self {
        let scene = Self::launch(setup, prepare).await;
        scene.fake.wait_hellos(1, PATIENCE).await.unwrap();
        scene
    }

    /// [`Self::start_with`], without waiting for the bot to connect to Slack.
    pub async fn launch(
        setup: Setup,
        prepare: impl FnOnce(&FakeSlack, &mut Config, &Path),
    ) -> Self {
        let fake = FakeSlack::start(fake_config()).await;
        let channel = fake.add_channel("ops", Visibility::Public, true);
        let other_channel = fake.add_channel("random", Visibility::Public, true);
        let announce_channel = fake.add_channel("maintenance", Visibility::Public, true);
        for user in ["alice", "bob", "dave", "carol"] {
            for c in [&channel, &other_channel, &announce_channel] {
                fake.add_member(c, &member(user));
            }
        }
        let (mut sims, mut config, dir) = world(&setup).await;
        let sim = sims.remove(0);
        config.progress = ProgressConfig {
            edits_per_window: 4,
            window: Duration::from_secs(1),
        };
        config.slack = Some(slack_config(&fake, dir.path(), &channel, &announce_channel));
        prepare(&fake, &mut config, dir.path());
        let bot = tokio::spawn(opsbot::serve::run_until(
            config,
            opsbot::clock::Clock::system(),
            std::future::pending(),
        ));
        Self {
            fake,
            sim,
            channel,
            other_channel,
            announce_channel,
            _others: sims,
            bot,
            _dir: dir,
        }
    }

    /// Whether the bot is still serving (it has not ended, with or without an error).
    pub fn is_serving(&self) -> bool {
        !self.bot.is_finished()
    }

    /// Types `line` (`/cluster status cluster:logs`) as a slash command in the served
    /// channel and returns its answer.
    pub async fn slash(&self, user: &str, line: &str) -> Answer {
        self.slash_in(user, &self.channel.clone(), line).await
    }

    pub async fn slash_in(&self, user: &str, channel: &str, line: &str) -> Answer {
        let (command, text) = line.split_once(' ').unwrap_or((line, ""));
        let envelope = self
            .fake
            .slash_command(&SlashCommand {
                user_id: member(user),
                channel_id: channel.to_owned(),
                command: command.to_owned(),
                text: text.to_owned(),
            })
            .unwrap();
        let ack = self.fake.wait_ack(&envelope, PATIENCE).await.unwrap();
        assert!(!ack.late, "acknowledged after Slack's deadline: {ack:?}");
        let payload = ack.payload.unwrap_or(Value::Null);
        let text = payload["text"].as_str().unwrap_or_default().to_owned();
        if text != WORKING {
            let private = payload["response_type"] != "in_channel";
            return Answer { text, private };
        }
        // The answer follows through the command's response_url.
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            if let Some(answer) = self.fake.responses(&envelope).first() {
                return Answer {
                    text: answer["text"].as_str().unwrap_or_default().to_owned(),
                    private: answer["response_type"] != "in_channel",
                };
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no answer to {line}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The progress message of a run in the served channel, once `done` holds for its text.
    pub async fn progress(&self, run: &str, done: impl Fn(&str) -> bool) -> SlackMessage {
        let mark = format!(" {run} · ");
        self.fake
            .wait_message(&self.channel, PATIENCE, |m| {
                let text = shown(m);
                text.contains(&mark) && done(&text)
            })
            .await
            .unwrap()
    }

    /// Presses a button of a message by its label; returns what only the presser was told,
    /// if anything, once the message shows `then` or they are told.
    pub async fn press(&self, user: &str, message: &SlackMessage, label: &str) -> Option<String> {
        let action_id = buttons(message)
            .into_iter()
            .find(|(text, _)| text == label)
            .map(|(_, id)| id)
            .unwrap_or_else(|| panic!("no `{label}` button on {:?}", message.blocks));
        let versions = message.history.len();
        let envelope = self
            .fake
            .block_action(&BlockAction {
                user_id: member(user),
                channel_id: message.channel.clone(),
                message_ts: message.ts.clone(),
                action_id,
            })
            .unwrap();
        let ack = self.fake.wait_ack(&envelope, PATIENCE).await.unwrap();
        assert!(!ack.late, "a press acknowledged late: {ack:?}");
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            if let Some(told) = self.fake.responses(&envelope).first() {
                return Some(told["text"].as_str().unwrap_or_default().to_owned());
            }
            let edited = self
                .fake
                .messages(&message.channel)
                .into_iter()
                .any(|m| m.ts == message.ts && m.history.len() > versions);
            if edited {
                return None;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "nothing came of pressing {label}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The requester confirms the run that `answer`, the answer to their command, says waits
    /// for their confirmation (the `confirm` policy), with the `/run confirm` it names.
    pub async fn confirm(&self, user: &str, answer: &Answer) {
        let command = answer
            .text
            .split_once("/run confirm ")
            .and_then(|(_, rest)| rest.split_once(','))
            .map(|(options, _)| format!("/run confirm {options}"))
            .unwrap_or_else(|| panic!("nothing to confirm in {answer:?}"));
        let confirmed = self.slash(user, &command).await;
        assert!(
            !confirmed.private && confirmed.text.contains(" confirmed by "),
            "{confirmed:?}"
        );
    }

    /// What the announcement channel was told, in order, once a message starting with `last`
    /// is there.
    pub async fn announced_until(&self, last: &str) -> Vec<String> {
        self.fake
            .wait_message(&self.announce_channel, PATIENCE, |m| {
                m.text.starts_with(last)
            })
            .await
            .unwrap();
        self.fake
            .messages(&self.announce_channel)
            .into_iter()
            .map(|m| m.text)
            .collect()
    }

    /// Calls of `method` the bot made in `channel` (refused or not, past the token check).
    pub fn calls_in(&self, method: WebMethod, channel: &str) -> usize {
        self.fake
            .calls(method)
            .iter()
            .filter(|args| args["channel"] == channel)
            .count()
    }

    /// Nothing the bot sent broke a Slack rule, pinged anyone, or was rate limited.
    pub fn assert_well_behaved(&self) {
        assert_eq!(self.fake.violations(), Vec::<String>::new());
        assert_eq!(self.fake.pings(), Vec::new(), "the bot pinged someone");
        assert_eq!(self.fake.rate_limited(), 0, "the bot was answered 429");
    }
}

/// The `[slack]` section for `fake`: its tokens written into `dir`, the served and the
/// announcement channels, its minute.
pub fn slack_config(fake: &FakeSlack, dir: &Path, channel: &str, announce: &str) -> BotSlackConfig {
    let bot_token_file = dir.join("slack-bot-token");
    std::fs::write(&bot_token_file, &fake.config().bot_token).unwrap();
    let app_token_file = dir.join("slack-app-token");
    std::fs::write(&app_token_file, &fake.config().app_token).unwrap();
    let id = |text: &str| SlackId::try_from(text.to_owned()).unwrap();
    BotSlackConfig {
        bot_token_file: Some(bot_token_file),
        app_token_file: Some(app_token_file),
        team: id(&fake.config().team_id),
        channels: vec![id(channel)],
        announce_channel: Some(id(announce)),
        api_url: fake.base_url(),
        ca_file: None,
        request_timeout: Duration::from_secs(15),
        updates_per_minute: 50,
        minute: MINUTE,
    }
}

/// What a message shows: its sections' text, one after the other.
pub fn shown(message: &SlackMessage) -> String {
    let sections: Vec<&str> = message
        .blocks
        .iter()
        .filter(|b| b["type"] == "section")
        .filter_map(|b| b["text"]["text"].as_str())
        .collect();
    if sections.is_empty() {
        message.text.clone()
    } else {
        sections.join("\n")
    }
}

/// A message's buttons: each one's label and `action_id`.
pub fn buttons(message: &SlackMessage) -> Vec<(String, String)> {
    message
        .blocks
        .iter()
        .filter(|b| b["type"] == "actions")
        .flat_map(|b| b["elements"].as_array().cloned().unwrap_or_default())
        .filter(|e| e["type"] == "button")
        .map(|e| {
            (
                e["text"]["text"].as_str().unwrap_or_default().to_owned(),
                e["action_id"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}
