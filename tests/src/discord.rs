//! The Discord scene: the real bot (`opsbot::chat::discord::run`, serenity included) against
//! the loopback fake Discord and the simulated cluster. Tests type slash commands and press
//! buttons as Discord users, and read what the channel shows.

use opsbot::config::{Config, DiscordConfig, ProgressConfig};
use opsbot_commands::catalogue::OptionKind;
use opsbot_commands::parse;
use opsbot_fake_discord::{FakeConfig, FakeDiscord, FakeMessage, FakeUser};
use opsbot_search_sim::SimHandle;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::{PATIENCE, Setup, world};

/// The rate-limit window of the fake and of the bot's progress quota.
const WINDOW: std::time::Duration = std::time::Duration::from_secs(1);

/// The channel opsbot serves in, and one it does not.
pub const CHANNEL: u64 = 900_000_000_000_000_001;
pub const OTHER_CHANNEL: u64 = 900_000_000_000_000_002;
/// Where maintenance is announced.
pub const ANNOUNCE_CHANNEL: u64 = 900_000_000_000_000_003;
const OPERATOR_ROLE: u64 = 800_000_000_000_000_001;
const APPROVER_ROLE: u64 = 800_000_000_000_000_002;

/// alice operates; bob operates and approves; dave only approves (as [`crate::people`] says);
/// carol is a guild member opsbot does not know. Their Discord roles are what a guild would
/// give them; opsbot reads roles from its config.
pub fn user(name: &str) -> FakeUser {
    let (id, roles): (u64, &[u64]) = match name {
        "alice" => (1, &[OPERATOR_ROLE]),
        "bob" => (2, &[OPERATOR_ROLE, APPROVER_ROLE]),
        "dave" => (4, &[APPROVER_ROLE]),
        _ => (3, &[]),
    };
    FakeDiscord::user(700_000_000_000_000_000 + id, name, roles)
}

/// The bot, the fake Discord and the simulated cluster, torn down on drop.
pub struct DiscordScene {
    pub fake: FakeDiscord,
    /// The cluster `logs`.
    pub sim: SimHandle,
    /// `logs2`, `logs3`, ... when the setup asks for more; held so that they keep serving.
    _others: Vec<SimHandle>,
    /// The bot's console socket, where alice is the account running the tests.
    pub console: std::path::PathBuf,
    bot: JoinHandle<anyhow::Result<()>>,
    _dir: tempfile::TempDir,
}

impl std::fmt::Debug for DiscordScene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscordScene").finish_non_exhaustive()
    }
}

impl Drop for DiscordScene {
    fn drop(&mut self) {
        self.bot.abort();
    }
}

impl DiscordScene {
    pub async fn start(setup: Setup) -> Self {
        Self::start_with(setup, |_, _| {}).await
    }

    /// [`Self::start`], with `prepare` changing the fake (say, the bot's permissions) and the
    /// bot's config before the bot starts.
    pub async fn start_with(setup: Setup, prepare: impl FnOnce(&FakeDiscord, &mut Config)) -> Self {
        // Discord's per-channel message limit (about 5 per 5 s) and the bot's own quota under
        // it, both scaled to a 1 s window so that tests take seconds, not minutes.
        let fake = FakeDiscord::start(FakeConfig {
            channels: vec![CHANNEL, OTHER_CHANNEL, ANNOUNCE_CHANNEL],
            edits_per_window: 5,
            window: WINDOW,
            ..FakeConfig::default()
        })
        .await;
        let (mut sims, mut config, dir) = world(&setup).await;
        let sim = sims.remove(0);
        config.progress = ProgressConfig {
            edits_per_window: 4,
            window: WINDOW,
        };
        config.discord = Some(discord_config(&fake, dir.path()));
        // The console socket too, where alice speaks from the account running the tests.
        let console = dir.path().join("console.sock");
        config.console.socket = Some(console.clone());
        let me = opsbot::chat::console::running_account().unwrap();
        for person in &mut config.people {
            if person.name.as_str() == "alice" {
                person.accounts.push(me.clone());
            }
        }
        prepare(&fake, &mut config);
        // Served until the scene is dropped; stopping by SIGTERM is the binary's own test.
        let bot = tokio::spawn(opsbot::serve::run_until(
            config,
            opsbot::clock::Clock::system(),
            std::future::pending(),
        ));
        fake.wait_ready(PATIENCE).await.unwrap();
        fake.wait_commands(PATIENCE).await.unwrap();
        Self {
            fake,
            sim,
            _others: sims,
            console,
            bot,
            _dir: dir,
        }
    }

