//! `[store]`: where runs, approvals and the audit log are kept. sled (a directory, the embedded
//! default) or PostgreSQL (a database the operators already run and back up, which lets two
//! or more bots share their state, one of them active under a lease).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use opsbot_state::{PgConfig, Store};
use serde::{Deserialize, Deserializer};
use time::OffsetDateTime;

use super::SecretSource;

/// `[store]`, checked.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "RawStore")]
pub struct StoreConfig {
    pub backend: StoreBackend,
    /// How long finished runs and audit entries stay in the store before they are archived
    /// (see `store_upkeep`).
    pub retention: Retention,
}

/// Which store, and where.
#[derive(Debug, Clone)]
pub enum StoreBackend {
    /// The sled directory.
    Sled {
        path: PathBuf,
    },
    Postgres(PostgresStore),
}

/// A PostgreSQL store: no secret here, only where it is.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    /// `postgres://user@host:port/database?…`, without a password.
    pub url: String,
    pub password: Option<SecretSource>,
    /// PEM CA certificates the server's certificate must chain to (TLS is then required).
    pub ca_file: Option<PathBuf>,
    /// The schema opsbot's tables live in (created if missing).
    pub schema: String,
    /// How soon a standby takes over from an active bot that died or lost the database.
    pub takeover: Duration,
}

impl StoreConfig {
    /// A sled store at `path`, with the default retention (tests and the demo).
    pub fn sled(path: PathBuf) -> Self {
        Self {
            backend: StoreBackend::Sled { path },
            retention: Retention::default(),
        }
    }

    /// A PostgreSQL store at `url` (no password), in the schema `opsbot`, with the defaults
    /// (the demo's HA variant).
    pub fn postgres(url: String) -> Self {
        Self {
            backend: StoreBackend::Postgres(PostgresStore {
                url,
                password: None,
                ca_file: None,
                schema: PgConfig::SCHEMA.to_owned(),
                takeover: TAKEOVER,
            }),
            retention: Retention::default(),
        }
    }

    /// The sled directory, `None` for PostgreSQL.
    pub fn sled_path(&self) -> Option<&Path> {
        match &self.backend {
            StoreBackend::Sled { path } => Some(path),
            StoreBackend::Postgres(_) => None,
        }
    }

    /// What the store is, for messages and logs (never a secret).
    pub fn describe(&self) -> String {
        match &self.backend {
            StoreBackend::Sled { path } => format!("the store at {}", path.display()),
            StoreBackend::Postgres(pg) => {
                format!("the PostgreSQL store {} (schema {})", pg.url, pg.schema)
            }
        }
    }

    /// Opens the store (a PostgreSQL one is migrated to this opsbot's schema version).
    pub fn open(&self) -> anyhow::Result<Store> {
        let opened = match &self.backend {
            StoreBackend::Sled { path } => Store::open(path),
            StoreBackend::Postgres(pg) => Store::open_postgres(&pg.connection()?),
        };
        opened.with_context(|| format!("cannot open {}", self.describe()))
    }
}

impl PostgresStore {
    /// The connection, with the password read now.
    pub fn connection(&self) -> anyhow::Result<PgConfig> {
        let password = self.password.as_ref().map(SecretSource::read).transpose()?;
        let mut config = PgConfig::new(self.url.clone());
        config.schema = self.schema.clone();
        config.password = password;
        config.ca_file = self.ca_file.clone();
        Ok(config)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "lowercase")]
enum Kind {
    Sled,
    Postgres,
}

/// `[store]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStore {
    kind: Option<Kind>,
    path: Option<PathBuf>,
    #[serde(default)]
    retention: Retention,
    url: Option<String>,
    password_file: Option<PathBuf>,
    password_env: Option<String>,
    ca_file: Option<PathBuf>,
    schema: Option<String>,
    #[serde(default, with = "humantime_serde")]
    takeover: Option<Duration>,
}

/// A standby takes over within this unless `[store] takeover` says otherwise.
const TAKEOVER: Duration = Duration::from_secs(15);
/// Less than this would have the lease renewed more often than a busy database answers.
const MIN_TAKEOVER: Duration = Duration::from_secs(3);

