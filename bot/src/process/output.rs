//! What is kept of a command's output. A tracer left running for minutes can print gigabytes,
//! so a stream is read as it comes into a ring that holds its last lines within a line and a
//! byte bound; everything else is only counted, so that the operator learns how much was left
//! out ("kept the last 2,000 lines of 1.4 GB").

use std::collections::VecDeque;
use std::num::NonZeroUsize;

use bytesize::ByteSize;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt};

/// How much of one command's output is kept: its last `lines` lines, and of those at most
/// `bytes` bytes. A line longer than `bytes` is cut into pieces of `bytes` each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawBounds")]
pub struct OutputBounds {
    pub lines: NonZeroUsize,
    pub bytes: ByteSize,
}

/// The smallest byte bound: a few lines of a tracer.
const MIN_BYTES: ByteSize = ByteSize::kib(1);

/// The bounds as written in the config, before they are checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBounds {
    #[serde(default = "default_lines")]
    lines: NonZeroUsize,
    #[serde(default = "default_bytes")]
    bytes: ByteSize,
}

fn default_lines() -> NonZeroUsize {
    OutputBounds::default().lines
}

fn default_bytes() -> ByteSize {
    OutputBounds::default().bytes
}

impl TryFrom<RawBounds> for OutputBounds {
    type Error = String;

    fn try_from(raw: RawBounds) -> Result<Self, String> {
        if raw.bytes < MIN_BYTES {
            return Err(format!(
                "bytes = \"{}\" keeps too little of an output; give at least \"{MIN_BYTES}\"",
                raw.bytes
            ));
        }
        Ok(Self {
            lines: raw.lines,
            bytes: raw.bytes,
        })
    }
}

impl Default for OutputBounds {
    /// A few minutes of a tracer, and still a small fraction of the bot's memory.
    fn default() -> Self {
        Self {
            lines: lines(2000),
            bytes: ByteSize::mib(1),
        }
    }
}

/// Lines kept of a command's output that is not posted (node control, a runbook step's
/// command): enough to diagnose a failure, small enough for the store.
pub const KEPT_LINES: NonZeroUsize = lines(200);

/// `n` lines as a bound (at least one), for constants.
pub const fn lines(n: usize) -> NonZeroUsize {
    NonZeroUsize::MIN.saturating_add(n.saturating_sub(1))
}

impl OutputBounds {
    /// These bounds, keeping no more than `lines` lines.
    pub fn at_most_lines(self, lines: NonZeroUsize) -> Self {
        Self {
            lines: self.lines.min(lines),
            ..self
        }
    }

    /// The byte bound as a length; one that does not fit memory's address space bounds nothing
    /// further.
    fn byte_limit(self) -> usize {
        usize::try_from(self.bytes.as_u64()).unwrap_or(usize::MAX)
    }
}

/// The kept tail of a command's output, and how much there was in all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Output {
    /// The last lines, invalid UTF-8 replaced by U+FFFD.
    pub lines: Vec<String>,
    /// Every byte the command printed.
    pub total_bytes: u64,
    /// Every line the command printed (a last line without a newline counts).
    pub total_lines: u64,
    /// Some of it is not in `lines`: older lines were dropped to stay within the bounds.
    pub cut: bool,
}

impl Output {
    /// Standard output, then standard error, kept within `bounds` together.
    pub(crate) fn joined(stdout: Output, stderr: Output, bounds: OutputBounds) -> Self {
        let mut ring = Ring::new(bounds);
        for line in stdout.lines.into_iter().chain(stderr.lines) {
            ring.push(line);
        }
        Self {
            lines: ring.lines.into(),
            total_bytes: stdout.total_bytes + stderr.total_bytes,
            total_lines: stdout.total_lines + stderr.total_lines,
            cut: stdout.cut || stderr.cut || ring.cut,
        }
    }

    /// The last line, for a one-line report.
    pub fn last(&self) -> Option<&str> {
        self.lines.last().map(String::as_str)
    }

    /// `kept the last 2,000 lines of 1.4 GB` when some of the output was left out, `None` when
    /// all of it was kept.
    pub fn dropped(&self) -> Option<String> {
        self.cut.then(|| {
            format!(
                "kept the last {} lines of {}",
                thousands(self.lines.len() as u64),
                ByteSize::b(self.total_bytes).display().si()
            )
        })
    }
}

/// `2000000` as `2,000,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Size of one read from a pipe: what a pipe holds on Linux.
const CHUNK: usize = 64 * 1024;

/// Reads `stream` to its end, keeping its tail within `bounds` and counting the rest. Memory
/// stays within the bounds plus one chunk, whatever the stream holds: no newline for a
/// gigabyte, or bytes that are not UTF-8.
pub(crate) async fn read_tail(
    mut stream: impl AsyncRead + Unpin,
    bounds: OutputBounds,
) -> std::io::Result<Output> {
    let mut ring = Ring::new(bounds);
    let mut partial: Vec<u8> = Vec::new();
    let mut chunk = vec![0; CHUNK];
    let (mut total_bytes, mut total_lines) = (0u64, 0u64);
    loop {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            break;
        }
        total_bytes += read as u64;
        let mut rest = chunk.get(..read).unwrap_or_default();
        while !rest.is_empty() {
            let room = ring.limit - partial.len();
            let (piece, ended) = match memchr::memchr(b'\n', rest) {
                Some(at) if at <= room => (rest.get(..at).unwrap_or_default(), true),
                _ => (rest.get(..room.min(rest.len())).unwrap_or_default(), false),
            };
            partial.extend_from_slice(piece);
            rest = rest
                .get(piece.len() + usize::from(ended)..)
                .unwrap_or_default();
            if ended {
                total_lines += 1;
            }
            // A line ends at its newline; a line longer than the byte bound is cut there.
            if ended || partial.len() == ring.limit {
                ring.push(String::from_utf8_lossy(&partial).into_owned());
                partial.clear();
            }
        }
    }
    if !partial.is_empty() {
        total_lines += 1;
        ring.push(String::from_utf8_lossy(&partial).into_owned());
    }
    Ok(Output {
        cut: ring.cut,
        lines: ring.lines.into(),
        total_bytes,
        total_lines,
    })
}

