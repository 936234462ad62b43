//! `skillreg-bench`: synthetic catalogs shaped like the real corpus, and in-process latency of the
//! read paths. A tool for measuring skillreg (see BENCHMARKS.md), kept out of the library and out
//! of the `skillreg` binary.

mod latency;
mod synthetic;
mod vocabulary;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use skillreg::registry::{Registry, RegistryBuilder};

/// The allocator of the `skillreg` binary, so that in-process latencies are the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser, Debug)]
#[command(
    name = "skillreg-bench",
    version,
    about = "Synthetic catalogs and latency measurements for skillreg"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Fill a data directory with synthetic skills shaped like the real corpus, then index them.
    #[command(
        after_help = "Skills are numbered; --from continues an earlier run. Publishes 1,000 skills per transaction.\n\nExamples:\n  skillreg-bench generate --skills 100000 --data-dir /tmp/bench-100k\n  skillreg-bench generate --skills 1000 --export /tmp/skills-1k"
    )]
    Generate {
        #[arg(long)]
        skills: u64,
        #[arg(long, default_value_t = 0)]
        from: u64,
        /// Write the skills as a folder of skill folders (DIR/<name>/SKILL.md ...) instead of
        /// publishing them: the same catalog for peers that serve a directory.
        #[arg(long, value_name = "DIR")]
        export: Option<PathBuf>,
        /// Draw descriptions and bodies from the words of the SKILL.md files under DIR, at their
        /// frequencies (e.g. ../shared/corpus/real), instead of the built-in word lists.
        #[arg(long, value_name = "DIR")]
        vocabulary_from: Option<PathBuf>,
        #[arg(long, env = "SKILLREG_DATA_DIR", default_value = "skillreg-data")]
        data_dir: PathBuf,
        /// Publish into this PostgreSQL database (`postgres://…`) instead of the data
        /// directory's SQLite database (the data directory then holds the search index).
        #[arg(long, env = "SKILLREG_DATABASE_URL", hide_env_values = true)]
        database_url: Option<String>,
    },
    /// Print the namespace and name of synthetic skills by number (for load scripts).
    #[command(
        after_help = "Prints one \"NAMESPACE NAME\" line per number.\n\nExample:\n  skillreg-bench names 0 20 999999"
    )]
    Names { numbers: Vec<u64> },
    /// Measure p50/p99 latency of completion, search, listing and reads, in-process.
    #[command(
        after_help = "Example:\n  skillreg-bench latency --data-dir /tmp/bench-100k --iterations 2000"
    )]
    Latency {
        #[arg(long, default_value_t = 1000)]
        iterations: usize,
        #[arg(long)]
        json: bool,
        /// Measure only the operations whose label contains this text (e.g. "skills/get"), so
        /// that the CPU a database server spends on one of them can be read around the run.
        #[arg(long, value_name = "TEXT")]
        only: Option<String>,
        /// Search with queries drawn from the descriptions of the SKILL.md files under DIR (for
        /// a catalog generated with the same --vocabulary-from), instead of the built-in words.
        #[arg(long, value_name = "DIR")]
        vocabulary_from: Option<PathBuf>,
        #[arg(long, env = "SKILLREG_DATA_DIR", default_value = "skillreg-data")]
        data_dir: PathBuf,
        /// Read from this PostgreSQL database instead of the data directory's SQLite database.
        #[arg(long, env = "SKILLREG_DATABASE_URL", hide_env_values = true)]
        database_url: Option<String>,
    },
}

