//! The README's demo block, piped into the real `opsbot demo` exactly as written, does what the
//! README says: nothing is refused, and every run it starts ends where the block takes it.

use crate::support::{output, spawn};

/// The input of the README's demo block: the here-document after `demo <<'EOF'`, verbatim.
fn readme_input() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("the README");
    let demo = &readme[readme.find("## The demo").expect("its demo section")..];
    let (_, input) = demo
        .split_once("-- demo <<'EOF'\n")
        .expect("the demo block's here-document");
    let (input, _) = input.split_once("\nEOF\n").expect("its end");
    format!("{input}\n")
}

/// The replies only their speaker sees that are not refusals: a speaker switch, the plan an
/// `/approve` without a digest shows, the help.
fn answers_privately(command: &str) -> bool {
    command.starts_with("/as ")
        || command.starts_with("/help")
        || (command.starts_with("/approve ") && !command.contains("digest:"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_demo_block_runs_to_the_end_without_a_refusal() {
    let input = readme_input();
    assert!(input.contains("/approve id:r-3\nyes\n"), "{input}");
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store").display().to_string();
    let out = output(spawn(&["demo", "--store", &store], &input)).await;
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{shown}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every line was read as a command, and none was refused.
    let mut last = "";
    let mut echoed = 0;
    for line in shown.lines() {
        if let Some((_, command)) = line
            .split_once("> ")
            .filter(|(speaker, _)| ["alice", "bob"].contains(speaker))
        {
            last = command;
            echoed += 1;
        } else if line.starts_with("opsbot (only you): ")
            && !line.contains("end of input:")
            // A slow answer (a machine under load) is said to be waited for; not a refusal.
            && !line.contains("still waiting")
        {
            assert!(
                answers_privately(last),
                "`{last}` was refused: {line}\n{shown}"
            );
        }
    }
    assert_eq!(echoed, input.lines().count(), "{shown}");
    for expected in [
        "cancelled by alice",
        // The resize's source allocations on compute-02 are kept, the two stale ones deleted.
        "migration awaiting a confirm or a revert, resize",
        "r-2 approved by bob",
        "✅ r-2",
        // The runbook reaches its gate before bob's approval is read, however fast the pipe.
        "r-3 approved by bob",
        "✅ r-3",
        "✅ r-4",
        // The tracer had ended when its log was asked for: bob's approval waited for it.
        "r-4: command output",
        "📣 maintenance: kernel update on compute-01 tonight (bob)",
    ] {
        assert!(shown.contains(expected), "`{expected}` missing:\n{shown}");
    }
    assert!(!shown.contains("has not reached"), "{shown}");
    // The answer says the run waits, and for whom; its first progress message, which would
    // say it again, is left out, and the next one (approved, running) shown.
    assert!(
        shown.contains("r-2 waits for approval by an approver"),
        "{shown}"
    );
    assert!(!shown.contains("⏸ r-2"), "{shown}");
    assert!(
        shown.contains("⏳ r-2") || shown.contains("✅ r-2"),
        "{shown}"
    );
}

/// SIGTERM (a `kill`, a service manager) ends the demo cleanly: its temporary directory, with
/// the simulated cloud's password file, is gone once it has exited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_the_demo_and_removes_its_temporary_directory() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let mut demo = Command::new(env!("CARGO_BIN_EXE_opsbot"))
        .arg("demo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Held open until the demo has exited: its end would stop the console too.
    let input = demo.stdin.take();
    let stdout = demo.stdout.take().unwrap();
    let store = tokio::task::spawn_blocking(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find_map(|line| {
                line.split_once("· store: ")
                    .map(|(_, store)| std::path::PathBuf::from(store.trim()))
            })
    })
    .await
    .unwrap()
    .expect("the banner names the store");
    let temp = store.parent().unwrap().to_owned();
    assert!(temp.join("prod-password").is_file(), "{}", temp.display());
    let pid = nix::unistd::Pid::from_raw(i32::try_from(demo.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = output(demo).await;
    drop(input);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("stopped by SIGTERM"), "{stderr}");
    assert!(!temp.exists(), "{} is left behind", temp.display());
}

/// The demo on its own PostgreSQL ends its connections before it stops the server: nothing
/// reports the server gone at exit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_on_postgres_exits_without_connection_errors() {
    let out = output(spawn(&["demo", "--postgres"], "/run list\n")).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("no runs in the last 24 hours"),
        "{stderr}"
    );
    assert!(!stderr.contains("Connection error"), "{stderr}");
}
