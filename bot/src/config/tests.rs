use super::*;

const EXAMPLE: &str = include_str!("../../../deploy/opsbot.example.toml");

fn parse(text: &str) -> anyhow::Result<Config> {
    let config = Config::parse(text)?;
    config.validate()?;
    Ok(config)
}

#[test]
fn the_shipped_example_is_valid() {
    let config = parse(EXAMPLE).unwrap();
    assert_eq!(config.clusters.len(), 1);
    assert_eq!(config.clusters[0].nodes.len(), 3);
}

#[test]
fn unknown_keys_are_refused() {
    let text = EXAMPLE.replace("[engine]", "[engine]\npoll_intervall = \"1s\"");
    let error = format!("{:#}", parse(&text).unwrap_err());
    assert!(error.contains("poll_intervall"), "{error}");
}

#[test]
fn bad_values_are_refused_with_the_reason() {
    let cases = [
        (
            EXAMPLE.replace("\"10.0.0.12\"", "\"10.0.0.300\""),
            "10.0.0.300",
        ),
        (EXAMPLE.replace("\"10.0.0.12\"", "\"10.0.0.11\""), "twice"),
        (
            EXAMPLE.replace("http://10.0.0.10:9200", "ftp://x"),
            "http or https",
        ),
        (
            EXAMPLE.replace("name = \"logs\"", "name = \"Logs\""),
            "cluster name",
        ),
        (
            EXAMPLE.replace("[\"ssh\", \"{host}\"", "[\"sh\", \"-c\""),
            "shell",
        ),
        (
            EXAMPLE.replace("\"{container}\"]", "\"{containr}\"]"),
            "{containr}",
        ),
        (
            EXAMPLE.replace(
                "container = \"opensearch\"",
                "container = \"-oProxyCommand=x\"",
            ),
            "container",
        ),
    ];
    for (text, expected) in cases {
        let error = format!("{:#}", parse(&text).unwrap_err());
        assert!(
            error.contains(expected),
            "expected `{expected}` in: {error}"
        );
    }
}

#[test]
fn a_cloud_needs_exactly_one_password_source_and_a_url() {
    let config = parse(EXAMPLE).unwrap();
    assert_eq!(config.clouds.len(), 1);
    assert_eq!(config.clouds[0].interface, Interface::Internal);
    assert_eq!(
        config.clouds[0].password,
        crate::config::SecretSource::File("/run/credentials/opsbot.service/prod-password".into())
    );
    let both = EXAMPLE.replace(
        "# password_env = \"OPSBOT_PROD_PASSWORD\"",
        "password_env = \"OPSBOT_PROD_PASSWORD\"",
    );
    let neither = EXAMPLE.replace(
        "password_file = \"/run/credentials/opsbot.service/prod-password\"",
        "",
    );
    let no_url = EXAMPLE.replace("https://10.0.0.10:5000/v3", "keystone:5000");
    let twice = format!(
        "{EXAMPLE}\n[[clouds]]\nname = \"prod\"\nauth_url = \"http://k:5000/v3\"\n\
         username = \"u\"\nproject = \"p\"\npassword_env = \"P\"\n"
    );
    for (text, expected) in [
        (both, "exactly one of password_env and password_file"),
        (neither, "exactly one of password_env and password_file"),
        (no_url, "auth_url must be http or https"),
        (twice, "cloud `prod` is configured twice"),
    ] {
        let error = format!("{:#}", parse(&text).unwrap_err());
        assert!(error.contains(expected), "{error}");
    }
}

#[test]
fn the_runbooks_section_is_checked() {
    let config = parse(EXAMPLE).unwrap();
    assert_eq!(config.runbooks.inventory.len(), 2);
    let prefix = "prefix = [\"ssh\", \"-o\", \"BatchMode=yes\", \"-o\", \"ConnectTimeout=10\", \"{host}\", \"--\"]";
    assert!(EXAMPLE.contains(prefix));
    let cases = [
        (
            EXAMPLE.replace(prefix, "prefix = [\"ssh\", \"ctl-01\"]"),
            "must name the host as {host}",
        ),
        (
            EXAMPLE.replace(prefix, "prefix = [\"sudo\", \"sh\", \"-c\", \"{host}\"]"),
            "runs a shell script",
        ),
        (
            EXAMPLE.replace(prefix, "prefix = [\"ssh\", \"{host}\", \"{container}\"]"),
            "nothing else",
        ),
        (
            EXAMPLE.replace("\"ctl-01\", \"ctl-02\"", "\"ctl-01\", \"ctl-01\""),
            "group `control` lists a host twice",
        ),
        (EXAMPLE.replace("compute = [", "Compute = ["), "group name"),
        (EXAMPLE.replace("\"ctl-03\"", "\"ctl 03\""), "host name"),
    ];
    for (text, expected) in cases {
        let error = format!("{:#}", parse(&text).unwrap_err());
        assert!(
            error.contains(expected),
            "expected `{expected}` in: {error}"
        );
    }
}

