//! Yank and deprecate, the REST catalog views, tokens and the audit log.

use serde_json::Value;
use sqlx::SqliteConnection;

use super::db::WriteTx;

use super::catalog::{refresh_current, touch};
use super::{Store, StoreError};

/// One skill as the REST catalog lists it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct CatalogRow {
    pub namespace: String,
    pub name: String,
    pub current_version: Option<String>,
    pub description: Option<String>,
    pub deprecated: bool,
    pub deprecation_message: Option<String>,
}

/// A skill's own row.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SkillRow {
    pub id: i64,
    pub namespace: String,
    pub name: String,
    pub created_at: String,
    pub current_version: Option<String>,
    pub deprecated_at: Option<String>,
    pub deprecation_message: Option<String>,
}

/// One version of a skill.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct VersionRow {
    pub id: i64,
    pub version: String,
    pub content_digest: String,
    pub file_count: i64,
    pub total_size: i64,
    pub warnings: String,
    pub published_at: String,
    pub published_by: Option<String>,
    pub yanked_at: Option<String>,
    pub yank_reason: Option<String>,
}

/// A stored token (never its secret).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TokenRow {
    pub id: String,
    pub description: String,
    pub namespaces: String,
    pub actions: String,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

/// One audit log entry.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AuditRow {
    pub id: i64,
    pub at: String,
    pub actor: String,
    pub action: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub version: Option<String>,
    pub details: String,
}

