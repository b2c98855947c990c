//! Starting the server: its script with its environment and a free port, and the retry when
//! the port was taken meanwhile; the steps every real server shares are `crate::servers`'.

use super::*;
use crate::servers::{RunDir, Script, free_ports, shared_client};

impl Synapse {
    /// The binary's homeservers, one after the other in one run dir (a data dir each): a
    /// second start costs about a second, the venv and the template being made by the first.
    pub(super) async fn start_all() -> anyhow::Result<[Self; HOMESERVERS]> {
        let mut run = RunDir::prepare("matrix", "stop-synapse.sh", 0)?;
        let mut started = Vec::with_capacity(HOMESERVERS);
        for n in 0..HOMESERVERS {
            started.push(Self::start(&mut run, n).await?);
        }
        let watchdog = Arc::new(run.watchdog.stdin);
        let all: Vec<Synapse> = started
            .into_iter()
            .map(|(base_url, data_dir, secret)| {
                Ok(Synapse {
                    base_url,
                    data_dir,
                    secret,
                    http: shared_client()?,
                    admin_token: Mutex::new(None),
                    _watchdog: watchdog.clone(),
                })
            })
            .collect::<anyhow::Result<_>>()?;
        all.try_into()
            .map_err(|_| anyhow::anyhow!("not {HOMESERVERS} homeservers"))
    }

    /// The `n`th homeserver of `run`: its URL, data dir and registration secret.
    async fn start(run: &mut RunDir, n: usize) -> anyhow::Result<(String, PathBuf, String)> {
        let began = std::time::Instant::now();
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
            data_dir: run.path.join(format!("synapse-{n}")),
            env,
        };
        if let Err(clash) = script.run(&mut run.watchdog).await {
            if !clash.port_in_use {
                return Err(clash.error);
            }
            // someone took the port meanwhile: another one, and a fresh data dir
            [script.port] = free_ports()?;
            script.data_dir = run.path.join(format!("synapse-{n}-retry"));
            script.run(&mut run.watchdog).await.map_err(|f| f.error)?;
        }
        let base_url = format!("http://127.0.0.1:{}", script.port);
        eprintln!(
            "real Synapse: {base_url} up in {:.1?} (data: {})",
            began.elapsed(),
            script.data_dir.display()
        );
        Ok((base_url, script.data_dir, secret))
    }
}