    /// The first warning the bot gives the people of `channel` (a message starting with ⚠️),
    /// once it is there.
    pub async fn told(&self, channel: u64) -> FakeMessage {
        self.fake
            .wait_message(channel, PATIENCE, |m| m.content.starts_with("⚠️"))
            .await
            .unwrap()
    }

    /// What the announcement channel was told, in order, once a message starting with `last`
    /// is there.
    pub async fn announced_until(&self, last: &str) -> Vec<String> {
        self.fake
            .wait_message(ANNOUNCE_CHANNEL, PATIENCE, |m| m.content.starts_with(last))
            .await
            .unwrap();
        self.fake
            .messages(ANNOUNCE_CHANNEL)
            .into_iter()
            .map(|m| m.content)
            .collect()
    }

    /// Requests the bot made on the messages of `channel` (posts and edits, refused or not).
    pub fn message_requests(&self, channel: u64) -> usize {
        self.fake
            .requests_under(&format!("channels/{channel}/messages"))
    }

    /// Types `line` (console syntax, `/cluster status cluster:logs`) as a slash command in the
    /// served channel and returns the first text its author gets, and whether it is private.
    pub async fn slash(&self, user: &FakeUser, line: &str) -> (String, bool) {
        self.slash_in(user, CHANNEL, line).await
    }

