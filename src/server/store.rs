//! The study's answers in SQLite: one row per idempotency key with the body as it came, the
//! answers parsed beside it, withdrawn runs, refused requests (a log, never data), and the
//! export token's hash.
//!
//! Durability: WAL with `synchronous = FULL`, so a commit has reached the disk (fsync'd) when it
//! returns; the server answers 2xx only after its submission's commit. A full disk, a database
//! another process holds locked, or any other failure is a [`StoreError`], which the server
//! answers with 503 so that the page sends again.

use std::path::Path;

use rusqlite::{Connection, ErrorCode, OptionalExtension, params};
use sha2::{Digest, Sha256};

use super::intake::{Intake, IntakeKind};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS submissions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    participant TEXT NOT NULL,
    run TEXT NOT NULL,
    received_at TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    submission INTEGER NOT NULL REFERENCES submissions(seq) ON DELETE CASCADE,
    participant TEXT NOT NULL,
    run TEXT NOT NULL,
    passage TEXT NOT NULL,
    position INTEGER NOT NULL,
    round INTEGER,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS answers_by_submission ON answers(submission);
CREATE INDEX IF NOT EXISTS submissions_by_run ON submissions(participant, run);
CREATE TABLE IF NOT EXISTS withdrawn (
    participant TEXT NOT NULL,
    run TEXT NOT NULL,
    PRIMARY KEY (participant, run)
);
CREATE TABLE IF NOT EXISTS refusals (
    at TEXT NOT NULL,
    status INTEGER NOT NULL,
    reason TEXT NOT NULL,
    path TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
";

/// How long a write waits for a lock another process holds before it gives up (and the page
/// is told to send again).
const BUSY_TIMEOUT_MS: u64 = 2000;

#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum StoreError {
    #[error("the database is locked by another process")]
    Busy,
    #[error("the disk (or the database's size limit) is full")]
    Full,
    #[error(
        "the database was made for the study {found:?}, not {expected:?}: use another --data file"
    )]
    OtherStudy { expected: String, found: String },
    #[error("the database: {0}")]
    Sqlite(String),
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Busy,
            Some(ErrorCode::DiskFull) => StoreError::Full,
            _ => StoreError::Sqlite(e.to_string()),
        }
    }
}

/// What storing a submission did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// Kept (and durable).
    New,
    /// The key was already stored: nothing new.
    Repeat,
    /// The run was withdrawn: acknowledged and dropped, as the withdrawal asked.
    Withdrawn,
}

/// A stored submission as the export gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredSubmission {
    pub seq: i64,
    pub kind: String,
    pub participant: String,
    pub body: String,
}

/// Counts for the server's start line and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub submissions: u64,
    pub answers: u64,
    pub withdrawn: u64,
    pub refusals: u64,
}

/// The database of one study.
pub struct Store {
    conn: Connection,
}

