//! Usage counts as the transports show them: one skill's daily series (REST, the web page's
//! chart), totals of a page of skills (ClawHub, the web catalog's cards), and every skill's
//! totals for the operator (`skillreg stats`). Read from storage: what this process counted
//! since its last flush (`registry::usage`) shows after the next one.

use std::collections::HashMap;

use super::Reads;
use crate::core::usage::{Day, Kind, Totals};
use crate::core::{SkillRef, SkillVersion, Visibility};
use crate::error::Result;

/// Most days a series covers.
pub const MAX_STATS_DAYS: u32 = 366;

/// One skill's counts per day, kind and version, over the days from `from` to `to`.
#[derive(Debug, Clone)]
pub struct SkillStats {
    pub skill: SkillRef,
    pub from: Day,
    pub to: Day,
    /// Days with a count only, oldest first (then by kind and version).
    pub counts: Vec<DayCount>,
}

/// Reads of one version on one day, of one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayCount {
    pub day: Day,
    pub version: SkillVersion,
    pub kind: Kind,
    pub count: u64,
}

impl SkillStats {
    /// Every count added up, by kind.
    pub fn totals(&self) -> Totals {
        let mut totals = Totals::default();
        for c in &self.counts {
            totals.add(c.kind, c.count);
        }
        totals
    }
}

/// Today, UTC.
pub fn today() -> Day {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    Day::of_unix(now)
}

/// The first of the last `days` days (today the last of them); 0 days: since the first day.
fn since(days: u32) -> Day {
    match days {
        0 => Day(0),
        days => Day(today().0 - i64::from(days) + 1),
    }
}

impl Reads {
    /// The counts of the last `days` days (at most [`MAX_STATS_DAYS`]) of a skill `viewer`
    /// sees, exactly as its other reads see it: a hidden skill is unknown, and the counts of
    /// versions pending review show only to those who see them.
    pub async fn skill_stats(
        &self,
        viewer: &Visibility,
        skill: &SkillRef,
        days: u32,
    ) -> Result<SkillStats> {
        let days = days.clamp(1, MAX_STATS_DAYS);
        let (record, _) = self.visible_skill(viewer, skill).await?;
        let holds = viewer.holds(&skill.namespace);
        let from = since(days);
        let counts = self
            .store
            .skill_usage(record.id, from)
            .await?
            .into_iter()
            .filter(|r| holds || !r.pending)
            .map(|r| DayCount {
                day: r.day,
                version: r.version,
                kind: r.kind,
                count: r.count,
            })
            .collect();
        Ok(SkillStats {
            skill: skill.clone(),
            from,
            to: today(),
            counts,
        })
    }

    /// Every count of each of `skills` (which the caller has already read, so sees), by kind,
    /// but those of versions pending review (which not everyone who sees the skill sees); a
    /// skill nobody read is absent.
    pub async fn usage_totals(&self, skills: &[SkillRef]) -> Result<HashMap<SkillRef, Totals>> {
        self.usage_totals_since(skills, 0).await
    }

    /// The same over the last `days` days (0: every day).
    pub(super) async fn usage_totals_since(
        &self,
        skills: &[SkillRef],
        days: u32,
    ) -> Result<HashMap<SkillRef, Totals>> {
        let mut totals: HashMap<SkillRef, Totals> = HashMap::new();
        for row in self.store.usage_totals(skills, since(days)).await? {
            if let Some(kind) = row.kind {
                totals.entry(row.skill).or_default().add(kind, row.count);
            }
        }
        Ok(totals)
    }

    /// Every skill with its counts of the last `days` days (0: all of them), in (namespace,
    /// name) order: the operator's view (`skillreg stats`), whatever is private or pending.
    pub async fn usage_by_skill(&self, days: u32) -> Result<Vec<(SkillRef, Totals)>> {
        let mut out: Vec<(SkillRef, Totals)> = Vec::new();
        for row in self.store.usage_by_skill(since(days)).await? {
            if out.last().is_none_or(|(skill, _)| *skill != row.skill) {
                out.push((row.skill.clone(), Totals::default()));
            }
            if let (Some(kind), Some((_, totals))) = (row.kind, out.last_mut()) {
                totals.add(kind, row.count);
            }
        }
        Ok(out)
    }
}
