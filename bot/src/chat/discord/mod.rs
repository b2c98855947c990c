//! The Discord front end on serenity: checks the token, the guild and the channels at start-up
//! with a clear message for each, registers the catalogue and the runbooks' parameters as guild
//! commands, and serves interactions until told to stop (`opsbot run` wires it to the engine).

mod access;
mod autocomplete;
mod failure;
mod handler;
mod keep;
mod permissions;
mod register;
mod suggest;
mod transport;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use failure::{MISSING_ACCESS, UNKNOWN_CHANNEL, UNKNOWN_GUILD};
use opsbot_commands::people::People;
use permissions::Bot;
use secrecy::{ExposeSecret, SecretString};
use serenity::all::{
    ChannelId, ClientBuilder, CreateAllowedMentions, GatewayIntents, GuildId, Http, HttpBuilder,
    PartialGuild, Permissions,
};
use serenity::http::HttpError;

pub use keep::{Keeper, Reached};
pub use register::commands;
pub use transport::DiscordTransport;

pub use super::Unusable;
use crate::config::DiscordConfig;
use crate::progress::Forbidden;
use crate::service::Service;

/// The private placeholder of a deferred command whose public answer follows as a message.
pub const ANSWERED_BELOW: &str = "answered below";

/// Where the bot token comes from when no `token_file` is configured.
pub const TOKEN_VARIABLE: &str = "OPSBOT_DISCORD_TOKEN";

/// A checked connection to Discord: the token works, the guild and channels exist, and what
/// the bot may not do in them is known.
pub struct Discord {
    http: Arc<Http>,
    token: SecretString,
    client: reqwest::Client,
    config: DiscordConfig,
    bot: Bot,
    /// Configured channels where the bot lacks a permission it needs, by channel.
    forbidden: Arc<HashMap<u64, Forbidden>>,
}

impl std::fmt::Debug for Discord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Discord")
            .field("guild", &self.config.guild)
            .finish_non_exhaustive()
    }
}

/// What connecting to Discord needs, read and checked before any request: the token and the
/// HTTPS client. Its errors are the config's own.
pub struct Connector {
    token: SecretString,
    client: reqwest::Client,
    config: DiscordConfig,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("guild", &self.config.guild)
            .finish_non_exhaustive()
    }
}

impl Connector {
    /// Reads the token and sets up the client; nothing is sent yet.
    pub fn new(config: &DiscordConfig) -> anyhow::Result<Self> {
        Ok(Self {
            token: token(config)?,
            client: reqwest_client(config)?,
            config: config.clone(),
        })
    }

    /// Checks the token, the guild and the channels against Discord, each failure with a
    /// message that says what to fix and whether waiting can help.
    pub async fn connect(&self) -> Result<Discord, Unusable> {
        let http = Arc::new(http(&self.token, self.client.clone()));
        let (bot, guild) = check(&http, &self.config).await?;
        let forbidden = check_permissions(&http, bot, &guild, &self.config).await?;
        Ok(Discord {
            http,
            token: self.token.clone(),
            client: self.client.clone(),
            config: self.config.clone(),
            bot,
            forbidden: Arc::new(forbidden),
        })
    }
}

impl Discord {
    /// Reads the token and checks it, the guild and the channels, each failure with a message
    /// that says what to fix.
    pub async fn connect(config: &DiscordConfig) -> anyhow::Result<Self> {
        Ok(Connector::new(config)?.connect().await?)
    }

    /// Progress and announcements in this guild, through the one rate-limited client.
    pub fn transport(&self) -> DiscordTransport {
        DiscordTransport::new(
            Arc::clone(&self.http),
            self.bot,
            self.config.announce_channel,
            Arc::clone(&self.forbidden),
        )
    }

    /// The configured channels where the bot lacks a permission, with the ones it lacks.
    pub fn forbidden_channels(&self) -> impl Iterator<Item = &Forbidden> {
        self.forbidden.values()
    }

    /// Registers the catalogue (with the runbooks' parameters) as guild commands, then serves
    /// interactions until the gateway ends or `stop` resolves.
    pub async fn serve(
        self,
        service: Service,
        people: People,
        stop: impl Future<Output = ()>,
    ) -> anyhow::Result<()> {
        let params = service.engine().library().runbooks.param_names();
        GuildId::new(self.config.guild)
            .set_commands(&self.http, register::commands(params))
            .await
            .map_err(|e| explain(e, "registering the slash commands"))?;
        let handler = handler::Handler {
            http: Arc::clone(&self.http),
            service,
            access: access::Access::new(self.config, people),
            listings: autocomplete::Listings::default(),
        };
        // The gateway gets an `Http` of its own only to learn the gateway's address; every REST
        // call opsbot makes goes through `http`, so that one rate limiter sees them all.
        let mut gateway =
            ClientBuilder::new_with_http(http(&self.token, self.client), GatewayIntents::GUILDS)
                .event_handler(handler)
                .await
                .context("cannot set up the Discord gateway client")?;
        let shards = gateway.shard_manager.clone();
        tokio::select! {
            ended = gateway.start() => ended.map_err(|e| explain(e, "connecting to the gateway"))?,
            () = stop => {
                tracing::info!("stopping: closing the gateway; runs resume at the next start");
                // The Close frame goes out at once; serenity then waits up to 5 s for the
                // answer, which a gateway (or a proxy before it) may never send.
                if tokio::time::timeout(CLOSE_ANSWER, shards.shutdown_all()).await.is_err() {
                    tracing::warn!("the gateway did not answer the Close frame in time; stopping");
                }
            }
        }
        Ok(())
    }
}

