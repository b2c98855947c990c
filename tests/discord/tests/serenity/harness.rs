//! A real serenity 0.12.5 client wired to the fake (Variant B: serenity's ratelimiter on).

use std::future::Future;
use std::sync::{Arc, Once};
use std::time::Duration;

use futures::future::BoxFuture;
use opsbot_fake_discord::{FakeConfig, FakeDiscord};
use serde_json::Value;
use serde_json::json;
use serenity::all::{
    ChannelId, ClientBuilder, CommandOptionType, Context, CreateCommand, CreateCommandOption,
    EventHandler, GatewayIntents, Guild, GuildChannel, GuildId, Http, HttpBuilder, Interaction,
    MessageId, Ready, ShardManager,
};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;

/// How long any single wait may take before the test fails.
pub const T: Duration = Duration::from_secs(10);

pub type OnInteraction = Arc<dyn Fn(Context, Interaction) -> BoxFuture<'static, ()> + Send + Sync>;

/// Wraps an async closure as the bot's interaction handler.
pub fn on<F, Fut>(f: F) -> OnInteraction
where
    F: Fn(Context, Interaction) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    Arc::new(move |ctx, interaction| Box::pin(f(ctx, interaction)))
}

/// Fails the test loudly instead of hanging.
pub async fn within<F: Future>(limit: Duration, f: F) -> F::Output {
    match tokio::time::timeout(limit, f).await {
        Ok(out) => out,
        Err(_) => panic!("test did not finish within {limit:?}"),
    }
}

pub fn init_tracing() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        let filter = tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_test_writer()
            .try_init();
    });
}

/// The commands the bot registers on READY.
pub fn commands() -> Vec<CreateCommand> {
    let cluster = CreateCommandOption::new(CommandOptionType::String, "cluster", "Which cluster")
        .required(true)
        .set_autocomplete(true);
    let status =
        CreateCommandOption::new(CommandOptionType::SubCommand, "status", "Cluster health")
            .add_sub_option(cluster);
    vec![
        CreateCommand::new("cluster")
            .description("Log cluster operations")
            .add_option(status),
        CreateCommand::new("ping").description("Answer at once"),
        CreateCommand::new("slow").description("Answer too late"),
    ]
}

struct Handler {
    on: OnInteraction,
    guilds: Arc<std::sync::Mutex<Vec<(u64, usize)>>>,
    events: UnboundedSender<Value>,
}

#[serenity::async_trait]
impl EventHandler for Handler {
    async fn ready(&self, ctx: Context, ready: Ready) {
        for guild in &ready.guilds {
            if let Err(e) = guild.id.set_commands(&ctx.http, commands()).await {
                tracing::error!("registering commands failed: {e}");
            }
        }
    }

    async fn guild_create(&self, _ctx: Context, guild: Guild, _is_new: Option<bool>) {
        self.guilds
            .lock()
            .unwrap()
            .push((guild.id.get(), guild.channels.len()));
    }

    async fn interaction_create(&self, ctx: Context, interaction: Interaction) {
        (self.on)(ctx, interaction).await;
    }

    async fn channel_update(&self, _ctx: Context, _old: Option<GuildChannel>, new: GuildChannel) {
        let overwrites = serde_json::to_value(&new.permission_overwrites).unwrap();
        let _ = self.events.send(json!({
            "t": "CHANNEL_UPDATE", "channel": new.id.get(), "overwrites": overwrites,
        }));
    }

    async fn message_delete(
        &self,
        _ctx: Context,
        channel: ChannelId,
        message: MessageId,
        _guild: Option<GuildId>,
    ) {
        let _ = self.events.send(json!({
            "t": "MESSAGE_DELETE", "channel": channel.get(), "message": message.get(),
        }));
    }
}

