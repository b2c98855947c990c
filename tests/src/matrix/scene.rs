//! The Matrix scene: the real bot against the real Synapse ([`real_synapse`]) and the
//! simulated cluster. alice, bob, dave and mallory are real users of the homeserver, in real
//! rooms; they type commands, react and redact, and read what the room shows. [`MatrixWorld`]
//! is the homeserver's side alone, for tests that run the bot's binary themselves.

use std::ops::Deref;
use std::path::Path;
use std::time::Duration;

use opsbot::config::{MatrixConfig, ProgressConfig, RoomId};
use opsbot_commands::people::MatrixUser as MatrixId;
use opsbot_search_sim::SimHandle;
use serde_json::Value;
use tokio::task::JoinHandle;

use super::{MESSAGES_PER_SECOND, MatrixUser, Synapse, real_synapse};
use crate::{PATIENCE, Setup};

/// The people and rooms on the real Synapse: everyone registered, alice's rooms made, and
/// everyone invited (the bot accepts its invitations when it starts) and joined.
#[derive(Debug)]
pub struct MatrixWorld {
    pub synapse: &'static Synapse,
    /// The bot's own account: tests read its id, never act as it.
    pub bot: MatrixUser,
    /// Operator; operator and approver; approver; someone opsbot does not know.
    pub alice: MatrixUser,
    pub bob: MatrixUser,
    pub dave: MatrixUser,
    pub mallory: MatrixUser,
    /// The served room, one it does not serve, and the announcement room.
    pub room: String,
    pub other_room: String,
    pub announce_room: String,
}

impl MatrixWorld {
    /// The served room encrypted when `encrypted` (Element's default for a private room).
    pub async fn new(encrypted: bool) -> Self {
        let synapse = real_synapse().await;
        let (bot, alice, bob, dave, mallory) = tokio::join!(
            synapse.register("opsbot"),
            synapse.register("alice"),
            synapse.register("bob"),
            synapse.register("dave"),
            synapse.register("mallory"),
        );
        let room = alice.create_room("ops", encrypted).await;
        let other_room = alice.create_room("random", false).await;
        let announce_room = alice.create_room("maintenance", false).await;
        for r in [&room, &other_room, &announce_room] {
            for user in [&bot, &bob, &dave, &mallory] {
                alice.invite(r, user.user_id()).await;
            }
            for user in [&bob, &dave, &mallory] {
                user.join(r).await;
            }
        }
        Self {
            synapse,
            bot,
            alice,
            bob,
            dave,
            mallory,
            room,
            other_room,
            announce_room,
        }
    }

    /// The Matrix user of a person of [`crate::people`] (alice, bob, dave).
    pub fn person(&self, name: &str) -> Option<&MatrixUser> {
        match name {
            "alice" => Some(&self.alice),
            "bob" => Some(&self.bob),
            "dave" => Some(&self.dave),
            _ => None,
        }
    }

    /// The bot's `[matrix]`, its password written into `dir`: the served and the announcement
    /// rooms, a message rate below the harness's homeserver limit.
    pub fn config(&self, dir: &Path) -> MatrixConfig {
        let password_file = dir.join("matrix-password");
        std::fs::write(&password_file, self.bot.password())
            .unwrap_or_else(|e| panic!("the bot's password file: {e}"));
        let id = |room: &str| {
            RoomId::try_from(room.to_owned()).unwrap_or_else(|e| panic!("a room id: {e}"))
        };
        MatrixConfig {
            homeserver: self.synapse.base_url().to_owned(),
            user: matrix_id(self.bot.user_id()),
            access_token_file: None,
            password_file: Some(password_file),
            rooms: vec![id(&self.room)],
            announce_room: Some(id(&self.announce_room)),
            ca_file: None,
            request_timeout: Duration::from_secs(15),
            // Below the harness's Synapse limit, as an operator sets it below theirs.
            messages_per_second: MESSAGES_PER_SECOND * 0.8,
        }
    }

    /// Waits until the bot has joined `room`.
    pub async fn joined(&self, room: &str) {
        let bot = self.bot.user_id().to_owned();
        self.alice
            .wait_for(
                room,
                |e| {
                    e["type"] == "m.room.member"
                        && e["state_key"] == bot.as_str()
                        && e["content"]["membership"] == "join"
                },
                PATIENCE,
            )
            .await;
    }

    /// `user` types `text` in the served room; the message's event id.
    pub async fn say(&self, user: &MatrixUser, text: &str) -> String {
        user.send_text(&self.room, text).await
    }

    /// The bot's answer to the message `event` in `room`.
    pub async fn answer_to(&self, room: &str, event: &str) -> String {
        let bot = self.bot.user_id().to_owned();
        let answer = self
            .alice
            .wait_for(
                room,
                |e| {
                    e["sender"] == bot.as_str()
                        && e["content"]["m.relates_to"]["m.in_reply_to"]["event_id"] == event
                },
                PATIENCE,
            )
            .await;
        body(&answer).to_owned()
    }

    /// `user` types `text` in the served room and reads the bot's answer.
    pub async fn ask(&self, user: &MatrixUser, text: &str) -> String {
        let event = self.say(user, text).await;
        self.answer_to(&self.room, &event).await
    }

    /// `user` confirms the run their command's `answer` says waits for their confirmation
    /// (the `confirm` policy), with the `!run confirm` it names.
    pub async fn confirm(&self, user: &MatrixUser, answer: &str) {
        let command = answer
            .split_once("!run confirm ")
            .and_then(|(_, rest)| rest.split_once(','))
            .map(|(options, _)| format!("!run confirm {options}"))
            .unwrap_or_else(|| panic!("nothing to confirm in {answer:?}"));
        let confirmed = self.ask(user, &command).await;
        assert!(confirmed.contains(" confirmed by "), "{confirmed}");
    }

