use super::*;

const EXAMPLE: &str = include_str!("../../../deploy/opsbot.example.toml");

fn parse(text: &str) -> anyhow::Result<Config> {
    let config: Config = toml::from_str(text)?;
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

#[test]
fn runbooks_without_hosts_are_refused() {
    let text = "[store]\npath = \"/tmp/s\"\n[runbooks]\ndir = \"/etc/opsbot/runbooks\"\n";
    let error = format!("{:#}", parse(text).unwrap_err());
    assert!(error.contains("lists no hosts"), "{error}");
    // Runbooks alone are something to act on.
    let text = format!("{text}[runbooks.inventory]\ncompute = [\"compute-01\"]\n");
    let config = parse(&text).unwrap();
    assert!(matches!(config.runbooks.access, HostAccessConfig::Manual));
}