/// The registry in `data_dir`, or in PostgreSQL at `database_url` with its index in `data_dir`.
fn builder(
    data_dir: &std::path::Path,
    database_url: Option<&str>,
) -> anyhow::Result<RegistryBuilder> {
    let storage = skillreg::config::Storage {
        data_dir: data_dir.to_path_buf(),
        database_url: database_url.map(skillreg::config::Secret::new),
        ..Default::default()
    };
    Ok(Registry::builder_for(&storage)?)
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Cli::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The vocabulary under `dir`, when one is named.
fn vocabulary(
    dir: Option<&std::path::Path>,
) -> anyhow::Result<Option<Arc<vocabulary::Vocabulary>>> {
    let Some(dir) = dir else { return Ok(None) };
    let vocabulary = vocabulary::Vocabulary::read(dir)
        .map_err(|e| anyhow::anyhow!("reading a vocabulary under {}: {e}", dir.display()))?;
    eprintln!("vocabulary: {}", vocabulary.summary());
    Ok(Some(Arc::new(vocabulary)))
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Generate {
            skills,
            from,
            export: Some(dir),
            vocabulary_from,
            ..
        } => {
            let words = vocabulary(vocabulary_from.as_deref())?;
            let words = words.as_deref().map(|w| w as &dyn synthetic::Words);
            let written = synthetic::export(&dir, from, from + skills, words)
                .map_err(|e| anyhow::anyhow!("writing skills under {}: {e}", dir.display()))?;
            println!("wrote {written} skills under {}", dir.display());
        }
        Command::Generate {
            skills,
            from,
            export: None,
            vocabulary_from,
            data_dir,
            database_url,
        } => {
            let words =
                vocabulary(vocabulary_from.as_deref())?.map(|w| w as Arc<dyn synthetic::Words>);
            generate(&data_dir, database_url.as_deref(), from, skills, words).await?;
        }
        Command::Names { numbers } => {
            for i in numbers {
                println!(
                    "{} {}",
                    synthetic::synthetic_namespace(i),
                    synthetic::synthetic_name(i)
                );
            }
        }
        Command::Latency {
            iterations,
            json,
            only,
            vocabulary_from,
            data_dir,
            database_url,
        } => {
            let words = vocabulary(vocabulary_from.as_deref())?;
            let registry = builder(&data_dir, database_url.as_deref())?
                .search()
                .open()
                .await?;
            registry.index().catch_up_search().await?;
            let results =
                latency::latency(&registry, iterations, words.as_deref(), only.as_deref()).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&results)?);
            } else {
                println!(
                    "| operation | samples | p50 (µs) | p99 (µs) | max (µs) |\n| --- | --- | --- | --- | --- |"
                );
                for r in results {
                    println!(
                        "| {} | {} | {:.0} | {:.0} | {:.0} |",
                        r.operation, r.samples, r.p50_us, r.p99_us, r.max_us
                    );
                }
            }
            registry.close().await;
        }
    }
    Ok(())
}

async fn generate(
    data_dir: &std::path::Path,
    database_url: Option<&str>,
    from: u64,
    skills: u64,
    words: Option<Arc<dyn synthetic::Words>>,
) -> anyhow::Result<()> {
    let registry = builder(data_dir, database_url)?.open().await?;
    let started = std::time::Instant::now();
    let created = synthetic::generate(&registry, from, from + skills, words, |done| {
        if done % 100_000 == 0 {
            eprintln!("{done} skills, {:.0} s", started.elapsed().as_secs_f64());
        }
    })
    .await?;
    let stored = started.elapsed();
    println!(
        "stored {created} skills in {:.1} s ({:.0} skills/s)",
        stored.as_secs_f64(),
        created as f64 / stored.as_secs_f64()
    );
    registry.close().await;
    let indexing = std::time::Instant::now();
    let registry = builder(data_dir, database_url)?.search().open().await?;
    registry.index().catch_up_search().await?;
    println!(
        "indexed for search in {:.1} s",
        indexing.elapsed().as_secs_f64()
    );
    let stats = registry.stats().await?;
    println!(
        "catalog: {} skills, {} versions, {} files, {} blobs, {} blob bytes",
        stats.skills, stats.versions, stats.files, stats.blobs, stats.blob_bytes
    );
    registry.close().await;
    Ok(())
}