/// One person, as the smallest configs need.
const ALICE: &str =
    "[[people]]\nname = \"alice\"\nroles = [\"operator\"]\naccounts = [\"alice\"]\n";

#[test]
fn people_are_named_once_with_their_accounts() {
    let config = parse(EXAMPLE).unwrap();
    let people = config.people().unwrap();
    let bob = people.on_console("bob-admin").unwrap();
    assert_eq!(bob.person.name.as_str(), "bob");
    assert!(bob.roles.approver);
    assert_eq!(
        people
            .on_discord(700_000_000_000_000_001, &[])
            .unwrap()
            .person
            .name
            .as_str(),
        "alice"
    );
    let cases = [
        (
            EXAMPLE.replace(
                "accounts = [\"bob\", \"bob-admin\"]",
                "accounts = [\"alice\"]",
            ),
            "account `alice` is given to both `alice` and `bob`",
        ),
        (
            EXAMPLE.replace("700000000000000002", "700000000000000001"),
            "Discord user 700000000000000001 is given to both",
        ),
        (
            EXAMPLE.replace("roles = [\"operator\"]\n", "roles = [\"operater\"]\n"),
            "operater",
        ),
        (
            EXAMPLE.replace("roles = [\"operator\"]\n", "roles = []\n"),
            "person `alice` has no roles",
        ),
        (
            EXAMPLE.replace("name = \"bob\"", "name = \"Bob\""),
            "person name",
        ),
    ];
    for (text, expected) in cases {
        let error = format!("{:#}", parse(&text).unwrap_err());
        assert!(
            error.contains(expected),
            "expected `{expected}` in: {error}"
        );
    }
}

#[test]
fn a_config_without_people_or_with_retired_keys_says_what_to_write() {
    let minimal =
        "[store]\npath = \"/tmp/s\"\n[runbooks]\ndir = \"/r\"\n[runbooks.inventory]\nc = [\"h\"]\n";
    let error = format!("{:#}", parse(minimal).unwrap_err());
    assert!(error.contains("the config names no [[people]]"), "{error}");
    let retired = format!("{minimal}{ALICE}[console]\noperators = [{{ name = \"alice\" }}]\n");
    let error = format!("{:#}", parse(&retired).unwrap_err());
    assert!(
        error.contains("[console] operators is replaced by [[people]]"),
        "{error}"
    );
    let retired = EXAMPLE.replace("[discord]\n", "[discord]\noperator_roles = [1]\n");
    let error = format!("{:#}", parse(&retired).unwrap_err());
    assert!(
        error.contains("[discord] operator_roles is replaced by [[people]]"),
        "{error}"
    );
    // Discord needs someone who can speak there.
    let no_discord_people = EXAMPLE
        .replace("discord_user = 700000000000000001\n", "")
        .replace("discord_user = 700000000000000002\n", "")
        .replace("discord_roles = [523456789012345678]\n", "");
    let error = format!("{:#}", parse(&no_discord_people).unwrap_err());
    assert!(error.contains("no person has a discord_user"), "{error}");
}

#[test]
fn runbooks_without_hosts_are_refused() {
    let text = "[store]\npath = \"/tmp/s\"\n[runbooks]\ndir = \"/etc/opsbot/runbooks\"\n";
    let error = format!("{:#}", parse(text).unwrap_err());
    assert!(error.contains("lists no hosts"), "{error}");
    // Runbooks alone are something to act on.
    let text = format!("{text}[runbooks.inventory]\ncompute = [\"compute-01\"]\n{ALICE}");
    let config = parse(&text).unwrap();
    assert!(matches!(config.runbooks.access, HostAccessConfig::Manual));
}

#[test]
fn discord_requests_time_out_after_15_s_unless_configured() {
    let discord = |config: Config| config.discord.unwrap().request_timeout;
    assert_eq!(discord(parse(EXAMPLE).unwrap()), Duration::from_secs(15));
    let quicker = EXAMPLE.replace("[discord]\n", "[discord]\nrequest_timeout = \"3s\"\n");
    assert_eq!(discord(parse(&quicker).unwrap()), Duration::from_secs(3));
}

#[test]
fn the_example_schedule_is_read_with_its_bounds() {
    let config = parse(EXAMPLE).unwrap();
    let schedule = &config.schedules[0].0;
    assert_eq!(schedule.name.as_str(), "nightly-prune");
    assert_eq!(schedule.cron.zone(), "Europe/Berlin");
    assert_eq!(schedule.bounds.as_ref().unwrap().max_indices, 60);
}

