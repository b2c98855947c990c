//! Clouds for the harness: a config entry for a cloud (simulated or real) whose password sits in
//! a file of the test's own, and a harness in front of a simulated cloud.

use std::path::Path;

use opsbot::config::{CloudConfig, HostControlConfig, Interface, SecretSource};
use opsbot_cloud_sim::{CloudSimConfig, CloudSimHandle};
use opsbot_commands::name::CloudName;

use crate::{Harness, Setup};

/// Who opsbot is in a cloud.
#[derive(Debug, Clone)]
pub struct Account<'a> {
    pub auth_url: &'a str,
    pub username: &'a str,
    pub password: &'a str,
    pub project: &'a str,
    pub region: &'a str,
}

/// A `[[clouds]]` entry named `name`, its password written to a file in `dir`.
pub fn cloud_config(name: &str, account: &Account<'_>, dir: &Path) -> CloudConfig {
    let password_file = dir.join(format!("{name}-password"));
    std::fs::write(&password_file, format!("{}\n", account.password)).expect("password file");
    CloudConfig {
        name: CloudName::parse(name).expect("cloud name"),
        auth_url: account.auth_url.to_owned(),
        username: account.username.to_owned(),
        user_domain: "Default".to_owned(),
        project: account.project.to_owned(),
        project_domain: "Default".to_owned(),
        region: account.region.to_owned(),
        interface: Interface::Internal,
        password: SecretSource::File(password_file),
        ca_file: None,
        compute_control: HostControlConfig::Sim { url: None },
    }
}

/// A harness whose cloud `prod` is a simulated cloud.
#[derive(Debug)]
pub struct CloudScene {
    pub cloud: CloudSimHandle,
    pub harness: Harness,
    _dir: tempfile::TempDir,
}

impl CloudScene {
    pub async fn start(config: CloudSimConfig) -> Self {
        Self::start_with(config, Setup::default()).await
    }

    /// [`Self::start`] with a harness set up as `setup` says (its engine's timeouts, say).
    pub async fn start_with(config: CloudSimConfig, setup: Setup) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let cloud = opsbot_cloud_sim::spawn(config, listener)
            .await
            .expect("cloud sim");
        let dir = tempfile::tempdir().expect("tempdir");
        let account = Account {
            auth_url: &cloud.identity_url(),
            username: "admin",
            password: "adminpass",
            project: "admin",
            region: "RegionOne",
        };
        let mut setup = setup;
        setup
            .clouds
            .push(cloud_config("prod", &account, dir.path()));
        let harness = Harness::start(setup).await;
        Self {
            cloud,
            harness,
            _dir: dir,
        }
    }
}
