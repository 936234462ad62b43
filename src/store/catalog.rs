//! Skills, versions, files, blobs and the listing: the queries.

use sqlx::{QueryBuilder, SqliteConnection};

use super::db::WriteTx;

use super::Store;

use crate::core::uri::{SKILL_MD, SkillUri};
use crate::core::version::pick_current;
use crate::core::{Bundle, Namespace, SkillVersion};

/// Storage failures. Domain errors (a conflicting version) are variants of their own.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlx(#[from] sqlx::Error),
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    #[error("version {version} already exists with different content ({existing})")]
    VersionExists { version: String, existing: String },
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
}

impl StoreError {
    /// Stable code: a full disk and a read-only database are told apart from other failures.
    pub fn code(&self) -> &'static str {
        match self.sqlite_code().as_deref() {
            Some("13") => "storage_full",
            Some("8") => "storage_read_only",
            Some("5" | "6" | "261" | "517") => "storage_busy",
            _ => "storage_error",
        }
    }

    /// HTTP status: 507 for a full disk, 503 for read-only or busy storage, else 500.
    pub fn status(&self) -> u16 {
        match self.code() {
            "storage_full" => 507,
            "storage_read_only" | "storage_busy" => 503,
            _ => 500,
        }
    }

    fn sqlite_code(&self) -> Option<String> {
        match self {
            Self::Sqlx(sqlx::Error::Database(e)) => e.code().map(|c| c.into_owned()),
            _ => None,
        }
    }
}

/// A version to store. The bundle has been validated by `core`.
pub struct NewVersion<'a> {
    pub namespace: &'a Namespace,
    pub bundle: &'a Bundle,
    pub version: &'a SkillVersion,
    pub published_by: Option<&'a str>,
}

/// What a publish did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublishOutcome {
    /// A new version was stored.
    Created { version_id: i64 },
    /// The identical version was already stored; nothing changed.
    Unchanged { version_id: i64 },
}

impl PublishOutcome {
    pub fn version_id(self) -> i64 {
        match self {
            Self::Created { version_id } | Self::Unchanged { version_id } => version_id,
        }
    }
}

/// One row of the current catalog, in URI order.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ListingRow {
    pub uri: String,
    pub version_id: i64,
    pub subpath: String,
    pub name: String,
    pub description: String,
    pub frontmatter: String,
    pub version: String,
    pub deprecation_message: Option<String>,
    pub deprecated: bool,
}

/// A skill version found by namespace, name and optionally version.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ResolvedVersion {
    pub skill_id: i64,
    pub version_id: i64,
    pub version: String,
    pub yanked: bool,
    pub yank_reason: Option<String>,
    pub deprecation_message: Option<String>,
    pub deprecated: bool,
    pub published_at: String,
}

/// One file of a version.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct FileRow {
    pub path: String,
    pub digest: String,
    pub size: i64,
    pub mode: i64,
}

/// One skill served by a version (root or nested).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ManifestEntry {
    pub subpath: String,
    pub name: String,
    pub description: String,
    pub frontmatter: String,
}

/// Everything immutable about a version except file bytes.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub version_id: i64,
    /// Sorted by path.
    pub files: Vec<FileRow>,
    /// Sorted by subpath; the root entry (`""`) first.
    pub entries: Vec<ManifestEntry>,
}

/// The listing URI of a skill entry's SKILL.md.
fn listing_uri(namespace: &str, name: &str, subpath: &str) -> Result<String, StoreError> {
    let ns = Namespace::new(namespace)
        .map_err(|e| StoreError::Corrupt(format!("namespace {namespace:?}: {e}")))?;
    let nm = crate::core::SkillName::new(name)
        .map_err(|e| StoreError::Corrupt(format!("name {name:?}: {e}")))?;
    let root = SkillUri::root(&ns, &nm, None);
    Ok(if subpath.is_empty() {
        SkillUri::join(&root, SKILL_MD)
    } else {
        SkillUri::join(&root, &format!("{subpath}/{SKILL_MD}"))
    })
}