/// The last lines within the bounds, oldest first.
struct Ring {
    lines: VecDeque<String>,
    /// Bytes of `lines`, without their newlines.
    bytes: usize,
    kept: usize,
    limit: usize,
    /// A line was dropped.
    cut: bool,
}

impl Ring {
    fn new(bounds: OutputBounds) -> Self {
        Self {
            lines: VecDeque::new(),
            bytes: 0,
            kept: bounds.lines.get(),
            limit: bounds.byte_limit().max(1),
            cut: false,
        }
    }

    fn push(&mut self, line: String) {
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > self.kept || self.bytes > self.limit {
            match self.lines.pop_front() {
                Some(old) => {
                    self.bytes -= old.len();
                    self.cut = true;
                }
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(lines: usize, bytes: u64) -> OutputBounds {
        OutputBounds {
            lines: NonZeroUsize::new(lines).unwrap(),
            bytes: ByteSize::b(bytes),
        }
    }

    async fn tail(input: &[u8], bounds: OutputBounds) -> Output {
        read_tail(input, bounds).await.unwrap()
    }

    #[tokio::test]
    async fn the_last_lines_are_kept_and_all_are_counted() {
        let output = tail(b"one\ntwo\nthree\nfour", bounds(2, 100)).await;
        assert_eq!(output.lines, ["three", "four"]);
        assert_eq!((output.total_bytes, output.total_lines), (18, 4));
        assert_eq!(
            output.dropped().as_deref(),
            Some("kept the last 2 lines of 18 B")
        );
    }

    #[tokio::test]
    async fn output_kept_whole_says_nothing_was_dropped() {
        for input in [&b"one\ntwo\n"[..], b"one\ntwo", b""] {
            let output = tail(input, bounds(5, 100)).await;
            assert_eq!(output.dropped(), None, "{input:?}");
        }
    }

    #[tokio::test]
    async fn the_byte_bound_drops_old_lines_and_cuts_long_ones() {
        let output = tail(b"aaaa\nbbbb\ncccc\n", bounds(10, 9)).await;
        assert_eq!(output.lines, ["bbbb", "cccc"]);
        // A line without a newline, longer than the bound, is cut into pieces of the bound:
        // its last piece is kept.
        let output = tail(&[b'x'; 25], bounds(10, 10)).await;
        assert_eq!(output.lines, ["xxxxx"]);
        assert_eq!((output.total_bytes, output.total_lines), (25, 1));
        // A line exactly as long as the bound is one line, not a line and an empty one.
        let output = tail(
            b"0123456789
ab
",
            bounds(10, 12),
        )
        .await;
        assert_eq!(output.lines, ["0123456789", "ab"]);
        assert!(!output.cut);
    }

    #[tokio::test]
    async fn bytes_that_are_not_utf8_are_replaced() {
        let output = tail(b"ok\n\xff\xfe tail\n", bounds(10, 100)).await;
        assert_eq!(output.lines, ["ok", "\u{fffd}\u{fffd} tail"]);
    }

    #[test]
    fn standard_error_follows_standard_output_within_the_bounds() {
        let stream = |lines: &[&str]| Output {
            lines: lines.iter().map(|l| (*l).to_owned()).collect(),
            total_bytes: 100,
            total_lines: 10,
            cut: true,
        };
        let joined = Output::joined(stream(&["o1", "o2"]), stream(&["e1"]), bounds(2, 100));
        assert_eq!(joined.lines, ["o2", "e1"]);
        assert_eq!((joined.total_bytes, joined.total_lines), (200, 20));
    }

    #[test]
    fn sizes_are_shown_for_people() {
        let output = Output {
            lines: vec!["x".into(); 2000],
            total_bytes: 1_400_000_000,
            total_lines: 31_000_000,
            cut: true,
        };
        assert_eq!(
            output.dropped().as_deref(),
            Some("kept the last 2,000 lines of 1.4 GB")
        );
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn the_config_gives_bounds_in_lines_and_human_sizes() {
        let parse = |text: &str| toml::from_str::<OutputBounds>(text).map_err(|e| e.to_string());
        assert_eq!(parse(""), Ok(OutputBounds::default()));
        assert_eq!(
            parse("lines = 500\nbytes = \"4 MiB\""),
            Ok(bounds(500, 4 << 20))
        );
        let error = parse("bytes = \"12 B\"").unwrap_err();
        assert!(error.contains("give at least \"1.0 KiB\""), "{error}");
        let error = parse("lines = 0").unwrap_err();
        assert!(error.contains("nonzero"), "{error}");
        let error = parse("line = 5").unwrap_err();
        assert!(error.contains("unknown field `line`"), "{error}");
    }

    #[test]
    fn fewer_lines_never_widens_the_bounds() {
        let wide = bounds(2000, 1 << 20);
        let narrow = wide.at_most_lines(NonZeroUsize::new(50).unwrap());
        assert_eq!(narrow, bounds(50, 1 << 20));
        assert_eq!(
            narrow.at_most_lines(NonZeroUsize::new(5000).unwrap()),
            narrow
        );
    }
}
