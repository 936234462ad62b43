use std::process::ExitCode;

/// mimalloc: glibc's allocator was a fifth of a small read's CPU (malloc, free and their
/// consolidation across threads), most of it in hyper, rmcp and serde.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = match skillreg::cli::parse(std::env::args_os().collect()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    // `serve` sets up logging from its configuration; every other command logs human-readable.
    let _log = (!matches!(cli.command, skillreg::cli::Command::Serve(_)))
        .then(|| skillreg::cli::init_logging(skillreg::config::LogFormat::Human));
    skillreg::cli::run(cli).await
}
