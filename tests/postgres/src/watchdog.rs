//! The watchdog that stops a server whose owner is gone: a shell reading a pipe from the
//! owning process, told each server pid on its own line. The pipe closes when the owner ends,
//! however it ends (a `SIGKILL` runs no destructor), and the shell then stops the last server
//! it was told of and removes the directory.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};

use crate::{Error, io};

const SCRIPT: &str = r#"
pid=""
while read -r line; do pid="$line"; done
if [ -n "$pid" ]; then
  kill -QUIT "$pid" 2>/dev/null
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
fi
rm -rf "$1"
"#;

#[derive(Debug)]
pub(crate) struct Watchdog {
    /// Never closed while the owner lives.
    stdin: ChildStdin,
}

impl Watchdog {
    pub(crate) fn spawn(dir: &Path) -> Result<Watchdog, Error> {
        let mut child = Command::new("sh")
            .args(["-c", SCRIPT, "opsbot-pg-watchdog"])
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(io("cannot start the PostgreSQL watchdog (sh)"))?;
        let stdin = child.stdin.take().ok_or_else(|| Error::Failed {
            what: "starting the PostgreSQL watchdog".to_owned(),
            output: "it has no stdin".to_owned(),
        })?;
        Ok(Watchdog { stdin })
    }

    /// The server the watchdog stops if the owner goes.
    pub(crate) fn watch(&mut self, pid: u32) -> Result<(), Error> {
        writeln!(self.stdin, "{pid}")
            .and_then(|()| self.stdin.flush())
            .map_err(io("the PostgreSQL watchdog is gone"))
    }
}
