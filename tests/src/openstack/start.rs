//! Starting the servers: the scripts with their environment and ports, and the retry when a
//! port was taken meanwhile; the steps every real server shares are `crate::servers`'.

use super::*;
use crate::servers::{RunDir, Script, free_ports, shared_client};

impl RealCloud {
    pub(super) async fn start() -> anyhow::Result<Self> {
        let RunDir {
            base,
            path: run_dir,
            scripts,
            mut watchdog,
        } = RunDir::prepare("openstack", "stop-openstack.sh", 3)?;
        let venvs = [
            ("KEYSTONE_VENV", base.join("venv-keystone")),
            ("PLACEMENT_VENV", base.join("venv-placement")),
        ];
        let script = |name: &str, port: u16, dir: &str, env: Vec<(&'static str, String)>| Script {
            path: scripts.join(name),
            port,
            data_dir: run_dir.join(dir),
            env: venvs
                .iter()
                .map(|(k, v)| (*k, v.display().to_string()))
                .chain(env)
                .collect(),
        };

        // Keystone first: it registers the URL Placement is about to get.
        let began = Instant::now();
        let [keystone_port, mut placement_port] = free_ports()?;
        let keystone_env = |placement_port: u16| {
            vec![(
                "PLACEMENT_URL",
                format!("http://127.0.0.1:{placement_port}"),
            )]
        };
        let mut keystone = script(
            "start-keystone.sh",
            keystone_port,
            "keystone",
            keystone_env(placement_port),
        );
        if let Err(clash) = keystone.run(&mut watchdog).await {
            if !clash.port_in_use {
                return Err(clash.error);
            }
            // someone took the port meanwhile: another one, and a fresh data dir (the
            // bootstrap there registered Keystone's own URL with the port)
            [keystone.port] = free_ports()?;
            keystone = script(
                "start-keystone.sh",
                keystone.port,
                "keystone-retry",
                keystone_env(placement_port),
            );
            keystone.run(&mut watchdog).await.map_err(|f| f.error)?;
        }
        let keystone_start = began.elapsed();
        let keystone_url = format!("http://127.0.0.1:{}", keystone.port);

        let began = Instant::now();
        let placement_env = || {
            vec![
                ("PLACEMENT_AUTH", "keystone".to_owned()),
                ("PLACEMENT_KEYSTONE_URL", keystone_url.clone()),
            ]
        };
        let mut placement = script(
            "start-placement.sh",
            placement_port,
            "placement",
            placement_env(),
        );
        if let Err(clash) = placement.run(&mut watchdog).await {
            if !clash.port_in_use {
                return Err(clash.error);
            }
            // someone took the port meanwhile: another one, registered anew (Keystone is
            // reused as it runs, only its Placement endpoints change)
            [placement_port] = free_ports()?;
            keystone.env = keystone
                .env
                .into_iter()
                .filter(|(k, _)| *k != "PLACEMENT_URL")
                .chain(keystone_env(placement_port))
                .collect();
            keystone.run(&mut watchdog).await.map_err(|f| f.error)?;
            placement = script(
                "start-placement.sh",
                placement_port,
                "placement-retry",
                placement_env(),
            );
            placement.run(&mut watchdog).await.map_err(|f| f.error)?;
        }
        let placement_start = began.elapsed();

        let cloud = Self {
            keystone: keystone_url,
            placement: format!("http://127.0.0.1:{placement_port}"),
            run_dir,
            http: shared_client()?,
            helper_token: Mutex::new(None),
            keystone_start,
            placement_start,
            _watchdog: watchdog.stdin,
        };
        eprintln!(
            "real OpenStack: Keystone {} up in {:.1?}, Placement {} in {:.1?} (data: {})",
            cloud.keystone_url(),
            keystone_start,
            cloud.placement,
            placement_start,
            cloud.run_dir.display()
        );
        Ok(cloud)
    }
}
