//! Who speaks at the console of the real binary: `opsbot run` serves the console socket to the
//! OS accounts of configured people and refuses (and audits) any other account at connect;
//! `opsbot console` speaks as the account that runs it; `/as` exists only in the demo.

use std::path::Path;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::support::{PATIENCE, config_file, console_session, output, serve, stop};

/// A config with the console socket and runbooks on one host, where the account running the
/// tests is alice's when `mapped`, and nobody's otherwise.
fn config(dir: &Path, mapped: bool) -> std::path::PathBuf {
    let socket = dir.join("console.sock");
    let body = format!(
        "[console]\nsocket = \"{}\"\n\n[runbooks]\ndir = \"{}\"\n[runbooks.inventory]\ncompute = [\"compute-01\"]\ncontrol = [\"ctl-01\"]\n",
        socket.display(),
        crate::support::shipped_runbooks().display()
    );
    let path = config_file(dir, &body);
    if !mapped {
        let me = opsbot::chat::console::running_account().unwrap();
        let text = std::fs::read_to_string(&path).unwrap().replace(
            &format!("accounts = [\"{me}\"]"),
            "accounts = [\"someone-else\"]",
        );
        std::fs::write(&path, text).unwrap();
    }
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_that_maps_to_nobody_is_refused_at_connect_and_audited() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), false);
    let socket = dir.path().join("console.sock");
    let bot = serve(&config, &socket).await;
    let me = opsbot::chat::console::running_account().unwrap();
    // The console refuses before reading anything: one line, then the end of the connection,
    // and nothing typed afterwards reaches it. (Typing first would race the close: EPIPE.)
    let stream = UnixStream::connect(&socket).await.unwrap();
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read).lines();
    let mut said = Vec::new();
    while let Some(line) = tokio::time::timeout(PATIENCE, read.next_line())
        .await
        .expect("the console neither answered nor closed the connection")
        .unwrap()
    {
        said.push(line);
    }
    let typed = write.write_all(b"/runbook list\n").await;
    assert_eq!(
        typed.map_err(|e| e.kind()),
        Err(std::io::ErrorKind::BrokenPipe)
    );
    assert_eq!(
        said,
        [format!(
            "opsbot (only you): console account `{me}` is not one of opsbot's people; ask whoever \
             runs opsbot to add it to [[people]] in the config"
        )]
    );
    stop(bot);
    let export = output(crate::support::spawn(
        &["audit", "export", "--config", &config.display().to_string()],
        "",
    ))
    .await;
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&export.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["actor"]["person"], serde_json::Value::Null);
    assert_eq!(
        events[0]["actor"]["via"],
        serde_json::json!({"surface": "console", "account": me})
    );
    assert_eq!(events[0]["event"]["kind"], "refused");
    assert_eq!(events[0]["event"]["request"], "console connection");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mapped_account_speaks_as_its_person_and_cannot_switch() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), true);
    let socket = dir.path().join("console.sock");
    let bot = serve(&config, &socket).await;
    let said = console_session(&socket, "/as user:bob\n/runbook list\n").await;
    assert_eq!(
        said[0],
        "opsbot: you are alice; commands as in chat, /help lists them"
    );
    assert_eq!(
        said[1],
        "opsbot (only you): unknown command `/as`; type /help for the list"
    );
    assert!(
        said[2].starts_with("opsbot: `compute-rpc-cap-restart`: "),
        "{said:?}"
    );
    stop(bot);
    // The store is free again; the terminal console speaks as the same account, and knows no
    // `/as` either.
    let out = output(crate::support::console(
        &config,
        "/as user:bob\n/help topic:as\n",
    ))
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(
            "alice> /as user:bob\nopsbot (only you): unknown command `/as`; type /help for the list"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("no commands about `as`"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_console_of_an_account_that_maps_to_nobody_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), false);
    let out = output(crate::support::console(&config, "/runbook list\n")).await;
    assert_eq!(out.status.code(), Some(1));
    let me = opsbot::chat::console::running_account().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        format!(
            "error: console account `{me}` is not one of opsbot's people; ask whoever runs \
             opsbot to add it to [[people]] in the config\n"
        )
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// At the console socket too, a command whose backend is retried says each retry as it
/// happens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_socket_console_says_what_a_slow_command_waits_for() {
    let (_held, closed) = crate::support::refusing_address();
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("console.sock");
    let body = format!(
        "[console]\nsocket = \"{}\"\n[engine.retry]\nattempts = 3\nbase_delay = \"50ms\"\n\
         max_delay = \"100ms\"\n[[clusters]]\nname = \"old\"\nurl = \"http://{closed}\"\n\
         nodes = [\"10.0.0.11\"]\n[clusters.node_control]\nkind = \"manual\"\n\
         container = \"opensearch\"\n",
        socket.display()
    );
    let config = config_file(dir.path(), &body);
    let bot = serve(&config, &socket).await;
    let said = console_session(&socket, "/indices list cluster:old\n").await;
    let retries = said
        .iter()
        .filter(|l| l.starts_with("opsbot (only you): still waiting: search cluster `old`"))
        .count();
    assert_eq!(retries, 2, "{said:#?}");
    stop(bot);
}

/// At the console socket, a run the answer showed waiting for a decision is not announced
/// again by its first progress message; what follows the decision is shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_run_is_said_once_at_the_socket() {
    let scene =
        crate::support::scene(opsbot_search_sim::SimConfig::default(), r#"kind = "sim""#).await;
    let socket = scene.dir.path().join("console.sock");
    let mut text = std::fs::read_to_string(&scene.config).unwrap();
    text.push_str(&format!("\n[console]\nsocket = \"{}\"\n", socket.display()));
    std::fs::write(&scene.config, text).unwrap();
    let bot = serve(&scene.config, &socket).await;
    let stream = UnixStream::connect(&socket).await.unwrap();
    let (read, mut write) = stream.into_split();
    write
        .write_all(b"/cluster restart cluster:logs\n/run cancel id:r-1\n")
        .await
        .unwrap();
    // The run's messages come in order: once the withdrawal is shown, its first one was too,
    // had it not been left out.
    let mut read = BufReader::new(read).lines();
    let mut said = Vec::new();
    while !said.last().is_some_and(|l: &String| l.contains("↩ r-1")) {
        let line = tokio::time::timeout(PATIENCE, read.next_line())
            .await
            .unwrap_or_else(|_| panic!("no withdrawal shown after:\n{said:#?}"))
            .unwrap()
            .expect("the console closed");
        said.push(line);
    }
    let waits = said.iter().filter(|l| l.contains("r-1 waits for")).count();
    assert_eq!(waits, 1, "{said:#?}");
    assert!(!said.iter().any(|l| l.contains("⏸ r-1")), "{said:#?}");
    stop(bot);
}