impl Store {
    /// Opens (or makes) the database at `path` for the study `study_id`: a database made for
    /// another study is refused, so that two studies never share one file by mistake.
    pub fn open(path: &Path, study_id: &str) -> Result<Self, StoreError> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_millis(BUSY_TIMEOUT_MS))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.execute_batch(SCHEMA)?;
        let store = Self { conn };
        match store.meta("study_id")? {
            Some(found) if found != study_id => Err(StoreError::OtherStudy {
                expected: study_id.to_string(),
                found,
            }),
            Some(_) => Ok(store),
            None => {
                store.set_meta("study_id", study_id)?;
                Ok(store)
            }
        }
    }

    /// Opens an existing database to read (the export), whatever its study.
    pub fn open_existing(path: &Path) -> Result<Self, StoreError> {
        let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE)?;
        conn.busy_timeout(std::time::Duration::from_millis(BUSY_TIMEOUT_MS))?;
        Ok(Self { conn })
    }

    /// A second connection to the same file, for the checkpoint thread.
    pub fn checkpointer(&self) -> Result<Store, StoreError> {
        let path = self
            .conn
            .path()
            .ok_or_else(|| StoreError::Sqlite("the database has no file".into()))?;
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_millis(BUSY_TIMEOUT_MS))?;
        Ok(Self { conn })
    }

    /// Leaves checkpoints to [`Store::checkpoint`] (called off the writers' path).
    pub fn no_automatic_checkpoints(&self) -> Result<(), StoreError> {
        self.conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        Ok(())
    }

    /// Copies what the WAL holds into the database, as far as readers allow (never blocking
    /// the writer).
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// Caps the database at about `max_bytes` (`--max-data-mb`): past it, stores fail as a full
    /// disk does ([`StoreError::Full`]), before the disk itself fills.
    pub fn limit_size(&self, max_bytes: u64) -> Result<(), StoreError> {
        let page: i64 = self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let pages = (max_bytes / page.max(512) as u64).max(1);
        self.conn
            .pragma_update(None, "max_page_count", pages as i64)?;
        Ok(())
    }

    pub fn meta(&self, name: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .optional()?)
    }

    fn set_meta(&self, name: &str, value: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO meta(name, value) VALUES (?1, ?2)
             ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            params![name, value],
        )?;
        Ok(())
    }

    /// Stores a batch of submissions in one transaction (one fsync for all: the server's group
    /// commit), each in a savepoint of its own so that one that fails takes none of the others
    /// with it. The result per submission holds only once the whole batch has committed: when
    /// the commit fails every one of them fails.
    pub fn store_batch(
        &mut self,
        batch: &[Intake],
        received_at: &str,
    ) -> Result<Vec<Result<Stored, StoreError>>, StoreError> {
        let mut tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut results = Vec::with_capacity(batch.len());
        for intake in batch {
            let sp = tx.savepoint()?;
            match store_one(&sp, intake, received_at) {
                Ok(stored) => {
                    sp.commit()?;
                    results.push(Ok(stored));
                }
                Err(e) => {
                    drop(sp);
                    // A full disk can make SQLite roll the whole transaction back: then nothing
                    // of the batch is kept, and every one of its submissions fails with this.
                    if tx.is_autocommit() {
                        return Err(e);
                    }
                    results.push(Err(e));
                }
            }
        }
        tx.commit()?;
        Ok(results)
    }

    /// Keeps a refused request in the log (never as data).
    pub fn log_refusal(
        &self,
        at: &str,
        status: u16,
        reason: &str,
        path: &str,
    ) -> Result<(), StoreError> {
        let cut = |s: &str| s.chars().take(500).collect::<String>();
        self.conn.execute(
            "INSERT INTO refusals(at, status, reason, path) VALUES (?1, ?2, ?3, ?4)",
            params![at, status, cut(reason), cut(path)],
        )?;
        Ok(())
    }

    /// Every stored submission, oldest first.
    pub fn submissions(&self) -> Result<Vec<StoredSubmission>, StoreError> {
        let mut statement = self
            .conn
            .prepare("SELECT seq, kind, participant, body FROM submissions ORDER BY seq")?;
        let rows = statement.query_map([], |r| {
            Ok(StoredSubmission {
                seq: r.get(0)?,
                kind: r.get(1)?,
                participant: r.get(2)?,
                body: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every stored answer's key with its participant and run.
    pub fn answer_keys(&self) -> Result<Vec<(String, String, String)>, StoreError> {
        let mut statement = self
            .conn
            .prepare("SELECT key, participant, run FROM answers ORDER BY key")?;
        let rows = statement.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn counts(&self) -> Result<Counts, StoreError> {
        let count = |table: &str| -> Result<u64, StoreError> {
            Ok(self
                .conn
                .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| {
                    r.get::<_, i64>(0)
                })? as u64)
        };
        Ok(Counts {
            submissions: count("submissions")?,
            answers: count("answers")?,
            withdrawn: count("withdrawn")?,
            refusals: count("refusals")?,
        })
    }

    /// Makes a new export token, keeps only its SHA-256, and returns it (to be shown once).
    pub fn new_export_token(&self, random: [u8; 24]) -> Result<String, StoreError> {
        let token: String = random.iter().map(|b| format!("{b:02x}")).collect();
        self.set_meta("export_token_sha256", &token_hash(&token))?;
        Ok(token)
    }

    pub fn has_export_token(&self) -> Result<bool, StoreError> {
        Ok(self.meta("export_token_sha256")?.is_some())
    }

    /// Whether `token` is the export token.
    pub fn export_token_is(&self, token: &str) -> Result<bool, StoreError> {
        Ok(self
            .meta("export_token_sha256")?
            .is_some_and(|hash| hash == token_hash(token)))
    }
}

fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn store_one(tx: &Connection, intake: &Intake, at: &str) -> Result<Stored, StoreError> {
    let known: Option<i64> = tx
        .query_row(
            "SELECT seq FROM submissions WHERE key = ?1",
            [&intake.key],
            |r| r.get(0),
        )
        .optional()?;
    if known.is_some() {
        return Ok(Stored::Repeat);
    }
    let withdrawn: bool = tx.query_row(
        "SELECT EXISTS(SELECT 1 FROM withdrawn WHERE participant = ?1 AND (run = ?2 OR run = ''))",
        params![intake.participant, intake.run],
        |r| r.get(0),
    )?;
    if withdrawn && intake.kind == IntakeKind::Answers {
        return Ok(Stored::Withdrawn);
    }
    tx.execute(
        "INSERT INTO submissions(key, kind, participant, run, received_at, body)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            intake.key,
            intake.kind.name(),
            intake.participant,
            intake.run,
            at,
            intake.body
        ],
    )?;
    let seq = tx.last_insert_rowid();
    match intake.kind {
        IntakeKind::Answers => {
            let mut insert = tx.prepare_cached(
                "INSERT OR IGNORE INTO answers(key, submission, participant, run, passage,
                 position, round, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            for a in &intake.answers {
                insert.execute(params![
                    a.key,
                    seq,
                    intake.participant,
                    intake.run,
                    a.passage,
                    a.position as i64,
                    a.round.map(|r| r as i64),
                    a.record
                ])?;
            }
        }
        IntakeKind::Withdrawal => {
            // What the run sent is deleted, as the notice asks; the notice stays, so that the
            // results still count the run as withdrawn.
            tx.execute(
                "INSERT OR IGNORE INTO withdrawn(participant, run) VALUES (?1, ?2)",
                params![intake.participant, intake.run],
            )?;
            tx.execute(
                "DELETE FROM submissions WHERE kind = 'answers' AND participant = ?1
                 AND (run = ?2 OR ?2 = '')",
                params![intake.participant, intake.run],
            )?;
        }
    }
    Ok(Stored::New)
}
