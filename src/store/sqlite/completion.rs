//! Completion for the resource templates: namespace and skill-name prefixes, ranked by recency,
//! with bounded work however large the catalog.

use sqlx::SqlitePool;

use super::dialect::{visibility_args, visible};
use crate::core::{Namespace, Visibility};
use crate::store::Result;
use crate::store::rows::{CANDIDATES, COUNT_CAP, count, namespace_by_namespace, prefix_range};

/// Up to `limit` visible namespaces starting with `prefix`: the exact match first, then by most
/// recent publish; and how many start with it (counted up to [`COMPLETION_COUNT_CAP`]).
pub(super) async fn namespaces(
    pool: &SqlitePool,
    prefix: &str,
    limit: u32,
    visibility: &Visibility,
) -> Result<(Vec<String>, u64)> {
    let (lo, hi) = prefix_range(prefix);
    let (mode, visible_names) = visibility_args(visibility)?;
    let names: Vec<String> = sqlx::query_scalar(concat!(
        "SELECT name FROM (SELECT n.name, n.last_published_at FROM namespaces n
                           WHERE n.name >= ?1 AND n.name < ?2 AND ",
        visible!("n", "?6", "?7"),
        " ORDER BY n.name LIMIT +?4)
         ORDER BY name = ?3 DESC, last_published_at DESC, name LIMIT +?5"
    ))
    .bind(&lo)
    .bind(&hi)
    .bind(prefix)
    .bind(CANDIDATES)
    .bind(i64::from(limit))
    .bind(mode)
    .bind(&visible_names)
    .fetch_all(pool)
    .await?;
    let total: i64 = sqlx::query_scalar(concat!(
        "SELECT count(*) FROM (SELECT 1 FROM namespaces n WHERE n.name >= ?1 AND n.name < ?2 AND ",
        visible!("n", "?4", "?5"),
        " LIMIT +?3)"
    ))
    .bind(&lo)
    .bind(&hi)
    .bind(COUNT_CAP)
    .bind(mode)
    .bind(&visible_names)
    .fetch_one(pool)
    .await?;
    Ok((names, count(total)?))
}

/// The ranking and the count of name completion across namespaces, as
/// [`namespace_by_namespace`] chooses. Neither reads a skills row or a namespace row per match:
/// - `seen`: the ids of the namespaces the caller sees, which the planner range-scans one by one
///   on `(namespace_id, name)` (as `EXPLAIN QUERY PLAN` shows it on SQLite 3.40 at 1M skills);
/// - `hidden`: one range scan of `skills_by_name (name, last_published_at, namespace_id)`,
///   skipping the ids of the namespaces the caller may not see.
///
/// Parameters: `?1`, `?2` the visibility (as [`visibility_args`] gives it), `?3`, `?4` the
/// name range, then the ranking's `?5` prefix, `?6` candidates, `?7` limit, or the count's
/// `?5` cap.
macro_rules! across_sql {
    (seen) => {
        across_sql!("IN", "")
    };
    (hidden) => {
        across_sql!("NOT IN", "NOT ")
    };
    ($in:literal, $not:literal) => {
        (
            concat!(
                "SELECT name FROM (SELECT s.name, s.last_published_at FROM skills s
                                   WHERE s.name >= ?3 AND s.name < ?4
                                   AND s.last_published_at IS NOT NULL AND s.namespace_id ",
                $in,
                " (SELECT n.id FROM namespaces n WHERE ",
                $not,
                visible!("n", "?1", "?2"),
                ") ORDER BY s.name LIMIT +?6)
                 GROUP BY name ORDER BY name = ?5 DESC, max(last_published_at) DESC, name
                 LIMIT +?7"
            ),
            concat!(
                "SELECT count(*) FROM (SELECT 1 FROM skills s
                                       WHERE s.name >= ?3 AND s.name < ?4
                                   AND s.last_published_at IS NOT NULL AND s.namespace_id ",
                $in,
                " (SELECT n.id FROM namespaces n WHERE ",
                $not,
                visible!("n", "?1", "?2"),
                ") LIMIT +?5)"
            ),
        )
    };
}

/// Up to `limit` distinct skill names starting with `prefix`, in `namespace` or across every
/// visible one, of skills with a publish that is not pending review (`last_published_at` set): the exact match first, then by most recent publish; and how many skills match
/// (counted up to [`COMPLETION_COUNT_CAP`]). Work is bounded: the ranking looks at the first
/// [`CANDIDATES`] matches in name order, so a one-letter prefix over a million skills costs the
/// same as a long one.
pub(super) async fn names(
    pool: &SqlitePool,
    namespace: Option<&Namespace>,
    prefix: &str,
    limit: u32,
    visibility: &Visibility,
) -> Result<(Vec<String>, u64)> {
    let (lo, hi) = prefix_range(prefix);
    let (names, total): (Vec<String>, i64) = match namespace {
        Some(ns) => {
            let found: Option<(i64, bool)> =
                sqlx::query_as("SELECT id, private != 0 FROM namespaces WHERE name = ?1")
                    .bind(ns.as_str())
                    .fetch_optional(pool)
                    .await?;
            let Some((ns_id, _)) = found.filter(|(_, private)| visibility.sees(ns, *private))
            else {
                return Ok((Vec::new(), 0));
            };
            // Range-scans the covering index (namespace_id, name, last_published_at).
            let names = sqlx::query_scalar(
                "SELECT name FROM (SELECT name, last_published_at FROM skills
                                   WHERE namespace_id = ?3 AND name >= ?1 AND name < ?2
                                   AND last_published_at IS NOT NULL
                                   ORDER BY name LIMIT +?5)
                 ORDER BY name = ?4 DESC, last_published_at DESC, name LIMIT +?6",
            )
            .bind(&lo)
            .bind(&hi)
            .bind(ns_id)
            .bind(prefix)
            .bind(CANDIDATES)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await?;
            let total = sqlx::query_scalar(
                "SELECT count(*) FROM (SELECT 1 FROM skills
                                       WHERE namespace_id = ?3 AND name >= ?1 AND name < ?2
                                   AND last_published_at IS NOT NULL
                                       LIMIT +?4)",
            )
            .bind(&lo)
            .bind(&hi)
            .bind(ns_id)
            .bind(COUNT_CAP)
            .fetch_one(pool)
            .await?;
            (names, total)
        }
        None if namespace_by_namespace(visibility) => {
            across(pool, across_sql!(seen), &lo, &hi, prefix, limit, visibility).await?
        }
        None => {
            across(
                pool,
                across_sql!(hidden),
                &lo,
                &hi,
                prefix,
                limit,
                visibility,
            )
            .await?
        }
    };
    Ok((names, count(total)?))
}

/// Name completion across the namespaces `visibility` sees, with the statements of [`across_sql!`].
async fn across(
    pool: &SqlitePool,
    (rank, total): (&'static str, &'static str),
    lo: &str,
    hi: &str,
    prefix: &str,
    limit: u32,
    visibility: &Visibility,
) -> Result<(Vec<String>, i64)> {
    let (mode, visible_names) = visibility_args(visibility)?;
    let names = sqlx::query_scalar(rank)
        .bind(mode)
        .bind(&visible_names)
        .bind(lo)
        .bind(hi)
        .bind(prefix)
        .bind(CANDIDATES)
        .bind(i64::from(limit))
        .fetch_all(pool)
        .await?;
    let total = sqlx::query_scalar(total)
        .bind(mode)
        .bind(&visible_names)
        .bind(lo)
        .bind(hi)
        .bind(COUNT_CAP)
        .fetch_one(pool)
        .await?;
    Ok((names, total))
}
