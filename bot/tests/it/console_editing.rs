//! `opsbot console` at a terminal (a pseudo-terminal here): Tab completes from the catalogue,
//! Up recalls the line before, the history is kept in the user's state directory, and a
//! pasted line is read whole.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use crate::support::{output, scene, until};
use opsbot_search_sim::SimConfig;

/// The terminal's screen as text: what the console wrote, its escape sequences left out.
fn shown(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let escapes = regex::Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").unwrap();
    escapes.replace_all(&text, "").replace('\r', "")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_a_terminal_tab_completes_up_recalls_and_the_history_is_kept() {
    let scene = scene(
        SimConfig {
            days_of_indices: 2,
            ..SimConfig::default()
        },
        r#"kind = "sim""#,
    )
    .await;
    let state = scene.dir.path().join("state");
    let pty = nix::pty::openpty(None, None).unwrap();
    let console = Command::new(env!("CARGO_BIN_EXE_opsbot"))
        .args(["console", "--config", &scene.config.display().to_string()])
        .env("XDG_STATE_HOME", &state)
        .stdin(Stdio::from(pty.slave.try_clone().unwrap()))
        .stdout(Stdio::from(pty.slave.try_clone().unwrap()))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(pty.slave);
    let screen = Arc::new(Mutex::new(Vec::new()));
    let mut reader = std::fs::File::from(pty.master.try_clone().unwrap());
    let filled = Arc::clone(&screen);
    std::thread::spawn(move || {
        let mut buf = [0; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            filled.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let mut keys = std::fs::File::from(pty.master);
    let text = || shown(&screen.lock().unwrap());
    let answers = |needle: &'static str| {
        let text = &text;
        move || text().matches(needle).count()
    };
    until("the prompt", || text().contains("alice> ")).await;

    // `/clu` Tab `sta` Tab `cl` Tab: the catalogue's words, typed out by the editor.
    keys.write_all(b"/clu\t").unwrap();
    until("the group completed", || {
        text().contains("alice> /cluster ")
    })
    .await;
    keys.write_all(b"sta\tcl\tlogs\r").unwrap();
    let status = answers("opsbot: cluster logs · Elasticsearch");
    until("/cluster status answered", || status() == 1).await;
    assert!(
        text().contains("alice> /cluster status cluster:logs"),
        "{}",
        text()
    );
    // Up and Enter: the same command again, from the history.
    keys.write_all(b"\x1b[A\r").unwrap();
    until("the recalled command answered", || status() == 2).await;
    // A pasted line is read whole, Enter included.
    keys.write_all(b"/run list\r").unwrap();
    until("/run list answered", || text().contains("no runs")).await;
    keys.write_all(b"\x04").unwrap();
    let out = output(console).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let history = std::fs::read_to_string(state.join("opsbot/console_history")).unwrap();
    assert!(
        history.contains("/cluster status cluster:logs\n") && history.contains("/run list\n"),
        "{history}"
    );
}
