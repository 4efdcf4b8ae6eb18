//! Group commit: one thread owns the database and stores whatever submissions are waiting in
//! one transaction, so that many participants' answers share one fsync (SQLite's commit is the
//! slow part: a few milliseconds each on an ordinary disk). Each request waits for its own
//! batch's commit before its 2xx.

use std::sync::mpsc;

use tokio::sync::oneshot;

use super::intake::Intake;
use super::store::{Store, StoreError, Stored};

/// The most submissions one transaction takes (a bound on a batch's latency).
const MAX_BATCH: usize = 512;

/// How often the WAL is copied into the database.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

enum Job {
    Store(Intake, oneshot::Sender<Result<Stored, StoreError>>),
    Refusal {
        status: u16,
        reason: String,
        path: String,
    },
    Read(Box<dyn FnOnce(&Store) + Send>),
}

/// The handle the server's requests send to; cheap to clone.
#[derive(Clone)]
pub struct Writer {
    jobs: mpsc::Sender<Job>,
}

impl Writer {
    /// Starts the thread that owns `store` (see [`Store::open`]); `clock` gives each batch's
    /// time (RFC 3339).
    pub fn start(store: Store, clock: fn() -> String) -> Result<Self, StoreError> {
        // The WAL is copied into the database by a thread of its own, so that no answer waits
        // behind a checkpoint's writes and fsyncs (SQLite would run one inside a commit).
        let checkpoints = store.checkpointer()?;
        store.no_automatic_checkpoints()?;
        std::thread::Builder::new()
            .name("clozelab-checkpoint".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(CHECKPOINT_EVERY);
                    if let Err(e) = checkpoints.checkpoint() {
                        eprintln!("checkpoint: {e}");
                    }
                }
            })
            .map_err(|e| StoreError::Sqlite(format!("cannot start the checkpoint thread: {e}")))?;
        let (jobs, queue) = mpsc::channel();
        std::thread::Builder::new()
            .name("clozelab-db".into())
            .spawn(move || run(store, queue, clock))
            .map_err(|e| StoreError::Sqlite(format!("cannot start the database thread: {e}")))?;
        Ok(Self { jobs })
    }

    /// Stores `intake`; resolves once its batch has committed (or failed).
    pub async fn store(&self, intake: Intake) -> Result<Stored, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job::Store(intake, reply))
            .map_err(|_| StoreError::Sqlite("the database thread has stopped".into()))?;
        answer
            .await
            .unwrap_or_else(|_| Err(StoreError::Sqlite("the database thread has stopped".into())))
    }

    /// Logs a refused request (not waited for: a flood of bad requests must not hold up answers).
    pub fn log_refusal(&self, status: u16, reason: &str, path: &str) {
        let _ = self.jobs.send(Job::Refusal {
            status,
            reason: reason.to_string(),
            path: path.to_string(),
        });
    }

    /// Runs `read` on the writer's connection, after everything sent before it.
    pub async fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Store) -> T + Send + 'static,
    ) -> Result<T, StoreError> {
        let (reply, answer) = oneshot::channel();
        let job = Job::Read(Box::new(move |store| {
            let _ = reply.send(read(store));
        }));
        self.jobs
            .send(job)
            .map_err(|_| StoreError::Sqlite("the database thread has stopped".into()))?;
        answer
            .await
            .map_err(|_| StoreError::Sqlite("the database thread has stopped".into()))
    }
}

fn run(mut store: Store, queue: mpsc::Receiver<Job>, clock: fn() -> String) {
    while let Ok(first) = queue.recv() {
        let mut batch = Vec::new();
        let mut replies = Vec::new();
        let mut others = Vec::new();
        let mut next = Some(first);
        while let Some(job) = next.take() {
            match job {
                Job::Store(intake, reply) => {
                    batch.push(intake);
                    replies.push(reply);
                }
                other => others.push(other),
            }
            if batch.len() < MAX_BATCH {
                next = queue.try_recv().ok();
            }
        }
        let at = clock();
        if !batch.is_empty() {
            match store.store_batch(&batch, &at) {
                Ok(results) => {
                    for (reply, result) in replies.into_iter().zip(results) {
                        let _ = reply.send(result);
                    }
                }
                Err(e) => {
                    for reply in replies {
                        let _ = reply.send(Err(e.clone()));
                    }
                }
            }
        }
        for job in others {
            match job {
                Job::Refusal {
                    status,
                    reason,
                    path,
                } => {
                    if let Err(e) = store.log_refusal(&at, status, &reason, &path) {
                        eprintln!("could not log a refusal: {e}");
                    }
                }
                Job::Read(read) => read(&store),
                Job::Store(..) => unreachable!("stores are batched above"),
            }
        }
    }
}
