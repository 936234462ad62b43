//! [`Catalog`] on this engine: publishing skills, versions, their files and entries, the listing
//! and manifests (what `store/sql/catalog.rs`'s [`Browse`](crate::store::Browse) does not share).

use sqlx::PgConnection;

use super::dialect::{Engine, visibility_args, visible};
use super::write::{self, Published, Target, json_text};
use crate::core::{Digest, SkillRef, VersionRef, Visibility};
use crate::store::rows::{self, EntryRow, FileRow, ListingRow, decode_all};
use crate::store::{
    Catalog, ListingRecord, Manifests, NewVersion, PublishOutcome, Result, StoreError,
};

#[async_trait::async_trait]
impl Catalog for Engine {
    async fn publish(&self, new: NewVersion<'_>) -> Result<PublishOutcome> {
        let pool = self.write();
        let mut tx = write::begin(pool).await?;
        let outcome = publish_in(&mut tx, new).await?;
        match outcome {
            PublishOutcome::Created => tx.commit().await?,
            PublishOutcome::Unchanged => tx.rollback().await?,
        }
        Ok(outcome)
    }

    async fn publish_many(
        &self,
        versions: Vec<NewVersion<'_>>,
    ) -> Result<Vec<Result<PublishOutcome>>> {
        let pool = self.write();
        let mut tx = write::begin(pool).await?;
        let mut outcomes = Vec::with_capacity(versions.len());
        for new in versions {
            // `publish_in` tells a conflict from a new version without a failing statement (which
            // would abort the whole transaction), so one version can be left out.
            match publish_in(&mut tx, new).await {
                Err(e @ StoreError::VersionExists { .. }) => outcomes.push(Err(e)),
                Err(e) => return Err(e),
                Ok(o) => outcomes.push(Ok(o)),
            }
        }
        tx.commit().await?;
        Ok(outcomes)
    }

    async fn content_digests(&self, versions: &[VersionRef]) -> Result<Vec<Option<Digest>>> {
        let pool = self.read();
        if versions.is_empty() {
            return Ok(Vec::new());
        }
        // One statement for the whole batch (an import asks for 256 at a time).
        let namespaces: Vec<&str> = versions.iter().map(|v| v.namespace().as_str()).collect();
        let names: Vec<&str> = versions.iter().map(|v| v.name().as_str()).collect();
        let numbers: Vec<String> = versions.iter().map(|v| v.version.to_string()).collect();
        let found: Vec<(i64, String)> = sqlx::query_as(
            "SELECT w.i, v.content_digest
         FROM UNNEST($1::text[], $2::text[], $3::text[]) WITH ORDINALITY
              AS w (namespace, name, version, i)
         JOIN namespaces n ON n.name = w.namespace
         JOIN skills s ON s.namespace_id = n.id AND s.name = w.name
         JOIN versions v ON v.skill_id = s.id AND v.version = w.version",
        )
        .bind(&namespaces)
        .bind(&names)
        .bind(&numbers)
        .fetch_all(pool)
        .await?;
        // ORDINALITY counts from 1.
        let found = found
            .into_iter()
            .map(|(i, digest)| (usize::try_from(i - 1).unwrap_or(usize::MAX), digest));
        rows::digests_by_position(versions.len(), found)
    }

