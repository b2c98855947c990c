//! The Discord front end end to end: the real bot and the real serenity client against the
//! loopback fake Discord, which enforces Discord's rules, and the simulated cluster.

use std::collections::BTreeMap;

use opsbot::config::{HostAccessConfig, RunbooksConfig};
use opsbot_commands::name::{GroupName, HostName, ParamName};
use opsbot_tests::Setup;
use opsbot_tests::discord::{
    ANNOUNCE_CHANNEL, CHANNEL, DiscordScene, OTHER_CHANNEL, buttons_enabled, embed_text, user,
};

/// The fields of a registered option tree that the catalogue decides.
fn shape(value: &serde_json::Value) -> serde_json::Value {
    let options: Vec<serde_json::Value> = value["options"]
        .as_array()
        .into_iter()
        .flatten()
        .map(shape)
        .collect();
    serde_json::json!({
        "name": value["name"],
        "description": value["description"],
        // Discord fills in the default type of a command (1, a slash command).
        "type": value["type"].as_u64().unwrap_or(1),
        "required": value["required"],
        "autocomplete": value["autocomplete"],
        "choices": value["choices"],
        "options": options,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registration_is_the_catalogue() {
    let scene = DiscordScene::start(Setup::default()).await;
    let registered: Vec<serde_json::Value> = scene.fake.commands().iter().map(shape).collect();
    // No runbooks are configured: `/runbook run` takes only its name.
    let catalogue: Vec<serde_json::Value> =
        serde_json::to_value(opsbot::chat::discord::commands(&[]))
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(shape)
            .collect();
    assert_eq!(registered, catalogue);
    let names: Vec<&str> = registered
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "cluster",
            "indices",
            "placement",
            "compute",
            "image",
            "runbook",
            "run",
            "approve",
            "reject",
            "schedule",
            "maintenance",
            "audit",
            "help"
        ],
        "`/as` is console only"
    );
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_from_a_slash_command_edits_one_progress_message_to_the_end() {
    let scene = DiscordScene::start(Setup {
        days_of_indices: 10,
        // Slow enough that the message is edited while the run goes on.
        sim_speed: 20.0,
        ..Setup::default()
    })
    .await;
    let (reply, private) = scene
        .slash(&user("alice"), "/cluster restart cluster:logs")
        .await;
    assert!(!private, "a start is public: {reply}");
    // The `confirm` policy of a restart: the plan waits under a Confirm button that only its
    // requester's press starts.
    let plan = scene.progress("r-1", |text| text.starts_with("⏸")).await;
    assert!(
        embed_text(&plan).contains("waiting for alice to confirm"),
        "{}",
        embed_text(&plan)
    );
    let (refused, private) = scene.press(&user("bob"), &plan, "Confirm").await;
    assert!(
        private && refused.starts_with("only alice, who requested run r-1, confirms it"),
        "{refused}"
    );
    scene.press(&user("alice"), &plan, "Confirm").await;
    let done = scene.progress("r-1", |text| text.starts_with("✅")).await;
    assert!(
        embed_text(&done).contains("succeeded in"),
        "{}",
        embed_text(&done)
    );
    let running = done
        .history
        .iter()
        .filter(|v| {
            v["embeds"][0]["description"]
                .as_str()
                .is_some_and(|t| t.starts_with("⏳"))
        })
        .count();
    assert!(
        running >= 2,
        "edited in place while it ran: {} versions, {running} running",
        done.history.len()
    );
    let progress: Vec<_> = scene
        .fake
        .messages(CHANNEL)
        .into_iter()
        .filter(|m| embed_text(m).contains(" r-1 · "))
        .collect();
    assert_eq!(progress.len(), 1, "one message per run");
    assert!(
        scene.fake.uploads().is_empty(),
        "a plan that fits needs no file"
    );
    let said = scene.announced_until("✅ maintenance over").await;
    assert_eq!(said.len(), 2, "{said:#?}");
    assert_eq!(
        said[0],
        "🔧 maintenance started by alice: /cluster restart cluster:logs (r-1)"
    );
    assert!(said[1].starts_with("✅ maintenance over"), "{said:#?}");
    assert!(
        scene
            .sim
            .state()
            .nodes
            .iter()
            .all(|n| n.stops == 1 && n.starts == 1)
    );
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prune_is_approved_by_a_second_operator_with_the_button() {
    let scene = DiscordScene::start(Setup::default()).await;
    let (reply, private) = scene
        .slash(
            &user("alice"),
            "/indices prune cluster:logs older_than_days:30",
        )
        .await;
    assert!(!private, "{reply}");
    let plan = scene
        .progress("r-1", |text| text.contains("waiting for approval"))
        .await;
    assert!(
        embed_text(&plan).contains("Plan for /indices prune"),
        "{}",
        embed_text(&plan)
    );
    assert_eq!(buttons_enabled(&plan), [true, true]);

    // The requester, someone opsbot does not know, and a channel opsbot does not serve:
    // refused, privately.
    let (own, private) = scene.press(&user("alice"), &plan, "Approve").await;
    assert!(private);
    assert!(own.contains("another approver must approve it"), "{own}");
    let (nobody, private) = scene.press(&user("carol"), &plan, "Approve").await;
    assert!(private);
    assert!(nobody.contains("is not one of opsbot's people"), "{nobody}");
    let (elsewhere, private) = scene
        .slash_in(&user("bob"), OTHER_CHANNEL, "/run list")
        .await;
    assert!(private);
    assert!(
        elsewhere.starts_with("opsbot does not serve this channel"),
        "{elsewhere}"
    );
    assert!(
        scene.sim.state().deleted.is_empty(),
        "nothing deleted before the approval"
    );

    let (decided, private) = scene.press(&user("bob"), &plan, "Approve").await;
    assert!(!private);
    assert!(decided.contains("r-1"), "{decided}");
    let done = scene.progress("r-1", |text| text.starts_with("✅")).await;
    assert_eq!(
        buttons_enabled(&done),
        [false, false],
        "decided: the buttons are disabled"
    );
    assert_eq!(scene.sim.state().deleted.len(), 60);
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_and_refusals_are_private() {
    let scene = DiscordScene::start(Setup::default()).await;
    for (who, line, expected) in [
        (
            "alice",
            "/indices delete cluster:logs index:_all",
            "index: `_all` would name every index",
        ),
        (
            "alice",
            "/cluster status cluster:nope",
            "unknown cluster `nope`; configured: logs",
        ),
        (
            "carol",
            "/cluster status cluster:logs",
            "Discord user 700000000000000003 is not one of opsbot's people",
        ),
        ("alice", "/approve id:r-9", "no run r-9"),
    ] {
        let (text, private) = scene.slash(&user(who), line).await;
        assert!(private, "{line}: {text}");
        assert!(text.contains(expected), "{line}: {text}");
    }
    assert!(
        scene.sim.calls().iter().all(|c| c.method == "GET"),
        "nothing changed in the cluster"
    );
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_runs_at_once_in_one_channel_stay_within_the_rate_limit_and_all_end_shown() {
    let scene = DiscordScene::start(Setup {
        clusters: 20,
        days_of_indices: 5,
        ..Setup::default()
    })
    .await;
    let alice = user("alice");
    let lines: Vec<String> = (1..=20)
        .map(|n| format!("/cluster restart cluster:{}", opsbot_tests::cluster_name(n)))
        .collect();
    let replies =
        futures::future::join_all(lines.iter().map(|line| scene.slash(&alice, line))).await;
    for (line, (text, private)) in lines.iter().zip(&replies) {
        assert!(!private, "{line}: {text}");
        scene.confirm(&alice, text).await;
    }
    for n in 1..=20 {
        scene
            .progress(&format!("r-{n}"), |text| text.starts_with("✅"))
            .await;
    }
    let messages: Vec<_> = scene
        .fake
        .messages(CHANNEL)
        .into_iter()
        .filter(|m| !m.embeds.is_empty())
        .collect();
    assert_eq!(messages.len(), 20, "one progress message per run");
    assert!(messages.iter().all(|m| embed_text(m).starts_with("✅")));
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_up_problems_are_named_with_what_to_fix() {
    use opsbot_fake_discord::{FakeConfig, FakeDiscord};
    use opsbot_tests::discord::discord_config;

    let fake = FakeDiscord::start(FakeConfig {
        channels: vec![CHANNEL, OTHER_CHANNEL, ANNOUNCE_CHANNEL],
        ..FakeConfig::default()
    })
    .await;
    let (_sims, config, dir) = opsbot_tests::world(&Setup::default()).await;
    let fails = |change: &dyn Fn(&mut opsbot::config::DiscordConfig)| {
        let mut config = config.clone();
        let mut discord = discord_config(&fake, dir.path());
        change(&mut discord);
        config.discord = Some(discord);
        async move {
            let error = opsbot::serve::run(config, opsbot::clock::Clock::system())
                .await
                .unwrap_err();
            format!("{error:#}")
        }
    };
    let wrong_token = fails(&|d| {
        let file = d.token_file.clone().unwrap();
        std::fs::write(file, "not-the-token").unwrap();
    })
    .await;
    assert!(
        wrong_token.contains("Discord refused the bot token (401)"),
        "{wrong_token}"
    );
    let guild = fails(&|d| d.guild = 42).await;
    // Not in the guild yet: the check gives the link that invites it with exactly the scopes
    // and permissions it needs (View Channel, Send Messages, Embed Links: 19456).
    assert!(
        guild.contains(
            "looking up guild 42 (the bot's invite link: https://discord.com/oauth2/authorize?\
             client_id=1100000000000000001&scope=bot+applications.commands&permissions=19456&\
             guild_id=42&disable_guild_select=true): Discord knows no such guild"
        ),
        "{guild}"
    );
    let channel = fails(&|d| d.channels = vec![43]).await;
    assert!(
        channel.contains("looking up channel 43: Discord knows no such channel"),
        "{channel}"
    );
    let no_token = fails(&|d| d.token_file = Some(dir.path().join("missing"))).await;
    assert!(
        no_token.contains("cannot read the Discord token file"),
        "{no_token}"
    );
    assert!(fake.commands().is_empty(), "nothing was registered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn autocomplete_offers_clusters_nodes_indices_and_runs() {
    let scene = DiscordScene::start(Setup::default()).await;
    let alice = user("alice");
    let choices = |command: &'static str, options: serde_json::Value| {
        let scene = &scene;
        let alice = &alice;
        async move {
            let id = scene
                .fake
                .autocomplete(alice, CHANNEL, command, options)
                .await;
            let record = scene
                .fake
                .response(id, opsbot_tests::PATIENCE)
                .await
                .unwrap();
            assert_eq!(record.kind, 8);
            record.data["choices"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["value"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    let clusters = choices(
        "cluster",
        serde_json::json!([{"name": "status", "type": 1, "options": [
            {"name": "cluster", "type": 3, "value": "lo", "focused": true}]}]),
    )
    .await;
    assert_eq!(clusters, ["logs"]);
    let nodes = choices(
        "cluster",
        serde_json::json!([{"name": "remove-node", "type": 1, "options": [
            {"name": "cluster", "type": 3, "value": "logs"},
            {"name": "node", "type": 3, "value": "10.0.0.1", "focused": true}]}]),
    )
    .await;
    assert_eq!(nodes.len(), 5, "{nodes:?}");
    let indices = choices(
        "indices",
        serde_json::json!([{"name": "delete", "type": 1, "options": [
            {"name": "cluster", "type": 3, "value": "logs"},
            {"name": "index", "type": 3, "value": "flog-", "focused": true}]}]),
    )
    .await;
    assert_eq!(indices.len(), 25, "Discord shows 25 at most: {indices:?}");
    assert!(
        indices.iter().all(|i| i.starts_with("flog-")),
        "{indices:?}"
    );
    scene.slash(&alice, "/cluster status cluster:logs").await;
    scene
        .slash(&alice, "/indices prune cluster:logs older_than_days:30")
        .await;
    let runs = choices(
        "run",
        serde_json::json!([{"name": "status", "type": 1, "options": [
            {"name": "id", "type": 3, "value": "", "focused": true}]}]),
    )
    .await;
    assert_eq!(runs, ["r-1"]);
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cloud_commands_come_from_the_same_catalogue_and_approve_by_button() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let cloud = opsbot_cloud_sim::spawn(opsbot_cloud_sim::CloudSimConfig::default(), listener)
        .await
        .unwrap();
    let provider = cloud.add_provider("compute-03");
    let (gone, running) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    for consumer in [gone, running] {
        cloud.add_allocation(provider, consumer, &[("VCPU", 2)]);
    }
    cloud.add_server(running, "web-1", "ACTIVE");
    let dir = tempfile::tempdir().unwrap();
    let account = opsbot_tests::cloud::Account {
        auth_url: &cloud.identity_url(),
        username: "admin",
        password: "adminpass",
        project: "admin",
        region: "RegionOne",
    };
    let scene = DiscordScene::start(Setup {
        clouds: vec![opsbot_tests::cloud::cloud_config(
            "prod",
            &account,
            dir.path(),
        )],
        ..Setup::default()
    })
    .await;

    cloud.add_service(opsbot_cloud_sim::ComputeServiceSeed {
        binary: "nova-compute".into(),
        host: "compute-03".into(),
        zone: "nova".into(),
        status: opsbot_cloud_sim::ServiceStatus::Enabled,
        state: opsbot_cloud_sim::ServiceState::Up,
        updated_at: time::OffsetDateTime::now_utc(),
        disabled_reason: None,
    });
    let id = scene
        .fake
        .autocomplete(
            &user("alice"),
            CHANNEL,
            "placement",
            serde_json::json!([{"name": "stale", "type": 1, "options": [
                {"name": "cloud", "type": 3, "value": "prod"},
                {"name": "host", "type": 3, "value": "03", "focused": true}]}]),
        )
        .await;
    let offered = scene
        .fake
        .response(id, opsbot_tests::PATIENCE)
        .await
        .unwrap();
    assert_eq!(
        offered.data["choices"][0]["value"], "compute-03",
        "hosts come from the cloud's compute services: {:?}",
        offered.data
    );

    let (text, private) = scene
        .slash(
            &user("alice"),
            "/image properties cloud:prod image:cirros os_type:beos",
        )
        .await;
    assert!(
        private && text.contains("os_type: must be `linux` or `windows`"),
        "{text}"
    );

    let (_, private) = scene
        .slash(
            &user("alice"),
            "/placement stale cloud:prod host:compute-03",
        )
        .await;
    assert!(!private);
    let plan = scene
        .progress("r-1", |text| text.contains("waiting for approval"))
        .await;
    assert!(
        embed_text(&plan).contains(&gone.to_string()),
        "{}",
        embed_text(&plan)
    );
    let (decided, private) = scene.press(&user("bob"), &plan, "Approve").await;
    assert!(!private, "{decided}");
    scene.progress("r-1", |text| text.starts_with("✅")).await;
    let left: Vec<uuid::Uuid> = cloud.allocations(provider).into_keys().collect();
    assert_eq!(left, vec![running]);
    scene.assert_well_behaved();
}

/// A runbook with a host and a choice parameter: an operator's look at the host, then a command
/// on it.
const SAY_HELLO: &str = r#"
name = "say-hello"
description = "greet a hypervisor after a look at it"

[[params]]
name = "host"
kind = "host"
group = "compute"
help = "the hypervisor to greet"

[[params]]
name = "greeting"
kind = "choice"
values = ["hello", "hi"]
default = "hello"

[[steps]]
kind = "confirm"
prompt = "check {host}"

[[steps]]
kind = "run"
on = "{host}"
argv = ["echo", "{greeting}"]
"#;

/// Discord's options for `/runbook run` with `given` and the `focused` option being typed.
fn runbook_run(given: &[(&str, &str)], focused: (&str, &str)) -> serde_json::Value {
    let mut options: Vec<serde_json::Value> = given
        .iter()
        .map(|(name, value)| serde_json::json!({"name": name, "type": 3, "value": value}))
        .collect();
    options.push(serde_json::json!({
        "name": focused.0, "type": 3, "value": focused.1, "focused": true
    }));
    serde_json::json!([{"name": "run", "type": 1, "options": options}])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runbook_takes_its_parameters_as_options_with_suggestions() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("say-hello.toml"), SAY_HELLO).unwrap();
    let host = |name: &str| HostName::parse(name).unwrap();
    let scene = DiscordScene::start(Setup {
        runbooks: RunbooksConfig {
            dir: Some(dir.path().to_owned()),
            inventory: BTreeMap::from([(
                GroupName::parse("compute").unwrap(),
                vec![host("compute-01"), host("compute-02")],
            )]),
            access: HostAccessConfig::Manual,
            output: Default::default(),
        },
        ..Setup::default()
    })
    .await;
    let alice = user("alice");

    // Registered: `/runbook run` takes its name, then each parameter name, sorted.
    let registered = scene.fake.commands();
    let runbook = registered.iter().find(|c| c["name"] == "runbook").unwrap();
    let run = runbook["options"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "run")
        .unwrap();
    let options: Vec<(&str, bool, bool)> = run["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap(),
                o["required"] == true,
                o["autocomplete"] == true,
            )
        })
        .collect();
    assert_eq!(
        options,
        [
            ("name", true, true),
            ("at", false, false),
            ("greeting", false, true),
            ("host", false, true)
        ]
    );
    let params = [
        ParamName::parse("host").unwrap(),
        ParamName::parse("greeting").unwrap(),
    ];
    let expected: Vec<serde_json::Value> =
        serde_json::to_value(opsbot::chat::discord::commands(&params))
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(shape)
            .collect();
    let registered: Vec<serde_json::Value> = registered.iter().map(shape).collect();
    assert_eq!(registered, expected);

    // Autocomplete: runbooks by name, shown with their description; a parameter's values from the
    // chosen runbook; nothing before a runbook is chosen.
    let names = scene
        .choices(&alice, "runbook", runbook_run(&[], ("name", "say")))
        .await;
    assert_eq!(
        names,
        [(
            "say-hello — greet a hypervisor after a look at it".to_owned(),
            "say-hello".to_owned()
        )]
    );
    let values = |choices: Vec<(String, String)>| -> Vec<String> {
        choices.into_iter().map(|(_, value)| value).collect()
    };
    let hosts = scene
        .choices(
            &alice,
            "runbook",
            runbook_run(&[("name", "say-hello")], ("host", "")),
        )
        .await;
    assert_eq!(values(hosts), ["compute-01", "compute-02"]);
    let typed = scene
        .choices(
            &alice,
            "runbook",
            runbook_run(&[("name", "say-hello")], ("host", "compute-02")),
        )
        .await;
    assert_eq!(values(typed), ["compute-02"]);
    let greetings = scene
        .choices(
            &alice,
            "runbook",
            runbook_run(
                &[("name", "say-hello"), ("host", "compute-01")],
                ("greeting", ""),
            ),
        )
        .await;
    assert_eq!(
        greetings,
        [
            ("hello (default)".to_owned(), "hello".to_owned()),
            ("hi".to_owned(), "hi".to_owned())
        ]
    );
    for given in [&[][..], &[("name", "no-such-runbook")][..]] {
        let none = scene
            .choices(&alice, "runbook", runbook_run(given, ("host", "")))
            .await;
        assert!(none.is_empty(), "{given:?}: {none:?}");
    }

    // A host outside the inventory: refused privately, naming the inventory; nothing starts.
    let (refused, private) = scene
        .slash(&alice, "/runbook run name:say-hello host:db-9 greeting:hi")
        .await;
    assert!(private, "{refused}");
    assert!(
        refused.contains("db-9") && refused.contains("inventory"),
        "{refused}"
    );
    assert!(
        scene
            .fake
            .messages(CHANNEL)
            .iter()
            .all(|m| m.embeds.is_empty()),
        "no run started"
    );

    // The same command with a host of the inventory starts r-1, which asks the operator to
    // check the host, then (manual access) to run the command on it.
    let (started, private) = scene
        .slash(
            &alice,
            "/runbook run name:say-hello host:compute-01 greeting:hi",
        )
        .await;
    assert!(!private, "{started}");
    let asked = scene
        .progress("r-1", |text| text.contains("👉 check compute-01"))
        .await;
    assert!(
        embed_text(&asked).contains("/runbook run name:say-hello greeting:hi host:compute-01"),
        "{}",
        embed_text(&asked)
    );
    let (done, private) = scene.slash(&alice, "/run done id:r-1").await;
    assert!(!private, "{done}");
    scene
        .progress("r-1", |text| {
            text.contains("👉 on compute-01, run `echo hi`")
        })
        .await;
    let (done, private) = scene.slash(&alice, "/run done id:r-1").await;
    assert!(!private, "{done}");
    scene.progress("r-1", |text| text.starts_with("✅")).await;
    scene.assert_well_behaved();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_booked_from_discord_is_announced_ahead_and_runs_at_its_time() {
    let scene = DiscordScene::start(Setup {
        days_of_indices: 10,
        ..Setup::default()
    })
    .await;
    let at = (time::OffsetDateTime::now_utc() + time::Duration::seconds(3))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let (reply, private) = scene
        .slash(
            &user("alice"),
            &format!("/cluster restart cluster:logs at:{at}"),
        )
        .await;
    assert!(!private, "a booking is public: {reply}");
    assert!(
        reply.starts_with("r-1 waits for alice to confirm it") && reply.contains("\n📅 starts at"),
        "{reply}"
    );
    scene.confirm(&user("alice"), &reply).await;
    let done = scene.progress("r-1", |text| text.starts_with("✅")).await;
    let shown: Vec<String> = done
        .history
        .iter()
        .map(|v| v["embeds"][0]["description"].to_string())
        .collect();
    assert!(
        shown.first().is_some_and(|t| t.contains("⏸ r-1"))
            && shown.iter().any(|t| t.contains("📅 r-1")),
        "the message showed the plan waiting, then the booking: {shown:?}"
    );
    let said = scene.announced_until("✅ maintenance over").await;
    assert_eq!(said.len(), 3, "{said:#?}");
    assert!(
        said[0].starts_with("📅 maintenance booked by alice for "),
        "{said:#?}"
    );
    assert_eq!(
        said[1],
        "🔧 maintenance started by alice: /cluster restart cluster:logs (r-1)"
    );
    scene.assert_well_behaved();
}

/// `/run log` of a log longer than a message: a page in the reply, and the whole log attached
/// as a file, which the fake Discord takes as Discord does (multipart, within the guild's
/// upload limit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_run_log_is_paged_and_attached_whole() {
    let (runbooks, _hosts) = opsbot_tests::runbooks::test_hosts(opsbot_tests::runbooks::shipped());
    let scene = DiscordScene::start(Setup {
        runbooks,
        ..Setup::default()
    })
    .await;
    let alice = user("alice");
    let (started, _) = scene
        .slash(
            &alice,
            "/runbook run name:debug-silent-service host:compute-01 process:nova-compute \
             seconds:5",
        )
        .await;
    assert!(started.starts_with("r-1 started"), "{started}");
    scene.progress("r-1", |text| text.starts_with("✅")).await;
    let (page, private) = scene.slash(&alice, "/run log id:r-1").await;
    assert!(!private);
    assert!(page.contains(", page 1 of "), "{page}");
    let uploads = scene.fake.uploads();
    assert_eq!(uploads.len(), 1, "{uploads:?}");
    assert_eq!(uploads[0].filename, "r-1.log");
    let file = String::from_utf8(uploads[0].bytes.clone()).unwrap();
    assert!(
        file.starts_with("── step 1 on compute-01: `pgrep -o -f nova-compute` exited 0\n")
            && file.contains("attached with 4 threads")
            && file.trim_end().ends_with("detached"),
        "{file}"
    );
    scene.assert_well_behaved();
}

/// A plan longer than a message (a prune of many indices, each of its own series) is cut in
/// the answer and attached whole, so the approver can read every index it deletes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_plan_is_attached_whole_to_the_answer() {
    let scene = DiscordScene::start(Setup::long_plan()).await;
    let (answer, private) = scene
        .slash(
            &user("alice"),
            "/indices prune cluster:logs older_than_days:30",
        )
        .await;
    assert!(!private, "{answer}");
    assert!(
        answer.ends_with("(cut to fit; /run status shows the rest)"),
        "{answer}"
    );
    let uploads = scene.fake.uploads();
    assert_eq!(uploads.len(), 1, "{uploads:?}");
    assert_eq!(uploads[0].filename, "r-1-plan.txt");
    let plan = String::from_utf8(uploads[0].bytes.clone()).unwrap();
    assert!(
        plan.starts_with("Plan for /indices prune cluster:logs"),
        "{plan}"
    );
    for n in [0, 75, 149] {
        assert!(plan.contains(&format!("svc{n:03}-2020.01.01")), "{plan}");
    }
    scene.assert_well_behaved();
}
