//! Starting the server: its script with its environment and a free port, and the retry when
//! the port was taken meanwhile; the steps every real server shares are `crate::servers`'.

use super::*;
use crate::servers::{RunDir, Script, free_ports, shared_client};

impl Synapse {
    pub(super) async fn start() -> anyhow::Result<Self> {
        let began = std::time::Instant::now();
        let mut run = RunDir::prepare("matrix", "stop-synapse.sh", 0)?;
        let secret = Uuid::new_v4().simple().to_string();
        let env = vec![
            (
                "SYNAPSE_VENV",
                run.base.join("venv-synapse").display().to_string(),
            ),
            ("SYNAPSE_REGISTRATION_SECRET", secret.clone()),
            (
                "SYNAPSE_RC_MESSAGE_PER_SECOND",
                MESSAGES_PER_SECOND.to_string(),
            ),
            ("SYNAPSE_RC_MESSAGE_BURST", MESSAGE_BURST.to_string()),
        ];
        let [port] = free_ports()?;
        let mut script = Script {
            path: run.scripts.join("start-synapse.sh"),
            port,
            data_dir: run.path.join("synapse"),
            env,
        };
        if let Err(clash) = script.run(&mut run.watchdog).await {
            if !clash.port_in_use {
                return Err(clash.error);
            }
            // someone took the port meanwhile: another one, and a fresh data dir
            [script.port] = free_ports()?;
            script.data_dir = run.path.join("synapse-retry");
            script.run(&mut run.watchdog).await.map_err(|f| f.error)?;
        }
        let synapse = Self {
            base_url: format!("http://127.0.0.1:{}", script.port),
            run_dir: run.path,
            data_dir: script.data_dir,
            secret,
            http: shared_client()?,
            admin_token: Mutex::new(None),
            start_time: began.elapsed(),
            _watchdog: Mutex::new(run.watchdog.stdin),
        };
        eprintln!(
            "real Synapse: {} up in {:.1?} (data: {})",
            synapse.base_url,
            synapse.start_time,
            synapse.data_dir.display()
        );
        Ok(synapse)
    }
}
