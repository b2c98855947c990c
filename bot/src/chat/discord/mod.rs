//! The Discord front end (`opsbot run`) on serenity: checks the token, the guild and the
//! channels at start-up with a clear message for each, loads the engine (runbooks included),
//! registers the catalogue and the runbooks' parameters as guild commands, resumes unfinished
//! runs, and serves interactions until SIGTERM or Ctrl-C.

mod access;
mod handler;
mod register;
mod suggest;
mod transport;

use std::sync::Arc;

use anyhow::{Context, bail};
use secrecy::{ExposeSecret, SecretString};
use serenity::all::{ChannelId, ClientBuilder, GatewayIntents, GuildId, Http, HttpBuilder};
use serenity::http::HttpError;

pub use register::commands;
pub use transport::DiscordTransport;

use crate::config::{Config, DiscordConfig};
use crate::engine::Engine;
use crate::progress::Publisher;
use crate::service::Service;

/// The private placeholder of a deferred command whose public answer follows as a message.
pub const ANSWERED_BELOW: &str = "answered below";

/// Where the bot token comes from when no `token_file` is configured.
pub const TOKEN_VARIABLE: &str = "OPSBOT_DISCORD_TOKEN";

/// Runs the bot until it is told to stop.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let Some(discord) = config.discord.clone() else {
        bail!("the config has no [discord] section; deploy/opsbot.example.toml shows one");
    };
    let token = token(&discord)?;
    let client = reqwest_client(&discord)?;
    let http = Arc::new(http(&token, client.clone()));
    check(&http, &discord).await?;

    let store = opsbot_state::Store::open(&config.store.path)
        .with_context(|| format!("cannot open the store at {}", config.store.path.display()))?;
    let publisher = Arc::new(Publisher::new(
        DiscordTransport::new(Arc::clone(&http), discord.announce_channel),
        store.clone(),
        config.progress,
    ));
    let engine = Engine::new(&config, store, publisher.clone())?;
    // Registered once the runbooks are loaded: their parameters are options of `/runbook run`.
    let params = engine.library().runbooks.param_names();
    GuildId::new(discord.guild)
        .set_commands(&http, register::commands(params))
        .await
        .map_err(|e| explain(e, "registering the slash commands"))?;
    let service = Service::new(engine.clone(), publisher);
    let resumed = engine.resume_all()?;
    tracing::info!(resumed, "unfinished runs resumed");

    let handler = handler::Handler {
        http: Arc::clone(&http),
        service,
        access: access::Access::new(discord),
    };
    // The gateway gets an `Http` of its own only to learn the gateway's address; every REST
    // call opsbot makes goes through `http`, so that one rate limiter sees them all.
    let mut gateway =
        ClientBuilder::new_with_http(self::http(&token, client), GatewayIntents::GUILDS)
            .event_handler(handler)
            .await
            .context("cannot set up the Discord gateway client")?;
    let shards = gateway.shard_manager.clone();
    tokio::select! {
        ended = gateway.start() => ended.map_err(|e| explain(e, "connecting to the gateway"))?,
        () = stopped() => {
            tracing::info!("stopping: closing the gateway; runs resume at the next start");
            shards.shutdown_all().await;
        }
    }
    Ok(())
}

/// Resolves on SIGTERM (systemd stop) or Ctrl-C.
async fn stopped() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}

/// The bot token, from `token_file` or the environment; never logged.
fn token(discord: &DiscordConfig) -> anyhow::Result<SecretString> {
    let token = match &discord.token_file {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the Discord token file {}", path.display()))?,
        None => std::env::var(TOKEN_VARIABLE).map_err(|_| {
            anyhow::anyhow!(
                "no Discord bot token: set {TOKEN_VARIABLE}, or token_file in [discord]"
            )
        })?,
    };
    let token = token.trim();
    if token.is_empty() {
        bail!("the Discord bot token is empty");
    }
    Ok(SecretString::from(token.to_owned()))
}

/// The HTTPS client: Discord through DNS and the system's roots, or through `api_address`
/// trusting `ca_file` too (a TLS-inspecting proxy, or a test double).
fn reqwest_client(discord: &DiscordConfig) -> anyhow::Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder().user_agent(concat!(
        "DiscordBot (https://github.com/opsbot, ",
        env!("CARGO_PKG_VERSION"),
        ")"
    ));
    if let Some(address) = discord.api_address {
        builder = builder.resolve("discord.com", address);
    }
    if let Some(path) = &discord.ca_file {
        let pem = std::fs::read(path)
            .with_context(|| format!("cannot read the CA file {}", path.display()))?;
        let ca = reqwest::Certificate::from_pem(&pem)
            .with_context(|| format!("{} holds no PEM certificate", path.display()))?;
        builder = builder.add_root_certificate(ca);
    }
    builder.build().context("cannot set up the HTTPS client")
}

fn http(token: &SecretString, client: reqwest::Client) -> Http {
    HttpBuilder::new(token.expose_secret())
        .client(client)
        .build()
}

/// The token, the guild and the channels, checked before anything else, each with a message
/// that says what to fix.
async fn check(http: &Http, discord: &DiscordConfig) -> anyhow::Result<()> {
    let application = http
        .get_current_application_info()
        .await
        .map_err(|e| explain(e, "checking the bot token"))?;
    http.set_application_id(application.id);
    let guild = GuildId::new(discord.guild);
    http.get_guild(guild)
        .await
        .map_err(|e| explain(e, &format!("looking up guild {}", discord.guild)))?;
    for channel in discord.channels.iter().chain(&discord.announce_channel) {
        http.get_channel(ChannelId::new(*channel))
            .await
            .map_err(|e| explain(e, &format!("looking up channel {channel}")))?;
    }
    Ok(())
}

/// A Discord error in words an operator can act on.
fn explain(error: serenity::Error, doing: &str) -> anyhow::Error {
    let serenity::Error::Http(HttpError::UnsuccessfulRequest(response)) = &error else {
        return anyhow::anyhow!("{doing}: {error}");
    };
    let hint = match (response.status_code.as_u16(), response.error.code) {
        (401, _) => format!(
            "Discord refused the bot token (401); check {TOKEN_VARIABLE} or [discord] token_file"
        ),
        (_, 10004) => "Discord knows no such guild, or the bot is not in it; check [discord] \
                       guild and invite the bot"
            .to_owned(),
        (_, 10003) => "Discord knows no such channel; check [discord] channels".to_owned(),
        (403, _) | (_, 50001) => "the bot lacks access: invite it with the `bot` and \
                                  `applications.commands` scopes, and let it see and send \
                                  messages in the configured channels"
            .to_owned(),
        (status, code) => format!(
            "Discord answered {status} (code {code}): {}",
            response.error.message
        ),
    };
    anyhow::anyhow!("{doing}: {hint}")
}