impl Store {
    /// Store a version in one transaction: blobs, version row, files, entries, the new current
    /// version and the listing. Identical content under an existing version is a no-op.
    pub async fn publish(&self, new: NewVersion<'_>) -> Result<PublishOutcome, StoreError> {
        let mut tx = WriteTx::begin(&self.write).await?;
        let outcome = publish_in(&mut tx, new).await?;
        match outcome {
            PublishOutcome::Created { .. } => tx.commit().await?,
            PublishOutcome::Unchanged { .. } => tx.rollback().await,
        }
        Ok(outcome)
    }

    /// Store many versions in one transaction (bulk loading): a version that cannot be stored (a
    /// conflicting version) is left out with its error and the rest are kept. Nothing is
    /// durable, or reported stored, before the one commit.
    pub async fn publish_many(
        &self,
        versions: Vec<NewVersion<'_>>,
    ) -> Result<Vec<Result<PublishOutcome, StoreError>>, StoreError> {
        let mut tx = WriteTx::begin(&self.write).await?;
        let mut outcomes = Vec::with_capacity(versions.len());
        for new in versions {
            // `publish_in` decides Unchanged/VersionExists before it writes anything but the
            // no-op upserts of an existing skill, so no savepoint is needed to leave one out.
            match publish_in(&mut tx, new).await {
                Err(e @ StoreError::VersionExists { .. }) => outcomes.push(Err(e)),
                // Anything else (I/O, a full disk) fails the whole batch.
                Err(e) => return Err(e),
                Ok(o) => outcomes.push(Ok(o)),
            }
        }
        tx.commit().await?;
        Ok(outcomes)
    }
}

/// The body of a publish, inside `tx`.
async fn publish_in(
    tx: &mut SqliteConnection,
    new: NewVersion<'_>,
) -> Result<PublishOutcome, StoreError> {
    {
        let ns = new.namespace.as_str();
        let name = new.bundle.name.as_str();
        let version = new.version.to_string();
        let content_digest = new.bundle.content_digest.to_string();

        // Upserts with a no-op update, so RETURNING yields the id whether the row is new or not.
        let namespace_id: i64 = sqlx::query_scalar(
            "INSERT INTO namespaces (name) VALUES (?1)
             ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id",
        )
        .bind(ns)
        .fetch_one(&mut *tx)
        .await?;
        let skill_id: i64 = sqlx::query_scalar(
            "INSERT INTO skills (namespace_id, name) VALUES (?1, ?2)
             ON CONFLICT (namespace_id, name) DO UPDATE SET name = excluded.name RETURNING id",
        )
        .bind(namespace_id)
        .bind(name)
        .fetch_one(&mut *tx)
        .await?;

        let warnings = serde_json::to_string(&new.bundle.warnings)
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        // The version row first: when it already exists nothing else is written, so a batch can
        // leave this version out without a savepoint.
        let inserted: Option<i64> = sqlx::query_scalar(
            "INSERT INTO versions (skill_id, version, content_digest, file_count, total_size, warnings, published_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (skill_id, version) DO NOTHING RETURNING id",
        )
        .bind(skill_id)
        .bind(&version)
        .bind(&content_digest)
        .bind(new.bundle.files.len() as i64)
        .bind(new.bundle.total_size as i64)
        .bind(warnings)
        .bind(new.published_by)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(version_id) = inserted else {
            let (version_id, existing): (i64, String) = sqlx::query_as(
                "SELECT id, content_digest FROM versions WHERE skill_id = ?1 AND version = ?2",
            )
            .bind(skill_id)
            .bind(&version)
            .fetch_one(&mut *tx)
            .await?;
            return if existing == content_digest {
                Ok(PublishOutcome::Unchanged { version_id })
            } else {
                Err(StoreError::VersionExists { version, existing })
            };
        };

        for chunk in pow2_chunks(&new.bundle.files) {
            let mut insert = QueryBuilder::new("INSERT INTO blobs (digest, size, data) ");
            insert.push_values(chunk, |mut row, file| {
                row.push_bind(file.digest.to_string())
                    .push_bind(file.bytes.len() as i64)
                    .push_bind(file.bytes.as_slice());
            });
            insert.push(" ON CONFLICT (digest) DO NOTHING");
            insert.build().execute(&mut *tx).await?;
        }
        for chunk in pow2_chunks(&new.bundle.files) {
            let mut insert = QueryBuilder::new(
                "INSERT INTO version_files (version_id, path, digest, size, mode) ",
            );
            insert.push_values(chunk, |mut row, file| {
                row.push_bind(version_id)
                    .push_bind(file.path.as_str())
                    .push_bind(file.digest.to_string())
                    .push_bind(file.bytes.len() as i64)
                    .push_bind(i64::from(file.mode));
            });
            insert.build().execute(&mut *tx).await?;
        }
        let frontmatters = new
            .bundle
            .entries
            .iter()
            .map(|entry| serde_json::to_string(&entry.frontmatter))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let entries: Vec<_> = new.bundle.entries.iter().zip(&frontmatters).collect();
        for chunk in pow2_chunks(&entries) {
            let mut insert = QueryBuilder::new(
                "INSERT INTO version_entries (version_id, subpath, name, description, frontmatter) ",
            );
            insert.push_values(chunk, |mut row, (entry, frontmatter)| {
                row.push_bind(version_id)
                    .push_bind(entry.subpath.as_str())
                    .push_bind(entry.name.as_str())
                    .push_bind(entry.description.as_str())
                    .push_bind(frontmatter.as_str());
            });
            insert.build().execute(&mut *tx).await?;
        }
        let subpaths: Vec<&str> = new
            .bundle
            .entries
            .iter()
            .map(|e| e.subpath.as_str())
            .collect();
        let generation = next_generation(tx).await?;
        let published = Published {
            version_id,
            subpaths: &subpaths,
            generation,
        };
        refresh_current_with(tx, skill_id, ns, name, Some(published)).await?;
        sqlx::query(
            "UPDATE namespaces SET last_published_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
             WHERE id = ?1",
        )
        .bind(namespace_id)
        .execute(&mut *tx)
        .await?;
        let details = serde_json::json!({
            "content_digest": content_digest,
            "files": new.bundle.files.iter().map(|f| serde_json::json!({
                "path": f.path.as_str(), "digest": f.digest.to_string(), "size": f.bytes.len(),
            })).collect::<Vec<_>>(),
        });
        super::admin::audit(
            tx,
            new.published_by.unwrap_or("unknown"),
            "publish",
            Some((ns, name, Some(&version))),
            &details,
        )
        .await?;
        Ok(PublishOutcome::Created { version_id })
    }
}

