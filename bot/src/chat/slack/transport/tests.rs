//! On tokio's paused clock, which the fake's rate limits follow too: the paces are skipped
//! through, never waited out.

use opsbot_commands::name::RunId;
use opsbot_commands::render::Tone;
use opsbot_fake_slack::{Failure, FakeSlack, SlackConfig, SlackMessage, Visibility, WebMethod};
use secrecy::SecretString;

use super::super::channel_id;
use super::*;

struct Slack {
    fake: FakeSlack,
    /// The store's name of `#ops`, where the bot is a member.
    ops: ChannelId,
    announcements: String,
    transport: SlackTransport,
}

impl Slack {
    async fn start() -> Self {
        let fake = FakeSlack::start(SlackConfig::default()).await;
        let ops = channel_id(&fake.add_channel("ops", Visibility::Public, true));
        let announcements = fake.add_channel("maintenance", Visibility::Public, true);
        let transport = transport(&fake, Some(announcements.clone()));
        Self {
            fake,
            ops,
            announcements,
            transport,
        }
    }

    async fn post(&self, channel: &ChannelId, text: &str) -> Result<MessageId, ChatError> {
        self.transport.post(channel, &view(text)).await
    }

    async fn edit(&self, message: &MessageId) -> Result<(), ChatError> {
        self.transport.edit(&self.ops, message, &view("x")).await
    }

    fn fail_next(&self, method: WebMethod, error: &str) {
        let failure = Failure::Error(error.to_owned());
        self.fake.fail_next(method, 1, failure);
    }

    fn messages(&self, channel: &ChannelId) -> Vec<SlackMessage> {
        self.fake.messages(slack_channel(channel).unwrap())
    }
}

fn transport(fake: &FakeSlack, announce_channel: Option<String>) -> SlackTransport {
    let token = SecretString::from(fake.config().bot_token.as_str());
    let web = Web::new(reqwest::Client::new(), &fake.base_url(), token);
    SlackTransport::new(
        web,
        announce_channel,
        50,
        Duration::from_secs(60),
        super::Blocked::default(),
    )
}

fn view(text: &str) -> ProgressView {
    ProgressView {
        run: RunId::new(1),
        message_key: "r1-1".to_owned(),
        text: text.to_owned(),
        tone: Tone::Running,
        plan: None,
        buttons: None,
    }
}

fn message(ts: &str) -> MessageId {
    MessageId(ts.to_owned())
}

#[tokio::test(start_paused = true)]
async fn a_run_message_is_posted_then_edited_in_place() {
    let slack = Slack::start().await;
    let id = slack.post(&slack.ops, "⏳ r-1").await.unwrap();
    let edited = view("✅ r-1 <!here>");
    slack
        .transport
        .edit(&slack.ops, &id, &edited)
        .await
        .unwrap();
    let [posted] = slack.messages(&slack.ops).try_into().unwrap();
    assert_eq!((posted.ts, posted.history.len()), (id.0, 2));
    assert_eq!(posted.text, "✅ r-1 &lt;!here&gt;");
    assert_eq!(slack.fake.pings(), vec![]);
}

#[tokio::test(start_paused = true)]
async fn a_message_or_channel_gone_is_gone() {
    let slack = Slack::start().await;
    let gone = |text: &str| Some(ChatError::Gone(format!("Slack: {text}")));
    let edit = slack.edit(&message("1700000000.000001")).await;
    assert_eq!(edit.err(), gone("chat.update: message_not_found"));
    let post = slack.post(&channel_id("C0DELETED"), "x").await;
    assert_eq!(post.err(), gone("chat.postMessage: channel_not_found"));
    slack.fail_next(WebMethod::ChatPostMessage, "is_archived");
    let post = slack.post(&slack.ops, "x").await;
    assert_eq!(post.err(), gone("chat.postMessage: is_archived"));
}

#[tokio::test(start_paused = true)]
async fn a_channel_without_the_bot_or_a_missing_scope_is_forbidden_saying_what_to_do() {
    let slack = Slack::start().await;
    let outside = channel_id(&slack.fake.add_channel("x", Visibility::Public, false));
    let refused = slack.post(&outside, "x").await;
    let membership = Forbidden {
        channel: outside,
        missing: MEMBERSHIP.to_owned(),
    };
    assert_eq!(refused, Err(membership.into()));
    let token = &slack.fake.config().bot_token;
    slack.fake.set_scopes(token, &["channels:read"]);
    let refused = slack.transport.notice(&slack.ops, "x").await;
    let scope = Forbidden {
        channel: slack.ops.clone(),
        missing: "the scope chat:write".to_owned(),
    };
    assert_eq!(refused, Err(scope.into()));
}