/// How long a stopping bot waits for the gateway to answer its Close frame.
const CLOSE_ANSWER: Duration = Duration::from_secs(1);

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
    // A timeout on every request: serenity has none, and one request Discord never answers
    // would hold its channel's progress (and the interaction waiting on it) for ever.
    let mut builder = reqwest::Client::builder()
        .user_agent(concat!(
            "DiscordBot (https://github.com/opsbot, ",
            env!("CARGO_PKG_VERSION"),
            ")"
        ))
        .timeout(discord.request_timeout);
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

/// Every message opsbot sends carries `allowed_mentions` with nothing to parse: operators' text
/// (`@everyone db down`) is shown, never acted on, so the bot never pings anyone.
fn http(token: &SecretString, client: reqwest::Client) -> Http {
    HttpBuilder::new(token.expose_secret())
        .client(client)
        .default_allowed_mentions(CreateAllowedMentions::new())
        .build()
}

/// The token and the guild, checked before anything else, each with a message that says what
/// to fix; the guild is kept for the channels' check.
async fn check(http: &Http, discord: &DiscordConfig) -> Result<(Bot, PartialGuild), Unusable> {
    let application = http
        .get_current_application_info()
        .await
        .map_err(|e| explain(e, "checking the bot token"))?;
    http.set_application_id(application.id);
    let user = http
        .get_current_user()
        .await
        .map_err(|e| explain(e, "checking the bot token"))?;
    let guild = GuildId::new(discord.guild);
    let invite = permissions::invite_url(application.id.get(), discord.guild);
    let found = http.get_guild(guild).await.map_err(|e| {
        explain(
            e,
            &format!(
                "looking up guild {} (the bot's invite link: {invite})",
                discord.guild
            ),
        )
    })?;
    let bot = Bot {
        guild,
        user: user.id,
    };
    Ok((bot, found))
}

/// Every configured channel must exist in the configured guild; one where the bot may not
/// view, send or embed is warned about loudly, with the permission to grant, and its lane
/// starts stopped. It does not stop the bot: commands and approvals still work there
/// (interactions need no channel permission), and a channel that cannot show announcements
/// must not block maintenance. The bot's member is fetched once, then one GET per channel.
async fn check_permissions(
    http: &Http,
    bot: Bot,
    guild: &PartialGuild,
    discord: &DiscordConfig,
) -> Result<HashMap<u64, Forbidden>, Unusable> {
    let member = http
        .get_member(bot.guild, bot.user)
        .await
        .map_err(|e| explain(e, "looking up the bot in the guild"))?;
    let mut forbidden = HashMap::new();
    for channel in discord.channels.iter().chain(&discord.announce_channel) {
        let looking_up = || format!("looking up channel {channel}");
        let found = permissions::visible(http, ChannelId::new(*channel))
            .await
            .map_err(|e| explain(e, &looking_up()))?;
        let missing = match found {
            None => Permissions::VIEW_CHANNEL,
            Some(found) => match found.guild() {
                Some(found) if found.guild_id == bot.guild => {
                    permissions::missing_in(guild, &member, &found)
                }
                _ => {
                    return Err(Unusable::Refused(anyhow::anyhow!(
                        "{}: it is not a channel of guild {}; check [discord] channels",
                        looking_up(),
                        bot.guild
                    )));
                }
            },
        };
        if missing.is_empty() {
            continue;
        }
        let refused = Forbidden {
            channel: opsbot_commands::run::ChannelId(channel.to_string()),
            missing: permissions::names(missing),
        };
        tracing::error!(
            "{refused}: nothing will be posted there until it is granted and opsbot restarted"
        );
        forbidden.insert(*channel, refused);
    }
    Ok(forbidden)
}

/// A Discord error in words an operator can act on, and whether waiting can help.
fn explain(error: serenity::Error, doing: &str) -> Unusable {
    let response = match &error {
        serenity::Error::Http(HttpError::UnsuccessfulRequest(response)) => response,
        // No answer: say why (DNS, refused, timeout, TLS), as `opsbot check` does for clusters.
        serenity::Error::Http(HttpError::Request(request)) => {
            let fault = crate::backend::transport::fault(request);
            return Unusable::Unavailable(anyhow::anyhow!("{doing}: Discord {fault}"));
        }
        _ => return Unusable::Unavailable(anyhow::anyhow!("{doing}: {error}")),
    };
    let status = response.status_code.as_u16();
    let hint = match (status, response.error.code) {
        (401, _) => format!(
            "Discord refused the bot token (401); check {TOKEN_VARIABLE} or [discord] token_file"
        ),
        (_, UNKNOWN_GUILD) => {
            "Discord knows no such guild, or the bot is not in it; check [discord] \
                       guild and invite the bot"
                .to_owned()
        }
        (_, UNKNOWN_CHANNEL) => {
            "Discord knows no such channel; check [discord] channels".to_owned()
        }
        (403, _) | (_, MISSING_ACCESS) => "the bot lacks access: invite it with the `bot` and \
                                  `applications.commands` scopes, and let it see and send \
                                  messages in the configured channels"
            .to_owned(),
        (status, code) => format!(
            "Discord answered {status} (code {code}): {}",
            response.error.message
        ),
    };
    let error = anyhow::anyhow!("{doing}: {hint}");
    if status == 429 || status >= 500 {
        Unusable::Unavailable(error)
    } else {
        Unusable::Refused(error)
    }
}