impl Store {
    /// One page of the current catalog: rows with `uri > after`, in URI order.
    pub async fn list_page(&self, after: &str, limit: u32) -> Result<Vec<ListingRow>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT l.uri, l.version_id, l.subpath, e.name, e.description, e.frontmatter, v.version,
                    s.deprecation_message, s.deprecated_at IS NOT NULL AS deprecated
             FROM listing l
             JOIN version_entries e ON e.version_id = l.version_id AND e.subpath = l.subpath
             JOIN versions v ON v.id = l.version_id
             JOIN skills s ON s.id = l.skill_id
             WHERE l.uri > ?1 ORDER BY l.uri LIMIT ?2",
        )
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await?)
    }

    /// The current version of a skill (`version == None`) or one pinned version.
    pub async fn resolve(
        &self,
        namespace: &str,
        name: &str,
        version: Option<&str>,
    ) -> Result<Option<ResolvedVersion>, StoreError> {
        let row = match version {
            None => {
                sqlx::query_as(
                    "SELECT s.id AS skill_id, v.id AS version_id, v.version,
                            v.yanked_at IS NOT NULL AS yanked, v.yank_reason, s.deprecation_message,
                            s.deprecated_at IS NOT NULL AS deprecated, v.published_at
                     FROM skills s
                     JOIN namespaces n ON n.id = s.namespace_id
                     JOIN versions v ON v.id = s.current_version_id
                     WHERE n.name = ?1 AND s.name = ?2",
                )
                .bind(namespace)
                .bind(name)
                .fetch_optional(&self.read)
                .await?
            }
            Some(version) => {
                sqlx::query_as(
                    "SELECT s.id AS skill_id, v.id AS version_id, v.version,
                            v.yanked_at IS NOT NULL AS yanked, v.yank_reason, s.deprecation_message,
                            s.deprecated_at IS NOT NULL AS deprecated, v.published_at
                     FROM skills s
                     JOIN namespaces n ON n.id = s.namespace_id
                     JOIN versions v ON v.skill_id = s.id AND v.version = ?3
                     WHERE n.name = ?1 AND s.name = ?2",
                )
                .bind(namespace)
                .bind(name)
                .bind(version)
                .fetch_optional(&self.read)
                .await?
            }
        };
        Ok(row)
    }

    /// Files and entries of a version.
    pub async fn manifest(&self, version_id: i64) -> Result<Manifest, StoreError> {
        self.manifests(&[version_id])
            .await?
            .remove(&version_id)
            .ok_or_else(|| StoreError::Corrupt(format!("version {version_id} has no files")))
    }

    /// The manifests of many versions with two queries (a listing page's cache misses).
    /// Versions that do not exist are absent from the map.
    pub async fn manifests(
        &self,
        version_ids: &[i64],
    ) -> Result<std::collections::HashMap<i64, Manifest>, StoreError> {
        let ids =
            serde_json::to_string(version_ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let files: Vec<(i64, String, String, i64, i64)> = sqlx::query_as(
            "SELECT version_id, path, digest, size, mode FROM version_files
             WHERE version_id IN (SELECT value FROM json_each(?1)) ORDER BY version_id, path",
        )
        .bind(&ids)
        .fetch_all(&self.read)
        .await?;
        let entries: Vec<(i64, String, String, String, String)> = sqlx::query_as(
            "SELECT version_id, subpath, name, description, frontmatter FROM version_entries
             WHERE version_id IN (SELECT value FROM json_each(?1)) ORDER BY version_id, subpath",
        )
        .bind(&ids)
        .fetch_all(&self.read)
        .await?;
        let mut manifests = std::collections::HashMap::<i64, Manifest>::new();
        for (version_id, path, digest, size, mode) in files {
            manifests
                .entry(version_id)
                .or_insert_with(|| Manifest {
                    version_id,
                    files: Vec::new(),
                    entries: Vec::new(),
                })
                .files
                .push(FileRow {
                    path,
                    digest,
                    size,
                    mode,
                });
        }
        for (version_id, subpath, name, description, frontmatter) in entries {
            let Some(manifest) = manifests.get_mut(&version_id) else {
                return Err(StoreError::Corrupt(format!(
                    "version {version_id} has no files"
                )));
            };
            manifest.entries.push(ManifestEntry {
                subpath,
                name,
                description,
                frontmatter,
            });
        }
        if let Some(bad) = manifests
            .values()
            .find(|m| m.entries.first().is_none_or(|e| !e.subpath.is_empty()))
        {
            return Err(StoreError::Corrupt(format!(
                "version {} has no root entry",
                bad.version_id
            )));
        }
        Ok(manifests)
    }

    /// The bytes stored under `digest`.
    pub async fn blob(&self, digest: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT data FROM blobs WHERE digest = ?1")
                .bind(digest)
                .fetch_optional(&self.read)
                .await?,
        )
    }
}

