//! SQLite's one writer. Runs queue for it (`RunQueue`), and it stores every run waiting in one
//! transaction: the lookups, inserts and commit a run would pay alone are shared by all of them
//! (group commit). It runs on a thread of its own, where summary passes run too, and copies the
//! write-ahead log into the database file in the background.

use super::columns::{PendingRun, Step};
use crate::episodes::Episode;
use futures_util::future::BoxFuture;
use sqlx::SqlitePool;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot, Mutex};

/// Most runs one SQLite transaction stores.
const MAX_BATCH: usize = 32;

/// A run waiting for the SQLite writer, and where its outcome goes.
type QueuedRun = (PendingRun, oneshot::Sender<Result<Step, sqlx::Error>>);

/// How the writer stores a batch of runs, each with its own outcome.
pub(in crate::store) type WriteRuns =
    Arc<dyn Fn(Vec<PendingRun>) -> BoxFuture<'static, Vec<Result<Step, sqlx::Error>>> + Send + Sync>;

/// On SQLite, the runs waiting for the one writer, which takes all of them at its turn.
#[derive(Clone, Debug)]
pub(in crate::store) struct RunQueue {
    runs: mpsc::Sender<QueuedRun>,
    /// Runs handed to the writer and not yet answered.
    unanswered: Arc<AtomicUsize>,
    /// The writer's thread, where summary passes run too.
    thread: tokio::runtime::Handle,
}

impl RunQueue {
    /// Starts the writer, which stores runs with `write` and copies `pool`'s log in the background;
    /// it stops when the last handle on the queue is gone.
    pub(in crate::store) fn start(
        pool: SqlitePool,
        turn: Arc<Mutex<()>>,
        write: WriteRuns,
    ) -> std::io::Result<RunQueue> {
        let (runs, mut queue) = mpsc::channel::<QueuedRun>(MAX_BATCH * 4);
        let unanswered = Arc::new(AtomicUsize::new(0));
        let answered = unanswered.clone();
        let writer = async move {
            let mut checkpoints = tokio::time::interval(CHECKPOINT_EVERY);
            checkpoints.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut checkpoint: Option<tokio::task::JoinHandle<()>> = None;
            let failures = Arc::new(Episode::new("SQLite log checkpoints"));
            loop {
                let first = tokio::select! {
                    first = queue.recv() => match first {
                        Some(first) => first,
                        None => break,
                    },
                    _ = checkpoints.tick() => {
                        if checkpoint.as_ref().is_none_or(|c| c.is_finished()) {
                            let (pool, turn, failures) = (pool.clone(), turn.clone(), failures.clone());
                            checkpoint =
                                Some(tokio::spawn(async move { checkpoint_in_turn(&pool, &turn, &failures).await }));
                        }
                        continue;
                    }
                };
                // Runs that arrive while the writer waits for its turn join this batch.
                let held = turn.lock().await;
                let mut batch = vec![first];
                while batch.len() < MAX_BATCH {
                    match queue.try_recv() {
                        Ok(next) => batch.push(next),
                        Err(_) => break,
                    }
                }
                let size = batch.len();
                let (runs, replies): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
                // In a task of its own, so a panic fails this batch's requests, not the writer.
                let results = tokio::spawn(write(runs)).await;
                drop(held);
                if let Ok(results) = results {
                    for (reply, result) in replies.into_iter().zip(results) {
                        // A request that went away before its answer: its run is stored anyway.
                        let _ = reply.send(result);
                    }
                }
                answered.fetch_sub(size, Ordering::SeqCst);
            }
        };
        // On a thread of its own, so the writer's many short waits on the database are not each
        // queued behind the requests being parsed and fitted on the server's threads.
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let thread = runtime.handle().clone();
        std::thread::Builder::new().name("sqlite-writer".into()).spawn(move || runtime.block_on(writer))?;
        Ok(RunQueue { runs, unanswered, thread })
    }

    pub(in crate::store) async fn write(&self, run: PendingRun) -> Result<Step, sqlx::Error> {
        let (reply, answer) = oneshot::channel();
        self.unanswered.fetch_add(1, Ordering::SeqCst);
        if self.runs.send((run, reply)).await.is_err() {
            self.unanswered.fetch_sub(1, Ordering::SeqCst);
            return Err(sqlx::Error::WorkerCrashed);
        }
        answer.await.map_err(|_| sqlx::Error::WorkerCrashed)?
    }
}

impl RunQueue {
    /// Runs `task` on the writer's thread.
    pub(in crate::store) fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        drop(self.thread.spawn(task));
    }

    /// How many runs the writer holds, waiting or being written.
    pub(in crate::store) fn unanswered(&self) -> usize {
        self.unanswered.load(Ordering::SeqCst)
    }
}

/// Copies the log into the database file (`checkpoint`), unless the store is closing. Failures
/// (a full disk fails every second) are logged once, until a checkpoint succeeds.
async fn checkpoint_in_turn(pool: &SqlitePool, turn: &Mutex<()>, failures: &Episode) {
    if pool.is_closed() {
        return;
    }
    failures.note(&checkpoint(pool, turn, LOG_LIMIT).await);
}

/// How often the log is copied into the database file.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Log frames (pages) past which the log is made to start over: 16,384 pages, 64 MiB.
const LOG_LIMIT: i64 = 16_384;

/// Copies the write-ahead log into the database file beside the writers, which go on appending.
///
/// The log starts over only at a write that finds all of it copied, which never happens while
/// runs keep arriving. So once it passes `log_limit` frames, the copy is repeated while each pass still
/// finds many frames appended during the one before, and what is left is copied during
/// `writer`'s turn: a pause of a few frames, after which the next write starts the log over.
async fn checkpoint(pool: &SqlitePool, writer: &Mutex<()>, log_limit: i64) -> Result<(), sqlx::Error> {
    let passive = || sqlx::query_as::<_, Checkpoint>("PRAGMA wal_checkpoint(PASSIVE)").fetch_one(pool);
    let mut log = passive().await?.log;
    if log <= log_limit {
        return Ok(());
    }
    for _ in 0..4 {
        let before = log;
        log = passive().await?.log;
        if log - before < 256 {
            break;
        }
    }
    let _turn = writer.lock().await;
    let started = std::time::Instant::now();
    let Checkpoint { log, checkpointed } = passive().await?;
    tracing::debug!(log, checkpointed, elapsed_us = started.elapsed().as_micros() as u64, "log copied for a restart");
    Ok(())
}

/// What `PRAGMA wal_checkpoint` answers: the frames in the log, and how many of them are now in
/// the database file.
#[derive(sqlx::FromRow)]
struct Checkpoint {
    log: i64,
    checkpointed: i64,
}
