//! [`Access`]: API tokens, stored as hashes, created and revoked with an audit row (a token
//! exchanged by trusted publishing, `trustpub`, also expires), and the
//! append-only audit log (its rows are written by each change, in its transaction, with
//! [`audit`]). Written once
//! for both engines: each compiles this module with its own `dialect`.

use serde_json::Value;

use super::dialect::{Conn, Engine, epoch, limit, now};
use super::write::{self, Target, json_text};
use crate::core::{Action, Digest};
use crate::store::rows::{AuditRow, TokenRow, decode_all};
use crate::store::{Access, AuditRecord, NewToken, Result, TokenRecord};

macro_rules! token_sql {
    ($($rest:tt)+) => {
        concat!(
            "SELECT id, description, namespaces, actions, created_at, revoked_at, expires_at, \
             publisher, claims FROM tokens ",
            $($rest)+
        )
    };
}

/// Append an audit entry inside `tx`: every change writes its own, in its transaction.
pub(super) async fn audit(
    tx: &mut Conn,
    actor: &str,
    action: &str,
    target: Target<'_>,
    details: &Value,
) -> Result<()> {
    let (namespace, name, version) = target.columns();
    sqlx::query(
        "INSERT INTO audit_log (actor, action, namespace, name, version, details)
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(actor)
    .bind(action)
    .bind(namespace)
    .bind(name)
    .bind(version)
    .bind(details.to_string())
    .execute(&mut *tx)
    .await?;
    Ok(())
}

#[async_trait::async_trait]
impl Access for Engine {
    async fn create_token(&self, token: NewToken<'_>) -> Result<TokenRecord> {
        let namespaces = token.scope.names();
        let actions: Vec<&str> = token.actions.iter().map(|a| Action::as_str(*a)).collect();
        let mut tx = write::begin(self.write()).await?;
        let row: TokenRow = sqlx::query_as(
            "INSERT INTO tokens (id, hash, description, namespaces, actions)
             VALUES ($1, $2, $3, $4, $5)
             RETURNING id, description, namespaces, actions, created_at, revoked_at, expires_at,
                       publisher, claims",
        )
        .bind(token.id)
        .bind(token.hash.to_string())
        .bind(token.description)
        .bind(json_text(&namespaces)?)
        .bind(json_text(&actions)?)
        .fetch_one(&mut *tx)
        .await?;
        let details = serde_json::json!({
            "token": token.id, "description": token.description,
            "namespaces": namespaces, "actions": actions,
        });
        write::audit(&mut tx, token.actor, "token_create", Target::None, &details).await?;
        tx.commit().await?;
        row.decode()
    }

    async fn revoke_token(&self, id: &str, actor: &str) -> Result<bool> {
        let mut tx = write::begin(self.write()).await?;
        let changed = sqlx::query(concat!(
            "UPDATE tokens SET revoked_at = ",
            now!(),
            " WHERE id = $1 AND revoked_at IS NULL"
        ))
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 0 {
            return Ok(false);
        }
        let details = serde_json::json!({ "token": id });
        write::audit(&mut tx, actor, "token_revoke", Target::None, &details).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn token_by_hash(&self, hash: &Digest) -> Result<Option<TokenRecord>> {
        // An exchanged token (trusted publishing) is refused from its expiry on.
        let row: Option<TokenRow> = sqlx::query_as(token_sql!(
            "WHERE hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ",
            epoch!(),
            ")"
        ))
        .bind(hash.to_string())
        .fetch_optional(self.read())
        .await?;
        row.map(TokenRow::decode).transpose()
    }

    async fn tokens(&self) -> Result<Vec<TokenRecord>> {
        let rows: Vec<TokenRow> = sqlx::query_as(token_sql!("ORDER BY created_at DESC, id"))
            .fetch_all(self.read())
            .await?;
        decode_all(rows, TokenRow::decode)
    }

    async fn audit_page(&self, after: i64, limit: u32) -> Result<Vec<AuditRecord>> {
        let rows: Vec<AuditRow> = sqlx::query_as(concat!(
            "SELECT id, at, actor, action, namespace, name, version, details
             FROM audit_log WHERE id > $1 ORDER BY id ",
            limit!("$2")
        ))
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(self.read())
        .await?;
        decode_all(rows, AuditRow::decode)
    }
}
