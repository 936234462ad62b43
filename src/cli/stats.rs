//! `skillreg stats`: every skill with how often it was read (all days, or the last `--days`),
//! most read first; or with `--unused DAYS` the skills nobody read in the last DAYS days. Read
//! from storage: counts a running server has not flushed yet (`usage_flush_secs`) are not in
//! it. Private and pending skills are listed too: this is the operator's view of the data
//! directory or database.

use std::process::ExitCode;

use clap::Args;

use super::{DataArgs, output};
use crate::config::Engine;
use crate::core::usage::Totals;
use crate::registry::Registry;

#[derive(Args, Debug)]
pub struct StatsArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// List only the skills that nobody read in the last DAYS days (UTC days, today included).
    #[arg(long, value_name = "DAYS", conflicts_with = "days", value_parser = clap::value_parser!(u32).range(1..))]
    pub unused: Option<u32>,
    /// Count only the last DAYS days (UTC days, today included); all days by default.
    #[arg(long, value_name = "DAYS", value_parser = clap::value_parser!(u32).range(1..))]
    pub days: Option<u32>,
    /// Print one JSON object per skill.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: StatsArgs) -> anyhow::Result<ExitCode> {
    let StatsArgs {
        data,
        unused,
        days,
        json,
    } = args;
    if let Engine::Sqlite(dir) = data.storage.engine()? {
        anyhow::ensure!(
            crate::registry::holds_registry(&dir),
            "no registry database in {}",
            dir.display()
        );
    }
    let registry = Registry::builder_for(&data.storage)?
        .usage_counting(None)
        .open()
        .await?;
    let period = unused.or(days).unwrap_or(0);
    let mut skills = registry.reads().usage_by_skill(period).await?;
    registry.close().await;
    if unused.is_some() {
        skills.retain(|(_, totals)| totals.all() == 0);
    } else {
        // Most read first, then by name (the order storage gave).
        skills.sort_by_key(|(_, totals)| std::cmp::Reverse(totals.all()));
    }
    for (skill, totals) in &skills {
        if json {
            println!(
                "{}",
                output::line(&output::SkillUsage::of(skill, *totals, period))
            );
        } else if unused.is_some() {
            println!("{skill}");
        } else {
            println!("{}", text_line(&skill.to_string(), totals));
        }
    }
    if !json {
        let what = match (unused, days) {
            (Some(d), _) => format!("skills nobody read in the last {d} days"),
            (None, Some(d)) => format!("skills, reads of the last {d} days"),
            (None, None) => "skills, reads of every day counted".to_owned(),
        };
        eprintln!("{} {what}", skills.len());
    }
    Ok(ExitCode::SUCCESS)
}

/// `acme/pdf  12 reads (get 5, skill_md 4, archive 3)`: the kinds with a count.
fn text_line(skill: &str, totals: &Totals) -> String {
    let kinds: Vec<String> = crate::core::usage::Kind::ALL
        .into_iter()
        .filter(|k| totals.get(*k) > 0)
        .map(|k| format!("{k} {}", totals.get(k)))
        .collect();
    if kinds.is_empty() {
        format!("{skill}  0 reads")
    } else {
        format!("{skill}  {} reads ({})", totals.all(), kinds.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::usage::Kind;

    #[test]
    fn a_text_line_names_the_kinds_read() {
        let mut totals = Totals::default();
        assert_eq!(text_line("acme/pdf", &totals), "acme/pdf  0 reads");
        totals.add(Kind::Get, 5);
        totals.add(Kind::Archive, 3);
        assert_eq!(
            text_line("acme/pdf", &totals),
            "acme/pdf  8 reads (get 5, archive 3)"
        );
    }
}
