//! The store on the real binary: backed up and exported through the running bot's console
//! socket, refused when damaged, checked, restored, and its waiting run resumed.

use std::path::{Path, PathBuf};
use std::process::Output;

use opsbot_commands::name::RunId;
use opsbot_search_sim::SimConfig;

use crate::support::{Scene, approve, complete, console, output, scene, serve, spawn, stop};

/// A 5-node cluster with 35 days of daily indices, and a config whose bot serves the console socket.
async fn scene_with_socket() -> (Scene, PathBuf) {
    let sim = SimConfig {
        speed: 200.0,
        days_of_indices: 35,
        ..SimConfig::default()
    };
    let scene = scene(sim, r#"kind = "sim""#).await;
    let socket = scene.dir.path().join("console.sock");
    let mut text = std::fs::read_to_string(&scene.config).unwrap();
    text.push_str(&format!("\n[console]\nsocket = \"{}\"\n", socket.display()));
    std::fs::write(&scene.config, text).unwrap();
    (scene, socket)
}

/// `opsbot ARGS --config CONFIG MORE` to its end.
async fn opsbot(args: &[&str], config: &Path, more: &[&str]) -> Output {
    let config = config.display().to_string();
    let mut all = args.to_vec();
    all.extend(["--config", &config]);
    all.extend(more);
    output(spawn(&all, "")).await
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// alice asks for a prune (destructive: a second person approves it) at the console, which
/// exits with r-1 waiting for approval.
async fn r1_waits(config: &Path) {
    let prune = "/indices prune cluster:logs older_than_days:30\n";
    let asked = output(console(config, prune)).await;
    let stdout = text(&asked.stdout);
    assert!(stdout.contains("r-1 waits for approval"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_through_the_running_bot_restores_a_store_that_lost_its_snapshot() {
    let (scene, socket) = scene_with_socket().await;
    r1_waits(&scene.config).await;
    let bot = serve(&scene.config, &socket).await;
    let backup = scene.dir.path().join("backups/monday");
    let backed = opsbot(
        &["store", "backup"],
        &scene.config,
        &[backup.to_str().unwrap()],
    )
    .await;
    assert!(backed.status.success(), "{}", text(&backed.stderr));
    assert!(
        text(&backed.stdout).contains("backed up the store into")
            && text(&backed.stdout).contains("(runs: 1 (1 unfinished, last r-1)"),
        "{}",
        text(&backed.stdout)
    );
    stop(bot);

    // The store loses its snapshot: the bot refuses it, and says how to restore.
    let store = scene.dir.path().join("store");
    for entry in std::fs::read_dir(&store).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("snap.")
        {
            std::fs::remove_file(path).unwrap();
        }
    }
    let refused = output(console(&scene.config, "/run list\n")).await;
    assert!(!refused.status.success());
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("is damaged: its `snap.*` snapshot file is missing; nothing was written")
            && stderr.contains("opsbot store restore"),
        "{stderr}"
    );
    let checked = opsbot(&["store", "check"], &scene.config, &[]).await;
    assert!(!checked.status.success());

    let sound = output(spawn(
        &["store", "check", "--path", backup.to_str().unwrap()],
        "",
    ))
    .await;
    assert!(sound.status.success(), "{}", text(&sound.stderr));
    assert!(text(&sound.stdout).contains("is sound: runs: 1 (1 unfinished, last r-1)"));

    let restored = opsbot(
        &["store", "restore"],
        &scene.config,
        &[backup.to_str().unwrap()],
    )
    .await;
    assert!(restored.status.success(), "{}", text(&restored.stderr));
    assert!(
        text(&restored.stdout).contains("the store that was there is kept at"),
        "{}",
        text(&restored.stdout)
    );

    // The run waiting for approval survived: bob approves it, and it completes.
    approve(&scene.config, RunId::new(1)).await;
    complete(&scene.config, "", "the restored run").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_export_asks_the_running_bot_through_its_socket() {
    let (scene, socket) = scene_with_socket().await;
    r1_waits(&scene.config).await;
    let bot = serve(&scene.config, &socket).await;

    let export = opsbot(&["audit", "export"], &scene.config, &["--run", "r-1"]).await;
    let missing = opsbot(&["audit", "export"], &scene.config, &["--run", "r-99"]).await;
    let restore = opsbot(&["store", "restore"], &scene.config, &["/nonexistent"]).await;
    stop(bot);

    assert!(export.status.success(), "{}", text(&export.stderr));
    let events: Vec<serde_json::Value> = text(&export.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(events.iter().all(|e| e["run"] == "r-1"), "{events:?}");
    assert_eq!(events[0]["event"]["kind"], "run_requested");
    assert_eq!(events[0]["event"]["digest"].as_str().unwrap().len(), 12);

    assert!(!missing.status.success());
    assert!(
        text(&missing.stderr).contains("the running bot: there is no run r-99"),
        "{}",
        text(&missing.stderr)
    );
    // Restoring under the running bot is refused, and nothing is moved.
    assert!(!restore.status.success());
    assert!(
        text(&restore.stderr).contains("is in use by another opsbot process"),
        "{}",
        text(&restore.stderr)
    );
    assert!(scene.dir.path().join("store").is_dir());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_that_maps_to_nobody_gets_no_export_or_backup() {
    let (scene, socket) = scene_with_socket().await;
    r1_waits(&scene.config).await;
    let me = opsbot::chat::console::running_account().unwrap();
    let config = std::fs::read_to_string(&scene.config).unwrap().replace(
        &format!("accounts = [\"{me}\"]"),
        "accounts = [\"someone-else\"]",
    );
    std::fs::write(&scene.config, config).unwrap();
    let bot = serve(&scene.config, &socket).await;
    let backup = scene.dir.path().join("backup");
    let export = opsbot(&["audit", "export"], &scene.config, &[]).await;
    let backed = opsbot(
        &["store", "backup"],
        &scene.config,
        &[backup.to_str().unwrap()],
    )
    .await;
    stop(bot);
    for refused in [export, backed] {
        assert!(!refused.status.success());
        assert!(refused.stdout.is_empty());
        let stderr = text(&refused.stderr);
        assert!(
            stderr.contains(&format!(
                "console account `{me}` is not one of opsbot's people"
            )),
            "{stderr}"
        );
    }
    assert!(!backup.exists());
}
