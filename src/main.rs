use std::process::ExitCode;

use clap::Parser as _;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = skillreg::cli::Cli::parse();
    // `serve` sets up logging from its configuration; every other command logs human-readable.
    if !matches!(cli.command, skillreg::cli::Command::Serve(_)) {
        skillreg::cli::init_logging(skillreg::config::LogFormat::Human);
    }
    skillreg::cli::run(cli).await
}