    pub async fn slash_in(&self, user: &FakeUser, channel: u64, line: &str) -> (String, bool) {
        let (command, options) = options(line);
        let id = self.fake.slash(user, channel, &command, options).await;
        let (text, private) = self.fake.reply_text(id, PATIENCE).await.unwrap();
        if text != opsbot::chat::discord::ANSWERED_BELOW {
            return (text, private);
        }
        // A public answer after a private deferral comes as a follow-up.
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let record = self.fake.interaction(id).unwrap();
            if let Some(followup) = record.followups.first() {
                let flags = followup["flags"].as_u64().unwrap_or(0);
                let content = followup["content"].as_str().unwrap_or_default().to_owned();
                return (content, flags & 64 != 0);
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no follow-up to {line}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    /// Types in the option of `options` marked `"focused": true` (Discord's options array, e.g.
    /// `[{"name":"run","type":1,"options":[...]}]`) and returns the autocomplete choices offered,
    /// each as the name shown and the value sent.
    pub async fn choices(
        &self,
        user: &FakeUser,
        command: &str,
        options: Value,
    ) -> Vec<(String, String)> {
        self.choices_in(user, CHANNEL, command, options).await
    }

    /// [`Self::choices`] in `channel`.
    pub async fn choices_in(
        &self,
        user: &FakeUser,
        channel: u64,
        command: &str,
        options: Value,
    ) -> Vec<(String, String)> {
        let id = self
            .fake
            .autocomplete(user, channel, command, options)
            .await;
        let record = self.fake.response(id, PATIENCE).await.unwrap();
        assert_eq!(record.kind, 8, "an autocomplete result: {:?}", record.data);
        record.data["choices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_owned(),
                    c["value"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    /// The progress message of a run: the channel message whose embed starts with its icon
    /// and id, once `done` holds for it.
    pub async fn progress(&self, run: &str, done: impl Fn(&str) -> bool) -> FakeMessage {
        let mark = format!(" {run} · ");
        self.fake
            .wait_message(CHANNEL, PATIENCE, |m| {
                let text = embed_text(m);
                text.contains(&mark) && done(&text)
            })
            .await
            .unwrap()
    }

    /// The requester confirms the run that `reply`, the answer to their command, says waits
    /// for their confirmation (the `confirm` policy), with the `/run confirm` it names: it
    /// works where the plan's message with its Confirm button could not be posted.
    pub async fn confirm(&self, user: &FakeUser, reply: &str) {
        let command = reply
            .split_once("/run confirm ")
            .and_then(|(_, rest)| rest.split_once(','))
            .map(|(options, _)| format!("/run confirm {options}"))
            .unwrap_or_else(|| panic!("nothing to confirm in {reply}"));
        let (text, private) = self.slash(user, &command).await;
        assert!(!private && text.contains(" confirmed by "), "{text}");
    }

    /// Presses a button of a message, by its label.
    pub async fn press(
        &self,
        user: &FakeUser,
        message: &FakeMessage,
        label: &str,
    ) -> (String, bool) {
        let custom_id = message
            .components
            .iter()
            .flat_map(|row| row["components"].as_array().cloned().unwrap_or_default())
            .find(|b| b["label"] == label)
            .and_then(|b| b["custom_id"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("no `{label}` button on {:?}", message.components));
        let id = self.fake.click(user, CHANNEL, message.id, &custom_id).await;
        let record = self.fake.response(id, PATIENCE).await.unwrap();
        let text = record.data["content"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| {
                record.data["embeds"][0]["description"]
                    .as_str()
                    .map(str::to_owned)
            })
            .unwrap_or_default();
        (text, record.ephemeral)
    }

    /// Nothing the bot sent broke a Discord rule, and no request was rate limited.
    pub fn assert_well_behaved(&self) {
        assert_eq!(self.fake.violations(), Vec::<String>::new());
        assert_eq!(self.fake.rate_limited(), 0, "the bot was answered 429");
    }
}

/// The `[discord]` section for `fake`: its token and CA written into `dir`, alice, bob and
/// dave's roles, the served and the announcement channels.
pub fn discord_config(fake: &FakeDiscord, dir: &std::path::Path) -> DiscordConfig {
    let token_file = dir.join("discord-token");
    std::fs::write(&token_file, &fake.config().token).unwrap();
    let ca_file = dir.join("discord-ca.pem");
    std::fs::write(&ca_file, fake.ca_pem()).unwrap();
    DiscordConfig {
        token_file: Some(token_file),
        guild: fake.config().guild_id,
        channels: vec![CHANNEL],
        announce_channel: Some(ANNOUNCE_CHANNEL),
        api_address: Some(fake.rest_addr()),
        ca_file: Some(ca_file),
        request_timeout: std::time::Duration::from_secs(15),
    }
}

/// What a progress message shows: its embed's description.
pub fn embed_text(message: &FakeMessage) -> String {
    message
        .embeds
        .first()
        .and_then(|e| e["description"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Whether a message's buttons can still be pressed.
pub fn buttons_enabled(message: &FakeMessage) -> Vec<bool> {
    message
        .components
        .iter()
        .flat_map(|row| row["components"].as_array().cloned().unwrap_or_default())
        .map(|b| b["disabled"] != true)
        .collect()
}

/// The command name and the options array Discord sends for a console-syntax line; option
/// types follow the catalogue (days are integers).
fn options(line: &str) -> (String, Value) {
    let mut words = line.split_whitespace();
    let group = words.next().unwrap().trim_start_matches('/').to_owned();
    let rest: Vec<&str> = words.collect();
    let (sub, pairs) = match rest.first() {
        Some(word) if !word.contains(':') => (Some(*word), &rest[1..]),
        _ => (None, &rest[..]),
    };
    let spec = parse::command_by_path(&group, sub).unwrap_or_else(|| panic!("{line}"));
    let values: Vec<Value> = pairs
        .iter()
        .map(|pair| {
            let (name, value) = pair.split_once(':').unwrap();
            let value = value.trim_matches('"');
            match spec.option(name).map(|o| o.kind) {
                Some(OptionKind::Days | OptionKind::Page) => {
                    json!({"name": name, "type": 4, "value": value.parse::<i64>().unwrap()})
                }
                _ => json!({"name": name, "type": 3, "value": value}),
            }
        })
        .collect();
    let options = match sub {
        Some(sub) => json!([{"name": sub, "type": 1, "options": values}]),
        None => Value::Array(values),
    };
    (group, options)
}
