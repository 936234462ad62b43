//! `skillreg reindex` (the search index rebuilt from the database) and `skillreg
//! index-snapshot` (the index brought up to date and written for new replicas).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{DataArgs, Progress, output};
use crate::registry::Registry;

#[derive(Args, Debug)]
pub struct ReindexArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// Print a JSON summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct IndexSnapshotArgs {
    /// Where to write the snapshot (replaced if it exists).
    pub file: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
    /// Print a JSON summary.
    #[arg(long)]
    pub json: bool,
}

pub async fn reindex(args: ReindexArgs) -> anyhow::Result<ExitCode> {
    let ReindexArgs { data, json } = args;
    let registry = Registry::builder_for(&data.storage)?
        .search()
        .open()
        .await?;
    let progress = Progress::spinner("indexing");
    let count = registry.index().rebuild_search().await?;
    progress.finish();
    if json {
        println!("{}", output::line(&output::Indexed { indexed: count }));
    } else {
        println!("indexed {count} skills");
    }
    registry.close().await;
    Ok(ExitCode::SUCCESS)
}

pub async fn index_snapshot(args: IndexSnapshotArgs) -> anyhow::Result<ExitCode> {
    let IndexSnapshotArgs { file, data, json } = args;
    let file = file.as_path();
    let registry = Registry::builder_for(&data.storage)?
        .search()
        .open()
        .await?;
    let progress = Progress::spinner("indexing");
    let written = registry.index().write_snapshot(file).await;
    progress.finish();
    registry.close().await;
    let snapshot = written?;
    if json {
        println!("{}", serde_json::to_string(&snapshot)?);
    } else {
        println!(
            "wrote {} ({} bytes): {} skills at generation {}",
            file.display(),
            snapshot.bytes,
            snapshot.skills,
            snapshot.generation
        );
    }
    Ok(ExitCode::SUCCESS)
}
