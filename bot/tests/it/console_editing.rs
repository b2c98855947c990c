//! `opsbot console` at a terminal (a pseudo-terminal here): Tab completes from the catalogue,
//! Up recalls the line before, the history is kept in the user's state directory, and a
//! pasted line is read whole.

use std::process::Command;

use crate::support::{Terminal, scene};
use opsbot_search_sim::SimConfig;

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
    let mut terminal = Terminal::spawn(
        Command::new(env!("CARGO_BIN_EXE_opsbot"))
            .args(["console", "--config", &scene.config.display().to_string()])
            .env("XDG_STATE_HOME", &state),
    );
    let answered = |shown: &str| {
        shown
            .matches("opsbot: cluster logs · Elasticsearch")
            .count()
    };
    terminal
        .until("the prompt", |shown| shown.contains("alice> "))
        .await;

    // `/clu` Tab `sta` Tab `cl` Tab: the catalogue's words, typed out by the editor.
    terminal.type_keys(b"/clu\t");
    terminal
        .until("the group completed", |shown| {
            shown.contains("alice> /cluster ")
        })
        .await;
    terminal.type_keys(b"sta\tcl\tlogs\r");
    terminal
        .until("/cluster status answered", |shown| answered(shown) == 1)
        .await;
    // Keys typed once the editor reads again: before, the terminal is in its cooked mode.
    terminal
        .prompted_after("runs: none active", "alice> ")
        .await;
    assert!(
        terminal
            .shown()
            .contains("alice> /cluster status cluster:logs"),
        "{}",
        terminal.shown()
    );
    // Up and Enter: the same command again, from the history.
    terminal.type_keys(b"\x1b[A\r");
    terminal
        .until("the recalled command answered", |shown| {
            answered(shown) == 2
        })
        .await;
    terminal
        .prompted_after("runs: none active", "alice> ")
        .await;
    // A pasted line is read whole, Enter included.
    terminal.type_keys(b"/run list\r");
    terminal.prompted_after("no runs", "alice> ").await;
    terminal.type_keys(b"\x04");
    let (status, shown) = terminal.exit().await;
    assert!(status.success(), "{shown}");
    let history = std::fs::read_to_string(state.join("opsbot/console_history")).unwrap();
    assert!(
        history.contains("/cluster status cluster:logs\n") && history.contains("/run list\n"),
        "{history}"
    );
}
