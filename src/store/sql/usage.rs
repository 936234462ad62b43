//! [`UsageCounts`]: how often each version was read, per UTC day and kind (`core::usage`). The
//! registry counts in memory and flushes here in the background: each flush adds its counts to
//! the stored ones (an upsert that adds), so any number of processes sharing the storage sum.
//! A flush is one transaction without the writer lock (it touches no catalog row), its rows in
//! key order so that two replicas flushing the same keys never deadlock. Written once for both
//! engines: each compiles this module with its own `dialect`.

use super::dialect::{Engine, in_list, int8, is_unset, list_arg};
use crate::core::usage::{Day, Kind};
use crate::core::{Namespace, SkillName, SkillRef, SkillVersion};
use crate::store::rows::pow2_chunks;
use crate::store::{Result, SkillId, SkillUsage, StoreError, UsageCount, UsageCounts, UsageRecord};

#[async_trait::async_trait]
impl UsageCounts for Engine {
    async fn add_usage(&self, counts: &[UsageCount]) -> Result<()> {
        if counts.is_empty() {
            return Ok(());
        }
        let mut sorted = counts.to_vec();
        sorted.sort_unstable_by_key(|c| (c.version_id, c.day, c.kind));
        let mut tx = self.write().begin().await?;
        for chunk in pow2_chunks(&sorted) {
            let mut insert =
                sqlx::QueryBuilder::new("INSERT INTO usage_daily (version_id, day, kind, count) ");
            insert.push_values(chunk, |mut row, c| {
                row.push_bind(c.version_id)
                    .push_bind(c.day.0)
                    .push_bind(c.kind.as_str())
                    .push_bind(i64::try_from(c.count).unwrap_or(i64::MAX));
            });
            insert.push(
                " ON CONFLICT (version_id, day, kind) \
                 DO UPDATE SET count = usage_daily.count + excluded.count",
            );
            insert.build().execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn skill_usage(&self, skill_id: SkillId, since: Day) -> Result<Vec<UsageRecord>> {
        let rows: Vec<(String, bool, i64, String, i64)> = sqlx::query_as(
            "SELECT v.version, v.pending, u.day, u.kind, u.count \
             FROM usage_daily u JOIN versions v ON v.id = u.version_id \
             WHERE v.skill_id = $1 AND u.day >= $2 \
             ORDER BY u.day, u.kind, v.version",
        )
        .bind(skill_id)
        .bind(since.0)
        .fetch_all(self.read())
        .await?;
        rows.into_iter()
            .map(|(version, pending, day, kind, count)| {
                Ok(UsageRecord {
                    version: SkillVersion::parse(&version).map_err(|_| corrupt(&version))?,
                    pending,
                    day: Day(day),
                    kind: kind_of(&kind)?,
                    count: count.max(0) as u64,
                })
            })
            .collect()
    }

    async fn usage_totals(&self, skills: &[SkillRef], since: Day) -> Result<Vec<SkillUsage>> {
        if skills.is_empty() {
            return Ok(Vec::new());
        }
        // Namespaces and names as two lists: their product may hold more skills than asked
        // for, which are dropped below (each list is one parameter, so the text is constant).
        let namespaces = list_arg(skills.iter().map(|s| s.namespace.as_str()))?;
        let names = list_arg(skills.iter().map(|s| s.name.as_str()))?;
        let rows: Vec<(String, String, Option<String>, i64)> = sqlx::query_as(concat!(
            "SELECT ns.name, s.name, u.kind, ",
            int8!("sum(u.count)"),
            " FROM skills s JOIN namespaces ns ON ns.id = s.namespace_id \
             JOIN versions v ON v.skill_id = s.id \
             JOIN usage_daily u ON u.version_id = v.id \
             WHERE ",
            in_list!("ns.name", "$1"),
            " AND ",
            in_list!("s.name", "$2"),
            " AND u.day >= $3 AND ",
            is_unset!("v.pending"),
            " GROUP BY ns.name, s.name, u.kind"
        ))
        .bind(namespaces)
        .bind(names)
        .bind(since.0)
        .fetch_all(self.read())
        .await?;
        let mut found = skill_usage(rows)?;
        found.retain(|u| skills.contains(&u.skill));
        Ok(found)
    }

    async fn usage_by_skill(&self, since: Day) -> Result<Vec<SkillUsage>> {
        let rows: Vec<(String, String, Option<String>, i64)> = sqlx::query_as(concat!(
            "SELECT ns.name, s.name, u.kind, ",
            int8!("coalesce(sum(u.count), 0)"),
            " FROM skills s JOIN namespaces ns ON ns.id = s.namespace_id \
             LEFT JOIN (versions v JOIN usage_daily u ON u.version_id = v.id AND u.day >= $1) \
             ON v.skill_id = s.id \
             GROUP BY ns.name, s.name, u.kind ORDER BY ns.name, s.name, u.kind"
        ))
        .bind(since.0)
        .fetch_all(self.read())
        .await?;
        skill_usage(rows)
    }
}

/// Rows of (namespace, name, kind or NULL, count) as typed records.
fn skill_usage(rows: Vec<(String, String, Option<String>, i64)>) -> Result<Vec<SkillUsage>> {
    rows.into_iter()
        .map(|(namespace, name, kind, count)| {
            let skill = Namespace::new(&namespace)
                .ok()
                .zip(SkillName::new(&name).ok())
                .map(|(ns, name)| SkillRef::new(ns, name))
                .ok_or_else(|| corrupt(&format!("{namespace}/{name}")))?;
            Ok(SkillUsage {
                skill,
                kind: kind.as_deref().map(kind_of).transpose()?,
                count: count.max(0) as u64,
            })
        })
        .collect()
}

fn kind_of(name: &str) -> Result<Kind> {
    Kind::parse(name).ok_or_else(|| corrupt(name))
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(format!("a usage row that does not decode: {what:.200}"))
}
