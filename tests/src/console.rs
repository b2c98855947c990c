//! A client of the console socket, as `socat READLINE UNIX-CONNECT:…` is for an operator: it
//! connects as the account running the tests, types lines and reads what the console answers.

use std::path::Path;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use crate::PATIENCE;

/// One connection to a console socket.
#[derive(Debug)]
pub struct ConsoleClient {
    lines: Lines<BufReader<OwnedReadHalf>>,
    write: OwnedWriteHalf,
}

impl ConsoleClient {
    pub async fn connect(path: &Path) -> Self {
        let stream = UnixStream::connect(path)
            .await
            .expect("connect to the console");
        let (read, write) = stream.into_split();
        Self {
            lines: BufReader::new(read).lines(),
            write,
        }
    }

    /// The next line the console writes; `None` once it has closed the connection.
    pub async fn line(&mut self) -> Option<String> {
        tokio::time::timeout(PATIENCE, self.lines.next_line())
            .await
            .expect("the console said nothing")
            .expect("reading the console")
    }

    /// Types `line` and returns the first line of the answer to it (progress lines, which start
    /// with `opsbot [`, are skipped).
    pub async fn say(&mut self, line: &str) -> String {
        self.write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write to the console");
        loop {
            let answer = self.line().await.expect("the console hung up");
            if answer.starts_with("opsbot: ") || answer.starts_with("opsbot (only you): ") {
                return answer;
            }
        }
    }
}
