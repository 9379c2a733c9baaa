//! Bringing a database up to date at start-up: its schema (the store's migrations), then the
//! version summaries stored without a class (before classes, migration 0011, or before the model
//! last changed, 0012), classified from the medians they already hold, so history gains classes
//! without being measured again.

use crate::analysis;
use crate::store::{mask_password, OpenError, OpenOptions, Store};
use sqlx::migrate::MigrateError;

/// How many summaries one transaction classifies.
const CHUNK: i64 = 500;

/// Opens the database and brings it up to date (`migrate`).
pub async fn open_and_migrate(url: &str, options: &OpenOptions) -> Result<Store, OpenError> {
    let store = Store::open(url, options).await?;
    migrate(&store).await.map_err(|source| OpenError::Migrate { url: mask_password(url), source })?;
    Ok(store)
}

/// Applies the migrations not applied yet (`Store::migrate_schema`), then classifies the version
/// summaries stored without a class (`classify_unclassified`).
pub async fn migrate(store: &Store) -> Result<(), MigrateError> {
    store.migrate_schema().await?;
    let started = std::time::Instant::now();
    let summaries = classify_unclassified(store).await.map_err(MigrateError::Execute)?;
    if summaries > 0 {
        tracing::info!(
            summaries,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "classified the complexity of stored version summaries"
        );
    }
    Ok(())
}

/// Classifies every version summary that has no class yet, a chunk per transaction, and returns
/// how many; summaries written meanwhile by this server already have theirs. Several servers may
/// run it at once: each row gets the same class whoever writes it.
pub async fn classify_unclassified(store: &Store) -> Result<u64, sqlx::Error> {
    let mut done = 0;
    loop {
        let mut tx = store.begin_writing().await?;
        let summaries = tx.unclassified_summaries(CHUNK).await?;
        if summaries.is_empty() {
            break;
        }
        for s in &summaries {
            tx.set_summary_class(s, analysis::classify(&s.medians, s.metric).as_ref()).await?;
        }
        tx.commit().await?;
        done += summaries.len() as u64;
    }
    Ok(done)
}
