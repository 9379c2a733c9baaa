//! A regression's attribution by the control lineages as a summary pass announces it: worked out
//! in the pass's transaction from what it just wrote, for the webhook. Pages and the API work it
//! out again on read (`views::control`), so control runs that arrive later show there
//! without a second alert.

use super::Settings;
use crate::model::control::ControlCheck;
use crate::rules::control::check;
use crate::store::Tx;

/// Regression `id`'s attribution, or `None` when no control is configured.
pub(super) async fn of(tx: &mut Tx<'_>, id: i64, settings: &Settings) -> Result<Option<ControlCheck>, sqlx::Error> {
    if settings.controls.is_empty() {
        return Ok(None);
    }
    let Some((regressed, runs)) = tx.control_evidence(id, &settings.controls).await? else { return Ok(None) };
    let rules = &settings.alerts.rules;
    Ok(Some(check(&regressed, &settings.controls, &runs, rules)))
}
