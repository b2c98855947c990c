//! The sled side of a copy (see `dump` and `copy`): the export reads each tree in key order,
//! lazily (sled's iterators), decoding every record as a read does; the import writes a batch
//! of entries as one transaction over every tree it touches, then flushes, which moves the
//! marker forward as after any write.

use opsbot_commands::name::RunId;
use sled::{IVec, Transactional};

use super::keys::{self, DELIVERIES, LOCKS, MAINTENANCE, META, NEXT_AUDIT, NEXT_RUN, RUN_LOGS};
use super::schedules::{FIRE, NEXT_STANDING, PAUSE, STANDING, fire_key, pause_key, standing_key};
use super::{Sled, settle};
use crate::dump::{Counters, Entry};
use crate::error::StoreError;
use crate::record::RunRecord;
use crate::sled::audit::audit_index_keys;
use crate::transition::encode;

/// An entry as sled key-value writes: the tree each goes to, its key and its value.
type Write = (&'static str, Vec<u8>, Vec<u8>);

type Result<T> = std::result::Result<T, StoreError>;

impl Sled {
    pub(crate) fn export(&self) -> impl Iterator<Item = Result<Entry>> + '_ {
        let counters = std::iter::once_with(|| {
            Ok(Entry::Counters(Counters {
                next_run: self.counter(NEXT_RUN)?,
                next_audit: self.counter(NEXT_AUDIT)?,
                next_standing: self.counter(NEXT_STANDING)?,
            }))
        });
        let notice = std::iter::once_with(|| self.maintenance_notice())
            .filter_map(Result::transpose)
            .map(|notice| notice.map(Entry::Notice));
        let runs = self.runs.iter().flat_map(|entry| match entry {
            Ok((key, bytes)) => self.export_run(&key, &bytes),
            Err(error) => vec![Err(error.into())],
        });
        let locks = self.locks.iter().map(|entry| {
            let (key, bytes) = entry?;
            Ok(Entry::Lock {
                key: self.text(LOCKS, &key, &key)?,
                run: self.decode(LOCKS, &key, &bytes)?,
            })
        });
        let audit = self.audit.iter().map(|entry| {
            let (key, bytes) = entry?;
            let seq = keys::key_number(&key)
                .ok_or_else(|| self.corrupt(keys::AUDIT, &key, "its key is not a number"))?;
            let event = self.decode(keys::AUDIT, &key, &bytes)?;
            Ok(Entry::Audit { seq, event })
        });
        let deliveries = self.deliveries.iter().map(|entry| {
            let (key, value) = entry?;
            let at = keys::key_number(&value)
                .ok_or_else(|| self.corrupt(DELIVERIES, &key, "its time is not a number"))?;
            let id = self.text(DELIVERIES, &key, &key)?;
            Ok(Entry::Delivery { id, at })
        });
        let fires = self.meta.scan_prefix(FIRE).map(|entry| {
            let (key, bytes) = entry?;
            Ok(Entry::Fire {
                schedule: self.text(META, &key, &key[FIRE.len()..])?,
                record: self.decode(META, &key, &bytes)?,
            })
        });
        let pauses = self.meta.scan_prefix(PAUSE).map(|entry| {
            let (key, bytes) = entry?;
            Ok(Entry::Pause {
                schedule: self.text(META, &key, &key[PAUSE.len()..])?,
                pause: self.decode(META, &key, &bytes)?,
            })
        });
        let standing = self.meta.scan_prefix(STANDING).map(|entry| {
            let (key, bytes) = entry?;
            Ok(Entry::Standing(self.decode_standing(&key, &bytes)?))
        });
        counters
            .chain(notice)
            .chain(runs)
            .chain(locks)
            .chain(audit)
            .chain(deliveries)
            .chain(fires)
            .chain(pauses)
            .chain(standing)
    }

    /// A run (decoded and checked as [`Sled::run`] does) and its log, if it has one.
    fn export_run(&self, key: &[u8], bytes: &[u8]) -> Vec<Result<Entry>> {
        let run = match self.decode_run(key, bytes) {
            Ok(run) => run,
            Err(error) => return vec![Err(error)],
        };
        let id = run.id;
        let mut entries = vec![Ok(Entry::run(run))];
        match self.export_log(id) {
            Ok(Some(log)) => entries.push(Ok(log)),
            Ok(None) => {}
            Err(error) => entries.push(Err(error)),
        }
        entries
    }

    /// Run `run`'s log, whole: at most [`crate::RUN_LOG_CAP`] bytes of lines.
    fn export_log(&self, run: RunId) -> Result<Option<Entry>> {
        let lines = self
            .run_logs
            .scan_prefix(keys::run_key(run))
            .map(|entry| {
                let (key, bytes) = entry?;
                self.decode(RUN_LOGS, &key, &bytes)
            })
            .collect::<Result<Vec<String>>>()?;
        let size_key = keys::log_bytes_key(run);
        let bytes = match self.meta.get(&size_key)? {
            Some(bytes) => Some(self.decode(META, &size_key, &bytes)?),
            None => None,
        };
        if lines.is_empty() && bytes.is_none() {
            return Ok(None);
        }
        Ok(Some(Entry::RunLog {
            run,
            lines,
            bytes: bytes.unwrap_or(0),
        }))
    }

    /// A key (or the part of one) that names something, as text.
    fn text(&self, tree: &'static str, key: &IVec, part: &[u8]) -> Result<String> {
        String::from_utf8(part.to_vec())
            .map_err(|_| self.corrupt(tree, key, "its name is not UTF-8"))
    }

    /// Writes `batch` in one transaction over every tree, then flushes.
    pub(crate) fn import_batch(&self, batch: &[Entry]) -> Result<()> {
        let mut writes = Vec::new();
        for entry in batch {
            writes.extend(writes_of(entry)?);
        }
        let _writing = self.writing()?;
        let trees = (
            &self.meta,
            &self.runs,
            &self.plans,
            &self.locks,
            &self.audit,
            &self.run_logs,
            &self.deliveries,
            &self.index,
        );
        settle(trees.transaction(
            |(meta, runs, plans, locks, audit, run_logs, deliveries, index)| {
                for (tree, key, value) in &writes {
                    let tree = match *tree {
                        keys::RUNS => runs,
                        keys::PLANS => plans,
                        LOCKS => locks,
                        keys::AUDIT => audit,
                        RUN_LOGS => run_logs,
                        DELIVERIES => deliveries,
                        keys::INDEX => index,
                        _ => meta,
                    };
                    tree.insert(key.as_slice(), value.as_slice())?;
                }
                Ok(())
            },
        ))?;
        self.flush()
    }
}

