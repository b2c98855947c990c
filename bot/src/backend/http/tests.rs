use std::path::PathBuf;

use super::*;
use crate::config::{ClientIdentity, SecretSource};

fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn pem_pair() -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["opsbot".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    (cert.pem(), key.serialize_pem())
}

#[test]
fn unusable_tls_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let empty = file(&dir, "empty.pem", "no certificate here\n");
    let tls = Tls {
        ca_file: Some(empty.clone()),
        identity: None,
    };
    let error = format!("{:#}", client(&tls, Duration::from_secs(1)).unwrap_err());
    assert!(
        error.contains(&format!("{} holds no PEM certificate", empty.display())),
        "{error}"
    );

    let (cert, _) = pem_pair();
    let (_, other_key) = pem_pair();
    let identity = |key: &str| Tls {
        ca_file: None,
        identity: Some(ClientIdentity {
            cert: file(&dir, "client.pem", &cert),
            key: file(&dir, "client.key", key),
        }),
    };
    let error = format!(
        "{:#}",
        client(&identity(&other_key), Duration::from_secs(1)).unwrap_err()
    );
    assert!(error.contains("do not make a usable identity"), "{error}");
    let error = format!(
        "{:#}",
        client(&identity("nothing"), Duration::from_secs(1)).unwrap_err()
    );
    assert!(error.contains("holds no PEM private key"), "{error}");
}

#[test]
fn a_matching_client_identity_and_a_ca_make_a_client() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = pem_pair();
    let tls = Tls {
        ca_file: Some(file(&dir, "ca.pem", &cert)),
        identity: Some(ClientIdentity {
            cert: file(&dir, "client.pem", &cert),
            key: file(&dir, "client.key", &key),
        }),
    };
    client(&tls, Duration::from_secs(1)).unwrap();
}

#[test]
fn credentials_become_a_sensitive_authorization_header() {
    let dir = tempfile::tempdir().unwrap();
    let basic = ClusterAuth::Basic {
        username: "elastic".into(),
        password: SecretSource::File(file(&dir, "pw", "changeme\n")),
    };
    let header = authorization(&basic).unwrap();
    // base64("elastic:changeme"), as curl -u sends it.
    assert_eq!(header.to_str().unwrap(), "Basic ZWxhc3RpYzpjaGFuZ2VtZQ==");
    assert!(header.is_sensitive());
    assert!(!format!("{header:?}").contains("ZWxh"));
    let key = ClusterAuth::ApiKey(SecretSource::File(file(
        &dir,
        "key",
        "VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==",
    )));
    assert_eq!(
        authorization(&key).unwrap().to_str().unwrap(),
        "ApiKey VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw=="
    );
    let broken = ClusterAuth::ApiKey(SecretSource::File(file(&dir, "bad", "a\u{7f}b")));
    let error = authorization(&broken).unwrap_err().to_string();
    assert_eq!(error, "the API key holds characters an HTTP header cannot");
}

#[test]
fn an_api_key_that_is_not_the_encoded_pair_is_refused_naming_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    // The answer's `api_key` alone, and base64 of it without the id.
    for (name, text) in [
        ("raw", "ui2lp2axTNmsyakw9tvNnw"),
        ("no-id", "dWkybHAyYXhUTm1zeWFrdzl0dk5udw=="),
    ] {
        let key = ClusterAuth::ApiKey(SecretSource::File(file(&dir, name, text)));
        let error = format!("{:#}", authorization(&key).unwrap_err());
        assert_eq!(
            error,
            "api_key_file must hold the `encoded` value of the create-API-key answer (base64 of \
             id:api_key)"
        );
    }
    // base64(":secret"): a colon, but no id.
    let key = ClusterAuth::ApiKey(SecretSource::File(file(&dir, "empty-id", "OnNlY3JldA==")));
    assert!(authorization(&key).is_err());
}