#[test]
fn bad_schedules_are_refused_at_start_up_with_what_to_write() {
    let cases = [
        (
            EXAMPLE.replace("\"Europe/Berlin\"", "\"Europe/Atlantis\""),
            "unknown time zone `Europe/Atlantis`",
        ),
        (
            EXAMPLE.replace("cron = \"0 2 * * *\"", "cron = \"* 2 * * *\""),
            "more often than the minimum interval of 5m",
        ),
        (
            EXAMPLE.replace("cron = \"0 2 * * *\"", "cron = \"0 0 31 2 *\""),
            "never fires",
        ),
        (
            EXAMPLE.replace("[schedules.bounds]\nmax_indices = 60\nmin_age_days = 30\nprefix = \"flog-\"\nmax_total_bytes = 2_000_000_000_000\n", ""),
            "has no [schedules.bounds]",
        ),
        (
            EXAMPLE.replace("min_age_days = 30", "min_age_days = 45"),
            "every run would exceed them",
        ),
        (
            EXAMPLE.replace("max_indices = 60", "max_indices = 0"),
            "max_indices = 0 lets no run delete anything under the standing approval",
        ),
        (
            EXAMPLE.replace("channel = \"console\"", "channel = \"general\""),
            "channel `general` is neither `console` nor one of [discord] channels",
        ),
        (
            EXAMPLE.replace(
                "/indices prune cluster:logs older_than_days:30 prefix:flog-",
                "/cluster status cluster:logs",
            ),
            "is not a procedure",
        ),
        (
            EXAMPLE.replace("cluster:logs older_than_days", "cluster:nope older_than_days"),
            "cluster `nope` is not configured",
        ),
    ];
    for (text, expected) in cases {
        let error = format!("{:#}", parse(&text).unwrap_err());
        assert!(error.contains(expected), "{expected}: {error}");
        assert!(error.contains("nightly-prune"), "{error}");
    }
}

/// The example's `[store] path` line replaced by `store`.
fn with_store(store: &str) -> String {
    EXAMPLE.replace(
        "path = \"/var/lib/opsbot/store\"  # systemd StateDirectory=opsbot",
        store,
    )
}

#[test]
fn a_postgres_store_is_read_with_its_defaults() {
    let config = parse(&with_store(
        "kind = \"postgres\"\nurl = \"postgres://opsbot@db.example.org/opsbot?sslmode=verify-full\"\n\
         password_env = \"OPSBOT_PG_PASSWORD\"",
    ))
    .unwrap();
    let StoreBackend::Postgres(pg) = &config.store.backend else {
        panic!("{:?}", config.store.backend);
    };
    assert_eq!(pg.schema, "opsbot");
    assert_eq!(pg.takeover, Duration::from_secs(15));
    assert_eq!(
        pg.password,
        Some(SecretSource::Env("OPSBOT_PG_PASSWORD".into()))
    );
}

#[test]
fn bad_store_settings_are_refused_with_the_reason_and_never_echo_a_password() {
    let cases = [
        (
            "kind = \"postgres\"\nurl = \"postgres://opsbot:hunter2@db/opsbot\"",
            "url holds a password",
        ),
        (
            "kind = \"postgres\"\nurl = \"postgres://opsbot@db/opsbot?password=hunter2\"",
            "url holds a password",
        ),
        (
            "kind = \"postgres\"\nurl = \"mysql://db\"",
            "does not parse",
        ),
        ("kind = \"postgres\"", "needs a url"),
        (
            "kind = \"postgres\"\nurl = \"postgres://opsbot@db/opsbot\"\ntakeover = \"1s\"",
            "at least 3s",
        ),
        (
            "kind = \"postgres\"\nurl = \"postgres://opsbot@db/opsbot\"\npath = \"/x\"",
            "path is for sled",
        ),
        (
            "path = \"/x\"\nurl = \"postgres://opsbot@db/opsbot\"",
            "url is for kind = \"postgres\"",
        ),
        ("kind = \"postgresql\"", "unknown variant"),
    ];
    for (store, expected) in cases {
        let error = format!("{:#}", parse(&with_store(store)).unwrap_err());
        assert!(error.contains(expected), "{store}: {error}");
        assert!(!error.contains("hunter2"), "{store}: {error}");
    }
}

/// A `min_interval` that turns the guard against every-minute schedules off is refused.
#[test]
fn a_minimum_interval_below_a_minute_is_refused() {
    let text = format!("{EXAMPLE}\n[scheduling]\nmin_interval = \"0s\"\n");
    let error = format!("{:#}", parse(&text).unwrap_err());
    assert!(
        error.contains("[scheduling] min_interval = 0s turns off the check")
            && error.contains("give at least 1m"),
        "{error}"
    );
}

#[test]
fn the_approval_policy_is_read_and_a_deletion_cannot_be_lowered() {
    use opsbot_commands::consent::Consent;
    let config = parse(EXAMPLE).unwrap();
    let image = opsbot_commands::parse::command_by_path("image", Some("properties")).unwrap();
    assert_eq!(
        config.approval.of_command(image),
        Some(Consent::SecondPerson)
    );
    let text = EXAMPLE.replace(
        "\"image properties\" = \"second-person\"",
        "\"indices prune\" = \"confirm\"",
    );
    let error = format!("{:#}", parse(&text).unwrap_err());
    assert!(
        error.contains(
            "`indices prune` always needs a second person's approval (it deletes or removes \
             what cannot be brought back); the config cannot lower it to `confirm`"
        ),
        "{error}"
    );
}
