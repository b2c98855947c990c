//! Runbook runs against test hosts: the shipped runbooks of `deploy/runbooks/`, and an inventory
//! of compute and control hosts made of local scripts (`opsbot-host-sim`) that opsbot reaches
//! through their launcher, as it reaches real hosts through ssh.

use std::path::PathBuf;

use opsbot::config::RunbooksConfig;
use opsbot_host_sim::TestHosts;

pub const COMPUTE: [&str; 2] = ["compute-01", "compute-02"];
pub const CONTROL: [&str; 1] = ["ctl-01"];

/// The runbooks the project ships.
pub fn shipped() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/runbooks")
}

/// Test hosts, kept alive as long as the value lives.
#[derive(Debug)]
pub struct Hosts {
    pub hosts: TestHosts,
    _dir: tempfile::TempDir,
}

/// Installs the test hosts and the config that runs `dir`'s runbooks on them.
pub fn test_hosts(dir: PathBuf) -> (RunbooksConfig, Hosts) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (config, hosts) = opsbot::demo::simulated_hosts(
        tmp.path(),
        &[("compute", &COMPUTE), ("control", &CONTROL)],
        dir,
    )
    .expect("test hosts");
    (config, Hosts { hosts, _dir: tmp })
}
