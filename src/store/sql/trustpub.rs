//! [`TrustedPublishing`]: each namespace's trusted publishers (an OIDC issuer and the claims its
//! tokens must carry, as JSON), the namespaces that accept versions only from them, and the
//! exchange of a CI's verified OIDC token for a short-lived token: its `jti` is remembered until
//! the OIDC token expires (so it is exchanged once, on every replica), and the token is stored
//! with its expiry, in one transaction with its audit row; exchanged tokens a day past their
//! expiry are deleted then. Written once for both engines: each
//! compiles this module with its own `dialect`.

use super::dialect::{Engine, epoch, is_set};
use super::write::{self, Target, json_text};
use crate::core::trustpub::{NewPublisher, Provider, TrustedPublisher};
use crate::core::{Action, Namespace, Timestamp};
use crate::store::records::decode;
use crate::store::rows::TokenRow;
use crate::store::{Exchange, Result, StoreError, TokenRecord, TrustedPublishing};

macro_rules! publisher_sql {
    ($rest:literal) => {
        concat!(
            "SELECT id, namespace, provider, issuer, claims, created_at FROM trusted_publishers ",
            $rest
        )
    };
}

#[derive(sqlx::FromRow)]
struct PublisherRow {
    id: String,
    namespace: String,
    provider: String,
    issuer: String,
    claims: String,
    created_at: Timestamp,
}

impl PublisherRow {
    fn decode(self) -> Result<TrustedPublisher> {
        Ok(TrustedPublisher {
            namespace: decode::namespace(&self.namespace)?,
            provider: Provider::from_name(&self.provider).ok_or_else(|| {
                StoreError::Corrupt(format!("trusted publisher provider {:?}", self.provider))
            })?,
            constraints: decode::json("trusted publisher claims", &self.claims)?,
            id: self.id,
            issuer: self.issuer,
            created_at: self.created_at,
        })
    }
}

fn decode_rows(rows: Vec<PublisherRow>) -> Result<Vec<TrustedPublisher>> {
    rows.into_iter().map(PublisherRow::decode).collect()
}

#[async_trait::async_trait]
impl TrustedPublishing for Engine {
    async fn add_trusted_publisher(
        &self,
        publisher: NewPublisher<'_>,
        actor: &str,
    ) -> Result<TrustedPublisher> {
        let mut tx = write::begin(self.write()).await?;
        sqlx::query("INSERT INTO namespaces (name) VALUES ($1) ON CONFLICT (name) DO NOTHING")
            .bind(publisher.namespace.as_str())
            .execute(&mut *tx)
            .await?;
        let claims = json_text(&publisher.constraints)?;
        let row: PublisherRow = sqlx::query_as(
            "INSERT INTO trusted_publishers (id, namespace, provider, issuer, claims)
             VALUES ($1, $2, $3, $4, $5)
             RETURNING id, namespace, provider, issuer, claims, created_at",
        )
        .bind(publisher.id)
        .bind(publisher.namespace.as_str())
        .bind(publisher.provider.as_str())
        .bind(publisher.issuer)
        .bind(&claims)
        .fetch_one(&mut *tx)
        .await?;
        let details = serde_json::json!({
            "namespace": publisher.namespace.as_str(), "publisher": publisher.id,
            "provider": publisher.provider.as_str(), "issuer": publisher.issuer,
            "claims": publisher.constraints,
        });
        write::audit(
            &mut tx,
            actor,
            "trusted_publisher_add",
            Target::None,
            &details,
        )
        .await?;
        tx.commit().await?;
        row.decode()
    }

    async fn trusted_publishers(&self, namespace: &Namespace) -> Result<Vec<TrustedPublisher>> {
        let rows: Vec<PublisherRow> = sqlx::query_as(publisher_sql!(
            "WHERE namespace = $1 ORDER BY created_at, id"
        ))
        .bind(namespace.as_str())
        .fetch_all(self.read())
        .await?;
        decode_rows(rows)
    }

    async fn trusted_publishers_of(&self, issuer: &str) -> Result<Vec<TrustedPublisher>> {
        let rows: Vec<PublisherRow> =
            sqlx::query_as(publisher_sql!("WHERE issuer = $1 ORDER BY created_at, id"))
                .bind(issuer)
                .fetch_all(self.read())
                .await?;
        decode_rows(rows)
    }

