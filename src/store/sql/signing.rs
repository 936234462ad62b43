//! [`Signing`]: what signed versions keep beside the catalog (migrations `signatures`): the
//! bundles of each version (written by each engine's publish, in its transaction), the
//! public keys the registry has signed with, and each namespace's author keys (and CA
//! certificates and keyless identities, kept the same way) and whether it requires their
//! signature (changed with an audit row). Written once for both
//! engines: each compiles this module with its own `dialect`.

use super::dialect::{Conn, Engine, is_set};
use super::write::{self, Target};
use crate::core::{Namespace, Timestamp};
use crate::store::{
    NamespaceKeyRecord, NamespaceSigning, Result, SignatureRecord, Signing, SigningKeyRecord,
};

/// Make sure namespace `namespace` exists; its id.
async fn namespace_id(tx: &mut Conn, namespace: &Namespace) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "INSERT INTO namespaces (name) VALUES ($1)
         ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id",
    )
    .bind(namespace.as_str())
    .fetch_one(&mut *tx)
    .await?)
}

#[async_trait::async_trait]
impl Signing for Engine {
    async fn signing_keys(&self) -> Result<Vec<SigningKeyRecord>> {
        let rows: Vec<(String, String, Timestamp)> = sqlx::query_as(
            "SELECT key_id, public_key, created_at FROM signing_keys ORDER BY created_at, key_id",
        )
        .fetch_all(self.read())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(key_id, public_key, created_at)| SigningKeyRecord {
                key_id,
                public_key,
                created_at,
            })
            .collect())
    }

    async fn add_signing_key(&self, key_id: &str, public_key: &str) -> Result<bool> {
        let done = sqlx::query(
            "INSERT INTO signing_keys (key_id, public_key) VALUES ($1, $2)
             ON CONFLICT (key_id) DO NOTHING",
        )
        .bind(key_id)
        .bind(public_key)
        .execute(self.write())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn version_signatures(&self, version_id: i64) -> Result<Vec<SignatureRecord>> {
        let rows: Vec<(String, String, String)> = sqlx::query_as(
            "SELECT signer, key_id, bundle FROM version_signatures WHERE version_id = $1
             ORDER BY signer",
        )
        .bind(version_id)
        .fetch_all(self.read())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(signer, key_id, bundle)| SignatureRecord {
                signer,
                key_id,
                bundle,
            })
            .collect())
    }

    async fn namespace_signing(&self, namespace: &Namespace) -> Result<NamespaceSigning> {
        let required: Option<bool> = sqlx::query_scalar(concat!(
            "SELECT ",
            is_set!("signature_required"),
            " FROM namespaces WHERE name = $1"
        ))
        .bind(namespace.as_str())
        .fetch_optional(self.read())
        .await?;
        let keys: Vec<(String, String, String, Option<String>, Timestamp)> = sqlx::query_as(
            "SELECT k.key_id, k.identity, k.public_key, k.issuer, k.created_at
             FROM namespace_keys k JOIN namespaces n ON n.id = k.namespace_id
             WHERE n.name = $1 ORDER BY k.created_at, k.key_id",
        )
        .bind(namespace.as_str())
        .fetch_all(self.read())
        .await?;
        Ok(NamespaceSigning {
            required: required.unwrap_or(false),
            keys: keys
                .into_iter()
                .map(
                    |(key_id, identity, public_key, issuer, created_at)| NamespaceKeyRecord {
                        key_id,
                        identity,
                        public_key,
                        issuer,
                        created_at,
                    },
                )
                .collect(),
        })
    }

    async fn add_namespace_key(
        &self,
        namespace: &Namespace,
        key_id: &str,
        identity: &str,
        public_key: &str,
        issuer: Option<&str>,
        actor: &str,
    ) -> Result<bool> {
        let mut tx = write::begin(self.write()).await?;
        let namespace_id = namespace_id(&mut tx, namespace).await?;
        let done = sqlx::query(
            "INSERT INTO namespace_keys (namespace_id, key_id, identity, public_key, issuer)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (namespace_id, key_id) DO NOTHING",
        )
        .bind(namespace_id)
        .bind(key_id)
        .bind(identity)
        .bind(public_key)
        .bind(issuer)
        .execute(&mut *tx)
        .await?;
        let added = done.rows_affected() == 1;
        if added {
            let mut details = serde_json::json!({
                "namespace": namespace.as_str(), "key_id": key_id, "identity": identity,
            });
            if let Some(issuer) = issuer {
                details["issuer"] = issuer.into();
            }
            write::audit(
                &mut tx,
                actor,
                "namespace_key_added",
                Target::None,
                &details,
            )
            .await?;
        }
        tx.commit().await?;
        Ok(added)
    }

    async fn remove_namespace_key(
        &self,
        namespace: &Namespace,
        key_id: &str,
        actor: &str,
    ) -> Result<bool> {
        let mut tx = write::begin(self.write()).await?;
        let done = sqlx::query(
            "DELETE FROM namespace_keys WHERE key_id = $2
             AND namespace_id = (SELECT id FROM namespaces WHERE name = $1)",
        )
        .bind(namespace.as_str())
        .bind(key_id)
        .execute(&mut *tx)
        .await?;
        let removed = done.rows_affected() == 1;
        if removed {
            let details = serde_json::json!({ "namespace": namespace.as_str(), "key_id": key_id });
            write::audit(
                &mut tx,
                actor,
                "namespace_key_removed",
                Target::None,
                &details,
            )
            .await?;
        }
        tx.commit().await?;
        Ok(removed)
    }

    async fn set_signature_required(
        &self,
        namespace: &Namespace,
        required: bool,
        actor: &str,
    ) -> Result<()> {
        let action = if required {
            "namespace_signature_required"
        } else {
            "namespace_signature_off"
        };
        super::lifecycle::set_namespace_flag(
            self,
            "INSERT INTO namespaces (name, signature_required) VALUES ($1, $2)
             ON CONFLICT (name) DO UPDATE SET signature_required = excluded.signature_required",
            namespace,
            required,
            actor,
            action,
        )
        .await
    }
}
