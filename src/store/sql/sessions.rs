//! [`Sessions`]: 2025-era MCP sessions, kept so that any process sharing the storage answers any
//! session (`http::sessions` puts one after its `initialize` and brings it back from here on a
//! process that does not hold it). A row is the session's state as JSON text and two times in
//! Unix seconds by the database's clock: when it was created and last marked used (NULL until
//! a process marks it); its last use is the later of the two. Not in a
//! transaction and without the writer lock: each statement stands alone, and none touches the
//! catalog. Written once for both engines: each compiles this module with its own `dialect`.

use super::dialect::{Engine, epoch, in_list, list_arg};
use crate::store::{Result, Sessions};

#[async_trait::async_trait]
impl Sessions for Engine {
    async fn put_session(&self, id: &str, state: &str) -> Result<()> {
        sqlx::query(concat!(
            "INSERT INTO mcp_sessions (id, state, created_at) VALUES ($1, $2, ",
            epoch!(),
            ") ON CONFLICT (id) DO UPDATE SET state = excluded.state, \
             created_at = excluded.created_at, used_at = NULL"
        ))
        .bind(id)
        .bind(state)
        .execute(self.write())
        .await?;
        Ok(())
    }

    async fn session(&self, id: &str, max_age_secs: u64) -> Result<Option<String>> {
        Ok(sqlx::query_scalar(concat!(
            "SELECT state FROM mcp_sessions WHERE id = $1 AND coalesce(used_at, created_at) >= ",
            epoch!(),
            " - $2"
        ))
        .bind(id)
        .bind(age(max_age_secs))
        .fetch_optional(self.read())
        .await?)
    }

    async fn touch_sessions(&self, ids: &[&str]) -> Result<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        let done = sqlx::query(concat!(
            "UPDATE mcp_sessions SET used_at = ",
            epoch!(),
            " WHERE ",
            in_list!("id", "$1")
        ))
        .bind(list_arg(ids.iter().copied())?)
        .execute(self.write())
        .await?;
        Ok(done.rows_affected())
    }

    async fn delete_session(&self, id: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM mcp_sessions WHERE id = $1")
            .bind(id)
            .execute(self.write())
            .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn delete_unused_session(&self, id: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM mcp_sessions WHERE id = $1 AND used_at IS NULL")
            .bind(id)
            .execute(self.write())
            .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn sweep_sessions(&self, max_age_secs: u64) -> Result<u64> {
        let done = sqlx::query(concat!(
            "DELETE FROM mcp_sessions WHERE coalesce(used_at, created_at) < ",
            epoch!(),
            " - $1"
        ))
        .bind(age(max_age_secs))
        .execute(self.write())
        .await?;
        Ok(done.rows_affected())
    }
}

/// An age in seconds as the integer both engines compare with.
fn age(secs: u64) -> i64 {
    i64::try_from(secs).unwrap_or(i64::MAX / 2)
}