    /// The first message the bot posted in `room` whose text satisfies `matches`.
    pub async fn posted(&self, room: &str, matches: impl Fn(&str) -> bool) -> String {
        let bot = self.bot.user_id().to_owned();
        let event = self
            .alice
            .wait_for(
                room,
                |e| e["sender"] == bot.as_str() && matches(shown(e)),
                PATIENCE,
            )
            .await;
        shown(&event).to_owned()
    }

    /// The bot's requests the homeserver answered with `status`, as its access log says, and
    /// whose line contains `what` (`/send/`, `/sync`).
    pub fn answered(&self, status: u16, what: &str) -> usize {
        let who = format!("{{{}}}", self.bot.user_id());
        let code = format!(" {status} ");
        self.requests(|line| line.contains(&who) && line.contains(&code) && line.contains(what))
    }

    /// The requests in the homeserver's access log (anyone's) whose line satisfies `matches`.
    pub fn requests(&self, matches: impl Fn(&str) -> bool) -> usize {
        let log = self.synapse.data_dir().join("homeserver.log");
        let log = std::fs::read_to_string(&log)
            .unwrap_or_else(|e| panic!("the homeserver's log {}: {e}", log.display()));
        log.lines()
            .filter(|line| line.contains("Processed request") && matches(line))
            .count()
    }

    /// The run's progress message (its event id) once its latest text satisfies `done`, and
    /// that text.
    pub async fn progress(&self, run: &str, done: impl Fn(&str) -> bool) -> (String, String) {
        let mark = format!(" {run} · ");
        let bot = self.bot.user_id().to_owned();
        let shown = self
            .alice
            .wait_for(
                &self.room,
                |e| {
                    let text = shown(e);
                    e["sender"] == bot.as_str() && text.contains(&mark) && done(text)
                },
                PATIENCE,
            )
            .await;
        let original = shown["content"]["m.relates_to"]["event_id"]
            .as_str()
            .or(shown["event_id"].as_str())
            .unwrap_or_default();
        (original.to_owned(), self::shown(&shown).to_owned())
    }
}

/// A registered user's id, as the config takes it.
pub fn matrix_id(user: &str) -> MatrixId {
    MatrixId::parse(user).unwrap_or_else(|e| panic!("a registered user's id: {e}"))
}

/// The bot, its people, their rooms and the simulated cluster, torn down on drop.
pub struct MatrixScene {
    pub world: MatrixWorld,
    pub sim: SimHandle,
    task: JoinHandle<anyhow::Result<()>>,
    _others: Vec<SimHandle>,
    _dir: tempfile::TempDir,
}

impl Deref for MatrixScene {
    type Target = MatrixWorld;
    fn deref(&self) -> &MatrixWorld {
        &self.world
    }
}

impl std::fmt::Debug for MatrixScene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatrixScene")
            .field("world", &self.world)
            .finish_non_exhaustive()
    }
}

impl Drop for MatrixScene {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MatrixScene {
    /// The world made and the bot started; returns once it has joined the served room.
    pub async fn start(setup: Setup) -> Self {
        Self::start_with(setup, |_| {}).await
    }

    /// [`Self::start`], with `prepare` changing the bot's `[matrix]` before it starts.
    pub async fn start_with(setup: Setup, prepare: impl FnOnce(&mut MatrixConfig)) -> Self {
        let scene = Self::launch(setup, false, prepare).await;
        scene.joined(&scene.room).await;
        scene
    }

    /// The bot started with `prepare`'s `[matrix]`, without waiting for it to reach the
    /// homeserver (one that does not answer, say).
    pub async fn launch_with(setup: Setup, prepare: impl FnOnce(&mut MatrixConfig)) -> Self {
        Self::launch(setup, false, prepare).await
    }

    /// The bot started with an encrypted served room, without waiting for anything.
    pub async fn start_encrypted(setup: Setup) -> Self {
        Self::launch(setup, true, |_| {}).await
    }

    async fn launch(
        setup: Setup,
        encrypted: bool,
        prepare: impl FnOnce(&mut MatrixConfig),
    ) -> Self {
        let world = MatrixWorld::new(encrypted).await;
        let (mut sims, mut config, dir) = crate::world(&setup).await;
        for person in &mut config.people {
            if let Some(user) = world.person(person.name.as_str()) {
                person.matrix_user = Some(matrix_id(user.user_id()));
            }
        }
        config.progress = ProgressConfig {
            edits_per_window: 4,
            window: Duration::from_secs(1),
        };
        let mut matrix = world.config(dir.path());
        prepare(&mut matrix);
        config.matrix = Some(matrix);
        let task = tokio::spawn(opsbot::serve::run_until(
            config,
            opsbot::clock::Clock::system(),
            std::future::pending(),
        ));
        Self {
            world,
            sim: sims.remove(0),
            task,
            _others: sims,
            _dir: dir,
        }
    }

    /// Whether the bot is still serving (it has not ended, with or without an error).
    pub fn is_serving(&self) -> bool {
        !self.task.is_finished()
    }

    /// How the bot ended, once it has (a start refused): its error.
    pub async fn ended(&mut self) -> String {
        match tokio::time::timeout(PATIENCE, &mut self.task).await {
            Ok(Ok(Err(error))) => format!("{error:#}"),
            other => panic!("the bot did not end with an error: {other:?}"),
        }
    }
}

/// A message's text: an edit's new content, or the message's own.
pub fn shown(event: &Value) -> &str {
    event["content"]["m.new_content"]["body"]
        .as_str()
        .or(event["content"]["body"].as_str())
        .unwrap_or_default()
}

/// A message's body as sent.
pub fn body(event: &Value) -> &str {
    event["content"]["body"].as_str().unwrap_or_default()
}