/// Append an audit entry inside `tx`.
pub(super) async fn audit(
    tx: &mut SqliteConnection,
    actor: &str,
    action: &str,
    target: Option<(&str, &str, Option<&str>)>,
    details: &Value,
) -> Result<(), StoreError> {
    let (namespace, name, version) = match target {
        Some((ns, name, version)) => (Some(ns), Some(name), version),
        None => (None, None, None),
    };
    sqlx::query(
        "INSERT INTO audit_log (actor, action, namespace, name, version, details)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
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

const SKILL_ROW: &str = "SELECT s.id, n.name AS namespace, s.name, s.created_at,
        v.version AS current_version, s.deprecated_at, s.deprecation_message
     FROM skills s
     JOIN namespaces n ON n.id = s.namespace_id
     LEFT JOIN versions v ON v.id = s.current_version_id
     WHERE n.name = ?1 AND s.name = ?2";

impl Store {
    /// A skill by namespace and name.
    pub async fn skill(&self, namespace: &str, name: &str) -> Result<Option<SkillRow>, StoreError> {
        Ok(sqlx::query_as(SKILL_ROW)
            .bind(namespace)
            .bind(name)
            .fetch_optional(&self.read)
            .await?)
    }

    /// Every version of a skill (unordered; callers sort by semver).
    pub async fn versions(&self, skill_id: i64) -> Result<Vec<VersionRow>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, version, content_digest, file_count, total_size, warnings, published_at,
                    published_by, yanked_at, yank_reason
             FROM versions WHERE skill_id = ?1",
        )
        .bind(skill_id)
        .fetch_all(&self.read)
        .await?)
    }

    /// One version of a skill.
    pub async fn version(
        &self,
        skill_id: i64,
        version: &str,
    ) -> Result<Option<VersionRow>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, version, content_digest, file_count, total_size, warnings, published_at,
                    published_by, yanked_at, yank_reason
             FROM versions WHERE skill_id = ?1 AND version = ?2",
        )
        .bind(skill_id)
        .bind(version)
        .fetch_optional(&self.read)
        .await?)
    }

    /// Skills ordered by (namespace, name), after the given key, optionally in one namespace.
    pub async fn catalog_page(
        &self,
        namespace: Option<&str>,
        after: (&str, &str),
        limit: u32,
    ) -> Result<Vec<CatalogRow>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT n.name AS namespace, s.name, v.version AS current_version, e.description,
                    s.deprecated_at IS NOT NULL AS deprecated, s.deprecation_message
             FROM skills s
             JOIN namespaces n ON n.id = s.namespace_id
             LEFT JOIN versions v ON v.id = s.current_version_id
             LEFT JOIN version_entries e ON e.version_id = v.id AND e.subpath = ''
             WHERE (?1 IS NULL OR n.name = ?1) AND (n.name, s.name) > (?2, ?3)
             ORDER BY n.name, s.name LIMIT ?4",
        )
        .bind(namespace)
        .bind(after.0)
        .bind(after.1)
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await?)
    }

    /// Mark a version yanked (`reason = Some`) or not (`None`). Returns false when the version
    /// does not exist. Recomputes the current version and the listing in the same transaction.
    pub async fn set_yanked(
        &self,
        namespace: &str,
        name: &str,
        version: &str,
        reason: Option<&str>,
        actor: &str,
    ) -> Result<bool, StoreError> {
        let mut tx = WriteTx::begin(&self.write).await?;
        let Some(skill_id): Option<i64> = sqlx::query_scalar(
            "SELECT s.id FROM skills s JOIN namespaces n ON n.id = s.namespace_id
             WHERE n.name = ?1 AND s.name = ?2",
        )
        .bind(namespace)
        .bind(name)
        .fetch_optional(&mut *tx)
        .await?
        else {
            return Ok(false);
        };
        let changed = match reason {
            Some(reason) => sqlx::query(
                "UPDATE versions SET yanked_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), yank_reason = ?3
                 WHERE skill_id = ?1 AND version = ?2",
            )
            .bind(skill_id)
            .bind(version)
            .bind(reason)
            .execute(&mut *tx)
            .await?,
            None => sqlx::query(
                "UPDATE versions SET yanked_at = NULL, yank_reason = NULL
                 WHERE skill_id = ?1 AND version = ?2",
            )
            .bind(skill_id)
            .bind(version)
            .execute(&mut *tx)
            .await?,
        }
        .rows_affected();
        if changed == 0 {
            return Ok(false);
        }
        refresh_current(&mut tx, skill_id, namespace, name).await?;
        touch(&mut tx, skill_id, false).await?;
        let (action, details) = match reason {
            Some(r) => ("yank", serde_json::json!({ "reason": r })),
            None => ("unyank", serde_json::json!({})),
        };
        audit(
            &mut tx,
            actor,
            action,
            Some((namespace, name, Some(version))),
            &details,
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Deprecate a skill (`message = Some`) or undo it. Returns false when the skill is unknown.
    pub async fn set_deprecated(
        &self,
        namespace: &str,
        name: &str,
        message: Option<&str>,
        actor: &str,
    ) -> Result<bool, StoreError> {
        let mut tx = WriteTx::begin(&self.write).await?;
        let skill_id: Option<i64> = sqlx::query_scalar(
            "UPDATE skills SET
                deprecated_at = CASE WHEN ?3 IS NULL THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%fZ', 'now') END,
                deprecation_message = ?3
             WHERE name = ?2 AND namespace_id = (SELECT id FROM namespaces WHERE name = ?1)
             RETURNING id",
        )
        .bind(namespace)
        .bind(name)
        .bind(message)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(skill_id) = skill_id else {
            return Ok(false);
        };
        touch(&mut tx, skill_id, false).await?;
        let (action, details) = match message {
            Some(m) => ("deprecate", serde_json::json!({ "message": m })),
            None => ("undeprecate", serde_json::json!({})),
        };
        audit(
            &mut tx,
            actor,
            action,
            Some((namespace, name, None)),
            &details,
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Store a new token (its hash only) and audit it.
    pub async fn create_token(
        &self,
        id: &str,
        hash: &str,
        description: &str,
        namespaces: &[String],
        actions: &[String],
        actor: &str,
    ) -> Result<TokenRow, StoreError> {
        let mut tx = WriteTx::begin(&self.write).await?;
        let row: TokenRow = sqlx::query_as(
            "INSERT INTO tokens (id, hash, description, namespaces, actions) VALUES (?1, ?2, ?3, ?4, ?5)
             RETURNING id, description, namespaces, actions, created_at, revoked_at",
        )
        .bind(id)
        .bind(hash)
        .bind(description)
        .bind(serde_json::to_string(namespaces).unwrap_or_default())
        .bind(serde_json::to_string(actions).unwrap_or_default())
        .fetch_one(&mut *tx)
        .await?;
        let details = serde_json::json!({"token": id, "description": description, "namespaces": namespaces, "actions": actions});
        audit(&mut tx, actor, "token_create", None, &details).await?;
        tx.commit().await?;
        Ok(row)
    }

    /// Revoke a token. Returns false when it does not exist or was already revoked.
    pub async fn revoke_token(&self, id: &str, actor: &str) -> Result<bool, StoreError> {
        let mut tx = WriteTx::begin(&self.write).await?;
        let changed = sqlx::query(
            "UPDATE tokens SET revoked_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
             WHERE id = ?1 AND revoked_at IS NULL",
        )
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 0 {
            return Ok(false);
        }
        audit(
            &mut tx,
            actor,
            "token_revoke",
            None,
            &serde_json::json!({ "token": id }),
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The live (not revoked) token with this secret hash.
    pub async fn token_by_hash(&self, hash: &str) -> Result<Option<TokenRow>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, description, namespaces, actions, created_at, revoked_at
             FROM tokens WHERE hash = ?1 AND revoked_at IS NULL",
        )
        .bind(hash)
        .fetch_optional(&self.read)
        .await?)
    }

    /// Every token, newest first.
    pub async fn tokens(&self) -> Result<Vec<TokenRow>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, description, namespaces, actions, created_at, revoked_at
             FROM tokens ORDER BY created_at DESC, id",
        )
        .fetch_all(&self.read)
        .await?)
    }

    /// Audit entries with `id > after`, oldest first.
    pub async fn audit_page(&self, after: i64, limit: u32) -> Result<Vec<AuditRow>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, at, actor, action, namespace, name, version, details
             FROM audit_log WHERE id > ?1 ORDER BY id LIMIT ?2",
        )
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await?)
    }
}