/// Bump the catalog generation and stamp the skill with it (and, for a publish, the time), inside
/// `tx`. Returns the new generation.
pub(super) async fn touch(
    tx: &mut SqliteConnection,
    skill_id: i64,
    published: bool,
) -> Result<i64, StoreError> {
    let generation = next_generation(tx).await?;
    if published {
        sqlx::query(
            "UPDATE skills SET updated_gen = ?1, last_published_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
             WHERE id = ?2",
        )
        .bind(generation)
        .bind(skill_id)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE namespaces SET last_published_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
             WHERE id = (SELECT namespace_id FROM skills WHERE id = ?1)",
        )
        .bind(skill_id)
        .execute(&mut *tx)
        .await?;
    } else {
        sqlx::query("UPDATE skills SET updated_gen = ?1 WHERE id = ?2")
            .bind(generation)
            .bind(skill_id)
            .execute(&mut *tx)
            .await?;
    }
    Ok(generation)
}

/// Recompute a skill's current version and rewrite its listing rows, inside `tx`.
pub(super) async fn refresh_current(
    tx: &mut SqliteConnection,
    skill_id: i64,
    namespace: &str,
    name: &str,
) -> Result<(), StoreError> {
    refresh_current_with(tx, skill_id, namespace, name, None).await
}

