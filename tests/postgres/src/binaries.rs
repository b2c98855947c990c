//! Where the machine's PostgreSQL server binaries are.

use std::path::{Path, PathBuf};

use crate::Error;

#[derive(Debug, Clone)]
pub(crate) struct Binaries {
    dir: PathBuf,
}

impl Binaries {
    /// `OPSBOT_PG_BIN`, else the directory of `postgres` on `PATH`, else the newest
    /// `/usr/lib/postgresql/<major>/bin` (Debian keeps the server binaries off `PATH`).
    pub(crate) fn find() -> Result<Binaries, Error> {
        let explicit = std::env::var_os("OPSBOT_PG_BIN").map(PathBuf::from);
        let on_path = std::env::var_os("PATH")
            .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
            .unwrap_or_default();
        let mut debian: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .map(|dirs| dirs.flatten().map(|d| d.path().join("bin")).collect())
            .unwrap_or_default();
        debian.sort_by_key(|dir| major(dir));
        explicit
            .into_iter()
            .chain(on_path)
            .chain(debian.into_iter().rev())
            .find(|dir| dir.join("postgres").is_file() && dir.join("initdb").is_file())
            .map(|dir| Binaries { dir })
            .ok_or(Error::NoBinaries)
    }

    pub(crate) fn postgres(&self) -> PathBuf {
        self.dir.join("postgres")
    }

    pub(crate) fn initdb(&self) -> PathBuf {
        self.dir.join("initdb")
    }
}

/// The major version in `/usr/lib/postgresql/<major>/bin`.
fn major(bin: &Path) -> u32 {
    bin.parent()
        .and_then(Path::file_name)
        .and_then(|name| name.to_str())
        .and_then(|name| name.parse().ok())
        .unwrap_or(0)
}