    async fn list_page(
        &self,
        after: &str,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<ListingRecord>> {
        let pool = self.read();
        let (mode, names) = visibility_args(visibility)?;
        let rows: Vec<ListingRow> = sqlx::query_as(concat!(
            "SELECT l.uri, n.name AS namespace, s.name AS skill, l.version_id, l.subpath, e.name,
                e.description, v.version, s.deprecation_message,
                s.deprecated_at IS NOT NULL AS deprecated, v.verdict, v.findings
         FROM listing l
         JOIN version_entries e ON e.version_id = l.version_id AND e.subpath = l.subpath
         JOIN versions v ON v.id = l.version_id
         JOIN skills s ON s.id = l.skill_id
         JOIN namespaces n ON n.id = s.namespace_id
         WHERE l.uri > $1 AND ",
            visible!("n", "$3", "$4"),
            " ORDER BY l.uri LIMIT $2"
        ))
        .bind(after)
        .bind(i64::from(limit))
        .bind(mode)
        .bind(&names)
        .fetch_all(pool)
        .await?;
        decode_all(rows, ListingRow::decode)
    }

    async fn manifests(&self, version_ids: &[i64]) -> Result<Manifests> {
        let pool = self.read();
        let files: Vec<FileRow> = sqlx::query_as(
            "SELECT version_id, path, digest, size, mode FROM version_files
         WHERE version_id = ANY($1) ORDER BY version_id, path",
        )
        .bind(version_ids)
        .fetch_all(pool)
        .await?;
        let entries: Vec<EntryRow> = sqlx::query_as(
            "SELECT e.version_id, e.subpath, e.name, e.description, e.frontmatter, v.provenance
         FROM version_entries e JOIN versions v ON v.id = e.version_id
         WHERE e.version_id = ANY($1) ORDER BY e.version_id, e.subpath",
        )
        .bind(version_ids)
        .fetch_all(pool)
        .await?;
        rows::manifests(files, entries)
    }
}

/// The rows of one version, inside `tx` (which holds the writer lock): namespace and skill, then
/// the version row — which decides whether anything else is written — then files, entries, the
/// current version, the listing, the generation and the audit row.
async fn publish_in(tx: &mut PgConnection, new: NewVersion<'_>) -> Result<PublishOutcome> {
    let skill = SkillRef::new(new.namespace.clone(), new.bundle.name.clone());
    let version = new.version.to_string();
    let content_digest = new.bundle.content_digest.to_string();

    // Insert when absent, else read the id: no row is rewritten when it exists.
    let namespace_id: i64 = sqlx::query_scalar(
        "WITH new AS (INSERT INTO namespaces (name) VALUES ($1)
                      ON CONFLICT (name) DO NOTHING RETURNING id)
         SELECT id FROM new UNION ALL SELECT id FROM namespaces WHERE name = $1 LIMIT 1",
    )
    .bind(skill.namespace.as_str())
    .fetch_one(&mut *tx)
    .await?;
    let skill_id: i64 = sqlx::query_scalar(
        "WITH new AS (INSERT INTO skills (namespace_id, name) VALUES ($1, $2)
                      ON CONFLICT (namespace_id, name) DO NOTHING RETURNING id)
         SELECT id FROM new UNION ALL
         SELECT id FROM skills WHERE namespace_id = $1 AND name = $2 LIMIT 1",
    )
    .bind(namespace_id)
    .bind(skill.name.as_str())
    .fetch_one(&mut *tx)
    .await?;

    let inserted: Option<i64> = sqlx::query_scalar(
        "INSERT INTO versions (skill_id, version, content_digest, file_count, total_size, warnings, published_by, verdict, findings, pending, provenance)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (skill_id, version) DO NOTHING RETURNING id",
    )
    .bind(skill_id)
    .bind(&version)
    .bind(&content_digest)
    .bind(new.bundle.files.len() as i64)
    .bind(new.bundle.total_size as i64)
    .bind(json_text(&new.bundle.warnings)?)
    .bind(new.published_by)
    .bind(new.scan.verdict.as_str())
    .bind(json_text(&new.scan.findings)?)
    .bind(new.pending)
    .bind(rows::provenance_text(&new)?)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(version_id) = inserted else {
        let existing: String = sqlx::query_scalar(
            "SELECT content_digest FROM versions WHERE skill_id = $1 AND version = $2",
        )
        .bind(skill_id)
        .bind(&version)
        .fetch_one(&mut *tx)
        .await?;
        return if existing == content_digest {
            Ok(PublishOutcome::Unchanged)
        } else {
            Err(StoreError::VersionExists { version, existing })
        };
    };

    insert_files(tx, version_id, new).await?;
    let subpaths = insert_entries(tx, version_id, new).await?;
    let generation = write::next_generation(tx).await?;
    let published = Published {
        version_id,
        subpaths: &subpaths,
        generation,
        pending: new.pending,
    };
    write::refresh_current(tx, skill_id, &skill, Some(published)).await?;
    sqlx::query(
        "UPDATE namespaces SET last_published_at = skillreg_now() WHERE id = $1 AND NOT $2",
    )
    .bind(namespace_id)
    .bind(new.pending)
    .execute(&mut *tx)
    .await?;
    write::audit(
        tx,
        new.published_by,
        "publish",
        Target::Version(&skill, &version),
        &rows::publish_details(&new),
    )
    .await?;
    Ok(PublishOutcome::Created)
}

/// Every file row of the version in one statement.
async fn insert_files(tx: &mut PgConnection, version_id: i64, new: NewVersion<'_>) -> Result<()> {
    let files = &new.bundle.files;
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let digests: Vec<String> = files.iter().map(|f| f.digest.to_string()).collect();
    let sizes: Vec<i64> = files.iter().map(|f| f.bytes.len() as i64).collect();
    let modes: Vec<i64> = files.iter().map(|f| i64::from(f.mode)).collect();
    sqlx::query(
        "INSERT INTO version_files (version_id, path, digest, size, mode)
         SELECT $1, * FROM UNNEST($2::text[], $3::text[], $4::int8[], $5::int8[])",
    )
    .bind(version_id)
    .bind(&paths)
    .bind(&digests)
    .bind(&sizes)
    .bind(&modes)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// Every entry row of the version in one statement; returns their subpaths.
async fn insert_entries(
    tx: &mut PgConnection,
    version_id: i64,
    new: NewVersion<'_>,
) -> Result<Vec<String>> {
    let entries = &new.bundle.entries;
    let subpaths: Vec<String> = entries.iter().map(|e| e.subpath.clone()).collect();
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    let descriptions: Vec<&str> = entries.iter().map(|e| e.description.as_str()).collect();
    let frontmatters = entries
        .iter()
        .map(|e| json_text(&e.frontmatter))
        .collect::<Result<Vec<_>>>()?;
    sqlx::query(
        "INSERT INTO version_entries (version_id, subpath, name, description, frontmatter)
         SELECT $1, * FROM UNNEST($2::text[], $3::text[], $4::text[], $5::text[])",
    )
    .bind(version_id)
    .bind(&subpaths)
    .bind(&names)
    .bind(&descriptions)
    .bind(&frontmatters)
    .execute(&mut *tx)
    .await?;
    Ok(subpaths)
}