/// Bump the catalog generation, inside `tx`, and return it.
async fn next_generation(tx: &mut SqliteConnection) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "UPDATE meta SET value = value + 1 WHERE key = 'generation' RETURNING value",
    )
    .fetch_one(&mut *tx)
    .await?)
}

/// A version being published, as [`refresh_current_with`] needs it.
struct Published<'a> {
    version_id: i64,
    /// Its entries' subpaths (not read back when it becomes current).
    subpaths: &'a [&'a str],
    /// The generation to stamp the skill with, with the publish time.
    generation: i64,
}

/// [`refresh_current`], and for a publish also the skill's generation stamp and publish time (in
/// the same statement), without reading back the new version's entries.
async fn refresh_current_with(
    tx: &mut SqliteConnection,
    skill_id: i64,
    namespace: &str,
    name: &str,
    published: Option<Published<'_>>,
) -> Result<(), StoreError> {
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "SELECT id, version FROM versions WHERE skill_id = ?1 AND yanked_at IS NULL",
    )
    .bind(skill_id)
    .fetch_all(&mut *tx)
    .await?;
    let parsed: Vec<(i64, SkillVersion)> = rows
        .into_iter()
        .map(|(id, v)| {
            SkillVersion::parse(&v)
                .map(|v| (id, v))
                .map_err(|e| StoreError::Corrupt(e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    let current = pick_current(parsed.iter().map(|(_, v)| v))
        .and_then(|best| parsed.iter().find(|(_, v)| v == best))
        .map(|(id, _)| *id);
    match &published {
        Some(p) => sqlx::query(
            "UPDATE skills SET current_version_id = ?1, updated_gen = ?3,
                    last_published_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
             WHERE id = ?2",
        )
        .bind(current)
        .bind(skill_id)
        .bind(p.generation),
        None => sqlx::query("UPDATE skills SET current_version_id = ?1 WHERE id = ?2")
            .bind(current)
            .bind(skill_id),
    }
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM listing WHERE skill_id = ?1")
        .bind(skill_id)
        .execute(&mut *tx)
        .await?;
    let Some(version_id) = current else {
        return Ok(());
    };
    let subpaths: Vec<String> = match published {
        Some(Published {
            version_id: known_id,
            subpaths,
            ..
        }) if known_id == version_id => subpaths.iter().map(|s| (*s).to_owned()).collect(),
        _ => {
            sqlx::query_scalar("SELECT subpath FROM version_entries WHERE version_id = ?1")
                .bind(version_id)
                .fetch_all(&mut *tx)
                .await?
        }
    };
    let rows = subpaths
        .into_iter()
        .map(|subpath| Ok((listing_uri(namespace, name, &subpath)?, subpath)))
        .collect::<Result<Vec<_>, StoreError>>()?;
    for chunk in pow2_chunks(&rows) {
        let mut insert =
            QueryBuilder::new("INSERT INTO listing (uri, skill_id, version_id, subpath) ");
        insert.push_values(chunk, |mut row, (uri, subpath)| {
            row.push_bind(uri.as_str())
                .push_bind(skill_id)
                .push_bind(version_id)
                .push_bind(subpath.as_str());
        });
        insert.build().execute(&mut *tx).await?;
    }
    Ok(())
}

/// Split `rows` into runs whose lengths are powers of two (at most 64): multi-row INSERTs of
/// those sizes need only a handful of distinct prepared statements, whatever the row count.
fn pow2_chunks<T>(mut rows: &[T]) -> impl Iterator<Item = &[T]> {
    const MAX: usize = 64;
    std::iter::from_fn(move || {
        if rows.is_empty() {
            return None;
        }
        let size = if rows.len() >= MAX {
            MAX
        } else {
            1 << rows.len().ilog2()
        };
        let (head, tail) = rows.split_at(size);
        rows = tail;
        Some(head)
    })
}
