//! Completion for the resource templates: namespace and skill-name prefixes, ranked by recency,
//! with bounded work however large the catalog (names compare byte-wise, so a prefix is an
//! index range). Written once for both engines: each compiles this module with its own
//! `dialect`, and supplies the statements of completion across namespaces (`across_sql!`, in
//! its `across`), which the two plan differently.

use super::across::across_sql;
use super::dialect::{Pool, desc_nulls_last, limit, visibility_args, visible};
use crate::core::{Namespace, Visibility};
use crate::store::Result;
use crate::store::rows::{CANDIDATES, COUNT_CAP, count, namespace_by_namespace, prefix_range};

/// Up to `limit` visible namespaces starting with `prefix`: the exact match first, then by most
/// recent publish; and how many start with it (counted up to [`COMPLETION_COUNT_CAP`]).
pub(super) async fn namespaces(
    pool: &Pool,
    prefix: &str,
    limit: u32,
    visibility: &Visibility,
) -> Result<(Vec<String>, u64)> {
    let (lo, hi) = prefix_range(prefix);
    let (mode, visible_names) = visibility_args(visibility)?;
    let names: Vec<String> = sqlx::query_scalar(concat!(
        "SELECT name FROM (SELECT n.name, n.last_published_at FROM namespaces n
                           WHERE n.name >= $1 AND n.name < $2 AND ",
        visible!("n", "$6", "$7"),
        " ORDER BY n.name ",
        limit!("$4"),
        ") AS c
         ORDER BY name = $3 DESC, last_published_at ",
        desc_nulls_last!(),
        ", name ",
        limit!("$5")
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
        "SELECT count(*) FROM (SELECT 1 FROM namespaces n WHERE n.name >= $1 AND n.name < $2 AND ",
        visible!("n", "$4", "$5"),
        " ",
        limit!("$3"),
        ") AS c"
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

/// Up to `limit` distinct skill names starting with `prefix`, in `namespace` or across every
/// visible one, of skills with a publish that is not pending review (`last_published_at` set):
/// the exact match first, then by most recent publish; and how many skills match (counted up to
/// [`COMPLETION_COUNT_CAP`]). Work is bounded: the ranking looks at the first
/// [`CANDIDATES`] matches in name order, so a one-letter prefix over a million skills costs the
/// same as a long one.
pub(super) async fn names(
    pool: &Pool,
    namespace: Option<&Namespace>,
    prefix: &str,
    limit: u32,
    visibility: &Visibility,
) -> Result<(Vec<String>, u64)> {
    let (lo, hi) = prefix_range(prefix);
    let (names, total): (Vec<String>, i64) = match namespace {
        Some(ns) => {
            let (mode, visible_names) = visibility_args(visibility)?;
            // One statement (a round trip on PostgreSQL): the namespace when `visibility` sees
            // it, the ranked names and their count. Each part range-scans the covering index
            // (namespace_id, name, last_published_at); the skills' filter is written twice, not
            // as a shared CTE, which PostgreSQL would materialize whole.
            let rows: Vec<(String, i64)> = sqlx::query_as(concat!(
                "WITH ns AS (SELECT n.id FROM namespaces n WHERE n.name = $7 AND ",
                visible!("n", "$8", "$9"),
                ")
                 SELECT c.name, (SELECT count(*) FROM (SELECT 1 FROM skills
                                     WHERE namespace_id = (SELECT id FROM ns)
                                     AND name >= $1 AND name < $2
                                     AND last_published_at IS NOT NULL ",
                limit!("$4"),
                ") AS t)
                 FROM (SELECT name, last_published_at FROM skills
                       WHERE namespace_id = (SELECT id FROM ns) AND name >= $1 AND name < $2
                       AND last_published_at IS NOT NULL
                       ORDER BY name ",
                limit!("$5"),
                ") AS c
                 ORDER BY c.name = $3 DESC, c.last_published_at ",
                desc_nulls_last!(),
                ", c.name ",
                limit!("$6")
            ))
            .bind(&lo)
            .bind(&hi)
            .bind(prefix)
            .bind(COUNT_CAP)
            .bind(CANDIDATES)
            .bind(i64::from(limit))
            .bind(ns.as_str())
            .bind(mode)
            .bind(&visible_names)
            .fetch_all(pool)
            .await?;
            // No row: nothing matches (or the namespace is hidden), so the count is 0 as well.
            let total = rows.first().map_or(0, |(_, total)| *total);
            (rows.into_iter().map(|(name, _)| name).collect(), total)
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
    pool: &Pool,
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