#[tokio::test(start_paused = true)]
async fn after_a_refused_token_nothing_more_is_sent_at_all() {
    let slack = Slack::start().await;
    let id = slack.post(&slack.ops, "x").await.unwrap();
    slack.fail_next(WebMethod::ChatPostMessage, "token_revoked");
    let refused = slack.post(&slack.ops, "x").await;
    let said = "Slack: chat.postMessage: token_revoked".to_owned();
    assert_eq!(refused, Err(ChatError::TokenRefused(said)));
    let announcement = Announcement::named("n", "maintenance".to_owned());
    let tries = [
        slack.post(&slack.ops, "y").await.map(drop),
        slack.edit(&id).await,
        slack.transport.notice(&slack.ops, "y").await,
        slack.transport.announce(&announcement).await,
    ];
    for tried in tries {
        assert!(
            matches!(tried, Err(ChatError::TokenRefused(_))),
            "{tried:?}"
        );
    }
    // The fake would have taken each of them: none was sent.
    assert_eq!(slack.fake.calls(WebMethod::ChatPostMessage).len(), 2);
    assert_eq!(slack.fake.calls(WebMethod::ChatUpdate).len(), 0);
}

#[tokio::test(start_paused = true)]
async fn rate_limits_and_outages_may_pass() {
    let slack = Slack::start().await;
    let limited = Failure::RateLimited {
        retry_after_secs: 1,
    };
    slack.fake.fail_next(WebMethod::ChatPostMessage, 1, limited);
    let post = slack.post(&slack.ops, "x").await;
    let said = "Slack: chat.postMessage: rate limited for 1s".to_owned();
    assert_eq!(post, Err(ChatError::Transient(said)));
    slack.fail_next(WebMethod::ChatUpdate, "ratelimited");
    let edit = slack.edit(&message("1.000001")).await;
    assert!(matches!(edit, Err(ChatError::Transient(_))), "{edit:?}");
    // A new client: a connection kept alive from before would still be answered.
    slack.fake.set_away(true);
    let away = transport(&slack.fake, None);
    let edit = away
        .edit(&slack.ops, &message("1.000001"), &view("x"))
        .await;
    assert!(matches!(edit, Err(ChatError::Transient(_))), "{edit:?}");
}

#[tokio::test(start_paused = true)]
async fn anything_else_is_refused_with_slacks_code() {
    let slack = Slack::start().await;
    let ops = slack_channel(&slack.ops).unwrap();
    let theirs = slack.fake.post_as_user(ops, "U0ALICE1", "hi");
    let edit = slack.edit(&message(&theirs)).await.unwrap_err();
    let said = "refused: Slack: chat.update: cant_update_message";
    assert_eq!(edit.to_string(), said);
    slack.fail_next(WebMethod::ChatPostMessage, "msg_too_long");
    let post = slack.post(&slack.ops, "x").await;
    assert!(matches!(post, Err(ChatError::Refused(_))), "{post:?}");
    let discord = ChannelId("1234567890".to_owned());
    let post = slack.post(&discord, "x").await;
    assert!(matches!(post, Err(ChatError::Refused(_))), "{post:?}");
    assert_eq!(slack.fake.calls(WebMethod::ChatPostMessage).len(), 1);
}

#[tokio::test(start_paused = true)]
async fn notices_and_announcements_are_plain_escaped_text_where_configured() {
    let slack = Slack::start().await;
    let notice = "⚠️ <!channel> stopped";
    slack.transport.notice(&slack.ops, notice).await.unwrap();
    let [told] = slack.messages(&slack.ops).try_into().unwrap();
    assert_eq!(
        (told.text.as_str(), told.blocks),
        ("⚠️ &lt;!channel&gt; stopped", vec![])
    );
    let announcement = Announcement::named("n", "📣 maintenance <!here>".to_owned());
    slack.transport.announce(&announcement).await.unwrap();
    let [announced] = slack
        .fake
        .messages(&slack.announcements)
        .try_into()
        .unwrap();
    assert_eq!(announced.text, "📣 maintenance &lt;!here&gt;");
    assert_eq!(slack.fake.pings(), vec![]);
    let unannounced = transport(&slack.fake, None);
    unannounced.announce(&announcement).await.unwrap();
    assert_eq!(slack.fake.calls(WebMethod::ChatPostMessage).len(), 2);
}

/// Twenty runs start in one channel at once and each changes three times: 20 posts in one
/// channel and 60 edits, more than Slack allows in a minute, all at Slack's own rates.
#[tokio::test(start_paused = true)]
async fn twenty_runs_in_one_channel_never_meet_a_429() {
    let slack = Slack::start().await;
    let runs = (1..=20).map(|run| {
        let (transport, ops) = (slack.transport.clone(), slack.ops.clone());
        tokio::spawn(async move {
            let id = transport.post(&ops, &view(&format!("r-{run}"))).await?;
            for change in 1..=3 {
                let text = format!("r-{run} step {change}");
                transport.edit(&ops, &id, &view(&text)).await?;
            }
            Ok::<_, ChatError>(())
        })
    });
    for run in futures::future::join_all(runs).await {
        run.unwrap().unwrap();
    }
    assert_eq!(slack.fake.rate_limited(), 0);
    assert_eq!(slack.fake.calls(WebMethod::ChatUpdate).len(), 60);
    let messages = slack.messages(&slack.ops);
    assert_eq!(messages.len(), 20);
    assert!(messages.iter().all(|m| m.text.ends_with("step 3")));
}
