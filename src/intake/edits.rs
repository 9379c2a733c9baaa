//! An editor's changes to a regression that its timeline records (a status, a link), each written
//! with its entry as `rules::timeline` words it: from the regression's page, or carried over from
//! another store by an import.

use crate::model::RegressionStatus;
use crate::rules::timeline::Entry;
use crate::store::{EditChange, RegressionEdit, Store};
use time::OffsetDateTime;

/// What became of an edit applied to this store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditOutcome {
    Applied,
    /// The same edit, at the same time by the same editor, is already there.
    AlreadyThere,
    /// This store has no regression of that lineage and version.
    NoRegression,
}

/// Sets regression `id`'s status at `now`, as `actor`; `Ok(false)` when there is no such
/// regression.
pub async fn set_regression_status(
    store: &Store,
    id: i64,
    status: RegressionStatus,
    actor: &str,
    now: OffsetDateTime,
) -> Result<bool, sqlx::Error> {
    store.set_regression_status(id, status, actor, now, &Entry::Status(status).event()).await
}

/// Adds a link (an upstream issue, the fixing change) to regression `id` at `now`; `Ok(false)`
/// when there is no such regression.
pub async fn add_regression_link(
    store: &Store,
    id: i64,
    author: &str,
    title: &str,
    url: &str,
    now: OffsetDateTime,
) -> Result<bool, sqlx::Error> {
    store.add_regression_link(id, author, title, url, now, &Entry::Linked { title }.event()).await
}

/// Applies an editor's change carried over from another store, as of its own time, unless it is
/// already there.
pub async fn apply_regression_edit(store: &Store, edit: &RegressionEdit) -> Result<EditOutcome, sqlx::Error> {
    let Some(id) = store.regression_id(&edit.regression).await? else { return Ok(EditOutcome::NoRegression) };
    if store.has_regression_edit(id, edit).await? {
        return Ok(EditOutcome::AlreadyThere);
    }
    let applied = match &edit.change {
        EditChange::Status(status) => set_regression_status(store, id, *status, &edit.actor, edit.at).await?,
        EditChange::Note { body } => store.add_regression_note(id, &edit.actor, body, edit.at).await?,
        EditChange::Link { title, url } => add_regression_link(store, id, &edit.actor, title, url, edit.at).await?,
    };
    Ok(if applied { EditOutcome::Applied } else { EditOutcome::NoRegression })
}
