//! Periodic tasks that one server of several on the same database runs for all of them (the
//! retention pass): each period goes to the server whose claim succeeds first; the others skip it.

use super::sql;
use crate::store::Store;
use time::OffsetDateTime;

impl Store {
    /// Claims `task` for `holder` at `now`, unless another claim was taken after `last_before`:
    /// answers whether this claim succeeded. One statement, so of servers claiming at once exactly
    /// one succeeds (on Postgres the others wait for its row and then see it is too recent).
    pub async fn claim_task(
        &self,
        task: &str,
        holder: &str,
        now: OffsetDateTime,
        last_before: OffsetDateTime,
    ) -> Result<bool, sqlx::Error> {
        let q = sql("INSERT INTO task_claims (task, holder, claimed_at) VALUES ($1, $2, $3)
             ON CONFLICT (task) DO UPDATE SET holder = excluded.holder, claimed_at = excluded.claimed_at
             WHERE task_claims.claimed_at <= $4")
        .bind(task)
        .bind(holder)
        .bind(now)
        .bind(last_before);
        Ok(self.execute(&q).await? == 1)
    }
}
