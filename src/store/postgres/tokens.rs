//! API tokens: stored as hashes, created and revoked with an audit row. A revocation is
//! announced to every replica, which drops its cached authentications.

use sqlx::PgPool;

use super::write::{self, Target, json_text};
use crate::core::{Action, Digest};
use crate::store::rows::{TokenRow, decode_all};
use crate::store::{NewToken, Result, TokenRecord};

macro_rules! token_sql {
    ($rest:literal) => {
        concat!(
            "SELECT id, description, namespaces, actions, created_at, revoked_at FROM tokens ",
            $rest
        )
    };
}

pub(super) async fn create(pool: &PgPool, token: NewToken<'_>) -> Result<TokenRecord> {
    let namespaces = token.scope.names();
    let actions: Vec<&str> = token.actions.iter().map(|a| Action::as_str(*a)).collect();
    let mut tx = write::begin(pool).await?;
    let row: TokenRow = sqlx::query_as(
        "INSERT INTO tokens (id, hash, description, namespaces, actions) VALUES ($1, $2, $3, $4, $5)
         RETURNING id, description, namespaces, actions, created_at, revoked_at",
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

pub(super) async fn revoke(pool: &PgPool, id: &str, actor: &str) -> Result<bool> {
    let mut tx = write::begin(pool).await?;
    let changed = sqlx::query(
        "UPDATE tokens SET revoked_at = skillreg_now() WHERE id = $1 AND revoked_at IS NULL",
    )
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

pub(super) async fn by_hash(pool: &PgPool, hash: &Digest) -> Result<Option<TokenRecord>> {
    let row: Option<TokenRow> =
        sqlx::query_as(token_sql!("WHERE hash = $1 AND revoked_at IS NULL"))
            .bind(hash.to_string())
            .fetch_optional(pool)
            .await?;
    row.map(TokenRow::decode).transpose()
}

pub(super) async fn all(pool: &PgPool) -> Result<Vec<TokenRecord>> {
    let rows: Vec<TokenRow> = sqlx::query_as(token_sql!("ORDER BY created_at DESC, id"))
        .fetch_all(pool)
        .await?;
    decode_all(rows, TokenRow::decode)
}