impl TryFrom<RawStore> for StoreConfig {
    type Error = String;

    fn try_from(raw: RawStore) -> Result<Self, String> {
        let backend = match raw.kind.unwrap_or(Kind::Sled) {
            Kind::Sled => {
                let postgres_only = [
                    ("url", raw.url.is_some()),
                    ("password_file", raw.password_file.is_some()),
                    ("password_env", raw.password_env.is_some()),
                    ("ca_file", raw.ca_file.is_some()),
                    ("schema", raw.schema.is_some()),
                    ("takeover", raw.takeover.is_some()),
                ];
                if let Some((key, _)) = postgres_only.iter().find(|(_, given)| *given) {
                    return Err(format!(
                        "[store] {key} is for kind = \"postgres\"; a sled store has only a path"
                    ));
                }
                let path = raw
                    .path
                    .ok_or("[store] needs a path (the sled directory), or kind = \"postgres\"")?;
                StoreBackend::Sled { path }
            }
            Kind::Postgres => {
                if raw.path.is_some() {
                    return Err("[store] path is for sled; a PostgreSQL store has a url".into());
                }
                let url = raw.url.ok_or("[store] kind = \"postgres\" needs a url")?;
                check_url(&url)?;
                let takeover = raw.takeover.unwrap_or(TAKEOVER);
                if takeover < MIN_TAKEOVER {
                    return Err(format!(
                        "[store] takeover must be at least {}s",
                        MIN_TAKEOVER.as_secs()
                    ));
                }
                StoreBackend::Postgres(PostgresStore {
                    url,
                    password: SecretSource::one_of(raw.password_env, raw.password_file, "password")
                        .map_err(|e| format!("[store] {e}"))?,
                    ca_file: raw.ca_file,
                    schema: raw.schema.unwrap_or_else(|| PgConfig::SCHEMA.to_owned()),
                    takeover,
                })
            }
        };
        Ok(StoreConfig {
            backend,
            retention: raw.retention,
        })
    }
}

/// A URL the store can read, with no password in it: the config is read by people and tools
/// that must not see one. Read by the store's own parser, so that `password=` counts too.
fn check_url(url: &str) -> Result<(), String> {
    match PgConfig::new(url).url_holds_password() {
        Ok(false) => Ok(()),
        Ok(true) => Err("[store] url holds a password: put it in password_file or \
                         password_env, which are never logged"
            .into()),
        Err(error) => Err(format!("[store] {error}")),
    }
}

/// How long finished runs and audit entries stay in the store: `[store] retention`, in
/// humantime (`365d`, the default). At least a day: `/run list` shows the last 24 hours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention(Duration);

impl Retention {
    const MIN: Duration = Duration::from_secs(24 * 60 * 60);

    /// The moment before which records are archived, at `now`.
    pub(crate) fn cutoff(self, now: OffsetDateTime) -> OffsetDateTime {
        now.checked_sub(crate::clock::span(self.0))
            .unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }
}

impl Default for Retention {
    fn default() -> Self {
        Self(Duration::from_secs(365 * 24 * 60 * 60))
    }
}

impl<'de> Deserialize<'de> for Retention {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = humantime_serde::Serde::<Duration>::deserialize(deserializer)?.into_inner();
        if value < Self::MIN {
            return Err(serde::de::Error::custom(format!(
                "retention {} is shorter than a day; /run list shows the last 24 hours, so keep \
                 at least \"1d\" (the default is \"365d\")",
                humantime_serde::re::humantime::format_duration(value)
            )));
        }
        Ok(Self(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Section {
        #[serde(default)]
        retention: Retention,
    }

    #[test]
    fn retention_is_a_year_unless_set_and_at_least_a_day() {
        let parse = |text: &str| toml::from_str::<Section>(text).map(|s| s.retention);
        assert_eq!(parse("").unwrap(), Retention::default());
        assert_eq!(
            parse(r#"retention = "30d""#).unwrap(),
            Retention(Duration::from_secs(30 * 86_400))
        );
        let error = parse(r#"retention = "2h""#).unwrap_err().to_string();
        assert!(error.contains("shorter than a day"), "{error}");
    }
}