/// Row counts and stored bytes: catalog size for metrics and for tests that assert "nothing
/// changed".
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::FromRow)]
pub struct Stats {
    pub namespaces: i64,
    pub skills: i64,
    pub versions: i64,
    pub files: i64,
    pub blobs: i64,
    pub blob_bytes: i64,
    pub audit_entries: i64,
    pub tokens: i64,
}

impl Store {
    pub async fn stats(&self) -> Result<Stats, StoreError> {
        Ok(sqlx::query_as(
            "SELECT (SELECT count(*) FROM namespaces) AS namespaces,
                    (SELECT count(*) FROM skills) AS skills,
                    (SELECT count(*) FROM versions) AS versions,
                    (SELECT count(*) FROM version_files) AS files,
                    (SELECT count(*) FROM blobs) AS blobs,
                    (SELECT coalesce(sum(size), 0) FROM blobs) AS blob_bytes,
                    (SELECT count(*) FROM audit_log) AS audit_entries,
                    (SELECT count(*) FROM tokens) AS tokens",
        )
        .fetch_one(&self.read)
        .await?)
    }
}

/// What the search index needs to know about one skill.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SearchSource {
    pub skill_id: i64,
    pub namespace: String,
    pub name: String,
    pub updated_gen: i64,
    /// The current version, or the newest one when every version is yanked; `None` when the
    /// skill has no version at all.
    pub version_id: Option<i64>,
    pub version: Option<String>,
    pub yanked_only: bool,
    pub deprecated: bool,
    pub deprecation_message: Option<String>,
    pub last_published_at: Option<String>,
}

