use secrecy::ExposeSecret;

use crate::config::{ClusterAuth, Config, SecretSource};

const EXAMPLE: &str = include_str!("../../../../deploy/opsbot.example.toml");

fn parse(text: &str) -> anyhow::Result<Config> {
    let config = Config::parse(text)?;
    config.validate()?;
    Ok(config)
}

/// The example with its cluster served over https and these lines of its `[[clusters]]`.
fn cluster_with(lines: &str) -> String {
    EXAMPLE.replace(
        "url = \"http://10.0.0.10:9200\"",
        &format!("url = \"https://10.0.0.10:9200\"\n{lines}"),
    )
}

fn refusal(text: &str) -> String {
    format!("{:#}", parse(text).unwrap_err())
}

#[test]
fn every_way_in_is_read_into_its_type() {
    let config = parse(&cluster_with(
        "ca_file = \"/ca.pem\"\nclient_cert = \"/c.pem\"\nclient_key = \"/c.key\"\n\
         username = \"opsbot\"\npassword_env = \"PW\"",
    ))
    .unwrap();
    let cluster = &config.clusters[0];
    assert_eq!(cluster.tls.ca_file.as_deref(), Some("/ca.pem".as_ref()));
    assert!(cluster.tls.identity.is_some());
    assert_eq!(
        cluster.auth,
        Some(ClusterAuth::Basic {
            username: "opsbot".into(),
            password: SecretSource::Env("PW".into()),
        })
    );
    let config = parse(&cluster_with("api_key_file = \"/key\"")).unwrap();
    assert_eq!(
        config.clusters[0].auth,
        Some(ClusterAuth::ApiKey(SecretSource::File("/key".into())))
    );
    let config = parse(EXAMPLE).unwrap();
    assert_eq!(config.clusters[0].auth, None);
}

#[test]
fn half_given_or_doubled_settings_are_refused_naming_what_to_do() {
    for (lines, expected) in [
        (
            "client_cert = \"/c.pem\"",
            "client_cert needs client_key too",
        ),
        (
            "client_key = \"/c.key\"",
            "client_key needs client_cert too",
        ),
        (
            "username = \"u\"",
            "username needs password_file or password_env",
        ),
        ("password_env = \"P\"", "need a username"),
        (
            "username = \"u\"\npassword_env = \"P\"\npassword_file = \"/p\"",
            "give password_file or password_env, not both",
        ),
        (
            "api_key_env = \"K\"\napi_key_file = \"/k\"",
            "give api_key_file or api_key_env, not both",
        ),
        (
            "username = \"u\"\npassword_env = \"P\"\napi_key_env = \"K\"",
            "not both",
        ),
        ("passwordfile = \"/p\"", "unknown field `passwordfile`"),
    ] {
        let error = refusal(&cluster_with(lines));
        assert!(
            error.contains("cluster `logs`") || expected.starts_with("unknown"),
            "{error}"
        );
        assert!(
            error.contains(expected),
            "expected `{expected}` in: {error}"
        );
    }
}

#[test]
fn credentials_in_a_url_are_refused_without_echoing_them() {
    let cluster = EXAMPLE.replace(
        "http://10.0.0.10:9200",
        "https://elastic:s3cret@10.0.0.10:9200",
    );
    let error = refusal(&cluster);
    assert!(
        error.contains("cluster `logs`: url holds credentials"),
        "{error}"
    );
    assert!(
        error.contains("set username with password_file or password_env"),
        "{error}"
    );
    assert!(!error.contains("s3cret"), "{error}");
    let cloud = EXAMPLE.replace(
        "https://10.0.0.10:5000/v3",
        "https://admin:s3cret@10.0.0.10:5000/v3",
    );
    let error = refusal(&cloud);
    assert!(
        error.contains("cloud `prod`: auth_url holds credentials"),
        "{error}"
    );
    assert!(!error.contains("s3cret"), "{error}");
}

#[test]
fn a_ca_file_on_plain_http_is_refused() {
    let text = EXAMPLE.replace(
        "nodes = [\"10.0.0.11\"",
        "ca_file = \"/ca.pem\"\nnodes = [\"10.0.0.11\"",
    );
    assert!(
        refusal(&text)
            .contains("cluster `logs`: ca_file/client_cert are set but the URL is http://")
    );
    let cloud = EXAMPLE
        .replace("https://10.0.0.10:5000/v3", "http://10.0.0.10:5000/v3")
        .replace(
            "# ca_file = \"/etc/opsbot/prod-ca.pem\"",
            "ca_file = \"/ca.pem\"",
        );
    assert!(refusal(&cloud).contains("cloud `prod`: ca_file/client_cert"));
}

#[test]
fn secrets_are_read_trimmed_and_never_empty() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pw");
    std::fs::write(&file, "hunter2 \nsecond line\n").unwrap();
    let secret = SecretSource::File(file.clone()).read().unwrap();
    assert_eq!(secret.expose_secret(), "hunter2");
    assert!(!format!("{secret:?}").contains("hunter2"));
    std::fs::write(&file, "\n").unwrap();
    let error = SecretSource::File(file).read().unwrap_err().to_string();
    assert!(error.ends_with("is empty"), "{error}");
    let error = SecretSource::Env("OPSBOT_TEST_SURELY_UNSET".into())
        .read()
        .unwrap_err()
        .to_string();
    assert_eq!(error, "OPSBOT_TEST_SURELY_UNSET is not set");
}

#[test]
fn a_secret_variable_that_is_not_utf8_is_refused_without_its_value() {
    use std::os::unix::ffi::OsStringExt;

    let value = std::ffi::OsString::from_vec(b"hunter2\xff".to_vec());
    let refused = super::env_value("PW", Err(std::env::VarError::NotUnicode(value)));
    let text = format!("{:#} {:?}", refused.as_ref().unwrap_err(), refused);
    assert!(text.starts_with("PW is not valid UTF-8 "), "{text}");
    assert!(
        !text.contains("hunter2"),
        "the value is never shown: {text}"
    );
    let unset = super::env_value("PW", Err(std::env::VarError::NotPresent));
    assert_eq!(format!("{:#}", unset.unwrap_err()), "PW is not set");
}

#[test]
fn a_cluster_url_must_be_an_http_url() {
    for (url, expected) in [
        ("10.0.0.10:9200", "cluster `logs`: url is not a URL"),
        (
            "ftp://10.0.0.10:9200",
            "cluster `logs`: url must be http or https",
        ),
    ] {
        let text = EXAMPLE.replace("http://10.0.0.10:9200", url);
        let error = refusal(&text);
        assert!(error.starts_with(expected), "{error}");
    }
}
