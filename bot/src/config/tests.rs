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
