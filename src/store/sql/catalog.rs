//! [`Browse`] on both engines, written once: resolving a version, a skill and its versions,
//! the catalog's pages (`GET /v1/skills`, name search) and completion (`completion`). Each engine
//! compiles this module with its own `dialect`; what it does its own way (publishing, the
//! listing, manifests) is its `skills` module's [`Catalog`](crate::store::Catalog).

use super::dialect::{
    Engine, RESOLVE_WITH_MANIFEST, in_list, int8, is_set, is_unset, limit, list_arg, text,
    visibility_args, visible,
};
use crate::core::{Namespace, SkillRef, SkillVersion, Visibility};
use crate::store::rows::{
    CatalogRow, FacetRow, ResolvedManifestRow, ResolvedRow, SkillRow, VersionRow, decode_all,
};
use crate::store::{
    Browse, CatalogFilter, CatalogKey, CatalogRecord, FacetRecord, INLINE_FILE_BYTES, NameMatch,
    Resolution, ResolvedVersion, Result, SkillId, SkillRecord, VersionId, VersionRecord,
};

/// The columns of a resolution; the version comes from the current pointer or a pinned match.
/// With `manifest`, also the version's manifest columns (as `Catalog::manifests` reads them) and
/// one file's bytes.
macro_rules! resolve_sql {
    ($join:literal) => {
        resolve_sql!([], $join)
    };
    // With the manifest columns and the bytes of the file at path `$path` when it is at most
    // `$max` bytes (the blob's row, through the version's file row).
    (manifest($path:literal, $max:literal), $join:literal) => {
        resolve_sql!(
            [
                "v.manifest, v.provenance, v.signatures, v.publisher,
                 (SELECT b.data FROM version_files f JOIN blobs b ON b.digest = f.digest
                  WHERE f.version_id = v.id AND f.path = ",
                $path,
                " AND f.size <= ",
                $max,
                ") AS file, "
            ],
            $join
        )
    };
    ([$($columns:literal),*], $join:literal) => {
        concat!(
            "SELECT ",
            $($columns,)*
            "s.id AS skill_id, v.id AS version_id, v.version,
                    v.yanked_at IS NOT NULL AS yanked, v.yank_reason, s.deprecation_message,
                    s.deprecated_at IS NOT NULL AS deprecated, ",
            is_set!("n.private"),
            " AS private, v.verdict, v.findings,
                    v.revoked_at IS NOT NULL AS revoked, v.revoke_reason, ",
            is_set!("v.pending"),
            " AS pending
             FROM skills s JOIN namespaces n ON n.id = s.namespace_id ",
            $join,
            " WHERE n.name = $1 AND s.name = $2"
        )
    };
}

/// The columns of a [`VersionRow`].
macro_rules! version_sql {
    ($where:literal) => {
        concat!(
            "SELECT id, version, content_digest, file_count, total_size, warnings, published_at,
                    published_by, yanked_at, yank_reason, verdict, findings, revoked_at,
                    revoke_reason, ",
            is_set!("pending"),
            " AS pending FROM versions WHERE ",
            $where
        )
    };
}

/// The columns of a [`CatalogRow`], from skills `s` and namespaces `n`, then `$rest`.
macro_rules! catalog_sql {
    ($rest:literal) => {
        concat!(
            "SELECT n.name AS namespace, s.name, v.version AS current_version, e.description,
                    s.deprecated_at IS NOT NULL AS deprecated, s.deprecation_message,
                    s.current_version_id IS NULL AND NOT EXISTS (
                        SELECT 1 FROM versions p WHERE p.skill_id = s.id AND ",
            is_unset!("p.pending"),
            "
                    ) AS pending_only,
                    s.created_at, s.last_published_at, v.published_at AS current_published_at,
                    v.verdict AS current_verdict, v.provenance AS current_provenance,
                    v.publisher IS NOT NULL AS current_from_ci
             FROM skills s
             JOIN namespaces n ON n.id = s.namespace_id
             LEFT JOIN versions v ON v.id = s.current_version_id
             LEFT JOIN version_entries e ON e.version_id = v.id AND e.subpath = ''
             WHERE ",
            $rest
        )
    };
}

/// [`catalog_sql!`] with the skill's reads counted so far (`reads`: every version's but those
/// pending review, every day): what a card of the web catalog shows, in the statement that
/// reads the page rather than one more after it.
macro_rules! browse_sql {
    ($rest:literal) => {
        concat!(
            "SELECT n.name AS namespace, s.name, v.version AS current_version, e.description,
                    s.deprecated_at IS NOT NULL AS deprecated, s.deprecation_message,
                    s.current_version_id IS NULL AND NOT EXISTS (
                        SELECT 1 FROM versions p WHERE p.skill_id = s.id AND ",
            is_unset!("p.pending"),
            "
                    ) AS pending_only,
                    s.created_at, s.last_published_at, v.published_at AS current_published_at,
                    v.verdict AS current_verdict, v.provenance AS current_provenance,
                    v.publisher IS NOT NULL AS current_from_ci,
                    (SELECT ",
            int8!("sum(u.count)"),
            " FROM versions r JOIN usage_daily u ON u.version_id = r.id
                     WHERE r.skill_id = s.id AND ",
            is_unset!("r.pending"),
            ") AS reads
             FROM skills s
             JOIN namespaces n ON n.id = s.namespace_id
             LEFT JOIN versions v ON v.id = s.current_version_id
             LEFT JOIN version_entries e ON e.version_id = v.id AND e.subpath = ''
             WHERE ",
            $rest
        )
    };
}

/// The web catalog's facets, on the current version `v`: the verdict is `$v` (unless NULL);
/// the provenance is NULL when `$s` is `''`, else starts with `$s` (a LIKE pattern; unless NULL).
macro_rules! facets {
    ($v:literal, $s:literal) => {
        concat!(
            "(",
            text!($v),
            " IS NULL OR v.verdict = ",
            $v,
            ") AND (",
            text!($s),
            " IS NULL OR (v.id IS NOT NULL AND (",
            $s,
            " = '' AND v.provenance IS NULL OR v.provenance LIKE ",
            $s,
            ")))"
        )
    };
}

/// The facet parameters of [`facets!`]: the verdict, and the provenance pattern. A stored
/// provenance is its JSON with the tag first (`{"type":"git",…}`, serde's internal tagging).
fn facet_args(filter: &CatalogFilter<'_>) -> (Option<&'static str>, Option<String>) {
    let source = filter.source.map(|kind| match kind {
        None => String::new(),
        Some(kind) => format!("{{\"type\":\"{}\"%", kind.as_str()),
    });
    (filter.verdict.map(|v| v.as_str()), source)
}

/// Above every stored timestamp (ISO 8601, `2026-…`): where the first recent page starts.
const LATEST: &str = "9999";

/// A web catalog page by (namespace, name), optionally in namespace `$1`: after ($2, $3),
/// `$4` rows, visibility `$5`, `$6`, facets `$7`, `$8`.
pub(in crate::store) const BROWSE_BY_NAME: &str = concat!(
    browse_sql!("("),
    text!("$1"),
    " IS NULL OR n.name = $1) AND (n.name, s.name) > ($2, $3) AND ",
    facets!("$7", "$8"),
    " AND ",
    visible!("n", "$5", "$6"),
    " ORDER BY n.name, s.name ",
    limit!("$4")
);

/// A web catalog page most recently published first, on the recency index: after (last
/// published `$1`, namespace `$2`, name `$3`; the first condition is a range on the index),
/// `$4` rows, facets `$5`, `$6`, visibility `$7`, `$8`.
pub(in crate::store) const BROWSE_RECENT: &str = concat!(
    browse_sql!(
        "s.last_published_at <= $1 AND (s.last_published_at < $1 OR (n.name, s.name) < ($2, $3)) AND "
    ),
    facets!("$5", "$6"),
    " AND ",
    visible!("n", "$7", "$8"),
    " ORDER BY s.last_published_at DESC, n.name DESC, s.name DESC ",
    limit!("$4")
);

/// [`BROWSE_RECENT`] in namespace `$9`, on the index by namespace and recency.
pub(in crate::store) const BROWSE_RECENT_IN_NAMESPACE: &str = concat!(
    browse_sql!(
        "s.last_published_at <= $1 AND (s.last_published_at < $1 OR (n.name, s.name) < ($2, $3)) AND "
    ),
    facets!("$5", "$6"),
    " AND ",
    visible!("n", "$7", "$8"),
    " AND n.name = $9 ORDER BY s.last_published_at DESC, s.name DESC ",
    limit!("$4")
);

/// The web catalog's facet counts: skills per namespace, current verdict, current source kind
/// (the provenance's tag, `''` published directly; both NULL without a current version) and
/// whether only pending versions exist. One scan of every skill, grouped.
pub(in crate::store) const FACETS: &str = concat!(
    "SELECT namespace, private, verdict, source, pending_only, COUNT(*) AS skills FROM (
         SELECT n.name AS namespace, ",
    is_set!("n.private"),
    " AS private, v.verdict,
                CASE WHEN v.id IS NULL THEN NULL
                     WHEN v.provenance IS NULL THEN ''
                     WHEN v.provenance LIKE '{\"type\":\"git\"%' THEN 'git'
                     WHEN v.provenance LIKE '{\"type\":\"mcp\"%' THEN 'mcp'
                     ELSE substr(v.provenance, 1, 40) END AS source,
                s.current_version_id IS NULL AND NOT EXISTS (
                    SELECT 1 FROM versions p WHERE p.skill_id = s.id AND ",
    is_unset!("p.pending"),
    "
                ) AS pending_only
         FROM skills s
         JOIN namespaces n ON n.id = s.namespace_id
         LEFT JOIN versions v ON v.id = s.current_version_id
     ) f
     GROUP BY namespace, private, verdict, source, pending_only"
);

#[async_trait::async_trait]
impl Browse for Engine {
    async fn complete_namespaces(
        &self,
        prefix: &str,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<(Vec<String>, u64)> {
        super::completion::namespaces(self.read(), prefix, limit, visibility).await
    }

    async fn complete_names(
        &self,
        namespace: Option<&Namespace>,
        prefix: &str,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<(Vec<String>, u64)> {
        super::completion::names(self.read(), namespace, prefix, limit, visibility).await
    }

    async fn resolve(
        &self,
        skill: &SkillRef,
        version: Option<&SkillVersion>,
    ) -> Result<Option<ResolvedVersion>> {
        let pool = self.read();
        let row: Option<ResolvedRow> = match version {
            None => {
                sqlx::query_as(resolve_sql!(
                    "JOIN versions v ON v.id = s.current_version_id"
                ))
                .bind(skill.namespace.as_str())
                .bind(skill.name.as_str())
                .fetch_optional(pool)
                .await?
            }
            Some(version) => {
                sqlx::query_as(resolve_sql!(
                    "JOIN versions v ON v.skill_id = s.id AND v.version = $3"
                ))
                .bind(skill.namespace.as_str())
                .bind(skill.name.as_str())
                .bind(version.to_string())
                .fetch_optional(pool)
                .await?
            }
        };
        row.map(ResolvedRow::decode).transpose()
    }

    async fn resolve_with_manifest(
        &self,
        skill: &SkillRef,
        version: Option<&SkillVersion>,
        wanted: &(dyn Fn(VersionId) -> bool + Send + Sync),
        file: Option<&str>,
    ) -> Result<Option<Resolution>> {
        if !RESOLVE_WITH_MANIFEST {
            return Ok(self
                .resolve(skill, version)
                .await?
                .map(|resolved| Resolution {
                    resolved,
                    manifest: None,
                    file: None,
                }));
        }
        let pool = self.read();
        let row: Option<ResolvedManifestRow> = match version {
            None => {
                sqlx::query_as(resolve_sql!(
                    manifest("$3", "$4"),
                    "JOIN versions v ON v.id = s.current_version_id"
                ))
                .bind(skill.namespace.as_str())
                .bind(skill.name.as_str())
                .bind(file)
                .bind(INLINE_FILE_BYTES)
                .fetch_optional(pool)
                .await?
            }
            Some(version) => {
                sqlx::query_as(resolve_sql!(
                    manifest("$4", "$5"),
                    "JOIN versions v ON v.skill_id = s.id AND v.version = $3"
                ))
                .bind(skill.namespace.as_str())
                .bind(skill.name.as_str())
                .bind(version.to_string())
                .bind(file)
                .bind(INLINE_FILE_BYTES)
                .fetch_optional(pool)
                .await?
            }
        };
        row.map(|row| row.decode(wanted)).transpose()
    }

    async fn skill(&self, skill: &SkillRef) -> Result<Option<SkillRecord>> {
        let pool = self.read();
        let row: Option<SkillRow> = sqlx::query_as(concat!(
            "SELECT s.id, n.name AS namespace, s.name, s.created_at,
                    v.version AS current_version, s.last_published_at,
                    v.published_at AS current_published_at, s.deprecated_at,
                    s.deprecation_message, ",
            is_set!("n.private"),
            " AS private
             FROM skills s
             JOIN namespaces n ON n.id = s.namespace_id
             LEFT JOIN versions v ON v.id = s.current_version_id
             WHERE n.name = $1 AND s.name = $2"
        ))
        .bind(skill.namespace.as_str())
        .bind(skill.name.as_str())
        .fetch_optional(pool)
        .await?;
        row.map(SkillRow::decode).transpose()
    }

    async fn versions(&self, skill_id: SkillId) -> Result<Vec<VersionRecord>> {
        let pool = self.read();
        let rows: Vec<VersionRow> = sqlx::query_as(version_sql!("skill_id = $1"))
            .bind(skill_id)
            .fetch_all(pool)
            .await?;
        decode_all(rows, VersionRow::decode)
    }

    async fn version(
        &self,
        skill_id: SkillId,
        version: &SkillVersion,
    ) -> Result<Option<VersionRecord>> {
        let pool = self.read();
        let row: Option<VersionRow> =
            sqlx::query_as(version_sql!("skill_id = $1 AND version = $2"))
                .bind(skill_id)
                .bind(version.to_string())
                .fetch_optional(pool)
                .await?;
        row.map(VersionRow::decode).transpose()
    }

    async fn catalog_page(
        &self,
        namespace: Option<&Namespace>,
        after: Option<&SkillRef>,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<CatalogRecord>> {
        let pool = self.read();
        let (after_ns, after_name) =
            after.map_or(("", ""), |s| (s.namespace.as_str(), s.name.as_str()));
        let (mode, names) = visibility_args(visibility)?;
        let rows: Vec<CatalogRow> = sqlx::query_as(concat!(
            catalog_sql!("("),
            text!("$1"),
            " IS NULL OR n.name = $1) AND (n.name, s.name) > ($2, $3) AND ",
            visible!("n", "$5", "$6"),
            " ORDER BY n.name, s.name ",
            limit!("$4")
        ))
        .bind(namespace.map(Namespace::as_str))
        .bind(after_ns)
        .bind(after_name)
        .bind(i64::from(limit))
        .bind(mode)
        .bind(&names)
        .fetch_all(pool)
        .await?;
        decode_all(rows, CatalogRow::decode)
    }

    async fn catalog_browse(
        &self,
        filter: &CatalogFilter<'_>,
        recent: bool,
        after: Option<&CatalogKey>,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<CatalogRecord>> {
        let pool = self.read();
        let (mode, names) = visibility_args(visibility)?;
        let (verdict, source) = facet_args(filter);
        let namespace = filter.namespace.map(Namespace::as_str);
        let rows: Vec<CatalogRow> = if recent {
            let (at, after_ns, after_name) = match after {
                Some(CatalogKey::Recent {
                    published_at,
                    skill,
                }) => (
                    published_at.as_str(),
                    skill.namespace.as_str(),
                    skill.name.as_str(),
                ),
                _ => (LATEST, "", ""),
            };
            // One statement per shape, so that each is planned on its own index: by recency,
            // or by namespace and recency.
            let query = match namespace {
                None => sqlx::query_as(BROWSE_RECENT),
                Some(_) => sqlx::query_as(BROWSE_RECENT_IN_NAMESPACE),
            };
            let query = query
                .bind(at)
                .bind(after_ns)
                .bind(after_name)
                .bind(i64::from(limit))
                .bind(verdict)
                .bind(source)
                .bind(mode)
                .bind(&names);
            match namespace {
                Some(namespace) => query.bind(namespace).fetch_all(pool).await?,
                None => query.fetch_all(pool).await?,
            }
        } else {
            let (after_ns, after_name) = match after {
                Some(CatalogKey::Name(s)) => (s.namespace.as_str(), s.name.as_str()),
                _ => ("", ""),
            };
            sqlx::query_as(BROWSE_BY_NAME)
                .bind(namespace)
                .bind(after_ns)
                .bind(after_name)
                .bind(i64::from(limit))
                .bind(mode)
                .bind(&names)
                .bind(verdict)
                .bind(source)
                .fetch_all(pool)
                .await?
        };
        decode_all(rows, CatalogRow::decode)
    }

    async fn catalog_facets(&self) -> Result<Vec<FacetRecord>> {
        let rows: Vec<FacetRow> = sqlx::query_as(FACETS).fetch_all(self.read()).await?;
        decode_all(rows, FacetRow::decode)
    }

    async fn catalog_rows(
        &self,
        skills: &[SkillRef],
        visibility: &Visibility,
    ) -> Result<Vec<CatalogRecord>> {
        if skills.is_empty() {
            return Ok(Vec::new());
        }
        let pool = self.read();
        let (mode, names) = visibility_args(visibility)?;
        // Every namespace with every name: a superset of the pairs, each an indexed lookup;
        // the pairs asked for are kept below.
        let rows: Vec<CatalogRow> = sqlx::query_as(concat!(
            catalog_sql!(""),
            in_list!("n.name", "$1"),
            " AND ",
            in_list!("s.name", "$2"),
            " AND ",
            visible!("n", "$3", "$4")
        ))
        .bind(list_arg(skills.iter().map(|s| s.namespace.as_str()))?)
        .bind(list_arg(skills.iter().map(|s| s.name.as_str()))?)
        .bind(mode)
        .bind(&names)
        .fetch_all(pool)
        .await?;
        let rows = decode_all(rows, CatalogRow::decode)?;
        Ok(rows
            .into_iter()
            .filter(|r| skills.contains(&r.skill))
            .collect())
    }

    async fn catalog_by_name(
        &self,
        matching: NameMatch<'_>,
        after: Option<&SkillRef>,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<CatalogRecord>> {
        let pool = self.read();
        let (from, to) = matching.range();
        let (after_name, after_ns) =
            after.map_or(("", ""), |s| (s.name.as_str(), s.namespace.as_str()));
        let (mode, names) = visibility_args(visibility)?;
        let rows: Vec<CatalogRow> = sqlx::query_as(concat!(
            catalog_sql!("s.name >= $1 AND s.name < $2 AND (s.name, n.name) > ($3, $4) AND "),
            visible!("n", "$6", "$7"),
            " ORDER BY s.name, n.name ",
            limit!("$5")
        ))
        .bind(from)
        .bind(to)
        .bind(after_name)
        .bind(after_ns)
        .bind(i64::from(limit))
        .bind(mode)
        .bind(&names)
        .fetch_all(pool)
        .await?;
        decode_all(rows, CatalogRow::decode)
    }
}