impl Store {
    /// The catalog generation: bumped by every change to what a skill serves.
    pub async fn generation(&self) -> Result<i64, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT value FROM meta WHERE key = 'generation'")
                .fetch_one(&self.read)
                .await?,
        )
    }

    /// Skills changed after generation `since`, in skill id order after `after_id`.
    pub async fn changed_since(
        &self,
        since: i64,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<SearchSource>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT s.id AS skill_id, n.name AS namespace, s.name, s.updated_gen,
                    v.id AS version_id, v.version, s.current_version_id IS NULL AS yanked_only,
                    s.deprecated_at IS NOT NULL AS deprecated, s.deprecation_message, s.last_published_at
             FROM skills s
             JOIN namespaces n ON n.id = s.namespace_id
             LEFT JOIN versions v ON v.id = coalesce(s.current_version_id,
                 (SELECT id FROM versions WHERE skill_id = s.id ORDER BY published_at DESC, id DESC LIMIT 1))
             WHERE s.updated_gen > ?1 AND s.id > ?2
             ORDER BY s.id LIMIT ?3",
        )
        .bind(since)
        .bind(after_id)
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await?)
    }

    /// Up to `limit` namespaces starting with `prefix`: the exact match first, then by most
    /// recent publish; and how many start with it (counted up to [`COUNT_CAP`]).
    pub async fn complete_namespaces(
        &self,
        prefix: &str,
        limit: u32,
    ) -> Result<(Vec<String>, i64), StoreError> {
        let (lo, hi) = prefix_range(prefix);
        let names: Vec<String> = sqlx::query_scalar(
            "SELECT name FROM (SELECT name, last_published_at FROM namespaces
                               WHERE name >= ?1 AND name < ?2 ORDER BY name LIMIT ?4)
             ORDER BY name = ?3 DESC, last_published_at DESC, name LIMIT ?5",
        )
        .bind(&lo)
        .bind(&hi)
        .bind(prefix)
        .bind(CANDIDATES)
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await?;
        let total: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM (SELECT 1 FROM namespaces WHERE name >= ?1 AND name < ?2 LIMIT ?3)",
        )
        .bind(&lo)
        .bind(&hi)
        .bind(COUNT_CAP)
        .fetch_one(&self.read)
        .await?;
        Ok((names, total))
    }

    /// Up to `limit` distinct skill names starting with `prefix`, in `namespace` or across all:
    /// the exact match first, then by most recent publish; and how many skills match (counted up
    /// to [`COUNT_CAP`]). Work is bounded: the ranking looks at the first [`CANDIDATES`] matches
    /// in name order, so a one-letter prefix over a million skills costs the same as a long one.
    pub async fn complete_names(
        &self,
        namespace: Option<&str>,
        prefix: &str,
        limit: u32,
    ) -> Result<(Vec<String>, i64), StoreError> {
        let (lo, hi) = prefix_range(prefix);
        let namespace_id: Option<i64> = match namespace {
            Some(ns) => match sqlx::query_scalar("SELECT id FROM namespaces WHERE name = ?1")
                .bind(ns)
                .fetch_optional(&self.read)
                .await?
            {
                Some(id) => Some(id),
                None => return Ok((Vec::new(), 0)),
            },
            None => None,
        };
        // Separate statements so each range-scans a covering index with both bounds:
        // (namespace_id, name, last_published_at) or (name, last_published_at).
        let (names, total): (Vec<String>, i64) = match namespace_id {
            Some(ns) => {
                let names = sqlx::query_scalar(
                    "SELECT name FROM (SELECT name, last_published_at FROM skills
                                       WHERE namespace_id = ?3 AND name >= ?1 AND name < ?2
                                       ORDER BY name LIMIT ?5)
                     ORDER BY name = ?4 DESC, last_published_at DESC, name LIMIT ?6",
                )
                .bind(&lo)
                .bind(&hi)
                .bind(ns)
                .bind(prefix)
                .bind(CANDIDATES)
                .bind(i64::from(limit))
                .fetch_all(&self.read)
                .await?;
                let total = sqlx::query_scalar(
                    "SELECT count(*) FROM (SELECT 1 FROM skills
                                           WHERE namespace_id = ?3 AND name >= ?1 AND name < ?2 LIMIT ?4)",
                )
                .bind(&lo)
                .bind(&hi)
                .bind(ns)
                .bind(COUNT_CAP)
                .fetch_one(&self.read)
                .await?;
                (names, total)
            }
            None => {
                let names = sqlx::query_scalar(
                    "SELECT name FROM (SELECT name, last_published_at FROM skills
                                       WHERE name >= ?1 AND name < ?2 ORDER BY name LIMIT ?4)
                     GROUP BY name ORDER BY name = ?3 DESC, max(last_published_at) DESC, name LIMIT ?5",
                )
                .bind(&lo)
                .bind(&hi)
                .bind(prefix)
                .bind(CANDIDATES)
                .bind(i64::from(limit))
                .fetch_all(&self.read)
                .await?;
                let total = sqlx::query_scalar(
                    "SELECT count(*) FROM (SELECT 1 FROM skills WHERE name >= ?1 AND name < ?2 LIMIT ?3)",
                )
                .bind(&lo)
                .bind(&hi)
                .bind(COUNT_CAP)
                .fetch_one(&self.read)
                .await?;
                (names, total)
            }
        };
        Ok((names, total))
    }
}

/// Completion ranks at most this many prefix matches (name order) by recency.
const CANDIDATES: i64 = 500;
/// Completion totals count at most this many matches.
pub const COUNT_CAP: i64 = 10_000;

/// `[lo, hi)` covering every ASCII name that starts with `prefix` (names are ASCII).
fn prefix_range(prefix: &str) -> (String, String) {
    (
        prefix.to_owned(),
        prefix_upper(prefix).unwrap_or_else(|| "\u{7f}".to_owned()),
    )
}

/// The smallest string greater than every string starting with `prefix` (names are ASCII), or
/// `None` for the empty prefix.
fn prefix_upper(prefix: &str) -> Option<String> {
    let mut bytes = prefix.as_bytes().to_vec();
    while let Some(last) = bytes.pop() {
        if last < 0x7f {
            bytes.push(last + 1);
            return String::from_utf8(bytes).ok();
        }
    }
    None
}

/// What `verify` found.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct VerifyReport {
    pub blobs_checked: u64,
    pub bytes_checked: u64,
    pub versions_checked: u64,
    /// Each damaged thing, described.
    pub problems: Vec<String>,
}

