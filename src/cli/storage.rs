//! The data directory's storage as a whole: `skillreg verify` (every byte against its digest),
//! `skillreg backup` (a consistent copy of the database) and `skillreg migrate` (a whole
//! registry copied into an empty one, on either engine, then verified).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{DataArgs, Progress, output};
use crate::config::{self, Engine, Storage};
use crate::registry::Registry;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct BackupArgs {
    /// Where to write the copy (must not exist).
    pub path: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
}

#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// The registry to copy: sqlite://DIR (a data directory) or postgres://…
    #[arg(
        long,
        value_name = "URL",
        env = "SKILLREG_MIGRATE_FROM",
        hide_env_values = true
    )]
    pub from: config::Secret,
    /// Where to copy it: sqlite://DIR (a new data directory) or postgres://… (an empty
    /// database).
    #[arg(
        long,
        value_name = "URL",
        env = "SKILLREG_MIGRATE_TO",
        hide_env_values = true
    )]
    pub to: config::Secret,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub async fn verify(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let VerifyArgs { data, json } = args;
    if let Engine::Sqlite(dir) = data.storage.engine()? {
        anyhow::ensure!(
            crate::registry::holds_registry(&dir),
            "no registry database in {}",
            dir.display()
        );
    }
    let registry = Registry::builder_for(&data.storage)?
        .search()
        .open()
        .await?;
    let progress = if json {
        Progress(None)
    } else {
        Progress::spinner("verifying blobs")
    };
    let report = registry.verify(&|_| progress.inc()).await?;
    progress.finish();
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_verify_report(&report, "checked");
    }
    registry.close().await;
    Ok(if report.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub async fn backup(args: BackupArgs) -> anyhow::Result<ExitCode> {
    let BackupArgs { path, data } = args;
    let path = path.as_path();
    let registry = Registry::builder_for(&data.storage)?.open().await?;
    registry.backup(path).await?;
    let size = std::fs::metadata(path)?.len();
    println!(
        "backed up {} to {} ({size} bytes)",
        data.storage,
        path.display()
    );
    registry.close().await;
    Ok(ExitCode::SUCCESS)
}

pub async fn migrate(args: MigrateArgs) -> anyhow::Result<ExitCode> {
    let MigrateArgs { from, to, json } = args;
    let (from, to) = (&from, &to);
    let storage = |url: &config::Secret| Storage {
        database_url: Some(url.clone()),
        database_pool_size: 4,
        ..Storage::default()
    };
    let (from, to) = (storage(from), storage(to));
    if let Engine::Sqlite(dir) = from.engine()? {
        anyhow::ensure!(
            crate::registry::holds_registry(&dir),
            "no registry database in {}",
            dir.display()
        );
    }
    to.engine()?;
    let source = Registry::builder_for(&from)?.open().await?;
    let target = Registry::builder_for(&to)?.open().await?;
    let progress = if json {
        Progress(None)
    } else {
        Progress::spinner("copying rows")
    };
    let copied = source
        .copy_to(&target, &|rows| progress.set_position(rows))
        .await;
    progress.finish();
    let copied = match copied {
        Ok(copied) => copied,
        Err(e) => {
            source.close().await;
            target.close().await;
            return Err(e.into());
        }
    };
    let progress = if json {
        Progress(None)
    } else {
        Progress::spinner("verifying the copy")
    };
    let mut report = target.verify(&|_| progress.inc()).await?;
    progress.finish();
    let (before, after) = (source.stats().await?, target.stats().await?);
    if before != after {
        report
            .problems
            .push(format!("the source holds {before:?}, the copy {after:?}"));
    }
    if json {
        let migrated = output::Migrated {
            copied: &copied,
            verify: &report,
        };
        println!("{}", serde_json::to_string_pretty(&migrated)?);
    } else {
        println!(
            "copied {} rows ({} bytes of files) at generation {} from {from} to {to}",
            copied.rows, copied.blob_bytes, copied.generation
        );
        print_verify_report(
            &report,
            "verified the copy (row counts equal to the source's too):",
        );
    }
    source.close().await;
    target.close().await;
    Ok(if report.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Each problem of a scrub, then `{lead} N blobs (B bytes) and V versions: no damage` (or the
/// number of problems).
fn print_verify_report(report: &crate::core::records::VerifyReport, lead: &str) {
    for p in &report.problems {
        println!("damaged: {p}");
    }
    println!(
        "{lead} {} blobs ({} bytes) and {} versions: {}",
        report.blobs_checked,
        report.bytes_checked,
        report.versions_checked,
        if report.is_clean() {
            "no damage".to_owned()
        } else {
            format!("{} problems", report.problems.len())
        }
    );
}
