//! The README's demo transcript, piped into the real `opsbot demo` as the README suggests,
//! does what the README says: every run it starts ends where the transcript takes it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod support;

use support::{output, spawn};

/// The console lines of the README's demo transcript, without their speakers.
fn readme_transcript() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("the README");
    let demo = &readme[readme.find("## The demo").expect("its demo section")..];
    let block = demo
        .split("```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the demo's transcript");
    block
        .lines()
        .map(|line| line.split_once("> ").map_or(line, |(_, command)| command))
        .map(|command| format!("{command}\n"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_demo_transcript_does_what_the_readme_says() {
    let transcript = readme_transcript();
    assert!(transcript.contains("/approve id:r-3"), "{transcript}");
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store").display().to_string();
    let out = output(spawn(&["demo", "--store", &store], &transcript)).await;
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{shown}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for expected in [
        "cancelled by alice",
        // The resize's source allocations on compute-02 are kept, the two stale ones deleted.
        "migration in progress, resize",
        "r-2 approved by bob",
        "✅ r-2",
        // The runbook reaches its gate before bob's approval is read, however fast the pipe.
        "r-3 approved by bob",
        "✅ r-3",
        "✅ r-4",
    ] {
        assert!(shown.contains(expected), "`{expected}` missing:\n{shown}");
    }
    assert!(!shown.contains("has not reached"), "{shown}");
}
