//! Connecting, registering, the REST objects, authentication, resuming and heartbeats.

use std::time::Duration;

use opsbot_fake_discord::{FakeConfig, FakeDiscord};
use serde_json::json;
use serenity::all::{
    ChannelId, ClientBuilder, CreateInteractionResponse, CreateInteractionResponseMessage,
    GatewayError, GatewayIntents, GuildId, Interaction,
};

use crate::harness::{T, code_of, http_for, init_tracing, next, on, seen, start, within};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_registers_commands_and_rest_objects_parse() {
    within(Duration::from_secs(60), async {
        let bot = start(FakeConfig::default(), on(|_, _| async {})).await;
        let cfg = bot.fake.config().clone();
        let commands = bot.fake.commands();
        let names: Vec<&str> = commands.iter().filter_map(|c| c["name"].as_str()).collect();
        assert_eq!(names, ["cluster", "ping", "slow"]);
        assert!(commands.iter().all(|c| c["id"].as_str().is_some()));
        assert_eq!(
            commands[0]["options"][0]["options"][0]["autocomplete"],
            json!(true)
        );
        // GUILD_CREATE follows READY (GUILDS intent) and serenity parses it.
        let deadline = std::time::Instant::now() + T;
        while bot.guilds.lock().unwrap().is_empty() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let guilds = bot.guilds.lock().unwrap().clone();
        assert_eq!(guilds, [(cfg.guild_id, cfg.channels.len())]);

        // serenity parses every object the fake serves.
        let me = bot.http.get_current_user().await.unwrap();
        assert_eq!(me.id.get(), cfg.bot_user_id);
        assert!(me.bot);
        let app = bot.http.get_current_application_info().await.unwrap();
        assert_eq!(app.id.get(), cfg.application_id);
        let guild = GuildId::new(cfg.guild_id)
            .to_partial_guild(&bot.http)
            .await
            .unwrap();
        assert_eq!(guild.id.get(), cfg.guild_id);
        let channel = ChannelId::new(cfg.channels[0])
            .to_channel(&bot.http)
            .await
            .unwrap();
        assert_eq!(
            channel.guild().map(|c| c.guild_id.get()),
            Some(cfg.guild_id)
        );
        let gateway = bot.http.get_bot_gateway().await.unwrap();
        assert_eq!(gateway.url, bot.fake.gateway_url());
        assert_eq!(gateway.shards, 1);
        let registered = GuildId::new(cfg.guild_id)
            .get_commands(&bot.http)
            .await
            .unwrap();
        assert_eq!(registered.len(), 3);

        let err = GuildId::new(42)
            .to_partial_guild(&bot.http)
            .await
            .unwrap_err();
        assert_eq!(code_of(&err), Some(10004));
        let err = ChannelId::new(42).to_channel(&bot.http).await.unwrap_err();
        assert_eq!(code_of(&err), Some(10003));

        assert!(
            bot.fake.violations().is_empty(),
            "{:?}",
            bot.fake.violations()
        );

        // A route the fake does not serve: 404, and recorded.
        let err = bot
            .http
            .get_guild_roles(GuildId::new(cfg.guild_id))
            .await
            .unwrap_err();
        assert_eq!(code_of(&err), Some(0));
        let fake = bot.stop().await;
        let unexpected = format!(
            "unexpected call: GET /api/v10/guilds/{}/roles",
            cfg.guild_id
        );
        assert_eq!(fake.violations(), [unexpected]);
        assert_eq!(fake.gateway_counts().0, 1, "one IDENTIFY");
        fake.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_token_gets_401_and_gateway_close_4004() {
    within(Duration::from_secs(60), async {
        init_tracing();
        let fake = FakeDiscord::start(FakeConfig::default()).await;
        let http = http_for(&fake, "not-the-token");

        let err = http.get_current_user().await.unwrap_err();
        assert_eq!(code_of(&err), Some(0));
        match &err {
            serenity::Error::Http(serenity::http::HttpError::UnsuccessfulRequest(r)) => {
                assert_eq!(r.status_code.as_u16(), 401);
                assert_eq!(r.error.message, "401: Unauthorized");
            }
            other => panic!("expected a 401, got {other:?}"),
        }

        // GET /gateway needs no token, so the client finds the fake gateway and IDENTIFYs.
        let mut client = ClientBuilder::new_with_http(http, GatewayIntents::GUILDS)
            .await
            .unwrap();
        let result = tokio::time::timeout(T, client.start())
            .await
            .expect("start hung");
        assert!(
            matches!(
                result,
                Err(serenity::Error::Gateway(
                    GatewayError::InvalidAuthentication
                ))
            ),
            "{result:?}"
        );
        assert_eq!(fake.gateway_closes(), [4004]);
        assert!(
            fake.violations()
                .iter()
                .any(|v| v.contains("IDENTIFY with a wrong token"))
        );
        fake.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumes_after_disconnect_and_gets_missed_dispatches() {
    within(Duration::from_secs(60), async {
        let (tx, mut rx) = seen();
        let bot = start(
            FakeConfig::default(),
            on(move |ctx, interaction| {
                let tx = tx.clone();
                async move {
                    if let Interaction::Command(cmd) = interaction {
                        let reply = CreateInteractionResponseMessage::new().content("pong");
                        let result = cmd
                            .create_response(&ctx.http, CreateInteractionResponse::Message(reply))
                            .await;
                        tx.send(json!({"ok": result.is_ok()})).unwrap();
                    }
                }
            }),
        )
        .await;
        let fake = &bot.fake;
        let user = FakeDiscord::user(7, "alice", &[]);
        let channel = fake.config().channels[0];

        fake.disconnect().await;
        // Dispatched while the client is away: RESUME must replay it.
        let id = fake.slash(&user, channel, "ping", json!(null)).await;
        fake.wait_ready(T).await.unwrap();
        assert_eq!(next(&mut rx).await, json!({"ok": true}));
        assert_eq!(
            fake.reply_text(id, T).await.unwrap(),
            ("pong".to_owned(), false)
        );
        let (identifies, resumes, _) = fake.gateway_counts();
        assert_eq!((identifies, resumes), (1, 1));
        assert_eq!(fake.gateway_closes(), [4000]);

        bot.finish_clean().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_are_acknowledged() {
    within(Duration::from_secs(60), async {
        let cfg = FakeConfig {
            heartbeat_interval: Duration::from_millis(150),
            ..FakeConfig::default()
        };
        let bot = start(cfg, on(|_, _| async {})).await;
        // Three heartbeats at the fake's 150 ms interval: serenity checks each one's ack when
        // it sends the next, so two of those checks have passed. `within` bounds the wait.
        while bot.fake.gateway_counts().2 < 3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let (identifies, resumes, _) = bot.fake.gateway_counts();
        // An unacknowledged heartbeat would have made serenity reconnect.
        assert_eq!((identifies, resumes), (1, 0));
        bot.finish_clean().await;
    })
    .await;
}