    async fn remove_trusted_publisher(
        &self,
        namespace: &Namespace,
        id: &str,
        actor: &str,
    ) -> Result<bool> {
        let mut tx = write::begin(self.write()).await?;
        let removed =
            sqlx::query("DELETE FROM trusted_publishers WHERE namespace = $1 AND id = $2")
                .bind(namespace.as_str())
                .bind(id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        if removed == 0 {
            return Ok(false);
        }
        let details = serde_json::json!({ "namespace": namespace.as_str(), "publisher": id });
        write::audit(
            &mut tx,
            actor,
            "trusted_publisher_remove",
            Target::None,
            &details,
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn set_trusted_only(&self, namespace: &Namespace, only: bool, actor: &str) -> Result<()> {
        let mut tx = write::begin(self.write()).await?;
        sqlx::query(
            "INSERT INTO namespaces (name, trusted_only) VALUES ($1, $2)
             ON CONFLICT (name) DO UPDATE SET trusted_only = excluded.trusted_only",
        )
        .bind(namespace.as_str())
        .bind(only)
        .execute(&mut *tx)
        .await?;
        let action = if only {
            "trusted_only_on"
        } else {
            "trusted_only_off"
        };
        let details = serde_json::json!({ "namespace": namespace.as_str() });
        write::audit(&mut tx, actor, action, Target::None, &details).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn trusted_only(&self, namespace: &Namespace) -> Result<bool> {
        let found: Option<String> = sqlx::query_scalar(concat!(
            "SELECT name FROM namespaces WHERE name = $1 AND ",
            is_set!("trusted_only")
        ))
        .bind(namespace.as_str())
        .fetch_optional(self.read())
        .await?;
        Ok(found.is_some())
    }

    async fn exchange_token(&self, exchange: Exchange<'_>) -> Result<Option<TokenRecord>> {
        let token = &exchange.token;
        let namespaces = token.scope.names();
        let actions: Vec<&str> = token.actions.iter().map(|a| Action::as_str(*a)).collect();
        let mut tx = write::begin(self.write()).await?;
        // OIDC tokens that expired a minute ago can no longer be replayed: forget them. Exchanged
        // tokens a day past their expiry go too (one per CI run; the audit log keeps each
        // exchange).
        sqlx::query(concat!(
            "DELETE FROM oidc_jtis WHERE expires_at < ",
            epoch!(),
            " - 60"
        ))
        .execute(&mut *tx)
        .await?;
        sqlx::query(concat!(
            "DELETE FROM tokens WHERE publisher IS NOT NULL AND expires_at < ",
            epoch!(),
            " - 86400"
        ))
        .execute(&mut *tx)
        .await?;
        let fresh = sqlx::query(
            "INSERT INTO oidc_jtis (jti, issuer, expires_at) VALUES ($1, $2, $3)
             ON CONFLICT (jti) DO NOTHING",
        )
        .bind(exchange.jti)
        .bind(exchange.issuer)
        .bind(exchange.jti_expires_at)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if fresh == 0 {
            return Ok(None);
        }
        let row: TokenRow = sqlx::query_as(concat!(
            "INSERT INTO tokens (id, hash, description, namespaces, actions, expires_at, publisher,
                                 claims)
             VALUES ($1, $2, $3, $4, $5, ",
            epoch!(),
            " + $6, $7, $8)
             RETURNING id, description, namespaces, actions, created_at, revoked_at, expires_at,
                       publisher, claims"
        ))
        .bind(token.id)
        .bind(token.hash.to_string())
        .bind(token.description)
        .bind(json_text(&namespaces)?)
        .bind(json_text(&actions)?)
        .bind(exchange.ttl_secs)
        .bind(exchange.publisher)
        .bind(exchange.claims)
        .fetch_one(&mut *tx)
        .await?;
        let mut details = exchange.details.clone();
        if let Some(d) = details.as_object_mut() {
            d.insert("token".into(), token.id.into());
            d.insert("namespaces".into(), namespaces.into());
        }
        write::audit(
            &mut tx,
            token.actor,
            "trusted_publishing_exchange",
            Target::None,
            &details,
        )
        .await?;
        tx.commit().await?;
        row.decode().map(Some)
    }
}
