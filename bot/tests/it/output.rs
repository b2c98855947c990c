//! A command that prints a gigabyte (a tracer left running) is read with flat memory: its own
//! test binary, so that the peak resident size measured is this test's alone.

use std::time::Duration;

use opsbot::process::{self, OutputBounds};

/// The process's peak resident set size so far (`VmHWM`), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    kib * 1024
}

#[tokio::test]
async fn a_gigabyte_of_output_is_read_with_flat_memory() {
    const GIGABYTE: u64 = 1 << 30;
    // Lines of 1 KiB: a tracer's lines are shorter, but this is the same gigabyte in fewer
    // pieces, which keeps a debug build's test fast.
    let script = format!(
        "yes \"$(head -c 1023 /dev/zero | tr '\\0' x)\" | head -c {GIGABYTE}; \
         printf 'the end\\n' >&2"
    );
    let argv = ["sh", "-c", &script].map(str::to_owned);
    let before = peak_rss();
    let finished = process::run(
        &argv,
        None,
        Duration::from_secs(600),
        OutputBounds::default(),
        std::future::pending(),
    )
    .await
    .unwrap();
    let grown = peak_rss().saturating_sub(before);
    let output = &finished.output;
    assert_eq!(finished.code, Some(0));
    assert_eq!(output.total_bytes, GIGABYTE + 8);
    assert_eq!(output.total_lines, GIGABYTE / 1024 + 1);
    // 1 MiB holds 1,025 lines of 1,023 bytes (newlines are not kept): the bytes bound, not
    // the lines bound, decides.
    assert_eq!(output.lines.len(), 1025);
    assert_eq!(output.last(), Some("the end"));
    assert_eq!(
        output.dropped().as_deref(),
        Some("kept the last 1,025 lines of 1.1 GB")
    );
    // The bounds are 1 MiB per stream; what else grows is the test harness's own.
    assert!(
        grown < 32 << 20,
        "reading 1 GiB of output grew the peak memory by {} MiB",
        grown >> 20
    );
}