/// What an entry is on sled: the same keys and values its own writes make.
fn writes_of(entry: &Entry) -> Result<Vec<Write>> {
    let counter = |key: &[u8], value: u64| -> Result<Write> {
        Ok((META, key.to_vec(), encode("a counter", &value)?))
    };
    Ok(match entry {
        Entry::Counters(counters) => vec![
            counter(NEXT_RUN, counters.next_run)?,
            counter(NEXT_AUDIT, counters.next_audit)?,
            counter(NEXT_STANDING, counters.next_standing)?,
        ],
        Entry::Notice(notice) => vec![(
            META,
            MAINTENANCE.to_vec(),
            encode("the maintenance notice", notice)?,
        )],
        Entry::Run { run, .. } => {
            let key = keys::run_key(run.id).to_vec();
            let what = format!("run {}", run.id);
            vec![
                (keys::RUNS, key.clone(), encode(&what, &RunRecord::of(run))?),
                (keys::PLANS, key, encode(&what, run.plan())?),
                (keys::INDEX, keys::run_index_key(run), Vec::new()),
            ]
        }
        Entry::RunLog { run, lines, bytes } => {
            let what = format!("a log line of run {run}");
            let mut writes = lines
                .iter()
                .zip(1..)
                .map(|(line, n)| {
                    Ok((
                        RUN_LOGS,
                        keys::log_key(*run, n).to_vec(),
                        encode(&what, line)?,
                    ))
                })
                .collect::<Result<Vec<_>>>()?;
            writes.push(counter(
                &keys::next_log_line_key(*run),
                lines.len() as u64 + 1,
            )?);
            writes.push(counter(&keys::log_bytes_key(*run), *bytes)?);
            writes
        }
        Entry::Lock { key, run } => vec![(LOCKS, key.as_bytes().to_vec(), encode("a lock", run)?)],
        Entry::Audit { seq, event } => {
            let mut writes = vec![(
                keys::AUDIT,
                keys::number_key(*seq).to_vec(),
                encode(&format!("audit entry #{seq}"), event)?,
            )];
            writes.extend(
                audit_index_keys(*seq, event.at, event.run)
                    .map(|key| (keys::INDEX, key, Vec::new())),
            );
            writes
        }
        Entry::Delivery { id, at } => {
            vec![(
                DELIVERIES,
                id.as_bytes().to_vec(),
                at.to_be_bytes().to_vec(),
            )]
        }
        Entry::Fire { schedule, record } => vec![(
            META,
            fire_key(schedule),
            encode("a schedule's fire", record)?,
        )],
        Entry::Pause { schedule, pause } => vec![(
            META,
            pause_key(schedule),
            encode("a schedule's pause", pause)?,
        )],
        Entry::Standing(standing) => vec![(
            META,
            standing_key(standing.id),
            encode("a standing approval", standing)?,
        )],
    })
}