/// serenity's `Http`, reaching the fake as `https://discord.com` with its ratelimiter on.
pub fn http_for(fake: &FakeDiscord, token: &str) -> Http {
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .resolve("discord.com", fake.rest_addr())
        .add_root_certificate(reqwest::Certificate::from_pem(fake.ca_pem().as_bytes()).unwrap())
        .build()
        .unwrap();
    HttpBuilder::new(token).client(client).build()
}

pub struct Bot {
    pub fake: FakeDiscord,
    pub http: Arc<Http>,
    /// (guild id, channel count) of every GUILD_CREATE serenity parsed.
    pub guilds: Arc<std::sync::Mutex<Vec<(u64, usize)>>>,
    /// CHANNEL_UPDATE and MESSAGE_DELETE as serenity parsed them.
    pub events: UnboundedReceiver<Value>,
    shards: Arc<ShardManager>,
    task: JoinHandle<serenity::Result<()>>,
}

/// Starts the fake and a serenity client against it; returns once READY and the commands are in.
pub async fn start(cfg: FakeConfig, on_interaction: OnInteraction) -> Bot {
    start_with(cfg, GatewayIntents::GUILDS, on_interaction).await
}

/// [`start`], with the client identifying with `intents`.
pub async fn start_with(
    cfg: FakeConfig,
    intents: GatewayIntents,
    on_interaction: OnInteraction,
) -> Bot {
    init_tracing();
    let fake = FakeDiscord::start(cfg).await;
    let http = http_for(&fake, &fake.config().token);
    let guilds = Arc::default();
    let (events, events_rx) = tokio::sync::mpsc::unbounded_channel();
    let handler = Handler {
        on: on_interaction,
        guilds: Arc::clone(&guilds),
        events,
    };
    let mut client = ClientBuilder::new_with_http(http, intents)
        .event_handler(handler)
        .await
        .unwrap();
    let shards = Arc::clone(&client.shard_manager);
    let http = Arc::clone(&client.http);
    let task = tokio::spawn(async move { client.start().await });
    fake.wait_ready(T).await.unwrap();
    fake.wait_commands(T).await.unwrap();
    Bot {
        fake,
        http,
        guilds,
        events: events_rx,
        shards,
        task,
    }
}

impl Bot {
    /// Shuts serenity down (it closes the gateway), then returns the fake to inspect.
    pub async fn stop(self) -> FakeDiscord {
        self.shards.shutdown_all().await;
        let _ = tokio::time::timeout(T, self.task).await;
        self.fake
    }

    /// Stops the client and the fake, checking that the client broke no Discord rule.
    pub async fn finish_clean(self) {
        let fake = self.stop().await;
        assert!(fake.violations().is_empty(), "{:?}", fake.violations());
        fake.shutdown().await;
    }
}

/// The Discord error code of a failed serenity request.
pub fn code_of(err: &serenity::Error) -> Option<isize> {
    match err {
        serenity::Error::Http(serenity::http::HttpError::UnsuccessfulRequest(r)) => {
            Some(r.error.code)
        }
        _ => None,
    }
}

/// A channel from the handler to the test.
pub fn seen() -> (UnboundedSender<Value>, UnboundedReceiver<Value>) {
    tokio::sync::mpsc::unbounded_channel()
}

pub async fn next(rx: &mut UnboundedReceiver<Value>) -> Value {
    match tokio::time::timeout(T, rx.recv()).await {
        Ok(Some(v)) => v,
        Ok(None) => panic!("the handler went away"),
        Err(_) => {
            panic!("the handler reported nothing within {T:?} (did serenity drop the event?)")
        }
    }
}

/// The HTTP status, Discord code and first error path of a failed serenity request.
pub fn refusal(err: &serenity::Error) -> (u16, isize, String) {
    match err {
        serenity::Error::Http(serenity::http::HttpError::UnsuccessfulRequest(r)) => (
            r.status_code.as_u16(),
            r.error.code,
            r.error
                .errors
                .first()
                .map(|e| e.path.clone())
                .unwrap_or_default(),
        ),
        other => panic!("expected an answer from Discord, got {other:?}"),
    }
}