impl VerifyReport {
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

impl Store {
    /// Scrub the whole store: every blob re-hashed against its digest and size, every file row
    /// pointing at an existing blob, every version with its root entry, every listing row at a
    /// current version. `progress` is called after each blob.
    pub async fn verify(&self, mut progress: impl FnMut(u64)) -> Result<VerifyReport, StoreError> {
        let mut report = VerifyReport::default();
        let mut after = String::new();
        loop {
            let rows: Vec<(String, i64, Vec<u8>)> = sqlx::query_as(
                "SELECT digest, size, data FROM blobs WHERE digest > ?1 ORDER BY digest LIMIT 64",
            )
            .bind(&after)
            .fetch_all(&self.read)
            .await?;
            let Some(last) = rows.last() else { break };
            after = last.0.clone();
            for (digest, size, data) in rows {
                report.blobs_checked += 1;
                report.bytes_checked += data.len() as u64;
                let actual = crate::core::Digest::of(&data).to_string();
                if actual != digest {
                    report
                        .problems
                        .push(format!("blob {digest}: its bytes hash to {actual}"));
                } else if data.len() as i64 != size {
                    report.problems.push(format!(
                        "blob {digest}: {} bytes, recorded as {size}",
                        data.len()
                    ));
                }
                progress(report.blobs_checked);
            }
        }
        let dangling: Vec<(i64, String, String)> = sqlx::query_as(
            "SELECT f.version_id, f.path, f.digest FROM version_files f
             LEFT JOIN blobs b ON b.digest = f.digest WHERE b.digest IS NULL",
        )
        .fetch_all(&self.read)
        .await?;
        for (version, path, digest) in dangling {
            report.problems.push(format!(
                "version {version}: {path} points at missing blob {digest}"
            ));
        }
        let size_mismatch: Vec<(i64, String)> = sqlx::query_as(
            "SELECT f.version_id, f.path FROM version_files f JOIN blobs b ON b.digest = f.digest WHERE b.size != f.size",
        )
        .fetch_all(&self.read)
        .await?;
        for (version, path) in size_mismatch {
            report.problems.push(format!(
                "version {version}: {path} has a size different from its blob"
            ));
        }
        report.versions_checked = sqlx::query_scalar("SELECT count(*) FROM versions")
            .fetch_one(&self.read)
            .await?;
        let rootless: Vec<i64> = sqlx::query_scalar(
            "SELECT v.id FROM versions v WHERE NOT EXISTS
               (SELECT 1 FROM version_entries e WHERE e.version_id = v.id AND e.subpath = '')
             OR NOT EXISTS (SELECT 1 FROM version_files f WHERE f.version_id = v.id AND f.path = 'SKILL.md')",
        )
        .fetch_all(&self.read)
        .await?;
        for v in rootless {
            report
                .problems
                .push(format!("version {v} has no SKILL.md or no root entry"));
        }
        let file_counts: Vec<i64> = sqlx::query_scalar(
            "SELECT v.id FROM versions v WHERE v.file_count != (SELECT count(*) FROM version_files f WHERE f.version_id = v.id)",
        )
        .fetch_all(&self.read)
        .await?;
        for v in file_counts {
            report
                .problems
                .push(format!("version {v} does not have the files it recorded"));
        }
        let stale_listing: Vec<String> = sqlx::query_scalar(
            "SELECT l.uri FROM listing l JOIN skills s ON s.id = l.skill_id
             WHERE s.current_version_id IS NOT l.version_id",
        )
        .fetch_all(&self.read)
        .await?;
        for uri in stale_listing {
            report.problems.push(format!(
                "listing {uri} does not point at the current version"
            ));
        }
        let check: String = sqlx::query_scalar("PRAGMA quick_check")
            .fetch_one(&self.read)
            .await?;
        if check != "ok" {
            report.problems.push(format!("SQLite quick_check: {check}"));
        }
        Ok(report)
    }

    /// A consistent copy of the database at `path` (which must not exist), taken while the
    /// registry keeps serving and publishing: SQLite `VACUUM INTO` reads one snapshot.
    pub async fn backup(&self, path: &std::path::Path) -> Result<(), StoreError> {
        if path.exists() {
            return Err(StoreError::Io {
                context: format!("backing up to {}", path.display()),
                source: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "the target already exists",
                ),
            });
        }
        let target = path.to_str().ok_or_else(|| StoreError::Io {
            context: "backing up".to_owned(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the target path is not UTF-8",
            ),
        })?;
        sqlx::query("VACUUM INTO ?1")
            .bind(target)
            .execute(&self.read)
            .await?;
        Ok(())
    }
}
