//! `opsbot check` on Slack, against the fake: one `slack` line that says what works and, when
//! something does not, exactly what to fix; nothing is posted and no Socket Mode URL is spent.

use opsbot_fake_slack::{FakeSlack, TokenStatus, Visibility, WebMethod};

use crate::support::{output, spawn};

/// A fake workspace with `#ops` (served) and `#maintenance` (announcements), the bot in both.
struct Workspace {
    fake: FakeSlack,
    ops: String,
    maintenance: String,
    dir: tempfile::TempDir,
}

async fn workspace() -> Workspace {
    let fake = FakeSlack::start(opsbot_tests::slack::fake_config()).await;
    let ops = fake.add_channel("ops", Visibility::Public, true);
    let maintenance = fake.add_channel("maintenance", Visibility::Public, true);
    Workspace {
        fake,
        ops,
        maintenance,
        dir: tempfile::tempdir().unwrap(),
    }
}

impl Workspace {
    fn bot_token(&self) -> String {
        self.fake.config().bot_token.clone()
    }

    /// `opsbot check` with `[slack]` serving `channels` in `team`, announcing in
    /// `#maintenance`: what it printed, and whether it passed. Nothing was posted.
    async fn check(&self, team: &str, channels: &[&str]) -> (String, bool) {
        let dir = self.dir.path();
        std::fs::write(dir.join("slack-bot"), self.bot_token()).unwrap();
        std::fs::write(dir.join("slack-app"), &self.fake.config().app_token).unwrap();
        let config = dir.join("opsbot.toml");
        let books = dir.join("runbooks");
        std::fs::create_dir_all(&books).unwrap();
        let text = format!(
            r#"[store]
path = "{store}"

[slack]
bot_token_file = "{bot}"
app_token_file = "{app}"
team = "{team}"
channels = {channels:?}
announce_channel = "{announce}"
api_url = "{api}"

[[people]]
name = "alice"
roles = ["operator"]
slack_user = "U0ALICE"

# Something to act on, which the config requires, with no line of its own to fail.
[runbooks]
dir = "{books}"
[runbooks.inventory]
compute = ["compute-01"]
"#,
            store = dir.join("store").display(),
            books = books.display(),
            bot = dir.join("slack-bot").display(),
            app = dir.join("slack-app").display(),
            announce = self.maintenance,
            api = self.fake.base_url(),
        );
        std::fs::write(&config, text).unwrap();
        let out = output(spawn(
            &["check", "--config", &config.display().to_string()],
            "",
        ))
        .await;
        for method in [
            WebMethod::ChatPostMessage,
            WebMethod::ChatPostEphemeral,
            WebMethod::AppsConnectionsOpen,
        ] {
            assert!(self.fake.calls(method).is_empty(), "{method:?}");
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        let slack: Vec<&str> = stdout
            .lines()
            .filter(|l| l.get(6..).is_some_and(|l| l.starts_with("slack: ")))
            .collect();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(slack.len(), 1, "{stdout}{stderr}");
        let others_pass = stdout
            .lines()
            .all(|l| l.starts_with("ok ") || slack.contains(&l));
        assert!(others_pass, "{stdout}");
        (slack[0].to_owned(), out.status.success())
    }

    fn team(&self) -> String {
        self.fake.config().team_id.clone()
    }
}

const APP_TOKEN: &str = "the app-level token is checked when the bot connects";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_fine() {
    let w = workspace().await;
    let (line, passed) = w.check(&w.team(), &[&w.ops]).await;
    assert_eq!(
        line,
        format!(
            "ok    slack: workspace T0FAKE0001, bot U0FAKEBOT1, every scope opsbot uses; \
             channels #ops, #maintenance (announcements) answer, each read and written; \
             {APP_TOKEN}"
        )
    );
    assert!(passed);
    assert_eq!(w.fake.calls(WebMethod::ConversationsInfo).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_chat_write_scope() {
    let w = workspace().await;
    let read_only: Vec<&str> = opsbot::chat::slack::BOT_SCOPES
        .into_iter()
        .filter(|scope| *scope != "chat:write")
        .collect();
    w.fake.set_scopes(&w.bot_token(), &read_only);
    let (line, passed) = w.check(&w.team(), &[&w.ops]).await;
    assert_eq!(
        line,
        format!(
            "FAIL  slack: workspace T0FAKE0001, bot U0FAKEBOT1: the bot token lacks the scope \
             chat:write: add it under OAuth & Permissions and reinstall the app; #ops can be \
             read, not written; #maintenance (announcements) can be read, not written; \
             {APP_TOKEN}"
        )
    );
    assert!(!passed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bot_not_in_a_channel() {
    let w = workspace().await;
    let random = w.fake.add_channel("random", Visibility::Public, false);
    let (line, passed) = w.check(&w.team(), &[&w.ops, &random]).await;
    assert_eq!(
        line,
        format!(
            "FAIL  slack: workspace T0FAKE0001, bot U0FAKEBOT1, every scope opsbot uses: the \
             bot is not in channel #random ({random}): type /invite @opsbot there; #ops can be \
             read and written; #random can be read, not written; #maintenance (announcements) \
             can be read and written; {APP_TOKEN}"
        )
    );
    assert!(!passed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_token() {
    let w = workspace().await;
    w.fake
        .set_token_status(&w.bot_token(), TokenStatus::Revoked);
    let (line, passed) = w.check(&w.team(), &[&w.ops]).await;
    assert_eq!(
        line,
        "FAIL  slack: checking the bot token: Slack: auth.test: token_revoked; the app was \
         uninstalled or its token revoked: reinstall the app and put its new Bot User OAuth \
         Token in place"
    );
    assert!(!passed);
    assert!(w.fake.calls(WebMethod::ConversationsInfo).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_workspace() {
    let w = workspace().await;
    let (line, passed) = w.check("T0OTHER01", &[&w.ops]).await;
    assert_eq!(
        line,
        "FAIL  slack: the bot token belongs to workspace T0FAKE0001, not to [slack] team \
         T0OTHER01: install the app in that workspace or fix team"
    );
    assert!(!passed);
}
