use std::process::ExitCode;

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
