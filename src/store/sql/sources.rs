//! [`Sources`]: the sources (`skillreg import git`, `skillreg mirror`) and the skills each one
//! holds, read again by `skillreg sync`. Written once for both engines: each compiles this
//! module with its own `dialect`.

use super::dialect::{Engine, in_list, is_set, list_arg, now};
use super::write::{self, Target};
use crate::core::event::{EventKind, NewEvent};
use crate::core::provenance::SourceSpec;
use crate::core::{Namespace, SkillName};
use crate::store::records::decode;
use crate::store::rows::{SourceMemberRow, SourceRow, decode_all, source_member};
use crate::store::{Result, SourceId, SourceMember, SourceRecord, Sources, StoreError};

/// The columns a [`SourceRow`] decodes, from `sources s` joined to `namespaces n`.
macro_rules! source_sql {
    ($where:literal) => {
        concat!(
            "SELECT s.id, n.name AS namespace, s.kind, s.location, s.reference, s.subpath,
                    ",
            is_set!("s.fix"),
            " AS fix, s.created_at, s.synced_at, s.revision
             FROM sources s JOIN namespaces n ON n.id = s.namespace_id ",
            $where
        )
    };
}

#[async_trait::async_trait]
impl Sources for Engine {
    async fn record_source(
        &self,
        namespace: &Namespace,
        spec: &SourceSpec,
        actor: &str,
    ) -> Result<SourceRecord> {
        let mut tx = write::begin(self.write()).await?;
        let namespace_id: i64 = sqlx::query_scalar(
            "INSERT INTO namespaces (name) VALUES ($1)
         ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id",
        )
        .bind(namespace.as_str())
        .fetch_one(&mut *tx)
        .await?;
        let reference = spec.reference.as_deref().unwrap_or("");
        let created: Option<i64> = sqlx::query_scalar(
            "INSERT INTO sources (namespace_id, kind, location, reference, subpath, fix)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (namespace_id, kind, location, reference, subpath) DO NOTHING RETURNING id",
        )
        .bind(namespace_id)
        .bind(spec.kind.as_str())
        .bind(&spec.location)
        .bind(reference)
        .bind(&spec.subpath)
        .bind(spec.fix)
        .fetch_optional(&mut *tx)
        .await?;
        let id = match created {
            Some(id) => {
                let details = serde_json::json!({
                    "namespace": namespace.as_str(), "source": spec.to_string(),
                });
                write::audit(&mut tx, actor, "source_add", Target::None, &details).await?;
                id
            }
            None => {
                sqlx::query_scalar(
                    "UPDATE sources SET fix = $6
                 WHERE namespace_id = $1 AND kind = $2 AND location = $3 AND reference = $4
                   AND subpath = $5
                 RETURNING id",
                )
                .bind(namespace_id)
                .bind(spec.kind.as_str())
                .bind(&spec.location)
                .bind(reference)
                .bind(&spec.subpath)
                .bind(spec.fix)
                .fetch_one(&mut *tx)
                .await?
            }
        };
        let row: SourceRow = sqlx::query_as(source_sql!("WHERE s.id = $1"))
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
        tx.commit().await?;
        row.decode()
    }

    async fn sources(&self) -> Result<Vec<SourceRecord>> {
        let rows: Vec<SourceRow> = sqlx::query_as(source_sql!("ORDER BY s.id"))
            .fetch_all(self.read())
            .await?;
        decode_all(rows, SourceRow::decode)
    }

    async fn remove_source(&self, id: SourceId, actor: &str) -> Result<bool> {
        let mut tx = write::begin(self.write()).await?;
        let Some(row): Option<SourceRow> = sqlx::query_as(source_sql!("WHERE s.id = $1"))
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
        else {
            return Ok(false);
        };
        let source = row.decode()?;
        sqlx::query("DELETE FROM source_skills WHERE source_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM sources WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let details = serde_json::json!({
            "namespace": source.namespace.as_str(), "source": source.spec.to_string(),
        });
        write::audit(&mut tx, actor, "source_remove", Target::None, &details).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn source_members(&self, id: SourceId) -> Result<Vec<SourceMember>> {
        let rows: Vec<SourceMemberRow> = sqlx::query_as(
            "SELECT k.name, m.removed_at IS NOT NULL
         FROM source_skills m JOIN skills k ON k.id = m.skill_id
         WHERE m.source_id = $1 ORDER BY k.name",
        )
        .bind(id)
        .fetch_all(self.read())
        .await?;
        decode_all(rows, source_member)
    }

    async fn source_claims(&self, namespace: &Namespace) -> Result<Vec<(SkillName, SourceId)>> {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT k.name, m.source_id
         FROM source_skills m
         JOIN skills k ON k.id = m.skill_id
         JOIN namespaces n ON n.id = k.namespace_id
         WHERE n.name = $1 AND m.removed_at IS NULL
         ORDER BY k.name, m.source_id",
        )
        .bind(namespace.as_str())
        .fetch_all(self.read())
        .await?;
        decode_all(rows, |(name, id)| Ok((decode::name(&name)?, id)))
    }

    async fn finish_source_read(
        &self,
        id: SourceId,
        revision: Option<&str>,
        present: &[SkillName],
        removed: &[SkillName],
    ) -> Result<()> {
        let names = |names: &[SkillName]| list_arg(names.iter().map(SkillName::as_str));
        let mut tx = write::begin(self.write()).await?;
        let updated = sqlx::query(concat!(
            "UPDATE sources SET synced_at = ",
            now!(),
            ", revision = $2 WHERE id = $1"
        ))
        .bind(id)
        .bind(revision)
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() == 0 {
            return Err(StoreError::Corrupt(format!("source {id} is not recorded")));
        }
        // The skills of the source's namespace found there: members, not removed.
        sqlx::query(concat!(
            "INSERT INTO source_skills (source_id, skill_id)
         SELECT $1, k.id FROM skills k JOIN sources s ON s.namespace_id = k.namespace_id
         WHERE s.id = $1 AND ",
            in_list!("k.name", "$2"),
            " ON CONFLICT (source_id, skill_id) DO UPDATE SET removed_at = NULL"
        ))
        .bind(id)
        .bind(names(present)?)
        .execute(&mut *tx)
        .await?;
        sqlx::query(concat!(
            "UPDATE source_skills SET removed_at = ",
            now!(),
            " WHERE source_id = $1 AND removed_at IS NULL
               AND skill_id IN (SELECT k.id FROM skills k
                                JOIN sources s ON s.namespace_id = k.namespace_id
                                WHERE s.id = $1 AND ",
            in_list!("k.name", "$2"),
            ")"
        ))
        .bind(id)
        .bind(names(removed)?)
        .execute(&mut *tx)
        .await?;
        let namespace: String = sqlx::query_scalar(
            "SELECT n.name FROM sources s JOIN namespaces n ON n.id = s.namespace_id WHERE s.id = $1",
        )
        .bind(id)
        .fetch_one(&mut *tx)
        .await?;
        let event = NewEvent {
            kind: EventKind::SourceSynced,
            namespace: &namespace,
            name: None,
            version: None,
            pending: false,
            payload: serde_json::json!({
                "source": id,
                "revision": revision,
                "skills": present.len(),
                "removed": removed.iter().map(SkillName::as_str).collect::<Vec<_>>(),
            }),
        };
        super::events::record(&mut tx, &[event]).await?;
        tx.commit().await?;
        Ok(())
    }
}
